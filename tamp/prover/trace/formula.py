"""The trace encoding (SSA) of a CFA path with one axiom per sampling statement.

For a path s1 … sn and axioms for its samplings, the trace is *proved* when

    requires ∧ enc(s1 … sn)  ⇒  ensures (if no bad event happened) ∧ ω_n <= β

and, at every sampling i (reached with no bad event so far), its axiom's side conditions hold
and ω_{i-1} + cost_i <= β. Here ``x := e`` is a functional update of the environment,
``assume(c)`` adds ``c``, and ``v ~ D`` makes ``v`` fresh, adds ``cost`` to ω and records
``bad`` (the run is excused when a bad event happens: Pr[bad] <= cost pays for it).
The step semantics is :func:`tamp.core.step.step` (shared with the certificate checker); this
module adds the goals at the end of a path and of a prefix.
"""

from __future__ import annotations

import z3

from tamp.core.step import StepState, initial_state, step  # noqa: F401 (re-exported: the prover's names)
from tamp.prover.base.smt import Encoder, conj


def trace_goal(enc: Encoder, st: StepState, ensures, beta: z3.ExprRef) -> z3.BoolRef:
    """The validity goal at the end of a path (with its accumulated side obligations)."""
    post = z3.And(*[enc.expr(e, st.env) for e in ensures]) if ensures else z3.BoolVal(True)
    final = z3.Implies(st.context(), conj(post, st.omega <= beta))
    return conj(*st.obligations, final)


def prefix_goal(st: StepState, beta: z3.ExprRef) -> z3.BoolRef:
    """Pruning: the obligations so far (side conditions, ω <= β) — a prefix failing them
    cannot be extended to a proved trace."""
    return conj(*st.obligations, z3.Implies(st.context(), st.omega <= beta))
