"""Deciding one proof obligation with a fresh z3 solver.

The expression encoding is the shared one (:class:`tamp.core.encode.Encoder`: log/exp/sqrt
uninterpreted, with the guarded lemma instances of :mod:`axioms.lemmas` about the terms
:func:`axioms.terms.transcendental_apps` finds); the decision is
made here: a formula is *valid* only when z3 answers ``unsat`` for its negation under the
hypotheses. ``sat``, ``unknown`` and timeouts are all failures.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

import z3

from axioms.bound_facts import bound_fact_lemmas
from axioms.lemmas import lemma_instances
from axioms.terms import transcendental_apps
from lang import ast as A
from tamp.core.validity import VALID, check_fresh, verdict
from tamp.show import show_expr

from .format import ProgramCheck, Rejected
from .sum_bound_check import checked_closed_forms

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
    lemmas = [lem for _name, lem in lemma_instances(apps, enc, closed=checked_closed_forms)] if apps else []
    r = check_fresh(formula, hyps, lemmas, timeout_ms=timeout_ms)
    if r != z3.unsat and apps:
        # the second round of axioms.bound_facts (powers, signs of sums), re-derived from the
        # obligation's own terms, as the prover asks it: only after the first round failed
        extra = [lem for _name, lem in bound_fact_lemmas(apps, enc, [*hyps, formula])]
        if extra and check_fresh(formula, hyps, lemmas + extra, timeout_ms=timeout_ms) == z3.unsat:
            r = z3.unsat
    return verdict(r), time.monotonic() - t0


def check_obligations(
    obligations: Iterable[Tuple[str, str, A.Expr]],
    enc,
    env,
    hypotheses: List[z3.BoolRef],
    out: ProgramCheck,
    timeout_ms: int,
    deadline: Optional[float],
    extra: Optional[Callable[[List[z3.BoolRef], z3.BoolRef], List[z3.BoolRef]]] = None,
) -> None:
    """Decide every ``(kind, where, formula)`` obligation under ``hypotheses`` (``extra``: more
    hypotheses for one formula, e.g. lemma instances only its own engine uses), counting and
    logging each in ``out``; the first that is not valid (invalid, unknown, timed out, past the
    ``deadline``, or not encodable) raises :class:`Rejected` naming its kind and place."""
    for kind, where, f in obligations:
        ms = timeout_ms
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Rejected(f"{kind} at {where}: time limit reached before it was checked")
            ms = min(ms, int(left * 1000))
        try:
            fz = enc.expr(f, env)
        except Exception as exc:  # noqa: BLE001  (any encoding failure rejects this obligation)
            raise Rejected(f"{kind} at {where}: cannot encode {show_expr(f)}: {exc}") from None
        hyps = hypotheses + (extra(hypotheses, fz) if extra else [])
        status, dt = decide(fz, enc, hyps, ms)
        out.log.append(f"{kind} {where}: {status} ({dt:.3f} s)")
        if status != VALID:
            why = "it does not hold" if status == "invalid" else "the solver answered unknown or timed out"
            raise Rejected(f"{kind} fails at {where}: {why}")
        out.obligations += 1
