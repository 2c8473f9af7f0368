"""Failure bounds κ for a CFA with loops, computed from the chosen axioms (no search).

κ(q) is "the failure probability spent so far" as an expression over the state at node q
(inputs, loop counters, and Boolean flags). It is *computed*, then *checked* by
:mod:`.check` (rules STEP and BUDGET) — a wrong κ makes the proof fail, never makes it wrong.

* Along loop-free code κ adds each sampling's axiom cost.
* Where branches join, κ is ``max`` of the incoming values — or, when one branch assigned a
  Boolean literal to a flag ``f`` that the other branch did not assign, ``f ? κ1 : κ2``
  (path-sensitive; STEP checks that the flag really tells the branches apart).
* An assignment ``i := i + k`` rewrites κ by ``i ↦ i - k`` (``i := i - k`` by ``i ↦ i + k``); ``f := true`` rewrites by
  ``f ↦ false`` (κ was computed for the state before, where the flag had the other value —
  checked by STEP); any other write to a variable of κ makes κ unavailable.
* A loop head with counter ``i`` (``i := lo`` before, ``i := i + 1`` in the body) gets
  ``κ_in + c · (i - lo)`` (counting down, ``i := i - 1``: ``κ_in + c · (lo - i)``), where ``c`` is the cost of one iteration (the κ of the body from 0 at
  the latch; nested loops included, as their own terms with the counter's final value).
  If one iteration costs ``f ? A : B`` where ``f`` is a flag whose truth ends the loop (the
  loop condition has the conjunct ``!f``), the expensive iteration happens at most once:
  ``κ_in + B · (i - lo) + (f ? A - B : 0)``.
* When the cost of one iteration is a polynomial in the loop's own counter (a triangular nest,
  ``for j in i+1..n`` inside ``for i in 0..n``), the term is its sum over the iterations done,
  computed by sympy (:func:`tamp.prover.counting.recurrence.counter_sum`): r·(n-1-i) per iteration gives
  r·(i·n - i - i·(i-1)/2) at the head, r·n·(n-1)/2 at the exit — checked by STEP like any κ.
* Where the branches of an ``if`` on a *counter guard* join inside a counted loop (a condition
  linear in the loop's counter, ``i >= w - 1``: :func:`tamp.prover.counting.guards.threshold`), κ is
  ``K + (g ? a : b)`` for the arms ``K + a`` and ``K + b`` (STEP checks it with the guard, which
  the branch's labels carry), and the loop's term sums the cost over the iterations whose counter
  passes the guard, ``a · max(0, i - max(lo, c))`` (:func:`tamp.prover.counting.guards.guarded_sum`): a
  sliding window sampled once full pays for n - w + 1 windows, not n iterations. A guard whose
  cost cannot be summed so makes that loop's joins take ``max`` again.
* After a loop whose condition is only ``i < hi`` (``i <= hi``), ``i`` is replaced by ``hi``
  (``hi + 1``); counting down, ``i > lo`` (``i >= lo``) gives ``lo`` (``lo - 1``).

The result also lists *budget hints*: for every loop term ``c · (i - lo)`` the monotonicity
facts ``i <= H ⇒ c·(i - lo) <= c·(H - lo)`` and ``i + 1 <= H ⇒ c·(i - lo + 1) <= c·(H - lo)``
(H the counter's bound; counting down ``i >= H ⇒ c·(lo - i) <= c·(lo - H)`` and
``i - 1 >= H ⇒ c·(lo - i + 1) <= c·(lo - H)``); each is added as a hypothesis only after z3 proved it valid under
``requires`` (see :func:`tamp.prover.loops.prove.budget_hints`), and recorded in the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import networkx as nx

from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars
from tamp.cfa.loops import loop_body
from tamp.prover.base.exprs import ZERO, conjuncts, iterations_done, plus, subst
from tamp.prover.counting.guards import guarded_sum, has_guard, summands, threshold
from tamp.prover.counting.rank_count import (
    NoRankKappa,
    backward_kappa,
    backward_nodes,
    exit_term,
    head_term,
    unit_cost,
    written_in,
)
from tamp.prover.counting.recurrence import counter_sum, written
from tamp.show import show_expr


class NoKappa(Exception):
    """κ cannot be expressed for this program with these axioms."""


@dataclass
class LoopTerm:
    """``per · (counter - init)``: one loop's contribution to κ at its head."""

    head: int
    counter: str
    init: A.Expr
    bound: A.Expr  # H: the counter's final value; it stays between init and H in the loop
    per: A.Expr
    step: int = 1  # +1: per · (counter - init), counter <= H; -1: per · (init - counter), counter >= H
    total: Optional[A.Expr] = None  # the term itself when per depends on the counter (a sum over iterations)
    guarded: bool = False  # per has terms ``g ? A : B``, g a guard on the counter (guards.py)


@dataclass
class Kappa:
    """κ at every CFA node, and the loop terms it was built from."""

    at: Dict[int, A.Expr]
    terms: List[LoopTerm] = field(default_factory=list)
    ranked: List[int] = field(default_factory=list)  # heads of the loops counted by a rank (rank_count.py)


# ---------------------------------------------------------------------------- smart constructors


def kmax(a: A.Expr, b: A.Expr) -> A.Expr:
    if a == b:
        return a
    if a == ZERO:
        return b
    if b == ZERO:
        return a
    return A.Call("max", (a, b))


def kcond(c: A.Expr, a: A.Expr, b: A.Expr) -> A.Expr:
    """``c ? a : b`` with equal arms and literal conditions folded."""
    if a == b:
        return a
    if isinstance(c, A.BoolLit):
        return a if c.value else b
    return A.Cond(c, a, b)


class _Simplify(Transformer):
    """Literal conditions and zero summands folded, in ``?:``, ``+``, ``-`` and ``max`` (the
    shapes κ is built from); other sub-expressions are left as they are."""

    def enter(self, e):
        if (
            isinstance(e, A.Cond)
            or (isinstance(e, A.Binary) and e.op in ("+", "-"))
            or (isinstance(e, A.Call) and e.func == "max")
        ):
            return DESCEND
        return e

    def Cond(self, e, kids):
        c, a, b = kids
        if isinstance(c, A.Unary) and c.op == "!" and isinstance(c.operand, A.BoolLit):
            c = A.BoolLit(not c.operand.value)
        return kcond(c, a, b)

    def Binary(self, e, kids):
        left, right = kids
        if e.op == "+":
            return plus(left, right)
        return left if right == ZERO else A.Binary("-", left, right)

    def Call(self, e, kids):
        return kmax(kids[0], kids[1])


def simplify(e: A.Expr) -> A.Expr:
    """Fold literal conditions and zero summands (after a substitution); a κ that sums the
    costs of thousands of samplings is folded without recursion."""
    return _Simplify().walk(e)


# ---------------------------------------------------------------------------- transfer


def _transfer(k: A.Expr, st, axiom, loop_exit_subst=None) -> A.Expr:
    """κ after one statement."""
    if isinstance(st, A.Sample):
        names = {A.target_name(t) for t in st.targets}
        cost = axiom.cost if axiom is not None else ZERO
        if names & (set(free_vars(k)) | set(free_vars(cost))):
            raise NoKappa("a sampled variable occurs in the failure bound")
        return plus(k, cost)
    if isinstance(st, A.Assign):
        t = st.targets[0]
        name = A.target_name(t)
        if name not in set(free_vars(k)):
            return k
        v = st.value
        if (
            isinstance(t, A.Var)
            and isinstance(v, A.Binary)
            and v.op in ("+", "-")
            and v.left == t
            and isinstance(v.right, A.Num)
        ):  # i := i ± c: κ before is κ after with i ↦ i ∓ c
            return subst(k, {name: A.Binary("-" if v.op == "+" else "+", t, v.right)})
        if isinstance(t, A.Var) and isinstance(v, A.BoolLit):
            return simplify(subst(k, {name: A.BoolLit(not v.value)}))
        raise NoKappa(f"the failure bound depends on '{name}', which is reassigned")
    if loop_exit_subst:
        return simplify(subst(k, loop_exit_subst))
    return k


def _flag_write(st) -> Optional[Tuple[str, bool]]:
    if isinstance(st, A.Assign) and isinstance(st.targets[0], A.Var) and isinstance(st.value, A.BoolLit):
        return st.targets[0].name, st.value.value
    return None


Guards = Dict[A.Expr, bool]  # branch conditions assumed since the region start (True: held)


def _guards_after(gd: Guards, st) -> Guards:
    """The branch conditions known after statement ``st``: an ``assume(c)`` adds c (``!c`` adds
    c as false); a write drops every condition reading what it writes."""
    if isinstance(st, A.Assume):
        c = st.cond
        if isinstance(c, A.BoolLit):
            return gd
        out = dict(gd)
        if isinstance(c, A.Unary) and c.op == "!":
            out[c.operand] = False
        else:
            out[c] = True
        return out
    if isinstance(st, (A.Assign, A.Sample)):
        names = {A.target_name(t) for t in st.targets}
        if any(names & set(free_vars(c)) for c in gd):
            return {c: v for c, v in gd.items() if not names & set(free_vars(c))}
    return gd


def _split(c: A.Expr, kt: A.Expr, ko: A.Expr) -> A.Expr:
    """``c ? kt : ko`` with the summands both arms start with taken out of the conditional
    (``K + a`` and ``K`` give ``K + (c ? a : 0)``), so a loop's cost per iteration is a sum of
    guarded terms (:func:`tamp.prover.counting.guards.guarded_sum`)."""
    ts, os_ = summands(kt), summands(ko)
    n = 0
    while n < min(len(ts), len(os_)) and ts[n] == os_[n]:
        n += 1
    rest_t: A.Expr = ZERO
    rest_o: A.Expr = ZERO
    for t in ts[n:]:
        rest_t = plus(rest_t, t)
    for o in os_[n:]:
        rest_o = plus(rest_o, o)
    out: A.Expr = ZERO
    for t in ts[:n]:
        out = plus(out, t)
    return plus(out, kcond(c, rest_t, rest_o))


def _join(
    vals: List[Tuple[A.Expr, Dict[str, bool], Guards]], usable: Optional[Callable[[A.Expr], bool]] = None
) -> Tuple[A.Expr, Dict[str, bool], Guards]:
    """Join incoming (κ, flags written since the region start, branch conditions known) triples.
    Where the κ differ: a flag one side set tells them apart (``f ? κ1 : κ2``); else a branch
    condition assumed true on one side and false on the other that ``usable`` accepts (a
    counter guard of the loop around the join: ``c ? κ1 : κ2``); else their ``max``."""
    k, fl, gd = vals[0]
    for k2, fl2, gd2 in vals[1:]:
        if k != k2:
            pick = None
            for f, val in fl.items():
                if f not in fl2 or fl2[f] != val:
                    pick = (f, val, k, k2)
                    break
            if pick is None:
                for f, val in fl2.items():
                    if f not in fl:
                        pick = (f, val, k2, k)
                        break
            guard = None
            if pick is None and usable is not None:
                guard = next((c for c, v in gd.items() if gd2.get(c) == (not v) and usable(c)), None)
            if pick is not None:
                f, val, kt, ko = pick
                k = kcond(A.Var(f), kt, ko) if val else kcond(A.Var(f), ko, kt)
            elif guard is not None:
                k = _split(guard, k, k2) if gd[guard] else _split(guard, k2, k)
            else:
                k = kmax(k, k2)
        fl = {f: v for f, v in fl.items() if fl2.get(f) == v}
        gd = {c: v for c, v in gd.items() if gd2.get(c) == v}
    return k, fl, gd


def _at_most_once(flag: str, lp, cfa) -> bool:
    """Whether the iteration that sets Boolean ``flag`` can be charged once: the loop condition
    has the conjunct ``!flag`` (setting it ends the loop), or no statement of the loop body
    writes anything but ``true`` to it (once set it stays set; an iteration that starts with it
    set costs the cheap arm, which the STEP check of the head's κ confirms)."""
    f = A.Var(flag)
    if A.Unary("!", f) in conjuncts(lp["cond"]):
        return True
    writes = [
        d["stmt"]
        for u, _v, d in cfa.graph.edges(data=True)
        if u in lp["body"]
        and isinstance(d["stmt"], (A.Assign, A.Sample))
        and flag in {A.target_name(t) for t in d["stmt"].targets}
    ]
    return bool(writes) and all(_flag_write(st) == (flag, True) for st in writes)


# ---------------------------------------------------------------------------- computation


class _Unguard(Exception):
    """The cost of one iteration of this loop (head ``head``) has a counter guard that cannot be
    summed: κ is computed again with its joins taking ``max`` instead."""

    def __init__(self, head: int):
        super().__init__(head)
        self.head = head


def compute_kappa(cfa, axioms: Dict, loops, dag) -> Kappa:
    """κ for every CFA node (see the module docstring)."""
    inputs = {p.name for p in cfa.params}
    guarded = {
        h
        for h, lp in loops.items()
        if lp["counter"] is not None and abs(lp["counter"].step) == 1 and lp.get("rank") is None
    }
    innermost: Dict[int, int] = {}  # node -> head of the innermost loop whose body holds it
    for h in sorted(loops, key=lambda h: len(loops[h]["body"]), reverse=True):
        for n in loops[h]["body"]:
            innermost[n] = h
    while True:
        try:
            return _compute(cfa, axioms, loops, dag, inputs, guarded, innermost)
        except _Unguard as exc:
            guarded = guarded - {exc.head}


def _compute(cfa, axioms: Dict, loops, dag, inputs, guarded, innermost) -> Kappa:
    """κ for every CFA node, joins inside the loops of ``guarded`` split on counter guards."""
    order = list(nx.topological_sort(dag))
    terms: List[LoopTerm] = []

    wcache: Dict[int, set] = {}

    def writes(h: int) -> set:
        if h not in wcache:
            wcache[h] = written(cfa, loops[h]["body"])
        return wcache[h]

    def usable_at(n: int) -> Optional[Callable[[A.Expr], bool]]:
        h = innermost.get(n)
        if h is None or h not in guarded:
            return None
        name = loops[h]["counter"].name

        def usable(g: A.Expr) -> bool:
            fv = set(free_vars(g))
            return name in fv and fv <= inputs | {name} and threshold(g, name, cfa.types) is not None

        return usable

    ins = {n: list(cfa.graph.in_edges(n, keys=True, data=True)) for n in order}
    # loops counted by a ranking function (rank_count.py): their bodies get κ backwards from
    # the head, and the code after them κ_in + per · (the rank on entry)
    ranked = {h: lp["rank"] for h, lp in loops.items() if lp.get("rank") is not None}
    ranked_body = {n for h in ranked for n in backward_nodes(cfa, h)}
    exit_per: Dict[int, A.Expr] = {}  # ranked loop head -> the cost of one of its iterations

    def region(nodes, start, k0):
        kap: Dict[int, Tuple[A.Expr, Dict[str, bool], Guards]] = {start: (k0, {}, {})}
        k_in: Dict[int, A.Expr] = {}  # ranked loop head -> κ on entry to it (this region)
        skip = ranked_body - nodes if start in ranked else ranked_body
        for n in order:
            if n not in nodes or n == start or n in skip:
                continue
            vals = []
            for u, _v, key, d in ins[n]:
                if d.get("back") or u not in kap:
                    continue
                if u in exit_per and loops[u]["exit"] == (u, n) and u in k_in:
                    # after a ranked loop: at most (rank on entry) iterations were done
                    vals.append((plus(k_in[u], exit_term(ranked[u], exit_per[u])), {}, {}))
                    continue
                ex = None
                if u in loops and loops[u]["exit"] == (u, n):
                    c = loops[u]["counter"]
                    if c is not None and c.only:
                        ex = {c.name: c.final()}
                ku, fl, gd = kap[u]
                knew = _transfer(ku, d["stmt"], axioms.get((u, n, key)), ex)
                fw = _flag_write(d["stmt"])
                if fw is not None:
                    fl = dict(fl)
                    fl[fw[0]] = fw[1]
                vals.append((knew, fl, _guards_after(gd, d["stmt"])))
            if not vals:
                continue
            k, fl, gd = _join(vals, usable_at(n))
            if n in loops:
                k_in[n] = k
                k = plus(k, loop_term(n))
                # branch conditions stay known across an inner loop that does not write them
                fl, gd = {}, {c: v for c, v in gd.items() if not set(free_vars(c)) & writes(n)}
            kap[n] = (k, fl, gd)
        return kap

    cache: Dict[int, A.Expr] = {}  # loop head -> its term

    def loop_term(h):
        if h in cache:
            return cache[h]
        lp = loops[h]
        c = lp["counter"]
        inner = region(lp["body"], h, ZERO)
        vals = [inner[u] for u in lp["latches"] if u in inner]
        if not vals:
            raise NoKappa("a loop body has no path back to its head")
        per, _fl, _gd = _join(vals, usable_at(h))
        if per == ZERO:
            cache[h] = ZERO
            return ZERO
        if h in ranked:
            unit = unit_cost(per, written_in(cfa, loop_body(cfa, h)))
            if unit is None:
                raise NoKappa("the cost of one iteration depends on the state: " + show_expr(per))
            exit_per[h] = unit
            cache[h] = head_term(ranked[h], unit)
            return cache[h]
        if c is None:
            line = cfa.graph.nodes[h].get("line")
            raise NoKappa(
                f"the loop{f' at line {line}' if line else ''} samples at a cost but has no recognisable "
                "counter (i := lo before it, i := i + 1 or i := i - 1 in its body, and i < hi, i <= hi, "
                "i > lo or i >= lo in its condition)"
            )
        extra = ZERO
        if isinstance(per, A.Cond) and isinstance(per.cond, A.Var) and _at_most_once(per.cond.name, lp, cfa):
            # the costly iteration sets a flag that ends the loop, or one the loop never clears
            # (and its iterations with the flag set cost at most the cheap arm): it happens at
            # most once. Checked by STEP at the head like every κ.
            extra = A.Cond(per.cond, A.Binary("-", per.then, per.other), ZERO)
            per = per.other
        total = None
        by_guard = h in guarded and (has_guard(per, c.name) or has_guard(extra, c.name))
        if by_guard:
            # a counter guard: the cost is spent only on the iterations whose counter passes it
            total = guarded_sum(per, c, cfa.types, inputs) if c.name not in set(free_vars(extra)) else None
            if total is None:
                raise _Unguard(h)
        elif set(free_vars(per)) - inputs:
            # a triangular nest: the cost of one iteration is a polynomial in the counter, summed
            total = counter_sum(per, c) if set(free_vars(per)) - inputs == {c.name} else None
            if total is None:
                raise NoKappa("the cost of one iteration depends on the state: " + show_expr(per))
        if total is not None:
            term = plus(total, extra)
        else:
            term = plus(A.Binary("*", per, iterations_done(A.Var(c.name), c.init, c.step)), extra)
        terms.append(LoopTerm(h, c.name, c.init, c.final(), per, c.step, total, by_guard))
        cache[h] = term
        return term

    kap = region(set(cfa.graph.nodes), cfa.entry, ZERO)
    at = {n: k for n, (k, _fl, _gd) in kap.items()}
    for h, rc in ranked.items():
        if h not in at:
            continue
        try:
            at.update(backward_kappa(cfa, rc, at[h], axioms))
        except NoRankKappa as exc:
            raise NoKappa(str(exc)) from None
    return Kappa(at, terms, sorted(h for h in ranked if h in at))
