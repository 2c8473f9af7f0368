"""Labelling a trace tree with state predicates λ and failure bounds κ (template interpolation).

z3 has no interpolation API, so labels are chosen from *candidate predicates*, Houdini-style:

* forward facts of the incoming edge: the branch condition of an ``assume``, ``x == e`` for an
  assignment (when e does not read x), ``x == f(e)`` for ``x := f(x)`` when the parent knows
  ``x == e``, the conjuncts of ``¬bad`` of a sampling's axiom (including its support facts);
* everything the parent's label says (kept only if the edge preserves it);
* backward candidates: the postcondition's conjuncts pushed back through assignments
  (substitution) and branch conditions, up to the first sampling of a variable they read.

A candidate is kept at a node exactly when ``requires ∧ λ(parent) ∧ edge ⇒ candidate`` is valid
(z3 ``unsat`` of the negation), so every label is an inductive sequence interpolant along
the tree by construction; :mod:`tamp.prover.trace.check` re-verifies all of them anyway.
κ(child) = κ(parent) + cost of the sampling's axiom (0 for other edges).
"""

from __future__ import annotations

from typing import Dict, List

import z3

from lang import ast as A
from lang.evaluate import EvalError, compile_expr
from lang.walk import free_vars
from tamp.prover.base.exprs import ZERO, assigned_names, conjuncts, not_, plus, subst
from tamp.prover.base.samples import collect_tree_states, input_points
from tamp.prover.base.smt import VALID
from tamp.prover.base.wp import push_back
from tamp.prover.trace.automaton import FailureAutomaton
from tamp.prover.trace.formula import StepState, step


def negated_conjuncts(bad: A.Expr) -> List[A.Expr]:
    """Conjuncts of ``¬bad`` (De Morgan over ``||``)."""
    if isinstance(bad, A.Binary) and bad.op == "||":
        return negated_conjuncts(bad.left) + negated_conjuncts(bad.right)
    if isinstance(bad, A.BoolLit) and not bad.value:
        return []
    return [not_(bad)]


def forward_facts(edge) -> List[A.Expr]:
    st = edge.stmt
    if isinstance(st, A.Assume):
        return conjuncts(st.cond)
    if isinstance(st, A.Assign):
        t = st.targets[0]
        if isinstance(t, A.Var) and t.name not in set(free_vars(st.value)):
            return [A.Binary("==", t, st.value)]
        if isinstance(t, A.Index) and isinstance(t.base, A.Var):
            # a[e] := v with e and v not reading a: a[e] == v after it (only a changed)
            if t.base.name not in set(free_vars(t.index)) | set(free_vars(st.value)):
                return [A.Binary("==", t, st.value)]
        return []
    if isinstance(st, A.Sample) and edge.axiom is not None:
        return negated_conjuncts(edge.axiom.bad)
    return []


def updated_equalities(stmt, label: List[A.Expr]) -> List[A.Expr]:
    """For ``x := f(x)``: from each fact ``x == e`` of the parent's label (e not reading x), the
    fact ``x == f(e)`` after it (the strongest postcondition's equality; ``s == a0`` and
    ``s := s + a1`` give ``s == a0 + a1``, the running total of a straight-line sum)."""
    if not isinstance(stmt, A.Assign) or not isinstance(stmt.targets[0], A.Var):
        return []
    x = stmt.targets[0].name
    if x not in set(free_vars(stmt.value)):
        return []
    out: List[A.Expr] = []
    for c in label:
        if isinstance(c, A.Binary) and c.op == "==":
            for lhs, rhs in ((c.left, c.right), (c.right, c.left)):
                if lhs == A.Var(x) and x not in set(free_vars(rhs)):
                    out.append(A.Binary("==", A.Var(x), subst(stmt.value, {x: rhs})))
                    break
    return out


def projected_facts(stmt, label: List[A.Expr]) -> List[A.Expr]:
    """For ``x := e``: the parent's facts that read ``x``, with ``x`` replaced by ``e0`` where the
    parent knows ``x == e0`` (e0 not reading x) — what they said about the old value of ``x``,
    which the assignment overwrites (``best == a1`` and ``a2 > best`` give ``a2 > a1`` after
    ``best := a2``: the comparisons a chain of noisy-max branches has seen stay known)."""
    if not isinstance(stmt, A.Assign) or not isinstance(stmt.targets[0], A.Var):
        return []
    x = stmt.targets[0].name
    olds = []
    for c in label:
        if isinstance(c, A.Binary) and c.op == "==":
            for lhs, rhs in ((c.left, c.right), (c.right, c.left)):
                if lhs == A.Var(x) and x not in set(free_vars(rhs)):
                    olds.append(rhs)
                    break
    if not olds:
        return []
    out = []
    for c in label:
        if x not in set(free_vars(c)) or (isinstance(c, A.Binary) and c.op == "==" and A.Var(x) in (c.left, c.right)):
            continue
        p = subst(c, {x: olds[0]})
        if p not in out:
            out.append(p)
    return out


def untouched(stmt, c: A.Expr) -> bool:
    """Whether ``c`` reads nothing ``stmt`` writes (then λ(parent) ∋ c carries over unchanged:
    the frame rule; the checker re-verifies it with the rest of the label)."""
    if isinstance(stmt, A.Assume):
        return True
    if isinstance(stmt, (A.Assign, A.Sample)):
        return not (assigned_names(stmt) & set(free_vars(c)))
    return False


def backward_candidates(aut: FailureAutomaton, ensures) -> Dict[int, List[A.Expr]]:
    """For each node, the postcondition's conjuncts pushed back to it along its subtree."""
    post = [c for e in ensures for c in conjuncts(e)]
    out: Dict[int, List[A.Expr]] = {}
    for nid in reversed(aut.topological()):
        if nid in aut.exits:
            out[nid] = list(post)
            continue
        acc: List[A.Expr] = []
        for e in aut.out(nid):
            if e.back:
                continue
            for c in out.get(e.dst, []):
                pushed = push_back(e.stmt, c)  # wp.py: through element writes too
                if pushed is not None and pushed not in acc:
                    acc.append(pushed)
        out[nid] = acc[:40]
    return out


def label_tree(aut: FailureAutomaton, cfa, enc, valid) -> None:
    """Fill in λ and κ for every node of the tree ``aut`` (axioms already chosen).

    ``valid(formula)`` decides validity under the program's ``requires`` (see Search.valid).

    Two passes. The first offers the postcondition only at the exits: the facts carried
    forward (branch conditions, assignments, the axioms' ¬bad, and what they say about
    overwritten variables) often imply it there already, and then the many backward
    candidates — most of them not valid where they are offered, each such one a solver call
    answering "sat" — are never asked (a chain of k noisy-max comparisons has 2^(k-1) traces
    and k² pushed-back comparisons). When some exit misses a conjunct of the postcondition, the
    tree is labelled again with every backward candidate."""
    states = observed_states(aut, cfa)
    post = [c for e in cfa.ensures for c in conjuncts(e)]
    exits_only = {nid: list(post) for nid in aut.exits}
    _label(aut, enc, valid, exits_only, states, ask_overwritten=False)
    if all(c in aut.nodes[nid].label for nid in aut.exits for c in post):
        return
    _label(aut, enc, valid, backward_candidates(aut, cfa.ensures), states)


def _label(
    aut: FailureAutomaton, enc, valid, back: Dict[int, List[A.Expr]], states, ask_overwritten: bool = True
) -> None:
    """One labelling pass with the backward candidates ``back`` (node → candidates). Without
    ``ask_overwritten`` a parent's fact about a variable the edge assigns is dropped unasked
    (its projection onto the old value is kept; the fact itself rarely survives, and each
    such query is a solver call answering "sat")."""
    fns: Dict[int, tuple] = {}  # id(candidate) → (candidate, compiled): ids, since hashing a deep
    enc0: Dict[int, tuple] = {}  # expression recurses; the candidate is kept, so its id stays its own

    def back_has(nid, c) -> bool:
        return any(c is b or c == b for b in back.get(nid, ()))

    def refuted_at(nid, c) -> bool:
        return _refuted(c, states.get(nid, ()), fns)

    def at0(c, env0):
        """``c`` over the initial environment (the same for every node), encoded once."""
        hit = enc0.get(id(c))
        if hit is None:
            hit = enc0[id(c)] = (c, enc.expr(c, env0))
        return hit[1]

    for nid in aut.topological():
        node = aut.nodes[nid]
        pe = aut.parent_edge(nid)
        if pe is None:
            node.kappa = ZERO
            env0 = enc.initial_env()
            node.label = [
                c
                for c in back.get(nid, [])
                if not refuted_at(nid, c)
                and not z3.is_true(z3.simplify(enc.expr(c, env0)))
                and valid(enc.expr(c, env0)) == VALID
            ]
            continue
        parent = aut.nodes[pe.src]
        cost = pe.axiom.cost if (isinstance(pe.stmt, A.Sample) and pe.axiom is not None) else ZERO
        node.kappa = plus(parent.kappa, cost)
        cands: List[A.Expr] = []
        # facts true after the edge by construction (the assume's condition, x == e after x := e,
        # the axiom's ¬bad, and the rewritten equalities and projections of the parent's facts):
        # kept without a solver call — the checker's STEP rule verifies them with the rest
        made = forward_facts(pe) + updated_equalities(pe.stmt, parent.label) + projected_facts(pe.stmt, parent.label)
        for c in list(parent.label) + made + back.get(nid, []):
            if c not in cands:
                cands.append(c)
        by_construction = made  # lists, not sets: hashing a deep expression recurses
        env0 = enc.initial_env()
        st = StepState(env0, [at0(c, env0) for c in parent.label], [], None, [])
        st.omega = _zero()
        st2 = step(enc, st, pe.stmt, pe.axiom)
        ctx = st2.context()
        kept, asked = [], []
        inherited = parent.label
        for c in cands:
            if c in inherited and untouched(pe.stmt, c):
                kept.append(c)
                continue
            if not ask_overwritten and c in inherited and c not in by_construction and not back_has(nid, c):
                continue
            if c not in by_construction and refuted_at(nid, c):
                continue  # false in a state a bad-event-free run reached here: not valid
            try:
                cz = enc.expr(c, st2.env)
                if z3.is_true(z3.simplify(at0(c, env0))):
                    continue  # trivially true: says nothing
            except Exception:  # a candidate the encoder cannot express is simply not used
                continue
            if c in by_construction:
                kept.append(c)
                continue
            asked.append((c, cz))
        # the others are asked together first (valid exactly when each one is: at an exit the
        # postcondition's conjuncts usually all follow, in one query), then one by one
        if len(asked) > 1 and valid(z3.Implies(ctx, z3.And(*[cz for _c, cz in asked]))) == VALID:
            kept.extend(c for c, _cz in asked)
        else:
            kept.extend(c for c, cz in asked if valid(z3.Implies(ctx, cz)) == VALID)
        node.label = [c for c in cands if any(c is k for k in kept)]


def observed_states(aut, cfa) -> Dict[int, List[dict]]:
    """Concrete states at the tree's nodes (:func:`tamp.prover.base.samples.collect_tree_states`)."""
    try:
        return collect_tree_states(aut, cfa, input_points(cfa))
    except (EvalError, TypeError, ValueError, KeyError, IndexError, RecursionError):
        return {}  # a pre-filter only: without states every candidate goes to the solver


def _refuted(c: A.Expr, states, fns) -> bool:
    """Whether ``c`` is false in one of ``states`` (evaluation errors refute nothing)."""
    if not states:
        return False
    hit = fns.get(id(c))
    if hit is None:
        try:
            hit = fns[id(c)] = (c, compile_expr(c))
        except (EvalError, TypeError, ValueError, KeyError, RecursionError):
            hit = fns[id(c)] = (c, False)
    fn = hit[1]
    if fn is False:
        return False
    for env in states:
        try:
            if fn(env) is False:
                return True
        except (
            EvalError,
            TypeError,
            KeyError,
            ValueError,
            ZeroDivisionError,
            OverflowError,
            IndexError,
            RecursionError,
        ):
            continue
    return False


def _zero():
    return z3.RealVal(0)
