"""Tail axiom of the discrete exponential (geometric) distribution ``dexp(k, s)``.

Axiom (parameter ``f``)::

    Pr[ v < k  ||  v - k > s * log(1/f) ] <= f        when  s > 0  and  0 < f <= 1

``k`` is an integer (the type checker insists).

Soundness. Let ``a = exp(-1/s)`` (``0 < a < 1``). ``dexp(k, s)`` gives the integer
``k + j`` (``j >= 0``) probability ``a^j (1 - a)``, so ``Pr[v < k] = 0`` and for
``t >= 0``, with ``n = ⌊t⌋ + 1`` the least integer above ``t``,

    Pr[v - k > t] = Σ_{j >= n} a^j (1 - a) = a^n = a^{⌊t⌋+1} <= a^t,

because ``⌊t⌋ + 1 > t`` and ``a < 1``. With ``t = s * log(1/f) >= 0``,
``a^t = exp(-log(1/f)) = f``. (Unlike the two-sided discrete Laplace no factor is
lost: the one-sided normaliser is ``1/(1 - a)``, and the bound is attained when
``t`` is just below an integer.)

A non-integer ``k`` would break this (``dexp(0.5, s)`` starts at 1, already ``0.5``
above ``k``), which is why ``k`` must be an int.

``exact_tail`` evaluates the geometric series in closed form (cross-checked in the
tests against ``scipy.stats.planck`` and an explicit pmf sum).

Exact integer tail (family ``discrete_exponential_exact``, parameter ``f``)::

    Pr[ v < k  ||  v - k >= s * log(1/f) ] <= f

stated without the log (the same event, as ``exp(-x/s)`` decreases strictly in ``x``)::

    Pr[ v < k  ||  exp(-(v - k)/s) <= f ] <= f        when  s > 0  and  f > 0

This is the geometric waiting time's tail ``Pr[v >= k + K] = a^K`` at an integer ``K >= 0``,
solved for ``K``: a claim ``Pr[v > n] <= exp(-(n + 1 - k)/s)`` (``v > n`` is ``v - k >= n + 1 - k``
for integers) is an instance with ``f = exp(-(n + 1 - k)/s)``, which the log form's strict
``>`` misses by one integer. Soundness. ``Pr[v < k] = 0``. For ``f >= 1`` the bound holds
trivially (a probability is at most 1; no ``f <= 1`` side condition, as a claimed
``exp(-(n - k)/s)`` with ``n >= k`` is at most 1 only through exp lemmas). Let ``0 < f < 1`` and
``K = s * log(1/f) > 0``, so ``a^K = f``. The integers ``j = v - k`` with ``j >= K`` are those
with ``j >= ⌈K⌉``, so ``Pr[v - k >= K] = a^⌈K⌉ <= a^K = f`` (``⌈K⌉ >= K``, ``a < 1``). Its bad
event contains the first family's (``>=`` in place of ``>``, same threshold); it is a separate
family, tried after the first, so the proofs the first family gives keep their bad event.
"""

from __future__ import annotations

import math

from . import build as B
from ._tail import RealParamFamily, scale_and_probability


def threshold(k, s, f):
    """``s * log(1/f)``."""
    return B.mul(s, B.log(B.div(1, f)))


def upper_tail(s: float, t: float) -> float:
    """``Pr[v - k > t]`` for ``v ~ dexp(k, s)``, integer ``k``."""
    if t < 0:
        return 1.0
    return math.exp(-(math.floor(t) + 1) / s)


class DiscreteExponentialTail(RealParamFamily):
    """``Pr[v < k || v - k > s*log(1/f)] <= f`` for ``v ~ dexp(k, s)``."""

    name = "discrete_exponential"
    distributions = ("dexp",)
    #: a loop of n draws claiming ``n * exp(-t/s)`` gets the share ``exp(-t/s)`` (only a proposal)
    factor_shares = True

    def axiom(self, v, args, f):
        k, s = args
        bad = B.or_(B.lt(v, k), B.gt(B.sub(v, k), threshold(k, s, f)))
        side = scale_and_probability(s, f)
        return bad, f, side

    def exact_tail(self, args, param):
        k, s = args
        return upper_tail(float(s), self.literal_value(threshold, args, param))  # + Pr[v < k] = 0


def exact_threshold(k, s, f):
    """``s * log(1/f)``: the integer offset ``K`` with ``Pr[v - k >= K] = exp(-K/s) = f``."""
    return threshold(k, s, f)


def upper_tail_at_least(s: float, t: float) -> float:
    """``Pr[v - k >= t]`` for ``v ~ dexp(k, s)``, integer ``k``: ``a^⌈t⌉`` for ``t > 0`` (1 for
    ``t <= 0``)."""
    if t <= 0:
        return 1.0
    return math.exp(-math.ceil(t) / s)


class DiscreteExponentialExactTail(RealParamFamily):
    """``Pr[v < k || exp(-(v - k)/s) <= f] <= f`` for ``v ~ dexp(k, s)``: the exact integer tail."""

    name = "discrete_exponential_exact"
    distributions = ("dexp",)
    #: the prover proposes only shares of the claimed bound as ``f`` (no ``log(c/f)`` to match)
    log_parameters = False
    #: a loop of n draws claiming ``n * exp(-K/s)`` gets the share ``exp(-K/s)`` (only a proposal)
    factor_shares = True

    def axiom(self, v, args, f):
        k, s = args
        # ``v - k >= s*log(1/f)`` written without the log: ``exp(-(v - k)/s) <= f``
        # (exp(-x/s) decreases strictly in x for s > 0, and equals f at x = s*log(1/f))
        bad = B.or_(B.lt(v, k), B.le(B.exp(B.neg(B.div(B.sub(v, k), s))), f))
        # no ``f <= 1``: for f >= 1 the bound holds because a probability is at most 1
        side = (B.gt(s, 0), B.lt(0, f))
        return bad, f, side

    def exact_tail(self, args, param):
        k, s = args
        if float(param) >= 1:
            return 1.0
        return upper_tail_at_least(float(s), self.literal_value(exact_threshold, args, param))


FAMILIES = [DiscreteExponentialTail(), DiscreteExponentialExactTail()]
