"""Deciding one proof obligation with a fresh z3 solver.

The expression encoding is the prover's (:class:`tamp.prover.smt.Encoder`: log/exp/sqrt
uninterpreted, with the guarded lemma instances of :mod:`axioms.lemmas`); the decision is
made here: a formula is *valid* only when z3 answers ``unsat`` for its negation under the
hypotheses. ``sat``, ``unknown`` and timeouts are all failures.
"""

from __future__ import annotations

import time
from typing import Sequence, Tuple

import z3

from axioms.lemmas import lemma_instances
from tamp.core.validity import VALID, check_fresh, verdict
from tamp.prover.smt import transcendental_apps

LEMMA_FREE_MS = 200


def decide(
    formula: z3.BoolRef, enc, hypotheses: Sequence[z3.BoolRef] = (), timeout_ms: int = 10000
) -> Tuple[str, float]:
    """(``"valid"`` | ``"invalid"`` | ``"unknown"``, seconds) for ``hypotheses ⇒ formula``.

    Obligations that hold with log/exp/sqrt as plain uninterpreted functions are settled by a
    short first query without the lemma instances (an ``unsat`` without extra hypotheses is an
    ``unsat`` with them); the others are asked again with the lemmas."""
    hyps = list(hypotheses)
    apps = transcendental_apps(z3.And(*hyps, formula) if hyps else formula)
    t0 = time.monotonic()
    if apps and check_fresh(formula, hyps, timeout_ms=min(LEMMA_FREE_MS, timeout_ms)) == z3.unsat:
        return VALID, time.monotonic() - t0
    lemmas = [lem for _name, lem in lemma_instances(apps, enc)] if apps else []
    r = check_fresh(formula, hyps, lemmas, timeout_ms=timeout_ms)
    return verdict(r), time.monotonic() - t0
