"""The bound a failed proof needed: "the bound needed is 2 * p * n but the claim says p * n".

When a proof of the postcondition with a *larger* failure bound exists (``fails ?`` finds one
within a few seconds, :mod:`.search`), a failed proof's explanation names it and advises to
claim it or to weaken the postcondition.

Soundness: nothing here decides a verdict; it only explains an "unknown".
"""

from __future__ import annotations

import dataclasses
import time
from typing import Optional

from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr
from tamp.prover.infer.search import infer_bound, sample_points
from tamp.prover.trace.explain import EXPLAINING, HINT_BOUND, HINT_GENERAL, explaining
from tamp.show import show_expr

#: seconds :func:`needed_bound` may spend looking for a provable larger bound
NEEDED_BOUND_S = 20.0


def needed_bound(program: A.Program, cfa, path: str, source: Optional[str], deadline: Optional[float]) -> str:
    """A failure bound the prover can prove for ``program``'s postcondition that exceeds the
    claimed one at some input (shown as the user would write it), or ''."""
    if EXPLAINING.get():
        return ""
    left = NEEDED_BOUND_S if deadline is None else min(NEEDED_BOUND_S, deadline - time.monotonic())
    if left < 1.0:
        return ""
    try:
        with explaining():
            t0 = time.monotonic()
            res = infer_bound(dataclasses.replace(program, fails=A.Hole()), t0 + left, t0, path, source, None)
    except Exception:  # noqa: BLE001 - an explanation never turns an answer into an error
        return ""
    if res.verdict != "proved" or not res.bound or res.bound == show_expr(cfa.bound):
        return ""
    try:
        found = parse_expr(res.bound)
    except Exception:  # noqa: BLE001
        return ""
    for env in sample_points(cfa):
        try:
            if float(evaluate(found, env)) > float(evaluate(cfa.bound, env)) * (1 + 1e-9):
                return res.bound
        except Exception:  # noqa: BLE001 - a point where either bound is undefined
            continue
    return ""


def with_needed_bound(result, program, cfa, path, source, deadline):
    """``result`` (an unknown) with the needed bound and the advice added to its failure."""
    if result.verdict == "proved" or EXPLAINING.get():
        return result
    needed = needed_bound(program, cfa, path, source, deadline)
    if not needed:
        if result.failure is not None and not result.failure.hint:
            result.failure = dataclasses.replace(result.failure, hint=HINT_GENERAL)
        return result
    if result.failure is None:  # a timeout: the message says where it stopped
        result.message = "\n  ".join(
            [m for m in [result.message] if m]
            + [f"the bound needed is {needed} but the claim says {show_expr(cfa.bound)}; what you can do: {HINT_BOUND}"]
        )
        return result
    result.failure = dataclasses.replace(result.failure, needed=needed, bound=show_expr(cfa.bound), hint=HINT_BOUND)
    return result
