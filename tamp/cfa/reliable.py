"""Rely's product bound, the parts the prover and the checker share: the claim's shape, the fault
flips of a CFA, and the *counting* CFA of its reliable execution.

The CFA compiles each unreliable operation to a fault flip ``$fK ~ bern(r)`` followed by
``failed := failed || $fK`` (:mod:`tamp.cfa`). A claim ``!failed`` with the bound
``1 - (1 - r)^N`` (written ``1 - exp(N * log(1 - r))``, or ``reliability exp(N * log(1 - r))``)
holds when every flip has the rate ``r`` and the *reliable* execution — every flip false —
performs at most ``N`` flips: the run is faultless exactly when every flip it performs is false,
and on that event it is the reliable execution, so (the flips independent of each other and of
the other samplings, each false with probability ``1 - r``)

    Pr[faultless] = E[(1 - r)^K]  >=  (1 - r)^N

where K is the number of flips the reliable execution performs (a random variable when the
program also samples) and E[K] <= N, 0 <= r < 1 (r <= 1 for the power form).

:func:`counting_cfa` states the count as a union bound: the same CFA with every flip's rate
replaced by a fresh input ``ρ`` (``$rho``, ``0 < ρ <= 1``), the claim ``!failed`` with the bound
``ρ * N``. Its premise is weaker than "at most N flips on every run" and enough: for every ρ,
``1 - E[(1 - ρ)^K] = Pr_ρ[failed] <= ρ N`` (the same identity at rate ρ), and
``(1 - (1 - ρ)^K) / ρ`` increases to ``K`` as ρ decreases to 0, so ``E[K] <= N`` by monotone
convergence (K finite almost surely: a run that never ends counts as failing for every ρ).
As ``x ↦ (1 - r)^x`` is convex, Jensen's inequality gives
``Pr_r[faultless] = E[(1 - r)^K] >= (1 - r)^E[K] >= (1 - r)^N``. The transformation is
deterministic, so the checker rebuilds the same CFA from the source and re-checks the counting
(union-bound) proof against it.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Tuple

import networkx as nx

from lang import ast as A

from . import CFA, FAILED

#: the fresh rate of the counting claim (a name no program can use: ``$`` is not in names)
RHO = "$rho"


@dataclasses.dataclass(frozen=True)
class ProductClaim:
    """A claim ``!failed`` with bound ``1 - (1 - rate)^count``; ``form`` is how it is written
    (``"exp"``: ``exp(count * log(1 - rate))``, needing ``rate < 1``; ``"pow"``: ``(1 - rate)^count``)."""

    rate: A.Expr
    count: A.Expr
    form: str


def _one_minus(e: A.Expr) -> Optional[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "-" and isinstance(e.left, A.Num) and e.left.value == 1:
        return e.right
    return None


def _power(e: A.Expr) -> Optional[Tuple[A.Expr, A.Expr, str]]:
    """(rate, count, form) of ``(1 - rate)^count`` in one of its spellings, else None."""
    if isinstance(e, A.Binary) and e.op == "^":
        rate = _one_minus(e.left)
        return (rate, e.right, "pow") if rate is not None else None
    if isinstance(e, A.Call) and e.func == "exp" and len(e.args) == 1:
        arg = e.args[0]
        if isinstance(arg, A.Binary) and arg.op == "*":
            for log, count in ((arg.right, arg.left), (arg.left, arg.right)):
                if isinstance(log, A.Call) and log.func == "log" and len(log.args) == 1:
                    rate = _one_minus(log.args[0])
                    if rate is not None:
                        return rate, count, "exp"
    return None


def product_claim(cfa: CFA) -> Optional[ProductClaim]:
    """The product claim of ``cfa``, or None when its bound is not ``1 - (1 - r)^N``."""
    e = _one_minus(cfa.bound)
    got = _power(e) if e is not None else None
    if got is None:
        return None
    return ProductClaim(*got)


def only_not_failed(cfa: CFA) -> bool:
    """Whether the postcondition is exactly ``!failed`` (the reliability claim alone)."""
    want = A.Unary("!", A.Var(FAILED))
    return len(cfa.ensures) >= 1 and all(e == want for e in cfa.ensures)


def flip_edges(cfa: CFA) -> List[Tuple[int, int, int, A.Sample]]:
    """The fault flips of ``cfa``: samplings ``$fK ~ bern(rate)`` (the compiler's names)."""
    out = []
    for u, v, k, d in cfa.edges():
        st = d["stmt"]
        if (
            isinstance(st, A.Sample)
            and len(st.targets) == 1
            and isinstance(st.targets[0], A.Var)
            and st.targets[0].name.startswith("$f")
        ):
            out.append((u, v, k, st))
    return out


def flip_rate(st: A.Sample) -> Optional[A.Expr]:
    """The rate of a flip ``$fK ~ bern(rate)``; None for any other distribution."""
    if st.dist.func == "bern" and len(st.dist.args) == 1:
        return st.dist.args[0]
    return None


def counting_cfa(cfa: CFA, count: A.Expr) -> CFA:
    """The counting claim of ``cfa`` (see the module docstring): every flip's rate replaced by a
    fresh input ``$rho`` with ``0 < $rho <= 1``, the claim ``!failed`` with bound ``$rho * count``."""
    g = nx.MultiDiGraph(cfa.graph)  # an unfrozen copy, same nodes and data
    rho = A.Var(RHO)
    for u, v, key, st in flip_edges(cfa):
        g.edges[u, v, key]["stmt"] = A.Sample(st.targets, A.Call("bern", (rho,), pos=st.dist.pos), pos=st.pos)
    types = dict(cfa.types)
    types[RHO] = A.REAL
    return dataclasses.replace(
        cfa,
        graph=nx.freeze(g),
        params=tuple(cfa.params) + (A.Param(RHO, A.REAL),),
        requires=tuple(cfa.requires) + (A.Binary("<", A.num(0), rho), A.Binary("<=", rho, A.num(1))),
        bound=A.Binary("*", rho, count),
        types=types,
    )
