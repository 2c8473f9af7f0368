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


FAMILIES = [DiscreteExponentialTail()]
