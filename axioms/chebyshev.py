"""Chebyshev's inequality for one draw of a distribution with a known mean and variance.

Axiom (parameter ``f``, family ``chebyshev``) for ``v ~ D(args)`` with mean ``μ`` and variance
``V`` (both expressions in the arguments)::

    Pr[ (v - μ) * (v - μ) >= V / f ] <= f          when  V > 0  and  f > 0

=================  ==========================  ============================
distribution       mean μ                      variance V
=================  ==========================  ============================
``gauss(m, v)``    m                           v (the second argument is the variance)
``lap(m, s)``      m                           2 s²
``uniform(a, b)``  (a + b) / 2                 (b - a)² / 12
``exp(k, s)``      k + s                       s²  (density ∝ exp(-(x - k)/s) on x >= k)
``unif(lo, hi)``   (lo + hi) / 2               ((hi - lo + 1)² - 1) / 12  (integers lo..hi, hi >= lo)
=================  ==========================  ============================

Soundness (Markov on the square). ``(v - μ)²`` is never negative and its mean is ``V`` (the
variance about the exact mean), so for ``c = V/f > 0`` Markov's inequality gives
``Pr[(v - μ)² >= c] <= V/c = f``. That is Chebyshev's ``Pr[|v - μ| >= s] <= V/s²`` with
``s = sqrt(V/f)``, written without a square root so the solver reads it as polynomial
arithmetic: a claim's bound share ``V/t²`` (:func:`tamp.prover.trace.candidates.term_shares`)
makes the bad event ``(v - μ)² >= t²``, i.e. ``|v - μ| >= t`` for t > 0. The side condition
``V > 0`` keeps ``c`` positive (at ``V = 0`` the event ``(v - μ)² >= 0`` is certain); ``f`` may
exceed 1 (the bound is then trivially true). The integer uniform's variance needs ``hi >= lo``
(a non-empty range), a side condition too, and applies only to symbolic ends (a literal range
is exact in :mod:`axioms.uniform_finite`).

The axiom is valid for every distribution with that mean and variance: it is weaker than the
exponential tails of the Gaussian or Laplace families for large deviations but, being a
different function of the deviation, proves claims stated as ``V/t²`` that those cannot
(``2·exp(-t²/(2V)) <= V/t²`` does not hold for every t). Its parameter is proposed only from
the budget's shares that divide by a non-constant (``ratio_shares``,
:func:`tamp.prover.trace.candidates.ratio_shares`) and not to the loop engine
(``loop_proposals`` False), so claims it does not fit pay little for it.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

from lang import ast as A
from lang.evaluate import evaluate
from lang.walk import free_vars

from . import build as B
from ._lazy import stats
from ._tail import RealParamFamily
from .base import AxiomInstance, SelfReferentialSample, check_targets, target_variables


def moments(func: str, args: Tuple[A.Expr, ...]) -> Optional[Tuple[A.Expr, A.Expr, Tuple[A.Expr, ...]]]:
    """``(mean, variance, side conditions)`` of ``func(args)``, or None when not known."""
    if len(args) != 2:
        return None
    a, b = args
    if func == "gauss":
        return a, b, ()
    if func == "lap":
        return a, B.mul(2, B.mul(b, b)), ()
    if func == "uniform":
        w = B.sub(b, a)
        return B.div(B.add(a, b), 2), B.div(B.mul(w, w), 12), ()
    if func == "exp":
        return B.add(a, b), B.mul(b, b), ()
    if func == "unif":
        w = B.add(B.sub(b, a), 1)
        return B.div(B.add(a, b), 2), B.div(B.sub(B.mul(w, w), 1), 12), (B.le(a, b),)
    return None


class Chebyshev(RealParamFamily):
    """``Pr[(v - μ)² >= V/f] <= f`` for a draw with mean μ and variance V (module docstring)."""

    name = "chebyshev"
    distributions = ("gauss", "lap", "uniform", "exp", "unif")
    log_parameters = False
    loop_proposals = False
    #: proposed only the budget's shares that divide by a non-constant (V/t²), after the others
    ratio_shares = True

    def applies(self, dist: A.Call) -> bool:
        if not super().applies(dist):
            return False
        if dist.func == "unif" and all(isinstance(x, A.Num) for x in dist.args):
            return False  # a literal integer range: the exact finite family
        return moments(dist.func, tuple(dist.args)) is not None

    def instantiate(self, targets, dist, param):
        check_targets(targets, dist)
        f = B.e(param)
        if set(free_vars(f)) & target_variables(targets):
            raise SelfReferentialSample(f"{self.name}: the parameter reads the sampled variable")
        found = moments(dist.func, tuple(dist.args))
        if found is None:
            raise ValueError(f"chebyshev: no moments for {dist.func}")
        mean, var, side = found
        dev = B.sub(targets[0], mean)
        bad = B.ge(B.mul(dev, dev), B.div(var, f))
        return AxiomInstance(self.name, bad, f, (B.gt(var, 0), B.gt(f, 0)) + tuple(side), param=f)

    def numeric_instance(self, args, param, func: str = "gauss"):
        dist = A.Call(func, tuple(B.n(a) for a in args))
        return self.instantiate((A.Var("v"),), dist, B.n(param))

    def cost_value(self, args, param, func: str = "gauss") -> float:
        return float(evaluate(self.numeric_instance(args, param, func).cost, {}))

    def side_holds_for(self, func: str, args, param) -> bool:
        """Whether every side condition holds at these numbers."""
        return all(bool(evaluate(s, {})) for s in self.numeric_instance(args, param, func).side)

    def exact_tail(self, args, param, func: str = "gauss"):
        """The exact ``Pr[(v - μ)² >= V/f]`` of ``func(args)`` (for the numeric tests)."""
        a, b = (float(x) for x in args)
        f = float(param)
        if func == "gauss":
            mean, var = a, b
        elif func == "lap":
            mean, var = a, 2 * b * b
        elif func == "uniform":
            mean, var = (a + b) / 2, (b - a) ** 2 / 12
        elif func == "exp":
            mean, var = a + b, b * b
        else:
            mean, var = (a + b) / 2, ((b - a + 1) ** 2 - 1) / 12
        t = math.sqrt(var / f)
        if func == "gauss":
            return float(2 * stats.norm.sf(t, scale=math.sqrt(var)))
        if func == "lap":
            return math.exp(-t / b)
        if func == "uniform":
            return max(0.0, 1 - 2 * t / (b - a))
        if func == "exp":
            below = 1 - math.exp(-(b - t) / b) if t < b else 0.0
            return math.exp(-(b + t) / b) + below
        ks = range(int(a), int(b) + 1)
        return sum(1 for k in ks if (k - mean) ** 2 >= var / f) / len(ks)


FAMILIES = [Chebyshev()]
