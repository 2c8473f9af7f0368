"""Level cores for the expected-failure engine: a loop that counts events, each with a fixed
probability per iteration, fails when the count reaches a threshold (``load <= 1``: bin 0 gets
two balls, a pair collides).

For a counter ``c`` that one iteration raises by 1 with probability ``q`` (the same in every
state) and a failure ``c >= T``, the probability that the ``r`` iterations left raise ``c``
from ``T - a`` to ``T`` is at most ``C(r, a)·q^a`` (a union bound over the sets of ``a``
iterations that could do it). The proposed invariant expectation is therefore the staircase

    c >= T ? 1 : c >= T - 1 ? C(r, 1)·q : … : c >= 1 ? C(r, T - 1)·q^(T-1) : C(r, T)·q^T

— for ``T = 2`` and ``q = 1/m``: ``load >= 2 ? 1 : load >= 1 ? (n - i)/m : (n - i)(n - i - 1)/(2m²)``.
One iteration keeps it (Pascal: ``q·C(r-1, a-1)q^(a-1) + (1-q)·C(r-1, a)q^a <= C(r, a)q^a``).
Everything here only *proposes*: the engine's INDUCT obligation decides whether the staircase
is an invariant of the program at hand, so a wrong ``q`` or threshold costs time, never
soundness.
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial
from typing import List, Tuple

from lang import ast as A

# the highest count a staircase climbs: at 3 the solver already answers `unknown` on the cubic
# step within the search's time (a pair of events, as in birthday-type bounds, is the common case)
MAX_THRESHOLD = 2


def thresholds(f: A.Expr, counter: str) -> List[int]:
    """The counts ``T`` at which a comparison of ``counter`` with an integer literal in ``f``
    changes its truth, counting up: ``c <= K`` and ``c > K`` give K + 1, ``c < K`` and ``c >= K``
    give K, ``c == K`` and ``c != K`` give K and K + 1 (only 1 <= T <= :data:`MAX_THRESHOLD`)."""
    out: List[int] = []
    for n in A.walk(f):
        if not (isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=", "==", "!=")):
            continue
        a, b, op = n.left, n.right, n.op
        if isinstance(a, A.Num) and b == A.Var(counter):  # K op c  →  c op' K
            a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
        if a != A.Var(counter) or not (isinstance(b, A.Num) and b.is_int):
            continue
        k = int(b.value)
        ts = {"<=": [k + 1], ">": [k + 1], "<": [k], ">=": [k], "==": [k, k + 1], "!=": [k, k + 1]}[op]
        out += [t for t in ts if 1 <= t <= MAX_THRESHOLD and t not in out]
    return out


def choose(r: A.Expr, a: int) -> A.Expr:
    """``C(r, a) = r (r - 1) … (r - a + 1) / a!`` as an expression."""
    out: A.Expr = r
    for j in range(1, a):
        out = A.Binary("*", out, A.Binary("-", r, A.num(j)))
    if a > 1:
        out = A.Binary("/", out, A.num(factorial(a)))
    return out


def power(q: A.Expr, a: int) -> A.Expr:
    out = q
    for _ in range(1, a):
        out = A.Binary("*", out, q)
    return out


def staircase(counter: str, t: int, r: A.Expr, q: A.Expr) -> A.Expr:
    """The level core above for the counter, threshold ``t``, iterations left ``r`` and chance
    ``q`` per iteration."""
    c = A.Var(counter)
    out: A.Expr = A.Binary("*", choose(r, t), power(q, t))
    for a in range(t - 1, 0, -1):  # need a more: c >= t - a
        out = A.Cond(A.Binary(">=", c, A.num(t - a)), A.Binary("*", choose(r, a), power(q, a)), out)
    return A.Cond(A.Binary(">=", c, A.num(t)), A.num(1), out)


def level_cores(counters: List[Tuple[str, int]], f: A.Expr, lefts: List[A.Expr], chance) -> List[A.Expr]:
    """Staircases for each counter that goes up by 1 (``counters``: (name, step)), each threshold
    of it in ``f``, each expression of the iterations left in ``lefts``; ``chance(name)`` is
    the probability that one iteration raises the counter, or None when it is not a constant."""
    out: List[A.Expr] = []
    for c, step in counters:
        if step != 1:
            continue
        ts = thresholds(f, c)
        if not ts:
            continue
        q = chance(c)
        if q is None or (isinstance(q, A.Num) and Fraction(q.value) in (0, 1)):
            continue
        for t in ts:
            out += [staircase(c, t, r, q) for r in lefts]
    return out
