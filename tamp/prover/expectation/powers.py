"""Invariant expectations for "every trial so far missed": powers of a per-iteration miss chance.

A loop that runs its body m more times and fails only if each of those runs misses an event of
chance a (a coin ``bern(a)`` comes up, a uniform sample hits one given value of N, …) fails
with probability at most ``(1 - a)^m`` times the failure indicator F of the state. The
language has no power operator, and a claim about such a loop is written with the constant e
(``exp(-1)`` for "(1 - 1/n)^n <= 1/e", ``exp(-k·n/m)`` for a Bloom-filter bit still zero), so
the cores proposed here are the exponential majorant of that power:

    core = F · exp(-a · (iterations left))

(one factor ``exp(-a_j·m)`` per independent chance, i.e. ``exp(-(a_1 + … + a_r)·m)`` for r
coins per iteration; the iterations left ``hi - i`` of a ``for`` loop, ``e - c`` of a counted
``while (c < e)``; nested loops multiply the inner loop's trip count into the outer chance).

Why this is sound: these are only proposals. Each core is accepted by the loop search
(:class:`tamp.prover.expectation.prove.Search`) only when INDUCT is valid, decided by the
solver with the certified lemmas of :func:`axioms.lemmas.product_lemmas`:
``exp(x) = exp(y)·exp(x - y)`` and ``exp(d) >= 1 + d`` — so one more miss ``(1 - a)`` fits
under ``exp(-a)``: ``(1 - a)·exp(-a·m) <= exp(-a)·exp(-a·m) = exp(-a·(m + 1))``, which is
the textbook chain ``(1 - a)^m <= exp(-a·m)`` proved one factor at a time (monotonicity of x^m
on [0, 1] is not needed: the induction multiplies by one factor per step). BUDGET then
compares ``exp(-a·m₀)`` with the claimed bound by ``exp-mono`` (a <= b ⇔ exp a <= exp b),
and ``exp(1)`` is e. The certificate carries the core; ``tamp check-proof`` rebuilds INDUCT,
TERM and BUDGET from the source and the core, and re-derives every lemma instance
(:mod:`tamp.certificate.exp_rules`), so a changed chance or exponent is rejected.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

from lang import ast as A
from lang.walk import free_vars, written_vars

ONE = A.num(1)
ZERO = A.num(0)
MAX_CHANCES = 4  # the most distinct per-iteration chances combined


def _minus(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Binary("-", a, b)


def iterations_left(s: A.Stmt) -> List[A.Expr]:
    """The number of iterations a loop has left, read off its header: ``hi - i`` for ``for i in
    lo..hi`` (``hi - i + 1`` inclusive), ``e - c`` (``e - c + 1``) for ``while (c < e)``
    (``while (c <= e)``) whose body raises c by 1. Only proposals (INDUCT decides)."""
    if isinstance(s, A.For):
        left = _minus(s.hi, A.Var(s.var))
        return [A.Binary("+", left, ONE) if s.inclusive else left]
    if not isinstance(s, A.While):
        return []
    out: List[A.Expr] = []
    steps = _unit_counters(s.body)
    guards = [s.cond]
    while guards:
        g = guards.pop()
        if isinstance(g, A.Binary) and g.op == "&&":
            guards += [g.left, g.right]
            continue
        if isinstance(g, A.Binary) and g.op in ("<", "<=") and isinstance(g.left, A.Var) and g.left.name in steps:
            left = _minus(g.right, g.left)
            out.append(A.Binary("+", left, ONE) if g.op == "<=" else left)
    return out


def _unit_counters(body: A.Stmt) -> Set[str]:
    out = set()
    for n in A.walk(body):
        if isinstance(n, A.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var):
            c, v = n.targets[0].name, n.value
            if isinstance(v, A.Binary) and v.op == "+" and v.left == A.Var(c) and v.right == ONE:
                out.add(c)
    return out


def trial_chances(body: A.Stmt, fixed: Set[str]) -> List[A.Expr]:
    """The chances of one trial in one run of ``body`` that read only ``fixed`` variables: ``p``
    and ``1 - p`` for ``bern(p)`` (either outcome may be the event the failure needs to miss),
    ``1/(hi - lo + 1)`` for ``unif(lo, hi)`` (hitting one given value). Loops inside
    ``body`` multiply a chance by their trip count when it reads only ``fixed`` variables (k
    coins of chance a per iteration miss with probability ``(1 - a)^k <= exp(-a·k)``)."""
    out: List[A.Expr] = []

    def add(e: A.Expr) -> None:
        if e not in out and set(free_vars(e)) <= fixed:
            out.append(e)

    def visit(st: A.Stmt, mult: Optional[A.Expr]) -> None:
        for n in A.children(st):
            if isinstance(n, (A.For, A.While)):
                trips = [t for t in iterations_left(n) if set(free_vars(t)) - {_var_of(n)} <= fixed]
                if isinstance(n, A.For) and trips:
                    k = _minus(n.hi, n.lo) if not n.inclusive else A.Binary("+", _minus(n.hi, n.lo), ONE)
                    if set(free_vars(k)) <= fixed:
                        visit(n.body, k if mult is None else A.Binary("*", mult, k))
                continue
            if isinstance(n, A.Sample):
                d = n.dist
                base: List[A.Expr] = []
                if d.func == "bern" and len(d.args) == 1:
                    base = [d.args[0], _minus(ONE, d.args[0])]
                elif d.func == "unif" and len(d.args) == 2:
                    base = [A.Binary("/", ONE, A.Binary("+", _minus(d.args[1], d.args[0]), ONE))]
                for b in base:
                    add(b if mult is None else A.Binary("*", b, mult))
            if isinstance(n, A.Stmt):
                visit(n, mult)

    visit(body, None)
    return out


def _var_of(s: A.Stmt) -> str:
    return s.var if isinstance(s, A.For) else ""


def power_cores(
    s: A.Stmt, f: A.Expr, params: List[str], types: Dict[str, A.Type], facts: Optional[A.Expr] = None
) -> List[A.Expr]:
    """Proposals ``F · exp(-a·m)`` for the loop ``s`` with continuation ``f`` (see the module
    docstring): m one of :func:`iterations_left`, a one of :func:`trial_chances` reading only
    inputs (the chance must be the same in every iteration) or the sum of two of them; with
    ``facts`` (what the loop's counters keep, e.g. ``cnt >= 0``) also ``facts ? F·exp(-a·m) : 1``
    (a state no run reaches may break the induction, and 1 bounds every failure chance)."""
    if not isinstance(s, (A.For, A.While)):
        return []
    body = s.body
    written = set(written_vars(body))
    fixed = {p for p in params if p not in written and types.get(p) in (A.INT, A.REAL)}
    lefts = iterations_left(s)
    chances = trial_chances(body, fixed)[:MAX_CHANCES]
    if not lefts or not chances:
        return []
    pairs = [(chances[i], chances[j]) for i in range(len(chances)) for j in range(i + 1, len(chances))]
    out: List[A.Expr] = []

    def power(a: A.Expr, m: A.Expr) -> A.Expr:
        return A.Call("exp", (A.Unary("-", A.Binary("*", a, m)),))

    for m in lefts:
        # one factor per independent chance: (1 - a)(1 - b) <= exp(-a)·exp(-b) (the solver sees
        # each factor under its own exp; exp(-(a + b)) >= 1 - a - b alone is too weak)
        for fs in [[power(a, m)] for a in chances] + [[power(a, m), power(b, m)] for a, b in pairs]:
            core = f
            for x in fs:
                core = A.Binary("*", core, x)
            out.append(core)
            if facts is not None:
                out.append(A.Cond(facts, core, ONE))
    return out
