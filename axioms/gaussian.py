"""Tail axioms of the normal distribution ``gauss(m, var)`` (second argument: the variance).

Two-sided axiom (parameter ``f``)::

    Pr[ abs(v - m) > sqrt(2 * var * log(2/f)) ] <= f      when  var > 0  and  0 < f <= 2

One-sided axioms (families ``gaussian_upper`` / ``gaussian_lower``)::

    Pr[ v - m > sqrt(2 * var * log(1/f)) ] <= f            (and ``m - v`` for the lower tail)

Soundness (Chernoff). Let ``Z = (v - m)/σ`` with ``σ = sqrt(var)``, a standard normal.
For every ``λ > 0`` Markov's inequality on ``exp(λZ)`` gives
``Pr[Z > u] <= E[exp(λZ)] exp(-λu) = exp(λ²/2 - λu)``, minimised at ``λ = u``:
``Pr[Z > u] <= exp(-u²/2)`` for ``u >= 0``. With ``u = t/σ`` the one-sided tail is
``Pr[v - m > t] <= exp(-t²/(2 var))`` and, by symmetry and the union bound,
``Pr[|v - m| > t] <= 2 exp(-t²/(2 var))``. Putting ``t = sqrt(2 var log(2/f))``
(real and ``>= 0`` because ``f <= 2``; the two-sided side condition is ``0 < f <= 2``, since
``2·exp(-t²/(2 var))`` with ``t >= 0`` is at most 2) gives ``2 exp(-log(2/f)) = f``; putting
``t = sqrt(2 var log(1/f))`` (real because ``f <= 1``) in the one-sided bound gives ``f``.

The bound is not tight (the true tail is smaller by a factor of order ``1/u``);
``exact_tail`` computes the true tail with ``scipy.stats.norm`` at the threshold read
from the same AST builder as ``bad``.

Bounds written as exponentials. A claim usually states the Gaussian tail in its textbook form
``exp(-t²/(2 var))`` (or ``2·exp(…)`` two-sided), and the synthesis proposes ``f`` equal to that
bound. Then ``log(c/f)`` is ``log(c/(c·exp(-E)))``, which the SMT lemmas about the
uninterpreted ``log``/``exp`` do not reduce in one round. :func:`log_ratio` writes it as ``E``
directly when ``f`` is syntactically ``exp(-E)`` (with ``c = 1``) or ``c·exp(-E)`` (the same
literal ``c``): ``log(c/(c·exp(-E))) = log(exp(E)) = E`` for every real ``E``, an identity
of the real functions (``exp`` is positive, so no domain condition is lost), hence the bad
event is *the same set* as in the axiom written with ``log`` and the soundness argument above
is unchanged. The side conditions still read ``f`` (``0 < f <= 1``), which makes ``E >= 0``.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from lang import ast as A

from . import build as B
from ._lazy import stats
from ._tail import RealParamFamily, scale_and_probability


def _negated(e: A.Expr) -> Optional[A.Expr]:
    """``s`` when ``e`` is written ``-s`` (also ``-a / b`` and ``-a * b``, the parser's
    reading of ``-a/b``), else None."""
    if isinstance(e, A.Unary) and e.op == "-":
        return e.operand
    if isinstance(e, A.Binary) and e.op in ("/", "*"):
        left = _negated(e.left)
        if left is not None:
            return A.Binary(e.op, left, e.right)
    if isinstance(e, A.Num) and e.value < 0:
        return dataclasses.replace(e, value=-e.value, text=None)
    return None


def _exp_exponent(e: A.Expr) -> Optional[A.Expr]:
    """``E`` when ``e`` is ``exp(-E)``, else None."""
    if isinstance(e, A.Call) and e.func == "exp" and len(e.args) == 1:
        return _negated(e.args[0])
    return None


def log_ratio(c: int, f: A.Expr) -> A.Expr:
    """``log(c/f)``, written ``E`` when ``f`` is ``exp(-E)`` (``c = 1``) or ``c * exp(-E)`` /
    ``exp(-E) * c`` (the identity of the module docstring), else ``log(c / f)``."""
    if c == 1:
        found = _exp_exponent(f)
        if found is not None:
            return found
    if isinstance(f, A.Binary) and f.op == "*":
        for k, rest in ((f.left, f.right), (f.right, f.left)):
            if isinstance(k, A.Num) and k.value == c:
                found = _exp_exponent(rest)
                if found is not None:
                    return found
    return B.log(B.div(c, f))


def threshold(m, var, f):
    """``sqrt(2 * var * log(2/f))`` (:func:`log_ratio`)."""
    return B.sqrt(B.mul(B.mul(2, var), log_ratio(2, B.e(f))))


def one_sided_threshold(m, var, f):
    """``sqrt(2 * var * log(1/f))`` (:func:`log_ratio`)."""
    return B.sqrt(B.mul(B.mul(2, var), log_ratio(1, B.e(f))))


def _sides(var, f, f_max=1):
    return scale_and_probability(var, f, f_max)


class GaussianTail(RealParamFamily):
    """``Pr[abs(v - m) > sqrt(2*var*log(2/f))] <= f`` for ``v ~ gauss(m, var)``."""

    name = "gaussian"
    distributions = ("gauss",)
    #: a loop of n draws claiming ``n * exp(-t/s)`` gets the share ``exp(-t/s)`` (only a proposal)
    factor_shares = True

    def axiom(self, v, args, f):
        m, var = args
        bad = B.gt(B.abs_(B.sub(v, m)), threshold(m, var, f))
        return bad, f, _sides(var, f, 2)

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
