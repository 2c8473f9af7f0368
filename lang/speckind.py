"""What kind of specification a program states — which engine decides it."""

from __future__ import annotations

import dataclasses
from typing import Optional

from . import ast as A
from .printer import print_expr
from .typecheck import input_reliabilities

FAILURE_BOUND, PROBABILITY, CAUSAL, PRIVACY = "failure-bound", "probability", "causal", "privacy"


def clause_kind(e: A.Expr) -> str:
    """Which engine decides one ``ensures`` clause: ``"probability"`` when it contains ``P(…)``
    or a fairness clause, else ``"causal"`` when it contains ``independent(…)``, else
    ``"failure-bound"`` (the failure-probability prover's specifications)."""
    if A.contains(e, (A.Prob, A.Fairness)):
        return PROBABILITY
    if A.contains(e, A.Independent):
        return CAUSAL
    return FAILURE_BOUND


def spec_kind(program: A.Program) -> str:
    """``"probability"`` if some ``ensures`` clause is of that kind (:func:`clause_kind`), else
    ``"causal"`` if some is, else ``"privacy"`` for a program whose only claim is a ``private``
    clause, else ``"failure-bound"``."""
    if program.private is not None and not (program.ensures or program.fails or program.reliability):
        return PRIVACY
    kinds = {clause_kind(e) for e in program.ensures}
    for kind in (PROBABILITY, CAUSAL):
        if kind in kinds:
            return kind
    return FAILURE_BOUND


def infer_bound(prog: A.Program) -> A.Program:
    """``prog`` with its failure bound asked for (``fails ?``), unless an ``ensures`` already asks
    for a margin (one value is inferred at a time) or the program has no failure-bound clause.
    A ``reliability E`` program keeps its ``!failed``; its failure bound (``1 - E``) is asked for."""
    if any(A.contains(e, A.Hole) for e in prog.ensures):
        return prog
    stated: Optional[str]
    if prog.reliability is not None:
        stated = print_expr(A.Binary("-", A.num(1), prog.reliability))
        return dataclasses.replace(prog, fails=A.Hole(stated=stated))
    if prog.value_reliability is not None:  # `reliability(x) >= E`: its bound 1 - E is asked for
        stated = print_expr(A.Binary("-", A.num(1), input_reliabilities(prog.value_reliability.bound)[0]))
        return dataclasses.replace(prog, fails=A.Hole(stated=stated))
    if prog.ensures and all(clause_kind(e) != FAILURE_BOUND for e in prog.ensures):
        return prog
    stated = print_expr(prog.fails) if prog.fails is not None and not isinstance(prog.fails, A.Hole) else None
    return dataclasses.replace(prog, fails=A.Hole(stated=stated))
