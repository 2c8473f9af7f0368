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
from typing import Any, Sequence, Tuple

from lang import ast as A
from lang.printer import print_expr
from lang.walk import free_vars

from . import build as B


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


# --------------------------------------------------------------------------- helpers
#
# Reading of an axiom: in ``bad`` the target expressions denote the freshly sampled
# values, every other variable its value at the sampling statement (the statement
# changes only its targets). The distribution's arguments are evaluated *before*
# the sampling, so an axiom is only meaningful when no target variable is read by
# the arguments (``x ~ lap(x, 1)``): ``instantiate`` refuses such statements with
# :class:`SelfReferentialSample`; a front end can rename (``t := x; x ~ lap(t, 1)``).


class SelfReferentialSample(ValueError):
    """The sampling statement's distribution reads one of its own targets."""


def target_variables(targets: Sequence[A.Expr]) -> set:
    """Names of the variables a sampling statement writes (``x`` for ``x`` and ``x[i]``)."""
    out = set()
    for t in targets:
        base = t
        while isinstance(base, A.Index):
            base = base.base
        if isinstance(base, A.Var):
            out.add(base.name)
    return out


def reads_own_target(targets: Sequence[A.Expr], dist: A.Call) -> bool:
    """Whether ``dist``'s arguments read a variable that the sampling writes."""
    read = set()
    for a in dist.args:
        read |= set(free_vars(a))
    return bool(read & target_variables(targets))


def check_targets(targets: Sequence[A.Expr], dist: A.Call, count: int = 1) -> None:
    """Raise ``ValueError`` unless there are ``count`` targets and ``dist`` does not read them."""
    if len(targets) != count:
        raise ValueError(f"{dist.func}: expected {count} target(s), got {len(targets)}")
    if reads_own_target(targets, dist):
        raise SelfReferentialSample(
            f"the arguments of {dist.func}(...) read the sampled variable(s) "
            f"{sorted(target_variables(targets))}; rename before sampling"
        )


def union_bound(instances: Sequence[AxiomInstance], family: str = "") -> AxiomInstance:
    """Several axioms for the same sampling as one: ``Pr[bad1 ∨ … ∨ badk] <= cost1 + … + costk``
    (the union bound), under all side conditions. Zero costs are dropped from the sum, so
    adding :mod:`axioms.support` facts to an axiom keeps its cost expression unchanged."""
    bads = [i.bad for i in instances]
    costs = [i.cost for i in instances if not (isinstance(i.cost, A.Num) and i.cost.value == 0)]
    cost = costs[0] if costs else B.n(0)
    for c in costs[1:]:
        cost = B.add(cost, c)
    side: list = []
    for i in instances:
        side.extend(s for s in i.side if s not in side)
    return AxiomInstance(
        family or "+".join(i.family for i in instances),
        B.or_(*bads),
        cost,
        tuple(side),
        tuple(i.param for i in instances),
    )
