"""Tail axiom of the continuous (shifted) exponential distribution ``exp(k, s)``.

Axiom (parameter ``f``)::

    Pr[ v < k  ||  v - k > s * log(1/f) ] <= f        when  s > 0  and  0 < f <= 1

Soundness. ``exp(k, s)`` has density ``exp(-(x - k)/s) / s`` on ``x >= k`` and
0 below ``k``, so ``Pr[v < k] = 0`` and, for ``t >= 0``,
``Pr[v - k > t] = ∫_{k+t}^{∞} exp(-(x - k)/s) / s dx = exp(-t/s)``. With
``t = s * log(1/f) >= 0`` (as ``0 < f <= 1``) the union of the two disjoint
events has probability ``0 + exp(-log(1/f)) = f``: the axiom is exact.
``exact_tail`` computes both parts with ``scipy.stats.expon`` at the threshold
read from the same AST builder as ``bad``.
"""

from __future__ import annotations

from . import build as B
from ._lazy import stats
from ._tail import RealParamFamily, scale_and_probability


def threshold(k, s, f):
    """``s * log(1/f)``: the excess over ``k`` that has probability exactly ``f``."""
    return B.mul(s, B.log(B.div(1, f)))


class ExponentialTail(RealParamFamily):
    """``Pr[v < k || v - k > s*log(1/f)] <= f`` (exact) for ``v ~ exp(k, s)``."""

    name = "exponential"
    distributions = ("exp",)
    #: a loop of n draws claiming ``n * exp(-t/s)`` gets the share ``exp(-t/s)`` (only a proposal)
    factor_shares = True

    def axiom(self, v, args, f):
        k, s = args
        bad = B.or_(B.lt(v, k), B.gt(B.sub(v, k), threshold(k, s, f)))
        side = scale_and_probability(s, f)
        return bad, f, side

    def exact_tail(self, args, param):
        k, s = (float(a) for a in args)
        t = self.literal_value(threshold, args, param)
        below = stats.expon.cdf(0.0, loc=0, scale=s)  # Pr[v - k < 0]: 0
        return float(below + stats.expon.sf(t, loc=0, scale=s))


FAMILIES = [ExponentialTail()]
