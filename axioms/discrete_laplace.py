"""Tail axiom of the discrete Laplace (two-sided geometric) distribution ``dlap(m, s)``.

Axiom (parameter ``f``)::

    Pr[ abs(v - m) > s * log(2/f) ] <= f        when  s > 0  and  0 < f <= 1

``m`` is an integer (the type checker insists: ``dlap`` ranges over the integers).

Soundness. Let ``a = exp(-1/s)`` (``0 < a < 1``). ``dlap(m, s)`` gives the integer
``m + j`` probability ``a^|j| * (1 - a)/(1 + a)`` (the normaliser is
``Σ_j a^|j| = (1 + a)/(1 - a)``). For ``t >= 0`` the integers with ``|j| > t`` are
those with ``|j| >= n``, ``n = ⌊t⌋ + 1``, so

    Pr[|v - m| > t] = 2 * Σ_{j >= n} a^j * (1 - a)/(1 + a) = 2 a^n / (1 + a).

Since ``n > t`` and ``a < 1``, ``a^n <= a^t``. With ``t = s * log(2/f)`` (``>= 0``
because ``f <= 2``), ``a^t = exp(-log(2/f)) = f/2``, hence
``Pr <= 2 (f/2)/(1 + a) = f/(1 + a) <= f``.

Why not the continuous form ``s * log(1/f)``: there ``a^t = f`` and the tail is
``2 a^n/(1 + a)``, which exceeds ``f`` when ``n`` is close to ``t`` — by a factor up to
``2/(1 + a)``. At ``s = 0.5``, ``f = 0.1356``: ``t = 0.999``, ``n = 1``,
``a = e^-2``, and the tail is ``2a/(1+a) = 0.238 > f``. The test suite checks it.

A non-integer ``m`` would break even this form (``dlap(0.5, s)`` puts almost all mass
on ``0`` and ``1``, both ``0.5`` away from ``m``), which is why ``m`` must be an int.

``exact_tail`` evaluates the closed-form geometric series above (cross-checked in the
tests against ``scipy.stats.dlaplace`` and an explicit pmf sum).

Exact integer tail (family ``discrete_laplace_exact``, parameter ``f``)::

    Pr[ abs(v - m) >= s * log(2/(f * (1 + exp(-1/s)))) ] <= f

stated without the log (the same event, as ``exp(-x/s)`` decreases strictly in ``x``)::

    Pr[ 2 * exp(-abs(v - m)/s) <= f * (1 + exp(-1/s)) ] <= f

when ``s > 0`` and ``f > 0``. This is the geometric mechanism's tail
``Pr[|v - m| >= K] = 2 a^K/(1 + a)`` for an integer ``K >= 1``, solved for ``K``. Soundness.
For ``f >= 1`` the bound holds trivially (a probability is at most 1), so ``f <= 1`` is not a
side condition (a claimed ``2 exp(-t/s)/(1 + exp(-1/s))`` is at most 1 for ``t >= 1``, which z3
cannot see with the exp lemmas). Let ``0 < f < 1`` and ``K = s * log(2/(f (1 + a)))``, so
``a^K = f (1 + a)/2 < 1``, hence ``K > 0``. The
integers ``j`` with ``|j| >= K`` are those with ``|j| >= ⌈K⌉ >= 1``, so by the series above
``Pr[|v - m| >= K] = 2 a^⌈K⌉/(1 + a) <= 2 a^K/(1 + a) = f`` (``⌈K⌉ >= K``, ``a < 1``). Its bad
event contains the first family's (``K < s * log(2/f)`` and ``>=`` in place of ``>``); it is
a separate family, tried after the first, so that the proofs the first family gives keep
their (simpler) bad event.

One-sided exact tails (families ``discrete_laplace_exact_upper`` / ``_lower``, parameter ``f``)::

    Pr[ v >= m  &&  exp(-(v - m)/s) <= f * (1 + exp(-1/s)) ] <= f        (upper)
    Pr[ v <= m  &&  exp( (v - m)/s) <= f * (1 + exp(-1/s)) ] <= f        (lower)

when ``s > 0`` and ``f > 0``: the geometric mechanism's one-sided tail
``Pr[v - m >= K] = a^K/(1 + a)`` at an integer ``K >= 0``, solved for ``K`` (a claim
``Pr[x > c + t] <= exp(-(t + 1)/s)/(1 + exp(-1/s))``). Soundness (upper; the lower one is its
mirror image, as the pmf is symmetric about ``m``). Let ``K = s * log(1/(f (1 + a)))``, so
``a^K = f (1 + a)``; the second conjunct is ``v - m >= K``, and the bad event is
``v - m >= max(0, ⌈K⌉)`` over the integers. By the series above ``Pr[v - m >= J] = a^J/(1 + a)``
for an integer ``J >= 0``. If ``K <= 0``: ``Pr[bad] = Pr[v - m >= 0] = 1/(1 + a) <= a^K/(1 + a) = f``
(``a^K >= 1``). If ``K > 0``: ``Pr[bad] = a^⌈K⌉/(1 + a) <= a^K/(1 + a) = f``. No ``f <= 1`` is
needed. The conjunct ``v >= m`` is what makes it sound for every ``f``: without it a ``K <= -1``
would put mass below ``m`` in the event.
"""

from __future__ import annotations

import math

from . import build as B
from ._tail import RealParamFamily, scale_and_probability


def threshold(m, s, f):
    """``s * log(2/f)``."""
    return B.mul(s, B.log(B.div(2, f)))


def two_sided_tail(s: float, t: float) -> float:
    """``Pr[|v - m| > t]`` for ``v ~ dlap(m, s)``, integer ``m``: ``2 a^n/(1+a)``, ``n = ⌊t⌋+1``
    for ``t >= 0`` (1 for ``t < 0``)."""
    if t < 0:
        return 1.0
    a = math.exp(-1.0 / s)
    n = math.floor(t) + 1
    return 2.0 * a**n / (1.0 + a)


class DiscreteLaplaceTail(RealParamFamily):
    """``Pr[abs(v - m) > s*log(2/f)] <= f`` for ``v ~ dlap(m, s)``."""

    name = "discrete_laplace"
    distributions = ("dlap",)
    #: a loop of n draws claiming ``n * exp(-t/s)`` gets the share ``exp(-t/s)`` (only a proposal)
    factor_shares = True

    def axiom(self, v, args, f):
        m, s = args
        bad = B.gt(B.abs_(B.sub(v, m)), threshold(m, s, f))
        side = scale_and_probability(s, f)
        return bad, f, side

    def exact_tail(self, args, param):
        m, s = args
        return two_sided_tail(float(s), self.literal_value(threshold, args, param))


def exact_threshold(m, s, f):
    """``s * log(2/(f * (1 + exp(-1/s))))``: the integer deviation ``K`` with
    ``2 exp(-K/s)/(1 + exp(-1/s)) = f``."""
    return B.mul(s, B.log(B.div(2, B.mul(f, B.add(1, B.exp(B.neg(B.div(1, s))))))))


def two_sided_tail_at_least(s: float, k: float) -> float:
    """``Pr[|v - m| >= k]`` for ``v ~ dlap(m, s)``, integer ``m``: ``2 a^⌈k⌉/(1+a)`` for
    ``k > 0`` (1 for ``k <= 0``)."""
    if k <= 0:
        return 1.0
    a = math.exp(-1.0 / s)
    return 2.0 * a ** math.ceil(k) / (1.0 + a)


class DiscreteLaplaceExactTail(RealParamFamily):
    """``Pr[abs(v - m) >= s*log(2/(f*(1 + exp(-1/s))))] <= f`` for ``v ~ dlap(m, s)``."""

    name = "discrete_laplace_exact"
    distributions = ("dlap",)
    #: the prover proposes only shares of the claimed bound as ``f`` (its bad event has no
    #: ``log(c/f)`` for a ``log`` in the claim to match)
    log_parameters = False
    #: a tail for a single draw: the loop engine (which combines every sampling's proposals)
    #: does not try it, so the proofs of loops of dlap draws do not search more axioms
    loop_proposals = False

    def axiom(self, v, args, f):
        m, s = args
        # ``abs(v - m) >= K`` written without the log: ``2 exp(-abs(v - m)/s) <= f (1 + exp(-1/s))``
        # (exp(-x/s) decreases strictly in x for s > 0, and equals f(1 + a)/2 at x = K)
        dev = B.abs_(B.sub(v, m))
        bad = B.le(B.mul(2, B.exp(B.neg(B.div(dev, s)))), B.mul(f, B.add(1, B.exp(B.neg(B.div(1, s))))))
        # no ``f <= 1``: for f >= 1 the bound holds because a probability is at most 1
        side = (B.gt(s, 0), B.lt(0, f))
        return bad, f, side

    def exact_tail(self, args, param):
        m, s = args
        if float(param) >= 1:
            return 1.0
        return two_sided_tail_at_least(float(s), self.literal_value(exact_threshold, args, param))


def one_sided_tail_at_least(s: float, k: float) -> float:
    """``Pr[v - m >= max(0, k)]`` for ``v ~ dlap(m, s)``: ``a^max(0, ⌈k⌉)/(1+a)``."""
    a = math.exp(-1.0 / s)
    return a ** max(0, math.ceil(k)) / (1.0 + a)


class DiscreteLaplaceOneSidedTail(RealParamFamily):
    """``Pr[v >= m && exp(-(v - m)/s) <= f*(1 + exp(-1/s))] <= f`` (``upper``) or its mirror image
    ``Pr[v <= m && exp((v - m)/s) <= f*(1 + exp(-1/s))] <= f`` for ``v ~ dlap(m, s)``."""

    distributions = ("dlap",)
    log_parameters = False
    loop_proposals = False

    def __init__(self, upper: bool):
        self.upper = upper
        self.name = "discrete_laplace_exact_upper" if upper else "discrete_laplace_exact_lower"

    def axiom(self, v, args, f):
        m, s = args
        dev = B.sub(v, m) if self.upper else B.sub(m, v)  # the deviation on this side
        bad = B.and_(
            B.le(0, dev),
            B.le(B.exp(B.neg(B.div(dev, s))), B.mul(f, B.add(1, B.exp(B.neg(B.div(1, s)))))),
        )
        side = (B.gt(s, 0), B.lt(0, f))
        return bad, f, side

    def exact_tail(self, args, param):
        sc, f = float(args[1]), float(param)
        k = sc * math.log(1.0 / (f * (1.0 + math.exp(-1.0 / sc))))  # a^k = f (1 + a)
        return one_sided_tail_at_least(sc, k)


FAMILIES = [
    DiscreteLaplaceTail(),
    DiscreteLaplaceExactTail(),
    DiscreteLaplaceOneSidedTail(upper=True),
    DiscreteLaplaceOneSidedTail(upper=False),
]
