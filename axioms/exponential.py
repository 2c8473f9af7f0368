"""Tail axioms of the continuous (shifted) exponential distribution ``exp(k, s)``.

Upper tail (family ``exponential``, parameter ``f``)::

    Pr[ v < k  ||  v - k >= s * log(1/f) ] <= f        when  s > 0  and  0 < f <= 1

Soundness. ``exp(k, s)`` has density ``exp(-(x - k)/s) / s`` on ``x >= k`` and
0 below ``k``, so ``Pr[v < k] = 0`` and, for ``t >= 0``,
``Pr[v - k >= t] = ∫_{k+t}^{∞} exp(-(x - k)/s) / s dx = exp(-t/s)`` (the
distribution is continuous: the single point ``v - k = t`` has probability 0, so
``>=`` and ``>`` have the same probability). With ``t = s * log(1/f) >= 0`` (as
``0 < f <= 1``) the union of the two disjoint events has probability
``0 + exp(-log(1/f)) = f``: the axiom is exact. The non-strict form excuses the
boundary too, so a postcondition ``h < g`` follows from an excused ``h >= g``.

Lower tail (family ``exponential_lower``, parameter ``f``)::

    Pr[ v - k <= s * f ] <= f                           when  s > 0  and  f >= 0

Soundness. For ``t = s * f >= 0``, ``Pr[v - k <= t] = 1 - exp(-t/s) = 1 - exp(-f)``
and ``1 - exp(-y) <= y`` for every real ``y`` (``exp`` is convex, so it lies above its
tangent ``1 - y`` at 0); no upper limit on ``f`` is needed (a cost above 1 is merely
weak), and ``f = 0`` gives the event ``v - k <= 0``, of probability 0. The event includes ``v < k`` (``v - k < 0 <= s f``), which has
probability 0. A draw written with a rate, ``exp(0, 1 / lam)``, and a claim
``lam * T`` give the threshold ``(1/lam) * (lam * T)``, which the solver reads as ``T``
under the side condition ``1/lam > 0``: the scale is an expression, never matched as text.
This bound is an upper bound on the lower tail's probability, never a lower bound on
the upper tail's.

Below an exact threshold (family ``exponential_below``, parameter ``c``, the cost)::

    Pr[ v - k < s * log(1/(1 - c)) ] <= c               when  s > 0  and  0 <= c < 1

Soundness. ``t = s * log(1/(1 - c)) >= 0`` as ``0 <= c < 1``, and
``Pr[v - k < t] = 1 - exp(-t/s) = 1 - (1 - c) = c``: exact, since the exponential's
tail is known in closed form. Its complement says a draw reaches the threshold with
chance exactly ``1 - c``: an attempt ``h ~ exp(0, 1/q)`` that succeeds when ``h >= g``
fails with probability ``1 - exp(-q g)`` (``c = 1 - exp(-q g)`` gives ``t = g``), which
the per-iteration composition of retries multiplies. Only the exponential has this
family (no other distribution here has its lower tail in this closed form).

``exact_tail`` computes each probability with ``scipy.stats.expon`` at the
threshold read from the same AST builder as ``bad``.
"""

from __future__ import annotations

from lang import ast as A

from . import build as B
from ._lazy import stats
from ._tail import RealParamFamily, scale_and_probability


def threshold(k, s, f):
    """``s * log(1/f)``: the excess over ``k`` that has probability exactly ``f``."""
    return B.mul(s, B.log(B.div(1, f)))


def lower_threshold(k, s, f):
    """``s * f``: the excess over ``k`` below which the probability is ``1 - exp(-f) <= f``."""
    return B.mul(s, f)


class ExponentialTail(RealParamFamily):
    """``Pr[v < k || v - k >= s*log(1/f)] <= f`` (exact) for ``v ~ exp(k, s)``."""

    name = "exponential"
    distributions = ("exp",)
    #: a loop of n draws claiming ``n * exp(-t/s)`` gets the share ``exp(-t/s)`` (only a proposal)
    factor_shares = True

    def axiom(self, v, args, f):
        k, s = args
        bad = B.or_(B.lt(v, k), B.ge(B.sub(v, k), threshold(k, s, f)))
        side = scale_and_probability(s, f)
        return bad, f, side

    def exact_tail(self, args, param):
        k, s = (float(a) for a in args)
        t = self.literal_value(threshold, args, param)
        below = stats.expon.cdf(0.0, loc=0, scale=s)  # Pr[v - k < 0]: 0
        return float(below + stats.expon.sf(t, loc=0, scale=s))


class ExponentialLower(RealParamFamily):
    """``Pr[v - k <= s*f] <= f`` for ``v ~ exp(k, s)`` (exactly ``1 - exp(-f)``)."""

    name = "exponential_lower"
    distributions = ("exp",)
    factor_shares = True

    def axiom(self, v, args, f):
        k, s = args
        bad = B.le(B.sub(v, k), lower_threshold(k, s, f))
        side = (B.gt(s, 0), B.ge(f, 0))
        return bad, f, side

    def exact_tail(self, args, param):
        k, s = (float(a) for a in args)
        t = self.literal_value(lower_threshold, args, param)
        return float(stats.expon.cdf(t, loc=0, scale=s))


def below_threshold(k, s, c):
    """``s * log(1/(1 - c))``: the excess over ``k`` below which the probability is exactly ``c``."""
    return B.mul(s, B.log(B.div(1, one_minus(c))))


def one_minus(c):
    """``1 - c``, written ``x`` when ``c`` is ``1 - x`` (an identity of the reals, so the solver
    meets ``log(1/exp(-a))`` which its ``log-div``/``log-exp`` lemmas read as ``a``)."""
    if isinstance(c, A.Binary) and c.op == "-" and isinstance(c.left, A.Num) and c.left.value == 1:
        return c.right
    return B.sub(1, c)


class ExponentialBelow(RealParamFamily):
    """``Pr[v - k < s*log(1/(1-c))] <= c`` (exact) for ``v ~ exp(k, s)`` and ``0 <= c < 1``."""

    name = "exponential_below"
    distributions = ("exp",)
    #: its threshold is not a ``log(c/f)`` of a claimed log: the budget's shares only
    log_parameters = False

    def axiom(self, v, args, c):
        k, s = args
        bad = B.lt(B.sub(v, k), below_threshold(k, s, c))
        side = (B.gt(s, 0), B.le(0, c), B.lt(c, 1))
        return bad, c, side

    def exact_tail(self, args, param):
        k, s = (float(a) for a in args)
        t = self.literal_value(below_threshold, args, param)
        return float(stats.expon.cdf(t, loc=0, scale=s))


FAMILIES = [ExponentialTail(), ExponentialLower(), ExponentialBelow()]
