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

    def axiom(self, v, args, f):
        m, s = args
        bad = B.gt(B.abs_(B.sub(v, m)), threshold(m, s, f))
        side = scale_and_probability(s, f)
        return bad, f, side

    def exact_tail(self, args, param):
        m, s = args
        return two_sided_tail(float(s), self.literal_value(threshold, args, param))


FAMILIES = [DiscreteLaplaceTail()]
