"""``ProbResult``: the outcome of deciding one program's probability specifications."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from tamp.core.interval import Interval
from tamp.results import ProgramResult


def show_interval(iv: Optional[Interval]) -> str:
    """``18/25 (0.72)`` for an exact value, ``[0.3273, 0.3274]`` for an interval."""
    if iv is None:
        return "unbounded"
    if iv.is_exact:
        v = iv.lo
        if v.denominator == 1:
            return str(v)
        text = str(v)
        if len(text) > 40:
            return f"{float(v):.12g} (exact rational, {len(str(v.denominator))}-digit denominator)"
        return f"{text} ({float(v):.6g})"
    digits = 6
    w = float(iv.hi - iv.lo)
    if w > 0:
        digits = max(6, min(17, int(-math.log10(w)) + 3))
    return f"[{float(iv.lo):.{digits}g}, {float(iv.hi):.{digits}g}]"


def interval_json(iv: Optional[Interval]) -> Optional[Dict[str, Any]]:
    if iv is None:
        return None
    out: Dict[str, Any] = {"lo": float(iv.lo), "hi": float(iv.hi), "exact": iv.is_exact}
    if iv.is_exact:
        out["value"] = str(iv.lo)
    return out


@dataclass
class TermReport:
    text: str
    interval: Optional[Interval]


@dataclass
class ClauseReport:
    """One comparison inside an ``ensures`` clause: ``lhs op rhs`` and whether it holds."""

    text: str
    lhs: Optional[Interval]
    op: str
    rhs: Optional[Interval]
    holds: Optional[bool]


@dataclass(repr=False)  # the one-line repr of ProgramResult
class ProbResult(ProgramResult):
    """A probability-specification result: every P-term's value or certified interval,
    every comparison with its sides, and the work done."""

    terms: List[TermReport] = field(default_factory=list)
    comparisons: List[ClauseReport] = field(default_factory=list)
    cells: int = 0
    paths: int = 0
    solver_calls: int = 0

    def __post_init__(self):
        super().__post_init__()
        if not self.kind:
            self.kind = "probability"

    def term(self, text: str) -> Optional[Interval]:
        """The interval of the term printed as ``text`` (e.g. ``"P(a || b)"``)."""
        norm = " ".join(text.split())
        for t in self.terms:
            if " ".join(t.text.split()) == norm:
                return t.interval
        return None

    def to_json(self) -> Dict[str, Any]:
        out = super().to_json()
        out["terms"] = [{"term": t.text, **(interval_json(t.interval) or {"unbounded": True})} for t in self.terms]
        out["comparisons"] = [
            {"text": c.text, "lhs": interval_json(c.lhs), "op": c.op, "rhs": interval_json(c.rhs), "holds": c.holds}
            for c in self.comparisons
        ]
        out["cells"] = self.cells
        out["paths"] = self.paths
        out["solver_calls"] = self.solver_calls
        return out

    def render_text(self) -> str:
        lines = [super().render_text()]
        for t in self.terms:
            lines.append(
                f"  {t.text} = {show_interval(t.interval)}"
                if t.interval is not None and t.interval.is_exact
                else f"  {t.text} in {show_interval(t.interval)}"
            )
        for c in self.comparisons:
            state = {True: "holds", False: "fails", None: "undecided"}[c.holds]
            lines.append(f"  {c.text}: {show_interval(c.lhs)} {c.op} {show_interval(c.rhs)}  [{state}]")
        lines.append(f"  {self.paths} paths, {self.cells} cells, {self.solver_calls} solver calls")
        return "\n".join(lines)
