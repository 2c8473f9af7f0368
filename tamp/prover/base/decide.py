"""A deterministic second opinion on a validity query: a fresh solver bounded by z3's rlimit.

:func:`tamp.prover.base.smt.is_valid` asks a solver that is reused across queries (incremental,
``push``/``pop``) under a wall-clock timeout. Both make a hard query's answer depend on the
machine's load and on the queries asked before: a straight-line sum of 20 Laplace draws was
proved in one run and "unknown" in another, its last trace goal taking 1-2 s of CPU in the
reused solver and crossing the 10 s clock limit when the machine was busy. The same query in a
*fresh* solver (which runs z3's full preprocessing, e.g. normalising ``1/(p/20)`` and ``20/p`` to
one term, where the incremental core does not) takes a tenth of that, and z3's resource limit
(``rlimit``, a count of its internal steps) makes the answer the same on every run and load.

:func:`decide_fresh` is asked only where the reused solver said ``unknown``; like every query
it returns VALID only on ``unsat`` — an exhausted rlimit is ``unknown``, never valid.
"""

from __future__ import annotations

import time
from typing import Optional, Sequence

import z3

from tamp.core.validity import UNKNOWN, check_fresh, verdict
from tamp.prover.base.smt import Stats, conj, enc_has_apps, lemmas_for, transcendental_apps

#: z3 resource units for one fresh query (the 20-draw sum's last step needs about 3 million, the
#: 64-draw sum's more than 30 million: since the reused solver's queries are bounded by resource
#: units too, this second opinion is where a hard step gets the time a 10 s clock gave it)
FRESH_RLIMIT = 150_000_000


def decide_fresh(
    formula: z3.BoolRef,
    enc,
    stats: Stats,
    hypotheses: Sequence[z3.BoolRef] = (),
    rlimit: int = FRESH_RLIMIT,
    timeout_ms: Optional[int] = None,
) -> str:
    """``hypotheses ⇒ formula`` decided by a new solver with the lemmas about the formula's
    log/exp/sqrt terms, within ``rlimit`` (and ``timeout_ms``, the proof's own time limit
    when it has one)."""
    hyps = list(hypotheses)
    apps = transcendental_apps(conj(*hyps, formula) if hyps else formula) if enc_has_apps(enc) else []
    lemmas = lemmas_for(apps, enc)
    t0 = time.monotonic()
    r = check_fresh(formula, hyps, [lem for _name, lem in lemmas], timeout_ms=timeout_ms, rlimit=rlimit)
    stats.solver_calls += 1
    stats.solver_time += time.monotonic() - t0
    answer = verdict(r)
    if answer == UNKNOWN:
        stats.unknowns += 1
    return answer
