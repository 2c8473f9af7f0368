"""The sign of a normal draw about its mean: ``Pr[v <= m] = Pr[v >= m] = 1/2`` for ``v ~ gauss(m, var)``.

Choices, for ``v ~ gauss(m, var)`` (side condition ``var > 0``):

=========  ============  ==========  ==========================================
choice     bad           cost        reading
=========  ============  ==========  ==========================================
"above"    ``v <= m``    ``1/2``     assume ``v > m``, paying Pr[v <= m]
"below"    ``v >= m``    ``1/2``     assume ``v < m``, paying Pr[v >= m]
=========  ============  ==========  ==========================================

Soundness. A normal law with variance ``var > 0`` has a density symmetric about its mean ``m``:
``v - m`` and ``m - v`` have the same law, so ``Pr[v < m] = Pr[v > m]``, and ``Pr[v = m] = 0``
(no atom). The two add up to 1, so each is ``1/2``, and ``Pr[v <= m] = Pr[v >= m] = 1/2``: each
axiom holds with equality. A rejection sampler that keeps a draw on one side of the mean (a
half-normal from a normal) accepts with probability exactly 1/2 per try; the tail families of
:mod:`axioms.gaussian` cannot say so (their thresholds are above the mean). ``exact_tail``
computes the probability with ``scipy.stats.norm`` at the side the ``bad`` expression names.
"""

from __future__ import annotations

from lang import ast as A
from lang.evaluate import evaluate

from . import build as B
from ._lazy import stats
from .base import AxiomFamily, AxiomInstance, check_targets

CHOICES = ("above", "below")


class GaussianSign(AxiomFamily):
    """Assume a normal draw is above (or below) its mean, paying 1/2."""

    name = "gaussian_sign"
    distributions = ("gauss",)
    param_kind = "choice"
    #: a sign per iteration of a loop is the per-iteration composition's business, not the loop engine's
    loop_proposals = False

    def applies(self, dist: A.Call) -> bool:
        return dist.func == "gauss" and len(dist.args) == 2

    def choices(self, dist: A.Call):
        return CHOICES

    def instantiate(self, targets, dist: A.Call, param) -> AxiomInstance:
        check_targets(targets, dist)
        if param not in CHOICES:
            raise ValueError(f"gaussian_sign: unknown choice {param!r}; expected one of {CHOICES}")
        v, (m, var) = targets[0], dist.args
        bad = B.le(v, m) if param == "above" else B.ge(v, m)
        return AxiomInstance(self.name, bad, B.div(1, 2), (B.gt(var, 0),), param=param, note=f"assume {param} the mean")

    def _numeric(self, args, param):
        return self.instantiate((A.Var("v"),), A.Call("gauss", tuple(B.n(a) for a in args)), param)

    def exact_tail(self, args, param) -> float:
        m, var = (float(a) for a in args)
        bad = self._numeric(args, param).bad
        # the bad event is one closed half-line ending at m: find which by evaluating it off m
        below = bool(evaluate(bad, {"v": m - 1.0}))
        above = bool(evaluate(bad, {"v": m + 1.0}))
        sd = var**0.5
        return float(stats.norm.cdf(m, loc=m, scale=sd)) * below + float(stats.norm.sf(m, loc=m, scale=sd)) * above

    def cost_value(self, args, param) -> float:
        return float(evaluate(self._numeric(args, param).cost, {}))

    def side_holds(self, args, param) -> bool:
        return all(bool(evaluate(s, {})) for s in self._numeric(args, param).side)


FAMILIES = [GaussianSign()]
