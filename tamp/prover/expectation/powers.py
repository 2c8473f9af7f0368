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
and ``exp(1)`` is e. Session 24 widened the chances and shapes (:func:`power_cores`): exact
counts of a uniform draw passing a threshold, also through a running ``min``/``max``
(:func:`count_chances`, :func:`split_extrema`); several independent misses under one exponent
(lemma ``exp-prod`` of :mod:`axioms.powers`: ``Π(1 - a_i) <= exp(-Σ a_i)``; session 27 reads an
integer multiple ``-c·a`` as c misses, so ``(1 - a)^c <= exp(-c·a)`` for written-out coins and a
prefix of coins before a loop, ``(1 - a)²·exp(-a·m) <= exp(-(m + 2)·a)``); exact powers of a
literal chance (``exp(-log 2·m)`` = 2^-m, lemmas ``exp-log``/``exp-pow``/``log-inv``); unions
``Σ [D_i]·P(m)``. The certificate carries the core; ``tamp check-proof`` rebuilds INDUCT,
TERM and BUDGET from the source and the core, and re-derives every lemma instance
(:mod:`tamp.certificate.exp_rules`), so a changed chance or exponent is rejected.

Session 30 reads counts as flags: a counter the body only raises (:func:`raised_counters`),
compared with its start (``up == 0``, ``hits < 1``), is "no trial hit yet", and the capped cores
of :func:`capped_power_cores` are proposed guarded by ``c < c0 ? 1`` (no run is below its start)
and by F one raise later (a failure no trial can undo); a counter of failures compared with the
trial count (``down == L``) gets the capped form of "every trial left must hit"
(:func:`capped_hit_all_cores`). Still proposals only, decided by INDUCT and BUDGET like every
core here, and re-checked from the certificate's core by ``tamp check-proof``.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

from lang import ast as A
from lang.walk import free_vars, substitute, written_vars
from tamp.core.counts import closed_count
from tamp.prover.base.exprs import fold

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


def count_chances(body: A.Stmt, f: A.Expr, fixed: Set[str], types: Dict[str, A.Type]) -> List[A.Expr]:
    """Chances read off exact counts: for a draw ``x ~ unif(lo, hi)`` in ``body`` over ``fixed``
    bounds and a threshold test ``x op c`` (c over ``fixed``) — in an ``if`` of the body, or in
    ``f`` on a variable the body keeps as a running ``v := min(v, x)`` / ``max(v, x)`` (the
    sample passes the test of v iff it passes it itself, :func:`split_extrema`) — the chance
    ``cnt/N`` of passing it and ``1 - cnt/N`` with ``cnt`` the number of the N = hi - lo + 1
    values that pass (:func:`tamp.core.counts.closed_count`, ``max(0, …)`` of interval ends;
    the caller may settle its ``min``/``max`` under ``requires``). Only proposals."""
    draws: Dict[str, A.Call] = {}
    running: Dict[str, str] = {}
    for n in A.walk(body):
        if isinstance(n, A.Sample) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var):
            d = n.dist
            if d.func == "unif" and len(d.args) == 2 and set(free_vars(d)) <= fixed:
                draws[n.targets[0].name] = d
    for n in A.walk(body):
        if isinstance(n, A.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var):
            v, e = n.targets[0].name, n.value
            if isinstance(e, A.Call) and e.func in ("min", "max") and len(e.args) == 2 and A.Var(v) in e.args:
                other = e.args[1] if e.args[0] == A.Var(v) else e.args[0]
                if isinstance(other, A.Var) and other.name in draws:
                    running[v] = other.name
    tests: List[tuple] = []
    for n in list(A.walk(body)) + list(A.walk(f)):
        if not (isinstance(n, A.Binary) and n.op in _FLIP):
            continue
        for w, c, op in ((n.left, n.right, n.op), (n.right, n.left, _FLIP[n.op])):
            if isinstance(w, A.Var) and set(free_vars(c)) <= fixed:
                x = w.name if w.name in draws else running.get(w.name)
                if x is not None and op != "==" and (x, op, c) not in tests:  # ==: trial_chances' 1/N
                    tests.append((x, op, c))
    out: List[A.Expr] = []

    is_int = int_of(types)
    for x, op, c in tests:
        lo, hi = draws[x].args
        u = A.Var("u$")
        cnt = closed_count(A.Sum("u$", lo, hi, True, A.Cond(A.Binary(op, u, c), ONE, ZERO)), is_int)
        if cnt is None:
            continue
        q = A.Binary("/", cnt, A.Binary("+", _minus(hi, lo), ONE))
        for e in (q, _minus(ONE, q)):
            if e not in out:
                out.append(e)
    return out


def _exact_base(a: A.Expr) -> Optional[A.Expr]:
    """``1/(1 - a)`` as a literal when the chance ``a`` is a literal in (0, 1): the exact power
    ``(1 - a)^m = exp(-log(1/(1 - a))·m)`` (``2^-m`` for a fair coin) is then a core."""
    v = _literal(a)
    if v is None or not 0 < v < 1:
        return None
    b = 1 / (1 - v)
    return A.Num(b, b.denominator == 1)


def exact_base(a: A.Expr) -> Optional[A.Expr]:
    """``1/(1 - a)`` for a symbolic chance ``a`` (the base of the exact power ``(1 - a)^m =
    exp(-log(1/(1 - a))·m)``), read off its syntax: ``N`` for ``a = 1 - 1/N``, ``1/(1 - p)`` for
    anything else; None for a literal (:func:`_exact_base` proposes those first). A proposal
    only: INDUCT checks that one more miss fits (``exp-pow``: exp(-log b) = 1/b)."""
    if _literal(a) is not None:
        return None
    if isinstance(a, A.Binary) and a.op == "-" and a.left == ONE:
        miss = a.right
        if isinstance(miss, A.Binary) and miss.op == "/" and miss.left == ONE:
            return miss.right
        return A.Binary("/", ONE, miss)
    return A.Binary("/", ONE, _minus(ONE, a))


def symbolic_chances(body: A.Stmt, chances: List[A.Expr], fixed: Set[str]) -> List[A.Expr]:
    """``chances`` and, for each draw ``unif(lo, hi)`` of ``body`` over ``fixed`` bounds, the chance
    ``1 - 1/N`` (N = hi - lo + 1) of missing one given value: a failure that needs every trial to
    hit it misses that event in every iteration. At most :data:`MAX_CHANCES`."""
    out = list(chances)
    for n in A.walk(body):
        if isinstance(n, A.Sample) and n.dist.func == "unif" and len(n.dist.args) == 2:
            if set(free_vars(n.dist)) <= fixed:
                lo, hi = n.dist.args
                a = _minus(ONE, A.Binary("/", ONE, A.Binary("+", _minus(hi, lo), ONE)))
                if a not in out:
                    out.append(a)
    return out[:MAX_CHANCES]


def _literal(e: A.Expr) -> Optional[Fraction]:
    if isinstance(e, A.Num):
        return Fraction(e.value)
    if isinstance(e, A.Binary) and e.op in ("-", "/", "+", "*"):
        a, b = _literal(e.left), _literal(e.right)
        if a is None or b is None or (e.op == "/" and b == 0):
            return None
        return {"-": a - b, "+": a + b, "*": a * b, "/": a / b if b else a}[e.op]
    return None


def _disjuncts(c: A.Expr) -> List[A.Expr]:
    """The disjuncts of a failure condition (double negations dropped, ``!(a && b)`` read as
    ``!a || !b``)."""
    if isinstance(c, A.Unary) and c.op == "!":
        inner = c.operand
        if isinstance(inner, A.Unary) and inner.op == "!":
            return _disjuncts(inner.operand)
        if isinstance(inner, A.Binary) and inner.op == "&&":
            return _disjuncts(A.Unary("!", inner.left)) + _disjuncts(A.Unary("!", inner.right))
    if isinstance(c, A.Binary) and c.op == "||":
        return _disjuncts(c.left) + _disjuncts(c.right)
    return [c]


def union_parts(f: A.Expr) -> List[A.Expr]:
    """``[D_1], …, [D_r]`` (2 <= r <= :data:`MAX_UNION`) when the failure indicator ``f`` is
    ``[D_1 || … || D_r]``; else ``[]``. ``[D_1 || … || D_r] <= Σ [D_i]`` (the union bound)."""
    if not (isinstance(f, A.Cond) and f.then == ONE and f.other == ZERO):
        return []
    ds = _disjuncts(f.cond)
    if not 2 <= len(ds) <= MAX_UNION:
        return []
    return [A.Cond(d, ONE, ZERO) for d in ds]


MAX_UNION = 3  # the most disjuncts of a failure event bounded one product event each
MAX_SUMMED = 3  # the most independent chances summed in one exponent


def power_cores(
    s: A.Stmt,
    f: A.Expr,
    params: List[str],
    types: Dict[str, A.Type],
    facts: Optional[A.Expr] = None,
    settle: Optional[Callable[[A.Expr], A.Expr]] = None,
) -> Iterator[A.Expr]:
    """Proposals ``F · P(m)`` for the loop ``s`` with continuation ``f`` (see the module
    docstring), m one of :func:`iterations_left`, and P(m):

    * ``exp(-a·m)`` for a chance a of :func:`trial_chances` or :func:`count_chances` (``settle``
      simplifies a count's ``min``/``max`` under ``requires``);
    * ``exp(-log(1/(1 - a))·m)`` and ``exp(log(1 - a)·m)`` — exactly ``(1 - a)^m``, in either
      base a claim may use — for a literal chance a (a fair coin's ``2^-m``), checked with
      ``exp-log``/``exp-pow`` (:mod:`axioms.powers`);
    * ``exp(-(a_1 + … + a_r)·m)`` for chances of r <= MAX_SUMMED different draws (every iteration
      must miss r independent events: ``Π(1 - a_i) <= exp(-Σ a_i)``, lemma ``exp-prod``), and,
      as before, the product ``exp(-a·m)·exp(-b·m)``.

    When ``f`` is a union ``[D_1 || … || D_r]`` also ``Σ [D_i]·P(m)`` (one product event per
    disjunct: the union bound at the end, each event's misses multiplied through the loop).
    With ``facts`` (what the loop's counters keep, e.g. ``cnt >= 0``) each also as ``facts ?
    core : 1`` (a state no run reaches may break the induction, and 1 bounds every failure
    chance). All are proposals only; INDUCT, TERM and BUDGET decide."""
    if not isinstance(s, (A.For, A.While)):
        return
    body = s.body
    written = set(written_vars(body))
    fixed = {p for p in params if p not in written and types.get(p) in (A.INT, A.REAL)}
    lefts = iterations_left(s)
    sourced = trial_sources(body, fixed)[:MAX_CHANCES]
    chances = [a for a, _src in sourced]
    counts = count_chances(body, f, fixed, types)
    if not lefts or not (chances or counts):
        return
    counted: Optional[List[A.Expr]] = None  # settled only when the coins' cores are spent
    pairs = [(chances[i], chances[j]) for i in range(len(chances)) for j in range(i + 1, len(chances))]
    src = {a: k for a, k in sourced}
    sums: List[List[A.Expr]] = []
    for r in range(2, MAX_SUMMED + 1):
        for combo in itertools.combinations(chances, r):
            if len({src.get(a) for a in combo}) == r:  # r different draws: independent misses
                sums.append(list(combo))
    seen: List[A.Expr] = []
    parts = union_parts(f)

    def power(a: A.Expr, m: A.Expr) -> A.Expr:
        return A.Call("exp", (A.Unary("-", A.Binary("*", a, m)),))

    def singles(a: A.Expr, m: A.Expr) -> List[List[A.Expr]]:
        out = [[power(a, m)]]
        b = _exact_base(a)
        if b is not None:  # (1 - a)^m as exp(-log(1/(1 - a))·m) and as exp(log(1 - a)·m)
            out.append([power(A.Call("log", (b,)), m)])
            miss = 1 - (_literal(a) or Fraction(0))
            base = A.Num(miss, miss.denominator == 1)
            out.append([A.Call("exp", (A.Binary("*", A.Call("log", (base,)), m),))])
        return out

    def cores(fs: List[A.Expr]) -> Iterator[A.Expr]:
        found = [_product([f] + fs)]
        if parts:
            acc: A.Expr = A.Binary("*", parts[0], _product(fs))
            for d in parts[1:]:
                acc = A.Binary("+", acc, A.Binary("*", d, _product(fs)))
            found.append(acc)
        for core in found:
            if core in seen:
                continue
            seen.append(core)
            yield core
            if facts is not None:
                yield A.Cond(facts, core, ONE)

    for m in lefts:
        # one factor per independent chance: (1 - a)(1 - b) <= exp(-a)·exp(-b) (the solver sees
        # each factor under its own exp; exp(-(a + b)) >= 1 - a - b alone is too weak)
        for a in chances:
            for fs in singles(a, m):
                yield from cores(fs)
        if counted is None:
            counted = [settle(c) for c in counts] if settle is not None else counts
            counted = [c for c in counted if c not in chances][:MAX_CHANCES]
        for a in counted:
            for fs in singles(a, m):
                yield from cores(fs)
        for summed in sums:
            yield from cores([power(_sum(summed), m)])
        for a, b in pairs:
            yield from cores([power(a, m), power(b, m)])
    # last (session 29): the exact power (1 - a)^m = exp(-log(1/(1 - a))·m) of a symbolic chance,
    # and "every trial hits" (miss the chance 1 - 1/N of any other value: (1/N)^m); BUDGET
    # compares them with a claim by the power facts of axioms.bound_facts (Bernoulli: q^r >= q·r)
    for m in lefts:
        for a in symbolic_chances(body, chances, fixed):
            b = exact_base(a)
            if b is not None:
                yield from cores([power(A.Call("log", (b,)), m)])


def _sum(es: List[A.Expr]) -> A.Expr:
    return fold("+", es)


def _product(es: List[A.Expr]) -> A.Expr:
    return fold("*", es)


def trial_sources(body: A.Stmt, fixed: Set[str]) -> List[tuple]:
    """:func:`trial_chances` (in its order) with the draw each comes from — its position among
    the body's samples; a chance of a nested loop (times its trip count) a source of its own:
    chances of different draws are independent."""
    src: Dict[A.Expr, int] = {}
    for k, n in enumerate(x for x in A.walk(body) if isinstance(x, A.Sample)):
        for a in trial_chances(A.Block((n,)), fixed):
            src.setdefault(a, k)
    return [(a, src.get(a, -1 - i)) for i, a in enumerate(trial_chances(body, fixed))]


# ------------------------------------------------------------- extrema of a uniform draw

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
# min(a, x) op c and max(a, x) op c as a conjunction of "a op' c" and "x op' c" (kept), or the
# negation of one (negated): a test and its complement then share one atom of x
_EXTREMA = {
    ("min", ">"): (">", False),
    ("min", ">="): (">=", False),
    ("min", "<="): (">", True),
    ("min", "<"): (">=", True),
    ("max", "<"): ("<", False),
    ("max", "<="): ("<=", False),
    ("max", ">="): ("<", True),
    ("max", ">"): ("<=", True),
}


def split_extrema(f: A.Expr, x: str) -> A.Expr:
    """``f`` with each test of a running minimum or maximum with the sample ``x`` — ``min(a, x)
    > c`` and the like, either way round, x one argument or read by one argument that is itself a
    ``min``/``max`` (split again: the minimum of several draws) — written as a test of ``a`` and a test
    of ``x``: ``min(a, x) > c`` is ``a > c && x > c`` and ``min(a, x) <= c`` is ``!(a > c && x
    > c)`` (dually for max), so a test and its complement read x in the same atom ``x > c`` and
    a uniform draw's chance of passing it is an exact count of integers in an interval
    (:mod:`tamp.core.counts`). Why sound: an identity of the order (min(a, b) > c iff both
    are > c), applied to the expectation before the sample is averaged; the certificate
    checker applies its own copy of the rule (:mod:`tamp.certificate.exp_extrema`)."""

    def walk(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Binary) and e.op in _FLIP:
            for m, c, op in ((e.left, e.right, e.op), (e.right, e.left, _FLIP[e.op])):
                if (
                    isinstance(m, A.Call)
                    and m.func in ("min", "max")
                    and len(m.args) == 2
                    and x not in set(free_vars(c))
                ):
                    reads = [i for i, arg in enumerate(m.args) if x in set(free_vars(arg))]
                    if len(reads) != 1 or not _extremum_of(m.args[reads[0]], x):
                        continue
                    a, b = m.args[1 - reads[0]], m.args[reads[0]]
                    op2, negated = _EXTREMA[(m.func, op)]
                    both = A.Binary("&&", walk(A.Binary(op2, a, c)), walk(A.Binary(op2, b, c)))
                    return A.Unary("!", both) if negated else both
        kids = A.children(e)
        if not kids:
            return e
        return _rebuild(e, walk)

    return walk(f)


def _extremum_of(b: A.Expr, x: str) -> bool:
    """Whether ``b`` is the sample ``x`` itself or a nested ``min``/``max`` of two arguments (whose
    test :func:`split_extrema` splits again: ``min(a, min(b, x)) > c`` is ``a > c && b > c && x > c``)."""
    return b == A.Var(x) or (isinstance(b, A.Call) and b.func in ("min", "max") and len(b.args) == 2)


def _rebuild(e: A.Expr, walk) -> A.Expr:
    if isinstance(e, A.Binary):
        return A.Binary(e.op, walk(e.left), walk(e.right))
    if isinstance(e, A.Unary):
        return A.Unary(e.op, walk(e.operand))
    if isinstance(e, A.Cond):
        return A.Cond(walk(e.cond), walk(e.then), walk(e.other))
    if isinstance(e, A.Call):
        return A.Call(e.func, tuple(walk(a) for a in e.args))
    return e  # sums, quantifiers, indices: left alone (a bound variable may shadow x)


def int_of(types: Dict[str, A.Type]) -> Callable[[A.Expr], bool]:
    """Whether an expression is an integer by its syntax: an integer numeral, an int variable of
    ``types``, or ``+ - *`` of such."""

    def is_int(e: A.Expr) -> bool:
        if isinstance(e, A.Num):
            return e.is_int
        if isinstance(e, A.Var):
            return types.get(e.name) == A.INT
        return isinstance(e, A.Binary) and e.op in ("+", "-", "*") and is_int(e.left) and is_int(e.right)

    return is_int


# ------------------------------------------------------------- every trial hit (session 29)


def _starts(program: A.Stmt, c: str, params: List[str]) -> List[A.Expr]:
    """The values of the assignments ``c := e`` of ``program`` whose ``e`` reads only ``params``."""
    out: List[A.Expr] = []
    for n in A.walk(program):
        if isinstance(n, A.Assign) and n.targets == (A.Var(c),) and set(free_vars(n.value)) <= set(params):
            out.append(n.value)
    return out


def _unit_increments(body: A.Stmt) -> List[str]:
    """The variables ``c`` with exactly one statement ``c := c + 1`` in ``body``, not inside a
    nested loop, and no other assignment to c in ``body``: raised at most once per iteration."""
    out: List[str] = []
    inner = {id(x) for n in A.walk(body) if isinstance(n, (A.For, A.While)) for x in A.walk(n.body)}
    for c in sorted(set(written_vars(body))):
        writes = [n for n in A.walk(body) if isinstance(n, (A.Assign, A.Sample)) and A.Var(c) in n.targets]
        if len(writes) != 1 or id(writes[0]) in inner or not isinstance(writes[0], A.Assign):
            continue
        v = writes[0].value
        if isinstance(v, A.Binary) and v.op == "+" and v.left == A.Var(c) and v.right == ONE:
            out.append(c)
    return out


def hit_all_cores(
    program: A.Stmt, s: A.Stmt, f: A.Expr, params: List[str], types: Dict[str, A.Type]
) -> Iterator[A.Expr]:
    """ "Every trial left must hit": for a ``for i in lo..hi`` loop whose body raises a counter c
    by one at most once per iteration, starting from c0 (an expression over the inputs), the core

        (c - c0 <= i - lo) ? F[c := c + (hi - i)] · exp(-log(b)·(hi - i)) : 1

    for each exact base ``b = 1/(1 - a)`` of a chance a of the body (:func:`exact_base`,
    :func:`_exact_base`): the failure F needs the counter to reach its threshold, which from a
    state with c - c0 = i - lo (every trial so far hit) takes every one of the hi - i trials
    left, each missing the event of chance a; from a state behind that (c - c0 < i - lo) the
    indicator F[c := c + left] is 0 when F is monotone in c. A proposal only: INDUCT decides
    (the guard is 1 where it fails, an upper bound on any chance), BUDGET compares the power
    with the claim by the facts of :mod:`axioms.bound_facts` (q^r >= q·r)."""
    loop = _trial_loop(s, params, types)
    if loop is None:
        return
    trials, fixed, left = loop
    body = trials.body
    chances = symbolic_chances(body, trial_chances(body, fixed), fixed)
    bases: List[A.Expr] = []
    for a in chances:
        lit = _exact_base(a)
        b = lit if lit is not None else exact_base(a)
        if b is not None and b not in bases:
            bases.append(b)
    for _c, guard, reach in _hit_counters(program, trials, f, params, types, left, read_by_f=False):
        for b in bases:
            p = A.Call("exp", (A.Unary("-", A.Binary("*", A.Call("log", (b,)), left)),))
            yield A.Cond(guard, A.Binary("*", reach, p), ONE)


def capped_hit_all_cores(
    program: A.Stmt, s: A.Stmt, f: A.Expr, beta: A.Expr, params: List[str], types: Dict[str, A.Type]
) -> Iterator[A.Expr]:
    """ "Every trial left must hit", for a claim ``a^K`` with K literal (session 30: ``down == t``,
    a counter of failed trials that must reach the trial count): the core of
    :func:`hit_all_cores` with the capped power of :func:`capped_power_cores` for the exact one,

        (c - c0 <= i - lo) ? (F[c := c + (hi - i) - 1] ? 1 : F[c := c + (hi - i)] · a^min(hi - i, K)) : 1

    for a chance a of the body (:func:`trial_chances`) of which β is K <= :data:`MAX_CAP` copies.
    From a state where every trial so far hit, F needs each of the trials left to hit (chance a
    each, so a^left <= a^K for 0 <= a <= 1); behind that F[c := c + left] is 0 when F is monotone
    in c; where F holds even if a trial left misses (a flag the epilogue reads is already up) the
    core is 1. No log of a (a may be 0). A proposal only: INDUCT and BUDGET decide."""
    loop = _trial_loop(s, params, types)
    if loop is None:
        return
    trials, fixed, left = loop
    body = trials.body
    chances = []
    for a in map(_uncomplement, trial_chances(body, fixed)):
        k = _copies(beta, a)
        if 1 <= k <= MAX_CAP and (a, k) not in chances:
            chances.append((a, k))
    if not chances:
        return
    for c, guard, reach in _hit_counters(program, trials, f, params, types, left, read_by_f=True):
        # F even when one trial left misses (a flag already raised): the failure is sure there
        sure = A.Binary(">=", substitute(f, {c: A.Binary("+", A.Var(c), _minus(left, ONE))}), ONE)
        for a, k in chances:
            yield A.Cond(guard, A.Cond(sure, ONE, A.Binary("*", reach, _capped(a, left, k))), ONE)


MAX_CAP = 4  # the largest literal power a^K of a capped core


def _trial_loop(s: A.Stmt, params: List[str], types: Dict[str, A.Type]) -> Optional[Tuple[A.For, Set[str], A.Expr]]:
    """``(the loop, fixed inputs, hi - i)`` of a ``for i in lo..hi`` loop (exclusive) whose ``hi``
    reads only inputs the body does not write, else None."""
    if not isinstance(s, A.For) or s.inclusive:
        return None
    written = set(written_vars(s.body))
    fixed = {p for p in params if p not in written and types.get(p) in (A.INT, A.REAL)}
    if set(free_vars(s.hi)) - fixed:
        return None
    return s, fixed, _minus(s.hi, A.Var(s.var))


def _hit_counters(
    program: A.Stmt,
    s: A.For,
    f: A.Expr,
    params: List[str],
    types: Dict[str, A.Type],
    left: A.Expr,
    read_by_f: bool,
) -> Iterator[Tuple[str, A.Expr, A.Expr]]:
    """``(c, c - c0 <= i - lo, F[c := c + left])`` for each integer counter c the loop body raises
    by one (not the loop variable) with a single start c0 (and, with ``read_by_f``, read by F)."""
    for c in _unit_increments(s.body):
        if c == s.var or types.get(c) != A.INT or (read_by_f and c not in set(free_vars(f))):
            continue
        starts = _starts(program, c, params)
        if len(starts) != 1:
            continue
        guard = A.Binary("<=", _minus(A.Var(c), starts[0]), _minus(A.Var(s.var), s.lo))
        yield c, guard, substitute(f, {c: A.Binary("+", A.Var(c), left)})


def _copies(beta: A.Expr, a: A.Expr) -> int:
    """K when ``beta`` is a product of exactly K copies of ``a`` (in any grouping), else 0."""
    if beta == a:
        return 1
    if isinstance(beta, A.Binary) and beta.op == "*":
        x, y = _copies(beta.left, a), _copies(beta.right, a)
        return x + y if x and y else 0
    return 0


def _capped(a: A.Expr, left: A.Expr, k: int) -> A.Expr:
    """``a^min(left, k)`` for an integer ``left >= 0``, written out: ``left >= k ? a·…·a : (left
    >= k - 1 ? … : 1)``."""
    out: A.Expr = ONE
    for m in range(1, k + 1):
        out = A.Cond(A.Binary(">=", left, A.num(m)), _product([a] * m), out)
    return out


def capped_power_cores(
    s: A.Stmt,
    f: A.Expr,
    beta: A.Expr,
    params: List[str],
    types: Dict[str, A.Type],
    program: Optional[A.Stmt] = None,
) -> Iterator[A.Expr]:
    """ "Every trial left must come up a (chance a), and a claim ``a^K`` with K literal": the core
    ``F · a^min(iterations left, K)`` (:func:`_capped`), for a chance a of the body
    (:func:`trial_chances`) of which the bound β is a product of K <= :data:`MAX_CAP` copies.

    Why it is the right core: when every one of ``left`` trials must hit, the failure chance is
    a^left, and for 0 <= a <= 1 and left >= K that is at most a^K (the monotonicity of a^k in the
    exponent, made an induction: one more factor a <= 1 leaves a^K at most a^K). Written with the
    cap no power with a symbolic exponent is left, and no log of a (a may be 0). A proposal
    only: INDUCT (p·a^min(m - 1, K) <= a^min(m, K) for m >= 1 needs a <= 1, from ``requires``)
    and BUDGET decide."""
    if not isinstance(s, (A.For, A.While)):
        return
    body = s.body
    written = set(written_vars(body))
    fixed = {p for p in params if p not in written and types.get(p) in (A.INT, A.REAL)}
    # the failure that no trial can undo: F with the flags the body resets at their reset values
    # (``gone := false``); where it holds the core is 1, an upper bound on any chance
    resets = {
        n.targets[0].name: n.value
        for n in A.walk(body)
        if isinstance(n, A.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var)
        if isinstance(n.value, A.BoolLit)
    }
    settled = substitute(f, resets) if resets else None
    # session 30: a counter the body only raises is a flag too: "no trial hit" is the counter
    # still at its start c0 (``up == 0``, ``hits < 1``). The core is 1 below c0 (no run is there,
    # and a raise could bring c onto c0) and where F holds even one raise later (the failure no
    # trial can undo, as for a reset flag)
    counted: List[tuple] = []
    for c in raised_counters(body):
        if program is None or types.get(c) != A.INT or c not in set(free_vars(f)):
            continue
        starts = _starts(program, c, params)
        if len(starts) == 1:
            bumped = substitute(f, {**resets, c: A.Binary("+", A.Var(c), ONE)})
            counted.append((A.Binary("<", A.Var(c), starts[0]), A.Binary(">=", bumped, ONE)))
    for left in iterations_left(s):
        for a in map(_uncomplement, trial_chances(body, fixed)):
            k = _copies(beta, a)
            if 1 <= k <= MAX_CAP:
                core: A.Expr = A.Binary("*", f, _capped(a, left, k))
                yield core if settled is None else A.Cond(A.Binary(">=", settled, ONE), ONE, core)
                for below, undone in counted:
                    yield A.Cond(below, ONE, A.Cond(undone, ONE, core))


def _uncomplement(a: A.Expr) -> A.Expr:
    """``p`` for the chance ``1 - (1 - p)`` (the miss of a coin ``bern(1 - p)``), else ``a``: the
    same number, written as a claim writes it."""
    if isinstance(a, A.Binary) and a.op == "-" and a.left == ONE:
        r = a.right
        if isinstance(r, A.Binary) and r.op == "-" and r.left == ONE:
            return r.right
    return a


def raised_counters(body: A.Stmt) -> List[str]:
    """The variables every write of ``body`` raises by a positive literal (``c := c + 1``, in
    any branch or nested loop, at least one write): counters that only count up, so F with c one
    higher is what a hit leaves."""
    writes: Dict[str, List[A.Node]] = {}
    for n in A.walk(body):
        if isinstance(n, (A.Assign, A.Sample)):
            for t in n.targets:
                writes.setdefault(A.target_name(t), []).append(n)
        elif isinstance(n, (A.For, A.VarDecl)):
            writes.setdefault(n.var if isinstance(n, A.For) else n.name, []).append(n)
    out: List[str] = []
    for c, ns in sorted(writes.items()):
        if all(isinstance(n, A.Assign) and len(n.targets) == 1 and _raises(n.value, c) for n in ns):
            out.append(c)
    return out


def _raises(v: A.Expr, c: str) -> bool:
    if not (isinstance(v, A.Binary) and v.op == "+"):
        return False
    for x, k in ((v.left, v.right), (v.right, v.left)):
        if x == A.Var(c) and isinstance(k, A.Num) and k.value > 0:
            return True
    return False
