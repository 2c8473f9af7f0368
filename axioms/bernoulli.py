"""Axioms of the Bernoulli distribution ``bern(p)`` (a choice family).

Choices, for ``v ~ bern(p)`` (side condition ``0 <= p <= 1`` except for "none",
which holds for any distribution):

=========  ============  ==========  ==========================================
choice     bad           cost        reading
=========  ============  ==========  ==========================================
"none"     ``false``     ``0``       assume nothing about ``v``
"true"     ``!v``        ``1 - p``   assume ``v`` is true, paying Pr[v = false]
"false"    ``v``         ``p``       assume ``v`` is false, paying Pr[v = true]
=========  ============  ==========  ==========================================

Soundness. ``bern(p)`` gives ``true`` with probability ``p`` and ``false`` with
probability ``1 - p``; both are in ``[0, 1]`` when ``0 <= p <= 1``. Hence
``Pr[!v] = 1 - p``, ``Pr[v] = p`` and ``Pr[false] = 0``: each axiom holds with
equality. ``exact_tail`` sums the pmf over ``{true, false}`` at the points
where the ``bad`` expression itself evaluates to true, so it checks the AST.
"""

from __future__ import annotations

from lang import ast as A
from lang.evaluate import evaluate

from . import build as B
from .base import AxiomFamily, AxiomInstance, check_targets

CHOICES = ("none", "true", "false")


class BernoulliChoice(AxiomFamily):
    """Assume the outcome of ``bern(p)`` ("true" / "false") or nothing ("none")."""

    name = "bernoulli"
    distributions = ("bern",)
    param_kind = "choice"

    def applies(self, dist: A.Call) -> bool:
        return dist.func == "bern" and len(dist.args) == 1

    def choices(self, dist: A.Call):
        """Cheapest-first is not knowable for symbolic ``p``; "none" (cost 0) comes first."""
        return CHOICES

    def instantiate(self, targets, dist: A.Call, param) -> AxiomInstance:
        check_targets(targets, dist)
        if param not in CHOICES:
            raise ValueError(f"bernoulli: unknown choice {param!r}; expected one of {CHOICES}")
        v, p = targets[0], dist.args[0]
        bad: A.Expr
        cost: A.Expr
        if param == "none":
            bad, cost = B.FALSE, B.n(0)
        elif param == "true":
            bad, cost = B.not_(v), B.sub(1, p)
        else:
            bad, cost = v, p
        side = () if param == "none" else (B.le(0, p), B.le(p, 1))
        return AxiomInstance(
            self.name, bad, cost, side, param=param, note=f"assume {param}" if param != "none" else "assume nothing"
        )

    def _numeric(self, args, param):
        return self.instantiate((A.Var("v"),), A.Call("bern", (B.n(args[0]),)), param)

    def exact_tail(self, args, param) -> float:
        p = float(args[0])
        bad = self._numeric(args, param).bad
        return sum(prob for value, prob in ((True, p), (False, 1 - p)) if evaluate(bad, {"v": value}))

    def cost_value(self, args, param) -> float:
        return float(evaluate(self._numeric(args, param).cost, {}))


FAMILIES = [BernoulliChoice()]
