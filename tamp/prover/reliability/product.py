"""Rely's product bound Pr[no fault] >= (1 - r)^N, proved by counting the reliable execution's faults.

The union bound pays ``r`` for every unreliable operation: ``Pr[failed] <= N * r``. Rely's bound
is the exact product ``1 - (1 - r)^N``, smaller than ``N * r``. It follows from a count: the
run is faultless exactly when every fault flip it performs is false, on that event it is the
reliable execution, and the flips are independent with probability ``1 - r`` of being false, so
``Pr[faultless] = E[(1 - r)^K] >= (1 - r)^E[K] >= (1 - r)^N`` (Jensen) when the reliable
execution performs ``K`` flips with ``E[K] <= N`` (see :mod:`tamp.cfa.reliable`).

The method applies to a claim ``!failed`` (``reliability E`` or ``ensures !failed``) whose bound
is ``1 - exp(N * log(1 - r))`` (or ``1 - (1 - r)^N``), every flip of rate ``r``. Its premises:

- ``requires`` implies ``0 <= r`` and ``r < 1`` (``r <= 1`` for the power form): the base
  ``1 - r`` is in (0, 1], where ``x ↦ (1 - r)^x`` does not increase;
- the counting claim (:func:`tamp.cfa.reliable.counting_cfa`): with every flip's rate a fresh
  ``ρ in (0, 1]``, ``Pr[failed] <= ρ * N`` — proved by the union bound (termination included),
  it gives ``E[K] <= N``.

Sound because both premises are the product rule's, and the certificate carries the counting
proof, which :mod:`tamp.certificate.product_checker` re-checks on the CFA it rebuilds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import z3

from tamp.cfa.reliable import counting_cfa, flip_edges, flip_rate, only_not_failed, product_claim
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid
from tamp.prover.trace.result import ProofResult
from tamp.show import show_expr

__all__ = ["ProductResult", "try_product"]


@dataclass(repr=False)
class ProductResult(ProofResult):
    """A failure bound proved by the product rule: the claim's ``rate`` and ``count`` and the
    proof of the counting claim (``counting``, a proved :class:`ProofResult`)."""

    rate: Any = None
    count: Any = None
    form: str = ""
    counting: Optional[ProofResult] = field(default=None)


def try_product(cfa, t0: float, prove_counting: Callable[[Any], Optional[ProofResult]]):
    """``(ProductResult or None, why)``: the product rule on ``cfa`` (why is '' when the claim is
    not a product claim). ``prove_counting(counting_cfa)``: the failure-bound prover on the
    counting claim (the portfolio's union bound), a :class:`ProofResult` or None."""
    claim = product_claim(cfa)
    flips = flip_edges(cfa)
    if claim is None or not flips:  # not a product claim, or no unreliable operation to count
        return None, ""
    if not only_not_failed(cfa):
        return None, "the product rule proves the claim `!failed` alone"
    if any(flip_rate(st) != claim.rate for *_e, st in flips):
        return None, f"the product rule needs every unreliable operation to fail with the rate {show_expr(claim.rate)}"
    why = _rate_range(cfa, claim)
    if why:
        return None, why
    inner = prove_counting(counting_cfa(cfa, claim.count))
    if inner is None or inner.verdict != "proved":
        lines = inner.message.splitlines() if inner is not None and inner.message else []
        # the union bound's own reason (its first line that is not the "not proved (...)" coda)
        reason = next((ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("not proved")), "")
        return None, (
            f"the reliable execution was not proved to perform at most {show_expr(claim.count)} "
            f"unreliable operations: the union bound ρ * ({show_expr(claim.count)}) at a rate ρ was not proved"
            + (f": {reason}" if reason and len(reason) < 160 else "")
        )
    res = ProductResult(
        cfa.name,
        "failure-bound",
        "proved",
        time.monotonic() - t0,
        show_expr(cfa.bound),
        f"by the product rule: the reliable execution performs at most {show_expr(claim.count)} unreliable "
        f"operations (on average), each failing independently with probability {show_expr(claim.rate)}, so "
        f"Pr[no failure] >= (1 - {show_expr(claim.rate)})^({show_expr(claim.count)})",
        cfa=cfa,
        automata=inner.automata,
        axioms=inner.axioms,
        stats=inner.stats,
        obligations=inner.obligations,
        facts=inner.facts,
        rankings=inner.rankings,
        rate=claim.rate,
        count=claim.count,
        form=claim.form,
        counting=inner,
    )
    return res, ""


def _rate_range(cfa, claim) -> str:
    """'' when ``requires`` implies ``0 <= r`` and ``r < 1`` (``<= 1`` for the power form)."""
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    req = [enc.expr(r, env) for r in cfa.requires]
    r = enc.expr(claim.rate, env)
    r = z3.ToReal(r) if r.sort() == z3.IntSort() else r
    upper = r < 1 if claim.form == "exp" else r <= 1
    if is_valid(z3.And(r >= 0, upper), enc, Stats(), 5000, req) != VALID:
        need = "0 <= r < 1" if claim.form == "exp" else "0 <= r <= 1"
        return f"the product rule needs `requires` to imply {need} for r = {show_expr(claim.rate)}"
    return ""
