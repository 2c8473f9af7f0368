"""Where a failed proof got stuck, read from the prover's explanation.

The failure-bound prover explains an unproved claim in text (``ProofResult.failed_trace``)::

    no axiom for `y ~ bern(p)` (line 10) keeps the failure below p / 2 and proves the postcondition
        on the trace:
          line 8: x ~ bern(0.5)
          line 9: assume(x)

:func:`failure_lines` recovers the source lines of that trace and the line it stopped at, so
the report can highlight them in the listing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional

_TRACE_LINE = re.compile(r"^\s*line (\d+):\s*(.*)$")
_AT_LINE = re.compile(r"\(line (\d+)\)")
_OBLIGATION = re.compile(r"\b(INIT|COVER|STEP|BUDGET|EXIT) at q(\d+)(?:->q(\d+))?")

#: What a failed obligation of the proof checker (tamp.prover.check) means, for the reader.
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
    steps: List[tuple] = field(default_factory=list)
    stuck_at: Optional[int] = None
    rule: Optional[str] = None                          # the checker's rule that failed, if named
    nodes: List[int] = field(default_factory=list)      # CFA nodes it names (loop programs)

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


def failure_lines(text: Optional[str], cfa=None) -> Optional[FailureLines]:
    """Parse the prover's explanation; ``cfa`` (for a loop program, whose automaton nodes are CFA
    nodes) maps ``at qN`` to a source line when no line is named."""
    if not text:
        return None
    rows = text.splitlines()
    fl = FailureLines(rows[0].strip())
    for row in rows[1:]:
        m = _TRACE_LINE.match(row)
        if m:
            fl.steps.append((int(m.group(1)), m.group(2).strip()))
    m = _AT_LINE.search(rows[0])
    if m:
        fl.stuck_at = int(m.group(1))
    elif fl.steps:
        fl.stuck_at = fl.steps[-1][0]
    if cfa is not None and not cfa.is_acyclic():  # the loop prover's automaton nodes are CFA nodes
        m = _OBLIGATION.search(rows[0])
        if m:
            fl.rule = m.group(1)
            fl.nodes = [int(g) for g in m.groups()[1:] if g is not None and int(g) in cfa.graph.nodes]
            if fl.stuck_at is None and fl.nodes:
                fl.stuck_at = cfa.graph.nodes[fl.nodes[-1]].get("line")
    return fl
