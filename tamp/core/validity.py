"""Validity queries to z3: one fresh solver per question, and the one reading of its answer.

A formula is *valid* under hypotheses only when z3 answers ``unsat`` for its negation;
``sat`` makes it *invalid*; ``unknown`` — a timeout, an exhausted resource limit, an incomplete
theory — is *unknown*, never valid (:func:`verdict`). Every proof step that rests on a solver
answer reads it through :func:`verdict`.

:func:`check_fresh` asks a new solver (no state carried over from earlier queries, so z3 runs
its full preprocessing and the answer does not depend on what was asked before), bounded by a
wall-clock ``timeout_ms`` and/or z3's deterministic resource limit ``rlimit`` (a count of its
internal steps: the same answer on every run and machine load).

>>> import z3
>>> x = z3.Real("x")
>>> verdict(check_fresh(x * x >= 0, timeout_ms=1000))
'valid'
>>> verdict(check_fresh(x > 1, [x > 0], timeout_ms=1000))
'invalid'
"""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

import z3

from tamp.core import watchdog, z3context

VALID, INVALID, UNKNOWN = "valid", "invalid", "unknown"


def verdict(answer: z3.CheckSatResult) -> str:
    """:data:`VALID` for ``unsat`` (of the negation), :data:`INVALID` for ``sat``, else
    :data:`UNKNOWN`."""
    if answer == z3.unsat:
        return VALID
    if answer == z3.sat:
        return INVALID
    return UNKNOWN


#: z3 resource units per millisecond of a query's budget (z3 spends about 2-5 million per second
#: of CPU on tamp's queries), and how much longer a query's clock limit is than its budget: the
#: resource limit makes the answer the same on every run and load, the clock only guards against
#: a query whose steps are slow
RLIMIT_PER_MS = 3000
CLOCK_SLACK = 10


def budget_limits(ms: float) -> Tuple[int, int]:
    """z3's resource limit and the clock limit (ms) of a query with a budget of ``ms``
    milliseconds of z3's work.

    >>> budget_limits(200)
    (600000, 2000)
    """
    ms = max(int(ms), 1)
    return ms * RLIMIT_PER_MS, ms * CLOCK_SLACK


def check_fresh(
    formula: z3.BoolRef,
    hypotheses: Iterable[z3.BoolRef] = (),
    lemmas: Iterable[z3.BoolRef] = (),
    *,
    timeout_ms: Optional[float] = None,
    rlimit: Optional[int] = None,
    budget_ms: Optional[float] = None,
) -> z3.CheckSatResult:
    """z3's answer for ``hypotheses ∧ lemmas ∧ ¬formula`` in a new solver, within ``rlimit``
    resource units and ``timeout_ms`` milliseconds (at least 1) where given, or the limits of
    ``budget_ms`` (:func:`budget_limits`)."""
    return check_sat([*hypotheses, *lemmas, z3.Not(formula)], timeout_ms=timeout_ms, rlimit=rlimit, budget_ms=budget_ms)


def check_sat(
    parts: Iterable[z3.BoolRef],
    *,
    timeout_ms: Optional[float] = None,
    rlimit: Optional[int] = None,
    budget_ms: Optional[float] = None,
) -> z3.CheckSatResult:
    """z3's answer for the conjunction of ``parts`` (asserted in order) in a new solver, within
    ``rlimit`` and ``timeout_ms`` (at least 1) where given, or the limits of ``budget_ms``
    (:func:`budget_limits`). Only ``unsat`` is a fact: an ``unknown`` must be read as "not
    shown" by the caller.

    >>> import z3
    >>> x = z3.Real("x")
    >>> check_sat([x > 1, x < 0], timeout_ms=1000) == z3.unsat
    True
    """
    if budget_ms is not None:
        rlimit, timeout_ms = budget_limits(budget_ms)
    z3context.tick()  # the proof's own collection points (tamp.core.z3context)
    s = z3.Solver()
    if rlimit is not None:
        s.set("rlimit", int(rlimit))
    if timeout_ms is not None:
        s.set("timeout", max(int(timeout_ms), 1))
    for p in parts:
        s.add(p)
    # control comes back even if z3 heeds neither limit (tamp.core.watchdog)
    return watchdog.call(s.check, s.ctx, None if timeout_ms is None else max(int(timeout_ms), 1) / 1000)
