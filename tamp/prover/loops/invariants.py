"""Loop invariants λ for the CFA-shaped automaton: candidate predicates and Houdini.

Candidates (the *templates*; nothing here needs to be true — Houdini keeps only what it can
prove inductive, and :mod:`.check` re-verifies the result):

* the postcondition's conjuncts (``a ==> (b && c)`` also as ``a ==> b``, ``a ==> c``), also as
  they read at the exit of a loop followed by straight-line code (:mod:`.tail`: ``forall j in
  0..last`` before ``last := i`` is ``forall j in 0..i``), and their
  *prefix forms* (the loop bound ``hi`` replaced by the counter ``i`` in some occurrences:
  ``forall j in 0..n: B`` → ``forall j in 0..i: B``, ``n/eps*log(n/p)`` → ``i/eps*log(n/p)``;
  counting down from ``n`` to ``lo``: ``lo`` replaced by ``i + 1`` or ``i``, and terms equal to
  the number of iterations by the number done, ``n/eps`` → ``(n - i)/eps``);
* counter ranges ``lo <= i``, ``i <= hi``;
* each axiom's ``¬bad`` conjuncts (``abs(x - y) <= M`` also one-sided), then *carried* to the
  variables the loop body copies them into (``best := a; b := i`` turns ``a - q[i] <= M`` into
  ``best - q[b] <= M``, also guarded by ``lo < i ==>`` since it holds only after the first
  iteration) and *accumulated* over the iterations (``best >= q[i] - M`` becomes
  ``forall j in lo..i: best >= q[j] - M``);
* for a sampling inside nested counted loops that writes a flattened index (``a[i*m + j]``):
  its ¬bad fact over the flattened range of entries done so far (``forall k in 0..i*m + j``;
  ``0..i*m`` at the outer loop) and the postcondition with the range's end ``n*m`` replaced
  likewise (:func:`_flattened`);
* arrays a counted loop fills (``forall k in lo..i: a[k] == v``) or tallies into after a fill
  (``cnt[x[i]] := cnt[x[i]] + 1``: ``forall k in 0..m: cnt[k] == sum(j in 0..i: x[j] == k ? 1 :
  0)``; :mod:`.array_forms`);
* for a loop without a counter (a search): the order of its integers and their entry values,
  and the postcondition's ``forall j in A..B`` cut at each of them (``forall j in 0..lo``,
  ``forall j in hi..n``; :mod:`.bracket`);
* branch conditions and their negations, assignment equalities ``x == e``;
* the user's ``invariant`` clauses (:func:`user_invariants`), offered at every node like the
  templates (so the loop body's nodes can carry them to the back edge), and dropped like any
  template when not inductive: never trusted; :func:`explain_user_invariants` says why one
  was dropped at its loop head;
* backward candidates: every candidate of a successor pushed back through the edge
  (substitution through assignments, element writes ``a[e] := v`` as ``x == e ? v : a[x]`` for
  each read ``a[x]`` (:mod:`.wp`); unchanged through ``assume``; dropped at a sampling of a
  variable it reads) — the weakest-precondition part that the loop body's inner nodes need.

Candidates that mention a variable dead at their node (:mod:`.liveness`: overwritten before
it is read again, e.g. a value re-sampled in the next iteration) are left out of that node's
pool: no obligation could use them, and the non-inductive ones cost Houdini slow ``unknown``s.

Houdini: start with every candidate at every node (the root keeps those valid under
``requires``), then drop, edge by edge to a fixpoint, every candidate of the target node that
``λ(src) ∧ stmt`` does not imply. A batch of candidates is decided with one solver: the
conjunction is checked first (before that, once without the log/exp lemma instances: usually
enough, and cheaper); a counter-model drops every candidate it falsifies (dropping is always
safe); only an ``unknown`` falls back to one query per candidate.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import deque
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

import networkx as nx
import z3

from lang import ast as A
from lang.evaluate import EvalError, evaluate
from lang.walk import free_vars, rebuild, replace_all
from tamp.cfa.loops import loop_body
from tamp.core import watchdog
from tamp.prover.base.exprs import conjuncts, not_, plus, subst
from tamp.prover.base.liveness import mentions_only_live
from tamp.prover.base.samples import refuted
from tamp.prover.base.smt import (
    CLOCK_SLACK,
    LEMMA_FREE_MS,
    RLIMIT_PER_MS,
    conj,
    enc_has_apps,
    lemmas_for,
    substitute_all,
    transcendental_apps,
)
from tamp.prover.base.wp import push_back
from tamp.prover.concentration.deviation import deviation_candidates
from tamp.prover.concentration.tail import exit_candidates
from tamp.prover.counting.array_forms import array_candidates
from tamp.prover.counting.bracket import bracket_candidates
from tamp.prover.counting.rank_count import rank_candidates
from tamp.prover.counting.recurrence import (
    body_copies,
    closed_form_candidates,
    counter_shift,
    exit_forms,
    over_the_counter,
)
from tamp.prover.loops.branch_copies import copied_facts
from tamp.prover.selection.argmax import filtered_candidates, ranked_candidates, scan_candidates
from tamp.prover.selection.sentinel import sentinel_candidates
from tamp.prover.trace.formula import StepState, step
from tamp.prover.trace.labels import negated_conjuncts
from tamp.prover.trace.synthesis import Timeout

MAX_BACKWARD = 60
MAX_GUARDED = 24  # guarded candidates per branch at a branch on a loop's local (see _guarded)


# ---------------------------------------------------------------------------- candidate shapes


def _replace_subsets(e: A.Expr, old: A.Expr, new: A.Expr, limit=8) -> List[A.Expr]:
    """Variants of ``e`` with some (non-empty subset of the) occurrences of ``old`` replaced."""
    occ = []

    def count(x, path=()):
        if x == old:
            occ.append(path)
            return
        if isinstance(x, A.Call) and x.func in ("log", "exp", "sqrt"):
            return  # thresholds of tail bounds depend on the inputs, not on the counter
        for i, ch in enumerate(A.children(x)):
            count(ch, path + (i,))

    count(e)
    if not occ or len(occ) > 4:
        return []
    out = []
    for r in range(1, len(occ) + 1):
        for chosen in itertools.combinations(occ, r):
            out.append(_replace_at(e, set(chosen), new))
    return out[:limit]


def _same_value(a: A.Expr, b: A.Expr, tries: int = 6) -> bool:
    """Whether ``a`` and ``b`` agree at a few random rational points (a heuristic identity test
    for proposing candidates — Houdini and the checker decide what is kept)."""
    rng = random.Random(3)
    names = sorted(set(free_vars(a)) | set(free_vars(b)))
    for _ in range(tries):
        env = {x: Fraction(rng.randint(1, 97), rng.choice([1, 1, 2, 3])) for x in names}
        try:
            if evaluate(a, env) != evaluate(b, env):
                return False
        except (EvalError, TypeError, ZeroDivisionError, ValueError):
            return False
    return True


def _count_forms(c: A.Expr, total: A.Expr, done: A.Expr, bounds: bool = False) -> List[A.Expr]:
    """Variants of ``c`` with sub-expressions equal to ``total`` (a loop's number of iterations,
    as ``n`` in ``n/eps * log(n/p)``) replaced by ``done`` (the iterations so far); not inside
    log/exp/sqrt, and in the bounds of ``c``'s own ranges only with ``bounds``."""
    found: List[A.Expr] = []

    def walk(x):
        if isinstance(x, A.Call) and x.func in ("log", "exp", "sqrt"):
            return
        if isinstance(x, (A.Quant, A.Sum)) and not bounds:
            walk(x.body)
            return
        if (
            isinstance(x, (A.Var, A.Binary))
            and not isinstance(x, A.BoolLit)
            and x not in found
            and not A.contains(x, (A.Quant, A.Sum))
            and set(free_vars(x))
            and _same_value(x, total)
        ):
            found.append(x)
            return
        for ch in A.children(x):
            walk(ch)

    walk(c)
    out: List[A.Expr] = []
    for x in found[:3]:
        out.extend(_replace_subsets(c, x, done))
    return out


def _replace_at(e, paths, new, path=()):
    """``e`` with the sub-expressions at ``paths`` (child positions from the root, as
    :func:`lang.ast.children` numbers them) replaced by ``new``."""
    if path in paths:
        return new
    return rebuild(e, [_replace_at(ch, paths, new, path + (i,)) for i, ch in enumerate(A.children(e))])


def split_post(c: A.Expr, quantified: bool = True) -> List[A.Expr]:
    """``c`` and, for ``a ==> (b && d)``, also ``a ==> b`` and ``a ==> d``; for ``forall j in
    lo..hi: B1 && B2`` also ``forall j in lo..hi: B1`` and ``… B2`` (each split as above;
    not when ``quantified`` is false): one iteration may keep some parts inductive where the
    whole conjunction is not decided."""
    out = [c]
    if isinstance(c, A.Binary) and c.op == "==>":
        parts = conjuncts(c.right)
        if len(parts) > 1:
            out.extend(A.Binary("==>", c.left, p) for p in parts)
    if quantified and isinstance(c, A.Quant) and c.kind == "forall":
        parts = conjuncts(c.body)
        if len(parts) > 1:
            for part in parts:
                for q in split_post(part):
                    out.append(A.Quant("forall", c.var, c.lo, c.hi, c.inclusive, q))
    return out


def splits_claim(cfa) -> bool:
    """Whether a conjunct of the postcondition is a ``forall`` whose body is a conjunction (which
    :func:`split_post` takes apart when asked, ``candidate_pool(..., split=True)``)."""
    return any(
        len(split_post(p)) > len(split_post(p, quantified=False))
        for e in cfa.ensures
        for c in conjuncts(e)
        for p in split_post(c, quantified=False)
    )


def one_sided(c: A.Expr) -> List[A.Expr]:
    """``abs(x - y) <= M`` (or ``!(abs(x - y) > M)``) → ``x - y <= M`` and ``y - x <= M``;
    ``!(x > y)`` → ``x <= y``; ``!(x < y)`` → ``x >= y``."""
    flip = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
    if isinstance(c, A.Unary) and c.op == "!" and isinstance(c.operand, A.Binary) and c.operand.op in flip:
        c = A.Binary(flip[c.operand.op], c.operand.left, c.operand.right)
    out = [c]
    if isinstance(c, A.Binary) and c.op in ("<=", "<") and isinstance(c.left, A.Call) and c.left.func == "abs":
        x = c.left.args[0]
        if isinstance(x, A.Binary) and x.op == "-":
            out.append(A.Binary(c.op, x, c.right))
            out.append(A.Binary(c.op, A.Binary("-", x.right, x.left), c.right))
    return out


def _binds(e: A.Expr, name: str) -> bool:
    """Whether a quantifier or sum of ``e`` binds ``name``."""
    return any(isinstance(n, (A.Quant, A.Sum)) and n.var == name for n in A.walk(e))


def _flattened(loops, axioms, post) -> List[A.Expr]:
    """Candidates for samplings inside nested counted loops that write a flattened array index
    (``a[i*m + j]`` for a grid): with E the index and the loops' counters counting up, the
    entries done when the loop of depth d is at its head are E0..E_d, where E0 is E with every
    counter at its start and E_d is E with the counters of the loops inside d at their start.
    Proposed: the sampling's ¬bad fact over that range (``forall k in 0..i*m + j: |a[k] - q[k]|
    <= T``), and the postcondition with the sub-expressions equal to the whole range's end
    (``n*m`` = E with the outer counter at its final value) replaced by E_d."""
    out: List[A.Expr] = []
    k = A.Var("k$")

    def inside(h, node, seen=()):  # node in loop h's body, or in a loop nested in it
        body = loops[h]["body"]
        return node in body or any(
            inside(g, node, seen + (h,)) for g in loops if g != h and g in body and g not in seen
        )

    depth = {h: sum(1 for g in loops if g != h and inside(g, h)) for h in loops}
    for edge, ax in axioms.items():
        chain = [
            loops[h]
            for h in sorted(
                (h for h in loops if inside(h, edge[0]) and loops[h]["counter"] is not None), key=lambda h: depth[h]
            )
        ]  # outermost first
        if len(chain) < 2 or any(lp["counter"].step < 0 for lp in chain):
            continue
        cnts = [lp["counter"] for lp in chain]
        names = {c.name for c in cnts}
        starts = {c.name: c.init for c in cnts}
        for f in _good_facts(ax):
            idx = {n.index for n in A.walk(f) if isinstance(n, A.Index)}
            if len(idx) != 1:
                continue
            E = next(iter(idx))
            if not names <= set(free_vars(E)):
                continue
            body = replace_all(f, E, k)
            if set(free_vars(body)) & names:
                continue
            E0 = subst(E, starts)
            total = subst(E, {**starts, cnts[0].name: cnts[0].final()})
            for d in range(len(cnts)):
                Ed = subst(E, {c.name: c.init for c in cnts[d + 1 :]})
                out.append(A.Quant("forall", "k$", E0, Ed, False, body))
                for c in post:
                    for v in _count_forms(c, total, Ed, bounds=True):
                        out.extend(split_post(v))
    return out


def _good_facts(ax) -> List[A.Expr]:
    """The conjuncts of an axiom's ¬bad, two-sided ones also as their one-sided halves."""
    return [f for nb in negated_conjuncts(ax.bad) for f in one_sided(nb)]


# ---------------------------------------------------------------------------- the pool


def candidate_pool(cfa, axioms, loops, split: bool = False, lean: bool = False) -> List[A.Expr]:
    """Candidate predicates usable at every node (see the module docstring). ``lean``: only the
    claim's own forms (its conjuncts, prefix forms and sentinel splits, counter ranges, the
    axioms' facts carried and accumulated, branch conditions and assignments) and the user's
    invariants, without the families for particular loop shapes (closed forms, arrays, searches,
    deviations, scans, ranked copies, exit forms; :func:`node_pools` adds no guarded forms for it
    either): the prover tries it first, since Houdini over the families costs most loops that
    need none of them."""
    pool: List[A.Expr] = []
    seen = set()

    def add(c):
        if isinstance(c, A.BoolLit) or c in seen:
            return
        seen.add(c)
        pool.append(c)

    post = [p for e in cfa.ensures for c in conjuncts(e) for p in split_post(c, quantified=False)]
    if not lean:
        post += [c for c in exit_candidates(cfa, loops, post) if c not in post]  # tail.py: `last := i`
    # the parts of a quantified conjunction (split_post) come last in the pool: their forms
    # pushed back into a loop body would otherwise take MAX_BACKWARD's places from the forms of
    # the whole claim, which a loop over several cases (sparse vector's three answers) needs
    parts: List[A.Expr] = [q for c in post for q in split_post(c)[1:]]
    for c in post:
        add(c)
    # a one-pass top-k scan's ranked copies (argmax.py): first, so that their forms pushed back
    # into the loop body are not cut off by MAX_BACKWARD (empty for every other loop)
    for c in () if lean else ranked_candidates(cfa, loops):
        add(c)
    counters = []
    for h, lp in loops.items():
        cnt = lp["counter"]
        if cnt is None:
            continue
        counters.append((h, lp, cnt))
        i = A.Var(cnt.name)
        lo, hi = (cnt.init, cnt.final()) if cnt.step > 0 else (cnt.final(), cnt.init)
        add(A.Binary("<=", lo, i))
        add(A.Binary("<=", i, hi))
        if abs(cnt.step) > 1:  # the counter's progression: init, init + k, …
            diff = A.Binary("-", i, cnt.init) if cnt.step > 0 else A.Binary("-", cnt.init, i)
            add(A.Binary("==", A.Binary("mod", diff, A.num(abs(cnt.step))), A.num(0)))
        # prefix forms: the part of the range done so far, and the number of iterations done
        if cnt.step > 0:
            variants = [v for c in post for v in _replace_subsets(c, cnt.limit, i)]
        else:  # counting down: ranges start at i + 1 (or at i, when the body reads index i - 1)
            variants = [
                v for c in post for new in (A.Binary("+", i, A.num(1)), i) for v in _replace_subsets(c, cnt.limit, new)
            ]
            variants = [w for v in variants + post for w in [v] + _count_forms(v, cnt.done(cnt.final()), cnt.done())]
        for v in variants:
            for w in split_post(v, quantified=False):
                add(w)
            parts.extend(split_post(v)[1:])
    for (u, _v, _k), ax in axioms.items():
        facts = _good_facts(ax)
        for f in facts:
            add(f)
        # carried and accumulated forms: one-sided facts only (the two imply the abs form)
        facts = [f for f in facts if not (len(one_sided(f)) > 1)] or facts
        for _h, lp, cnt in counters:
            if u not in lp["body"]:
                continue
            name, init = cnt.name, cnt.init
            i = A.Var(name)
            started = A.Binary("<", init, i) if cnt.step > 0 else A.Binary("<", i, init)
            # the iterations done: init..i (exclusive) counting up, i+1..init (inclusive) counting down
            done_lo, done_hi, incl = (init, i, False) if cnt.step > 0 else (A.Binary("+", i, A.num(1)), init, True)
            shift = counter_shift(cfa, _h, loops, name, u)  # i := i + 1 at the top of the body: 1
            if shift:
                done_lo, done_hi = plus(done_lo, A.num(shift)), plus(done_hi, A.num(shift))
            copies = _copies(cfa, lp["body"])
            st = cfa.graph.edges[u, _v, _k]["stmt"]
            targets = {t.name for t in getattr(st, "targets", ()) if isinstance(t, A.Var)}
            try:
                counted = [] if lean else over_the_counter(cfa, _h, loops, u, facts, targets | {name})
            except (RecursionError, ValueError, TypeError):
                counted = []
            for f in counted:
                add(f)
            for f in facts + [g for g in counted if g not in facts]:
                # a fact over the counter from over_the_counter (``sum(j$ in 0..r: c[j$])``, no
                # index needed) is accumulated too, under its own bound variable
                over = f not in facts
                for m in _subst_subsets(copies):
                    g = subst(f, m)
                    if g == f:
                        continue
                    add(g)
                    add(A.Binary("==>", started, g))
                for m in [{}] + _subst_subsets({k2: v2 for k2, v2 in copies.items() if k2 != name}):
                    g = subst(f, m)
                    # a fact reading the counter (``u[r]``, or the utility ``-abs(r - t)`` of
                    # an exponential mechanism over the candidates r) holds for every iteration
                    reads_i = name in set(free_vars(g))
                    if reads_i and not (set(free_vars(g)) & (set(copies) - {name})):
                        qv = "k$" if over or _binds(g, "j$") else "j$"
                        if abs(cnt.step) == 1:
                            add(A.Quant("forall", qv, done_lo, done_hi, incl, subst(g, {name: A.Var(qv)})))
                        else:  # the t-th iteration sampled at init + step * t (+ the shift)
                            at = plus(A.Binary("+", init, A.Binary("*", A.num(cnt.step), A.Var(qv))), A.num(shift or 0))
                            add(A.Quant("forall", qv, A.num(0), cnt.done(), False, subst(g, {name: at})))
    for c in _flattened(loops, axioms, post):
        add(c)
    if not loops:  # branch joins of loop-free selection code (branch_copies.py)
        for c in copied_facts(cfa, [f for ax in axioms.values() for f in _good_facts(ax)]):
            add(c)
    if not lean:  # the families for particular loop shapes
        for c in closed_form_candidates(cfa, loops):
            add(c)
        for c in array_candidates(cfa, loops):  # array_forms.py: filled and tallied arrays
            add(c)
        for c in bracket_candidates(cfa, loops):  # bracket.py: search loops closing in (binary search)
            add(c)
        for c in deviation_candidates(cfa, loops, axioms):
            add(c)
    # the claim split on a sentinel's entry value (``ans == n ==> …``): the claim's own forms
    for c in sentinel_candidates(cfa, loops, post, _prefix_forms):
        add(c)
    if not lean:
        for c in scan_candidates(cfa, loops):  # before exit_forms: a scan's facts are read after it
            add(c)
        for c in filtered_candidates(cfa, loops, list(pool)):  # a running best over filtered elements
            add(c)
        for c in exit_forms(cfa, loops, list(pool)):
            add(c)
        for c in rank_candidates(cfa, loops, post):  # rank_count.py: ranked loops' rank and exit forms
            add(c)
    for c in user_invariants(cfa):
        add(c)
    for c in parts if split else ():
        add(c)
    for _u, _v, _k, d in cfa.edges():
        st = d["stmt"]
        if isinstance(st, A.Assume):
            for c in conjuncts(st.cond):
                if not isinstance(c, A.BoolLit):
                    add(c)
                    add(not_(c))
        elif (
            isinstance(st, A.Assign)
            and isinstance(st.targets[0], A.Var)
            and st.targets[0].name not in set(free_vars(st.value))
            and not st.targets[0].name.startswith("$")
        ):
            add(A.Binary("==", st.targets[0], st.value))
    return pool


def _prefix_forms(c: A.Expr, cnt) -> List[A.Expr]:
    """``c`` with some occurrences of the loop's limit replaced by its counter (counting up)."""
    return _replace_subsets(c, cnt.limit, A.Var(cnt.name)) if cnt.step > 0 else []


def _copies(cfa, body) -> Dict[str, A.Expr]:
    """Variable copies ``x := y`` in a loop body, as the reverse map y ↦ x."""
    out: Dict[str, A.Expr] = {}
    for x, y in body_copies(cfa, body):
        out.setdefault(y, A.Var(x))
    return out


def _subst_subsets(m: Dict[str, A.Expr]) -> List[Dict[str, A.Expr]]:
    keys = sorted(m)[:4]
    out = []
    for r in range(1, len(keys) + 1):
        for ks in itertools.combinations(keys, r):
            out.append({k: m[k] for k in ks})
    return out


def node_pools(cfa, dag, pool: List[A.Expr], guards: bool = True) -> Dict[int, List[A.Expr]]:
    """The pool at every node plus the candidates pushed back from its successors (with
    ``guards``, also those guarded by a branch on a loop's local, :func:`_guarded`)."""
    order = list(nx.topological_sort(dag))
    extra: Dict[int, List[A.Expr]] = {n: [] for n in order}
    locals_at = _loop_locals(cfa)
    base = set(pool)
    guarded: set = set()  # guarded candidates (_guarded) and their pushed-back forms: capped apart
    for n in reversed(order):
        acc: List[A.Expr] = []
        gacc: List[A.Expr] = []
        seen: set = set()
        for _u, v, _k, d in cfa.out_edges(n):
            if d.get("back"):
                continue
            for c in list(pool) + extra.get(v, []):
                pushed = push_back(d["stmt"], c)
                if pushed is None or pushed in base or pushed in seen or isinstance(pushed, A.BoolLit):
                    continue
                seen.add(pushed)
                (gacc if c in guarded else acc).append(pushed)
        # loop-free code (a selection chain labelled on its CFA) keeps every pushed-back
        # candidate: each branch pushes the whole claim back, and the cap would cut it off
        extra[n] = acc if not cfa.loop_heads else acc[:MAX_BACKWARD]
        if guards and n in locals_at:
            gacc = gacc[: 3 * MAX_GUARDED] + _guarded(cfa, n, extra, locals_at[n], base | seen)
            guarded.update(gacc)
            extra[n] += gacc
    return {n: list(pool) + extra[n] for n in order}


def _loop_locals(cfa) -> Dict[int, Tuple[set, set]]:
    """For each node inside a loop body that assigns more than counters: the variables the
    body assigns other than by a step ``x := x ± k`` (a clipped copy ``v := x[i]; if (v > B)
    { v := B; }``, an accumulator), and those it assigns by a step (counters)."""
    out: Dict[int, Tuple[set, set]] = {}
    for h in cfa.loop_heads:
        body = loop_body(cfa, h)
        names: set = set()
        counters: set = set()
        for u, v, _k, d in cfa.edges():
            st = d["stmt"]
            if u in body and v in body and isinstance(st, A.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                if isinstance(t, A.Var):
                    step = (
                        isinstance(st.value, A.Binary)
                        and st.value.op in ("+", "-")
                        and st.value.left == t
                        and isinstance(st.value.right, A.Num)
                    )
                    (counters if step else names).add(t.name)
        if names:
            for n in body:
                ls, cs = out.setdefault(n, (set(), set()))
                ls.update(names)
                cs.update(counters)
    return out


def _guarded(cfa, n: int, extra, assigned: Tuple[set, set], known: set) -> List[A.Expr]:
    """At a branch on a loop's local or counter (``if (v < -B) { v := -B; }``, ``if (i >= w) { s
    := s - x[i - w]; }``; ``assigned``: see :func:`_loop_locals`): each candidate pushed back
    into a branch, guarded by the branch's condition (``v < -B ==> s + -B == …`` and
    ``!(v < -B) ==> s + v == …``), the weakest precondition of the join's candidate that an
    unguarded candidate cannot state (it holds on one branch only). Only candidates about
    another variable the loop assigns (the accumulator ``s``, not the tested ``v`` alone); at
    most ``MAX_GUARDED`` per branch."""
    names, counters = assigned
    out: List[A.Expr] = []
    for _u, v, _k, d in cfa.out_edges(n):
        st = d["stmt"]
        if d.get("back") or not isinstance(st, A.Assume) or not (set(free_vars(st.cond)) & (names | counters)):
            continue
        others = names - set(free_vars(st.cond))  # what the branch does not test (the accumulator)
        mine: List[A.Expr] = []

        # those about the iterations first (reading a counter: the loop head's closed forms
        # pushed back, not facts of the loop's end), the branch's own before those already
        # guarded by a later branch
        def rank(c):
            return (not (set(free_vars(c)) & counters), isinstance(c, A.Binary) and c.op == "==>")

        for c in sorted(extra.get(v, []), key=rank):
            if not (set(free_vars(c)) & others):
                continue
            g = A.Binary("==>", st.cond, c)
            if g not in known and g not in out and g not in mine:
                mine.append(g)
        out.extend(mine[:MAX_GUARDED])
    return out


# ---------------------------------------------------------------------------- Houdini


class Batch:
    """Decides which of several goals follow from hypotheses and a context (one solver)."""

    def __init__(self, enc, stats, hyps, timeout_ms: int, deadline: Optional[float] = None):
        self.enc, self.stats, self.hyps, self.timeout_ms = enc, stats, list(hyps), timeout_ms
        self.deadline = deadline
        self._base: Optional[z3.Solver] = None
        self._clock = max(int(timeout_ms), 1) * CLOCK_SLACK

    def _solver(self, timeout_ms: int) -> z3.Solver:
        """The one solver of this batch, with the hypotheses asserted once; every query runs in
        its own push/pop scope (creating a solver and re-asserting the hypotheses per query cost
        more than most of Houdini's queries)."""
        if self._base is None:
            self._base = z3.Solver()
            self._base.set("mbqi", False)  # no model search over quantifiers: "unknown" comes fast, with a model
            self._base.add(*self.hyps)
        # z3's resource limit bounds the query, the same on every run; the clock limit, several
        # times longer, only guards against a query whose steps are slow (a loaded machine would
        # otherwise turn Houdini's short queries into "unknown"s and drop candidates at random)
        self._base.set("rlimit", max(int(timeout_ms), 1) * RLIMIT_PER_MS)
        self._clock = max(int(timeout_ms), 1) * CLOCK_SLACK
        self._base.set("timeout", self._clock)  # _check lowers it to the time the proof has left
        return self._base

    def valid_subset(self, ctx: z3.BoolRef, goals: List[z3.BoolRef]) -> List[int]:
        """Indices of the goals that ``hyps ∧ ctx`` implies (each proved by an ``unsat``)."""
        if not goals:
            return []
        apps = transcendental_apps(conj(ctx, *goals, *self.hyps)) if enc_has_apps(self.enc) else []
        if apps and self._all_without_lemmas(ctx, goals):
            return list(range(len(goals)))
        s = self._solver(self.timeout_ms)
        s.push()
        try:
            return self._subset(s, ctx, goals, apps)
        finally:
            s.pop(s.num_scopes())  # back to the hypotheses alone, whatever was left open

    def _subset(self, s, ctx, goals, apps) -> List[int]:
        lem = lemmas_for(apps, self.enc)
        self.stats.lemma_instances += len(lem)
        for _n, x in lem:
            s.add(x)
        s.add(ctx)
        alive = list(range(len(goals)))
        while alive:
            self._tick()
            s.push()
            s.add(z3.Not(conj(*[goals[i] for i in alive])))
            r = self._check(s)
            self.stats.solver_calls += 1
            if r == z3.unsat:
                s.pop()
                return alive
            dropped, undecided = set(), list(alive)
            if r == z3.unknown:
                self.stats.unknowns += 1
            try:  # a counter-model (or, on unknown, z3's candidate model): drop what it falsifies —
                m = s.model()  # dropping is always safe, only "unsat" ever keeps a goal
                vals = {i: m.eval(goals[i], model_completion=True) for i in alive}
                dropped = {i for i in alive if z3.is_false(vals[i])}
                undecided = [i for i in alive if not z3.is_true(vals[i]) and i not in dropped]
            except z3.Z3Exception:
                pass
            s.pop()
            if dropped:
                alive = [i for i in alive if i not in dropped]
                continue
            if r != z3.unsat and undecided and len(undecided) < len(alive):
                # the culprit is among the goals the model could not evaluate (quantified ones)
                ok = set(self._one_by_one(s, goals, undecided))
                bad = [i for i in undecided if i not in ok]
                if bad:
                    alive = [i for i in alive if i not in bad]
                    continue
            return self._one_by_one(s, goals, alive)
        return []

    def _check(self, s):
        t0 = time.monotonic()
        limit = self._clock
        if self.deadline is not None:  # no query runs past the proof's deadline (it ends unknown)
            left = max(int((self.deadline - t0) * 1000), 1)
            if left < self._clock:  # only then: setting a parameter between checks slows z3 down
                s.set("timeout", left)
                limit = left
        try:
            return watchdog.call(s.check, s.ctx, limit / 1000)  # back even if z3 does not stop
        finally:
            self.stats.solver_time += time.monotonic() - t0

    def _all_without_lemmas(self, ctx, goals) -> bool:
        """Whether ``hyps ∧ ctx`` implies every goal even with log/exp as uninterpreted
        functions (no lemma instances): the common case of a batch that is already inductive,
        settled by one short query ("unsat" without extra facts is "unsat" with them)."""
        self._tick()
        s = self._solver(min(self.timeout_ms, LEMMA_FREE_MS))
        s.push()
        try:
            s.add(ctx)
            s.add(z3.Not(conj(*goals)))
            r = self._check(s)
        finally:
            s.pop()
        self.stats.solver_calls += 1
        return r == z3.unsat

    def _one_by_one(self, s, goals, alive) -> List[int]:
        kept = []
        for i in alive:
            self._tick()
            s.push()
            s.add(z3.Not(goals[i]))
            r = self._check(s)
            self.stats.solver_calls += 1
            if r == z3.unknown:
                self.stats.unknowns += 1
            s.pop()
            if r == z3.unsat:
                kept.append(i)
        return kept

    def _tick(self):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Timeout()


def houdini(aut, enc, batch: Batch, pools: Dict[int, List[A.Expr]], states=None, live=None) -> None:
    """Largest subsets of the node pools that are inductive over the automaton's edges
    (candidates refuted by an observed state of :mod:`.samples`, and, given ``live`` (CFA node
    → live variables, :mod:`.liveness`), candidates about dead variables are dropped first)."""
    env0 = enc.env0
    known = set(enc.types)
    # per candidate (by identity: the candidates stay alive in the pools): its encoding over the
    # initial environment, and whether it simplifies to true (useless as a label)
    cache: Dict[int, Tuple[A.Expr, Optional[z3.ExprRef], Optional[bool]]] = {}

    def enc0(c):
        hit = cache.get(id(c))
        if hit is None or hit[0] is not c:
            try:
                z = enc.expr(c, env0)
            except Exception:  # a candidate the encoder cannot express is not used
                z = None
            hit = cache[id(c)] = (c, z, None)
        return hit[1]

    def useful(c):
        z = enc0(c)
        hit = cache[id(c)]
        if hit[2] is None:
            hit = cache[id(c)] = (c, z, z is None or z3.is_true(z3.simplify(z)))
        return not hit[2]

    for n in aut.nodes.values():
        seen = (states or {}).get(n.cfa_node, [])
        pool = pools.get(n.cfa_node, [])
        if live is not None and n.cfa_node in live:
            pool = [c for c in pool if mentions_only_live(c, live[n.cfa_node], known)]
        n.label = [c for c in pool if not refuted(c, seen) and useful(c)]
    root = aut.nodes[aut.root]
    keep = batch.valid_subset(z3.BoolVal(True), [enc0(c) for c in root.label])
    root.label = [root.label[i] for i in keep]
    order = {nid: k for k, nid in enumerate(aut.topological())}
    work = deque(sorted(aut.edges, key=lambda e: (order.get(e.src, 0), e.back)))
    queued = {id(e) for e in work}
    while work:
        e = work.popleft()
        queued.discard(id(e))
        src, dst = aut.nodes[e.src], aut.nodes[e.dst]
        if not dst.label:
            continue
        st = StepState(dict(env0), [enc0(c) for c in src.label], [], z3.RealVal(0), [])
        st2 = step(enc, st, e.stmt, e.axiom)
        moved = [(env0[k], v) for k, v in st2.env.items() if not v.eq(env0[k])]
        goals = substitute_all([enc0(c) for c in dst.label], moved)
        keep = batch.valid_subset(st2.context(), goals)
        if len(keep) != len(dst.label):
            dst.label = [dst.label[i] for i in keep]
            for x in aut.out(dst.id):
                if id(x) not in queued:
                    work.append(x)
                    queued.add(id(x))


# ---------------------------------------------------------------------------- user invariants


def user_invariants(cfa) -> List[A.Expr]:
    """The user's loop ``invariant`` clauses, every loop's, in source order (candidates)."""
    return [inv for head in sorted(getattr(cfa, "invariants", {}) or {}) for inv in cfa.invariants[head]]


def explain_user_invariants(aut, enc, batch: Batch, cfa) -> List[str]:
    """Why each user invariant that Houdini dropped at its loop head was dropped: "not implied on
    entry" when the labels before the loop do not imply it on an edge into the head, else "not
    inductive" (one iteration of the body does not preserve it, given the other facts found).
    An invariant the encoder cannot express, or one that is trivially true, is not reported."""
    out: List[str] = []
    env0 = enc.env0
    for head, invs in sorted((getattr(cfa, "invariants", {}) or {}).items()):
        nodes = [n for n in aut.nodes.values() if n.cfa_node == head]
        for inv in invs:
            if all(inv in n.label for n in nodes):
                continue
            try:
                z = enc.expr(inv, env0)
            except Exception:  # the encoder's own error is not the user's problem here
                continue
            if z3.is_true(z3.simplify(z)):
                continue
            entry_ok = True
            for e in aut.edges:
                if e.back or not any(e.dst == n.id for n in nodes):
                    continue
                src = aut.nodes[e.src]
                st = StepState(dict(env0), [enc.expr(c, env0) for c in src.label], [], z3.RealVal(0), [])
                st2 = step(enc, st, e.stmt, e.axiom)
                moved = [(env0[k], v) for k, v in st2.env.items() if not v.eq(env0[k])]
                if not batch.valid_subset(st2.context(), substitute_all([z], moved)):
                    entry_ok = False
                    break
            why = (
                ("not inductive: one iteration of the loop body does not preserve it (given the other facts found)")
                if entry_ok
                else "not implied on entry to the loop"
            )
            out.append(f"the invariant at {_where(cfa, inv)} was {why}")
    return out


def _where(cfa, e: A.Expr) -> str:
    path = getattr(cfa, "path", None) or "<string>"
    return f"{path}:{e.pos.line}:{e.pos.col}" if e.pos is not None else path
