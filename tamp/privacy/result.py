"""The result of a privacy claim: the verdict, ε, and the proof as data.

A proved claim keeps its alignment (one :class:`~tamp.privacy.product.AlignmentStep` per
sampling statement: the shift and its cost), the loop invariants found, and the obligations
(z3 formulas) that were proved — what a later certificate checker re-checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from tamp.results import PROVED, UNKNOWN, VIOLATED, ProgramResult


@dataclass(repr=False)
class PrivacyResult(ProgramResult):
    """One program's ``private`` claim decided (kind ``"privacy"``)."""

    epsilon: str = ""
    epsilon_value: Optional[str] = None
    alignment: List[Any] = field(default_factory=list)
    invariants: List[str] = field(default_factory=list)
    obligations: List[Any] = field(default_factory=list)
    #: per loop (line, column): its invariants in the certificate's invariant language
    loop_invariants: Dict[Any, List[str]] = field(default_factory=dict)
    #: the output proved value by value (``out = k`` in run 1 implies it in run 2), if any
    pointwise: Optional[str] = None
    counterexample: Optional[Dict[str, Any]] = None
    line: Optional[int] = None
    #: a proof by cases (``neighbours`` a disjunction): one proved result per disjunct, in order
    cases: List["PrivacyResult"] = field(default_factory=list)
    #: the disjunct of ``neighbours`` a case's proof assumes (``None``: the whole relation)
    case: Optional[str] = None
    #: the public inputs fixed by ``--input`` that the proof assumes (name -> checked value);
    #: empty: the proof is for every input satisfying ``requires``
    fixed_inputs: Dict[str, Any] = field(default_factory=dict)

    @property
    def word(self) -> str:
        """The verdict word (the one vocabulary of tamp.results) and what it says of privacy:
        ``proved  private`` / ``violated  not private`` / ``unknown``."""
        return {PROVED: f"{PROVED}  private", VIOLATED: f"{VIOLATED}  not private"}.get(self.verdict, self.verdict)

    def to_json(self) -> Dict[str, Any]:
        out = super().to_json()
        out["epsilon"] = self.epsilon
        if self.epsilon_value is not None:
            out["epsilon_value"] = self.epsilon_value
        if self.verdict == UNKNOWN and self.message:
            out["reason"] = self.message
            if self.line is not None:
                out["line"] = self.line
        if self.counterexample is not None:
            out["counterexample"] = self.counterexample
        if self.verdict == PROVED:
            out["alignment"] = [
                {
                    "line": a.pos.line if a.pos else None,
                    "target": a.target,
                    "dist": a.dist,
                    "alignment": a.choice,
                    "shift": a.shift,
                    "cost": a.cost,
                }
                for a in self.alignment
            ]
            out["invariants"] = list(self.invariants)
            if self.cases:
                out["cases"] = [c.case for c in self.cases]
            out["obligations"] = len(self.obligations)
        return out

    def render_text(self) -> str:
        head = f"{self.name}: {self.word}  ε <= {self.epsilon}  ({self.time_s:.2f} s)"
        rows = [head]
        if self.verdict != PROVED and self.message:
            rows.append(f"  {self.message}")
        for r in self.cases or [self]:
            ind = "  "
            if r.case is not None:
                rows.append(f"  case neighbours {r.case}:")
                ind = "    "
            for a in r.alignment:
                at = f"line {a.pos.line}: " if a.pos else ""
                rows.append(f"{ind}{at}{a.target} ~ {a.dist}: {a.choice} (shift {a.shift})")
            rows += [f"{ind}invariant {inv}" for inv in r.invariants]
        if self.obligations:
            rows.append(f"  {len(self.obligations)} obligations proved by z3")
        return "\n".join(rows)
