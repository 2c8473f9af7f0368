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

VALID, INVALID, UNKNOWN = "valid", "invalid", "unknown"


def decide(formula: z3.BoolRef, enc, hypotheses: Sequence[z3.BoolRef] = (), timeout_ms: int = 10000
           ) -> Tuple[str, float]:
    """(``"valid"`` | ``"invalid"`` | ``"unknown"``, seconds) for ``hypotheses ⇒ formula``."""
    from axioms.lemmas import lemma_instances
    from tamp.prover.smt import transcendental_apps

    hyps = list(hypotheses)
    apps = transcendental_apps(z3.And(*hyps, formula) if hyps else formula)
    s = z3.Solver()
    s.set("timeout", max(int(timeout_ms), 1))
    for h in hyps:
        s.add(h)
    for _name, lem in (lemma_instances(apps, enc) if apps else []):
        s.add(lem)
    s.add(z3.Not(formula))
    t0 = time.monotonic()
    r = s.check()
    dt = time.monotonic() - t0
    if r == z3.unsat:
        return VALID, dt
    if r == z3.sat:
        return INVALID, dt
    return UNKNOWN, dt
