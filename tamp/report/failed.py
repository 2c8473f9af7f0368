"""Where a failed proof got stuck, from the prover's typed explanation (:class:`ProofFailure`).

:func:`failure_lines` gives the source lines of the trace the prover could not prove and the
line it stopped at, so the report can highlight them in the listing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from tamp.cfa import CFA
from tamp.prover.base.failure import ProofFailure

#: What a failed obligation of the proof checker (tamp.prover.trace.check) means, for the reader.
RULES = {
    "INIT": "the proof cannot start here",
    "COVER": "the automaton does not cover every run from here",
    "STEP": "a label does not carry over along this edge",
    "BUDGET": "the failure spent so far (κ) may exceed the bound here",
    "EXIT": "the postcondition does not follow from the label here",
}


@dataclass
class FailureLines:
    """The reason (first line of the explanation), the trace's steps ``(line, statement)`` in
    order, and the line where the proof stopped (None when the explanation names none)."""

    reason: str
    steps: List[Tuple[int, str]] = field(default_factory=list)
    stuck_at: Optional[int] = None
    rule: Optional[str] = None  # the checker's rule that failed, if named
    nodes: List[int] = field(default_factory=list)  # CFA nodes it names (loop programs)

    @property
    def note(self) -> str:
        """A short note for the line where the proof stopped."""
        return RULES.get(self.rule or "", "the proof stops here")

    @property
    def lines(self) -> List[int]:
        out = [ln for ln, _ in self.steps]
        if self.stuck_at is not None:
            out.append(self.stuck_at)
        return out


def failure_lines(failure: Optional[ProofFailure], cfa: Optional[CFA] = None) -> Optional[FailureLines]:
    """The lines of the prover's explanation; ``cfa`` (for a loop program, whose automaton nodes
    are CFA nodes) maps a failed obligation's nodes to a source line when no line is named."""
    if failure is None:
        return None
    fl = FailureLines(
        failure.reason,
        [(s.line, ("split " if s.split else "") + s.stmt) for s in failure.steps if s.line],
        failure.stuck_at,
    )
    if cfa is not None and not cfa.is_acyclic():  # the loop prover's automaton nodes are CFA nodes
        named = next((o for o in failure.obligations if o.src is not None), None)
        if named is not None:
            fl.rule = named.rule
            fl.nodes = [n for n in named.nodes if n in cfa.graph.nodes]
            if fl.stuck_at is None and fl.nodes:
                fl.stuck_at = cfa.graph.nodes[fl.nodes[-1]].get("line")
    return fl
