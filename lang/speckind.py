"""What kind of specification a program states — which engine decides it."""

from __future__ import annotations

from . import ast as A

FAILURE_BOUND, PROBABILITY, CAUSAL = "failure-bound", "probability", "causal"


def spec_kind(program: A.Program) -> str:
    """``"probability"`` if some ``ensures`` contains ``P(…)`` or a fairness clause,
    else ``"causal"`` if some ``ensures`` contains ``independent(…)``,
    else ``"failure-bound"`` (the failure-probability prover's specifications)."""
    if any(A.contains(e, (A.Prob, A.Fairness)) for e in program.ensures):
        return PROBABILITY
    if any(A.contains(e, A.Independent) for e in program.ensures):
        return CAUSAL
    return FAILURE_BOUND
