"""Shared machinery of the families whose parameter is a real expression ``f``.

A subclass sets ``name``, ``distributions``, ``arity`` and implements
:meth:`RealParamFamily.axiom` (the bad event, cost and side conditions as AST
over the target, the distribution's arguments and ``f``) and
:meth:`AxiomFamily.exact_tail`. ``cost_value`` evaluates the very cost
expression the prover sees (with :mod:`lang.evaluate`), so the numeric tests
check the AST, not a copy of it.
"""

from __future__ import annotations

from typing import Any, Sequence, Tuple

from lang import ast as A
from lang.evaluate import evaluate
from lang.walk import free_vars

from . import build as B
from .base import AxiomFamily, AxiomInstance, SelfReferentialSample, check_targets, target_variables


def scale_and_probability(scale: A.Expr, f: A.Expr, f_max=1) -> Tuple[A.Expr, ...]:
    """The usual side conditions of a tail axiom: a positive scale and ``0 < f <= f_max``."""
    return (B.gt(scale, 0), B.lt(0, f), B.le(f, f_max))


class RealParamFamily(AxiomFamily):
    """A family ``Pr[bad(v, args, f)] <= cost(args, f)`` with a real parameter ``f``."""

    param_kind = "real"
    arity = 2

    def applies(self, dist: A.Call) -> bool:
        return dist.func in self.distributions and len(dist.args) == self.arity

    def axiom(self, v: A.Expr, args: Tuple[A.Expr, ...], f: A.Expr):
        """``(bad, cost, side)`` for target ``v``, argument expressions ``args``, parameter ``f``."""
        raise NotImplementedError

    def instantiate(self, targets: Sequence[A.Expr], dist: A.Call, param: Any) -> AxiomInstance:
        """The axiom for ``targets ~ dist`` with parameter ``param`` (an expression, or a number
        that becomes an exact literal)."""
        check_targets(targets, dist)
        f = B.e(param)
        if set(free_vars(f)) & target_variables(targets):
            raise SelfReferentialSample(f"{self.name}: the parameter reads the sampled variable")
        bad, cost, side = self.axiom(targets[0], tuple(dist.args), f)
        return AxiomInstance(self.name, bad, cost, tuple(side), param=f)

    # ---------------------------------------------------------------- numeric
    def numeric_instance(self, args: Sequence[Any], param: Any) -> AxiomInstance:
        """The instance for target ``v`` with literal arguments and parameter."""
        dist = A.Call(self.distributions[0], tuple(B.n(a) for a in args))
        return self.instantiate((A.Var("v"),), dist, B.n(param))

    def cost_value(self, args: Sequence[Any], param: Any) -> float:
        return float(evaluate(self.numeric_instance(args, param).cost, {}))

    def side_holds(self, args: Sequence[Any], param: Any) -> bool:
        """Whether every side condition holds at these numbers."""
        inst = self.numeric_instance(args, param)
        return all(bool(evaluate(s, {})) for s in inst.side)

    def literal_value(self, make_expr, args: Sequence[Any], param: Any) -> float:
        """Evaluate ``make_expr(*args_as_literals, param_as_literal)`` — used by ``exact_tail``
        to read the threshold of the bad event from the same AST builder as ``bad``."""
        lits = [B.n(a) for a in args] + [B.n(param)]
        return float(evaluate(make_expr(*lits), {}))
