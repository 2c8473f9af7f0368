"""Tail axioms of the normal distribution ``gauss(m, var)`` (second argument: the variance).

Two-sided axiom (parameter ``f``)::

    Pr[ abs(v - m) > sqrt(2 * var * log(2/f)) ] <= f      when  var > 0  and  0 < f <= 1

One-sided axioms (families ``gaussian_upper`` / ``gaussian_lower``)::

    Pr[ v - m > sqrt(2 * var * log(1/f)) ] <= f            (and ``m - v`` for the lower tail)

Soundness (Chernoff). Let ``Z = (v - m)/σ`` with ``σ = sqrt(var)``, a standard normal.
For every ``λ > 0`` Markov's inequality on ``exp(λZ)`` gives
``Pr[Z > u] <= E[exp(λZ)] exp(-λu) = exp(λ²/2 - λu)``, minimised at ``λ = u``:
``Pr[Z > u] <= exp(-u²/2)`` for ``u >= 0``. With ``u = t/σ`` the one-sided tail is
``Pr[v - m > t] <= exp(-t²/(2 var))`` and, by symmetry and the union bound,
``Pr[|v - m| > t] <= 2 exp(-t²/(2 var))``. Putting ``t = sqrt(2 var log(2/f))``
(real and ``>= 0`` because ``f <= 1 < 2``) gives ``2 exp(-log(2/f)) = f``; putting
``t = sqrt(2 var log(1/f))`` (real because ``f <= 1``) in the one-sided bound gives ``f``.

The bound is not tight (the true tail is smaller by a factor of order ``1/u``);
``exact_tail`` computes the true tail with ``scipy.stats.norm`` at the threshold read
from the same AST builder as ``bad``.
"""

from __future__ import annotations

from . import build as B
from ._lazy import stats
from ._tail import RealParamFamily, scale_and_probability


def threshold(m, var, f):
    """``sqrt(2 * var * log(2/f))``."""
    return B.sqrt(B.mul(B.mul(2, var), B.log(B.div(2, f))))


def one_sided_threshold(m, var, f):
    """``sqrt(2 * var * log(1/f))``."""
    return B.sqrt(B.mul(B.mul(2, var), B.log(B.div(1, f))))


def _sides(var, f):
    return scale_and_probability(var, f)


class GaussianTail(RealParamFamily):
    """``Pr[abs(v - m) > sqrt(2*var*log(2/f))] <= f`` for ``v ~ gauss(m, var)``."""

    name = "gaussian"
    distributions = ("gauss",)

    def axiom(self, v, args, f):
        m, var = args
        bad = B.gt(B.abs_(B.sub(v, m)), threshold(m, var, f))
        return bad, f, _sides(var, f)

    def exact_tail(self, args, param):
        m, var = (float(a) for a in args)
        t = self.literal_value(threshold, args, param)
        return float(2 * stats.norm.sf(t, loc=0, scale=var**0.5))


class GaussianOneSided(RealParamFamily):
    """``Pr[v - m > sqrt(2*var*log(1/f))] <= f`` (``upper``), or ``m - v`` (``lower``)."""

    distributions = ("gauss",)

    def __init__(self, upper: bool):
        self.upper = upper
        self.name = "gaussian_upper" if upper else "gaussian_lower"

    def axiom(self, v, args, f):
        m, var = args
        dev = B.sub(v, m) if self.upper else B.sub(m, v)
        return B.gt(dev, one_sided_threshold(m, var, f)), f, _sides(var, f)

    def exact_tail(self, args, param):
        m, var = (float(a) for a in args)
        t = self.literal_value(one_sided_threshold, args, param)
        sd = var**0.5
        if self.upper:
            return float(stats.norm.sf(t, loc=0, scale=sd))
        return float(stats.norm.cdf(-t, loc=0, scale=sd))


FAMILIES = [GaussianTail(), GaussianOneSided(True), GaussianOneSided(False)]
