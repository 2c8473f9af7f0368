"""The interface every distribution axiom family implements.

An *axiom* for a sampling statement ``v ~ D(args)`` is a pair (bad, cost) with

    Pr_{v ~ D(args)} [ bad ] <= cost

whenever the side conditions ``side`` hold. The prover replaces the sampling
by "ω grows by ``cost``; if ``bad`` happened, the trace is excused"
(``h := h || bad``). ``bad``, ``cost`` and ``side`` are :mod:`lang.ast`
expressions over the sampled target(s), the distribution's argument
expressions and the family's parameter, so the same axiom is read by the SMT
encoder, by the simulator and by the numeric soundness tests.

A family's parameter is either

* ``"real"``: an expression ``f`` (over the program's inputs, loop counters …)
  chosen by synthesis, e.g. the Laplace family's failure probability; or
* ``"choice"``: one of the finitely many values ``choices(dist)``, e.g.
  Bernoulli's "assume true" / "assume false" / "assume nothing".

Adding a family is adding one module to this package that defines
``FAMILIES = [...]`` — :func:`axioms.families_for` finds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Tuple

from lang import ast as A


@dataclass(frozen=True)
class AxiomInstance:
    """One concrete axiom: ``Pr[bad] <= cost`` provided every ``side`` condition holds."""

    family: str
    bad: A.Expr
    cost: A.Expr
    side: Tuple[A.Expr, ...] = ()
    param: Any = None
    note: str = field(default="", compare=False)

    def describe(self) -> str:
        from lang.printer import print_expr  # local import: printer is optional at import time

        return f"{self.family}: Pr[{print_expr(self.bad)}] <= {print_expr(self.cost)}"


class AxiomFamily:
    """Base class: subclasses set ``name``, ``distributions``, ``param_kind`` and implement
    :meth:`instantiate` and :meth:`exact_tail` (and :meth:`choices` for choice families)."""

    name: str = ""
    distributions: Tuple[str, ...] = ()
    param_kind: str = "real"  # "real" | "choice"

    def choices(self, dist: A.Call) -> Sequence[Any]:
        """The finitely many parameters of a ``"choice"`` family for this distribution."""
        return ()

    def applies(self, dist: A.Call) -> bool:
        """Whether this family has axioms for ``dist`` (by name, and shape of its arguments)."""
        return dist.func in self.distributions

    def instantiate(self, targets: Tuple[A.Expr, ...], dist: A.Call, param: Any) -> AxiomInstance:
        """The axiom for sampling ``targets ~ dist`` with parameter ``param``."""
        raise NotImplementedError

    def exact_tail(self, args: Tuple[Any, ...], param: Any) -> float:
        """Pr[bad] under the exact distribution with numeric ``args`` (floats, or tuples of
        values for finite sets) and numeric ``param`` — computed independently of ``cost``,
        so that tests can check ``exact_tail <= cost`` at many parameter values."""
        raise NotImplementedError

    def cost_value(self, args: Tuple[Any, ...], param: Any) -> float:
        """The numeric value of ``cost`` at numeric ``args`` and ``param``."""
        raise NotImplementedError
