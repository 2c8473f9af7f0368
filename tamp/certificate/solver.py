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
from tamp.prover.smt import transcendental_apps

VALID, INVALID, UNKNOWN = "valid", "invalid", "unknown"


LEMMA_FREE_MS = 200


def _ask(formula, hyps, lemmas, timeout_ms):
    s = z3.Solver()
    s.set("timeout", max(int(timeout_ms), 1))
    for h in hyps:
        s.add(h)
    for _name, lem in lemmas:
        s.add(lem)
    s.add(z3.Not(formula))
    return s.check()


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
    if apps and _ask(formula, hyps, [], min(LEMMA_FREE_MS, timeout_ms)) == z3.unsat:
        return VALID, time.monotonic() - t0
    r = _ask(formula, hyps, lemma_instances(apps, enc) if apps else [], timeout_ms)
    dt = time.monotonic() - t0
    if r == z3.unsat:
        return VALID, dt
    if r == z3.sat:
        return INVALID, dt
    return UNKNOWN, dt
