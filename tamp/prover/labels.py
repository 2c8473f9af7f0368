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
the tree by construction; :mod:`tamp.prover.check` re-verifies all of them anyway.
κ(child) = κ(parent) + cost of the sampling's axiom (0 for other edges).
"""

from __future__ import annotations

from typing import Dict, List

import z3

from lang import ast as A

from .automaton import FailureAutomaton
from .exprs import ZERO, assigned_names, conjuncts, not_, plus, subst
from .smt import VALID
from .trace import StepState, step


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
        if isinstance(t, A.Var) and t.name not in A.free_vars(st.value):
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
    if x not in A.free_vars(stmt.value):
        return []
    out = []
    for c in label:
        if isinstance(c, A.Binary) and c.op == "==":
            for lhs, rhs in ((c.left, c.right), (c.right, c.left)):
                if lhs == A.Var(x) and x not in A.free_vars(rhs):
                    out.append(A.Binary("==", A.Var(x), subst(stmt.value, {x: rhs})))
                    break
    return out


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
                pushed = push_back(e.stmt, c)
                if pushed is not None and pushed not in acc:
                    acc.append(pushed)
        out[nid] = acc[:40]
    return out


def push_back(st, c: A.Expr):
    """The condition ``c`` after ``st`` pushed back before it (weakest precondition of a
    deterministic step), or None when the step havocs what ``c`` reads."""
    if isinstance(st, A.Assume):
        return c
    if isinstance(st, A.Assign):
        t = st.targets[0]
        if isinstance(t, A.Var):
            return subst(c, {t.name: st.value})
        return None if t.base.name in A.free_vars(c) else c
    if isinstance(st, A.Sample):
        return None if assigned_names(st) & A.free_vars(c) else c
    return None


def label_tree(aut: FailureAutomaton, cfa, enc, valid) -> None:
    """Fill in λ and κ for every node of the tree ``aut`` (axioms already chosen).

    ``valid(formula)`` decides validity under the program's ``requires`` (see Search.valid)."""
    back = backward_candidates(aut, cfa.ensures)
    for nid in aut.topological():
        node = aut.nodes[nid]
        pe = aut.parent_edge(nid)
        if pe is None:
            node.kappa = ZERO
            env0 = enc.initial_env()
            node.label = [c for c in back.get(nid, [])
                          if not z3.is_true(z3.simplify(enc.expr(c, env0))) and valid(enc.expr(c, env0)) == VALID]
            continue
        parent = aut.nodes[pe.src]
        cost = pe.axiom.cost if (isinstance(pe.stmt, A.Sample) and pe.axiom is not None) else ZERO
        node.kappa = plus(parent.kappa, cost)
        cands: List[A.Expr] = []
        for c in list(parent.label) + forward_facts(pe) + updated_equalities(pe.stmt, parent.label) \
                + back.get(nid, []):
            if c not in cands:
                cands.append(c)
        env0 = enc.initial_env()
        st = StepState(env0, [enc.expr(c, env0) for c in parent.label], [], None, [])
        st.omega = _zero()
        st2 = step(enc, st, pe.stmt, pe.axiom)
        ctx = st2.context()
        kept = []
        for c in cands:
            try:
                cz = enc.expr(c, st2.env)
                if z3.is_true(z3.simplify(enc.expr(c, env0))):
                    continue  # trivially true: says nothing
            except Exception:  # a candidate the encoder cannot express is simply not used
                continue
            goal = z3.Implies(ctx, cz)
            if valid(goal) == VALID:
                kept.append(c)
        node.label = kept


def _zero():
    return z3.RealVal(0)
