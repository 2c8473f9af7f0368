"""Tail axioms of the continuous Laplace distribution ``lap(m, s)``.

Axiom (parameter ``f``, a real expression chosen by synthesis)::

    Pr[ abs(v - m) > s * log(1/f) ] <= f        when  s > 0  and  0 < f <= 1

Soundness. The density of ``lap(m, s)`` is ``exp(-|x - m|/s) / (2s)``. For
``t >= 0``::

    Pr[|v - m| > t] = 2 * ∫_{m+t}^{∞} exp(-(x - m)/s) / (2s) dx = exp(-t/s).

With ``t = s * log(1/f)`` (``t >= 0`` because ``0 < f <= 1``) this is
``exp(-log(1/f)) = f``: the axiom holds with *equality*, so no tail bound for
this shape can be cheaper. ``exact_tail`` computes ``Pr[|v - m| > t]`` with
``scipy.stats.laplace`` at the threshold read from the same AST builder.

One-sided variants (``laplace_upper``: ``v - m > s * log(1/(2f))``,
``laplace_lower``: ``m - v > s * log(1/(2f))``) hold with equality too:
``Pr[v - m > t] = exp(-t/s) / 2`` for ``t >= 0``; the side condition
``f <= 1/2`` keeps ``t >= 0``.
"""

from __future__ import annotations

from . import build as B
from ._lazy import stats
from ._tail import RealParamFamily, scale_and_probability


def threshold(m, s, f):
    """``s * log(1/f)``: the two-sided Laplace deviation that has probability exactly ``f``."""
    return B.mul(s, B.log(B.div(1, f)))


def one_sided_threshold(m, s, f):
    """``s * log(1/(2f))``: the one-sided deviation with probability exactly ``f``."""
    return B.mul(s, B.log(B.div(1, B.mul(2, f))))


class LaplaceTail(RealParamFamily):
    """``Pr[abs(v - m) > s*log(1/f)] <= f`` (exact) for ``v ~ lap(m, s)``."""

    name = "laplace"
    distributions = ("lap",)
    #: a loop of n draws claiming ``n * exp(-t/s)`` gets the share ``exp(-t/s)`` (only a proposal)
    factor_shares = True

    def axiom(self, v, args, f):
        m, s = args
        bad = B.gt(B.abs_(B.sub(v, m)), threshold(m, s, f))
        side = scale_and_probability(s, f)
        return bad, f, side

    def exact_tail(self, args, param):
        m, s = (float(a) for a in args)
        t = self.literal_value(threshold, args, param)
        return float(2 * stats.laplace.sf(t, loc=0, scale=s))


class LaplaceOneSided(RealParamFamily):
    """``Pr[v - m > s*log(1/(2f))] <= f`` (``upper``) or ``Pr[m - v > …] <= f`` (``lower``),
    exact, for ``v ~ lap(m, s)`` and ``0 < f <= 1/2``."""

    distributions = ("lap",)

    def __init__(self, upper: bool):
        self.upper = upper
        self.name = "laplace_upper" if upper else "laplace_lower"

    def axiom(self, v, args, f):
        m, s = args
        dev = B.sub(v, m) if self.upper else B.sub(m, v)
        bad = B.gt(dev, one_sided_threshold(m, s, f))
        side = scale_and_probability(s, f, B.n("0.5"))
        return bad, f, side

    def exact_tail(self, args, param):
        m, s = (float(a) for a in args)
        t = self.literal_value(one_sided_threshold, args, param)
        if self.upper:
            return float(stats.laplace.sf(t, loc=0, scale=s))
        return float(stats.laplace.cdf(-t, loc=0, scale=s))


FAMILIES = [LaplaceTail(), LaplaceOneSided(True), LaplaceOneSided(False)]
