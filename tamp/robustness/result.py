"""Results of ``tamp robust`` and ``tamp equiv``: exact certified intervals, text, JSON, HTML."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, Iterable, List

from tamp.core.interval import float_above, float_below
from tamp.results import OK, UNKNOWN, exit_code_of

SCHEMA_VERSION = 1


def _iv(lo: Fraction, hi: Fraction) -> Dict[str, float]:
    """An exact interval as floats rounded outward (the printed interval still contains it)."""
    return {"lower": float_below(lo), "upper": float_above(hi)}


class _Certified:
    """What the two results share: the verdict ``ok`` when every certified interval is at most
    ``width`` wide, else ``unknown`` (the time limit stopped the refinement first), its exit
    status, and the keys every command's JSON starts with."""

    command: str
    width: float
    time_s: float

    def _widths(self) -> Iterable[Fraction]:
        raise NotImplementedError

    @property
    def verdict(self) -> str:
        return OK if all(w <= Fraction(self.width) for w in self._widths()) else UNKNOWN

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.verdict)

    def _json_head(self, file: str) -> Dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "command": self.command,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "time_s": round(self.time_s, 4),
            "file": file,
        }


@dataclass
class PointResult:
    index: int  # 0-based row of the CSV
    line: int  # its line in the file
    cls: object  # the class (label) at the point
    lower: Fraction
    upper: Fraction
    time_s: float
    boxes: int = 0

    @property
    def width(self) -> Fraction:
        return self.upper - self.lower

    def to_json(self) -> Dict[str, Any]:
        return {
            "index": self.index,
            "class": self.cls,
            "probability": _iv(self.lower, self.upper),
            "time_s": round(self.time_s, 4),
        }


@dataclass
class RobustResult(_Certified):
    model: str
    eps: Fraction
    width: float
    points: List[PointResult] = field(default_factory=list)
    prior: str = "uniform"
    time_s: float = 0.0
    command = "robust"

    def _widths(self) -> Iterable[Fraction]:
        return (p.width for p in self.points)

    def to_json(self) -> Dict[str, Any]:
        return {
            **self._json_head(self.model),
            "eps": float(self.eps),
            "prior": self.prior,
            "points": [p.to_json() for p in self.points],
        }

    def render_text(self) -> str:
        head = f"{self.model}: {self.verdict}  Pr[class unchanged] within eps={float(self.eps):g} under the {self.prior} prior"
        lines = [head]
        for p in self.points:
            iv = _iv(p.lower, p.upper)
            lines.append(
                f"  point {p.index} (line {p.line}): class {p.cls}  [{iv['lower']:.6f}, {iv['upper']:.6f}]"
                f"  {p.time_s:.3f} s"
            )
        if self.points:
            ts = [p.time_s for p in self.points]
            lines.append(f"  {len(ts)} points: mean {sum(ts) / len(ts):.3f} s, max {max(ts):.3f} s per point")
        if self.verdict != OK:
            lines.append(f"  some intervals are wider than {self.width:g} (time limit reached)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        lo = min((p.lower for p in self.points), default=Fraction(1))
        return (
            f"RobustResult({len(self.points)} points, eps={float(self.eps):g}, min lower bound "
            f"{float_below(lo):.4f}, {self.verdict})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{p.index}</td><td>{html.escape(str(p.cls))}</td><td>{float_below(p.lower):.6f}</td>"
            f"<td>{float_above(p.upper):.6f}</td><td>{p.time_s:.3f}</td></tr>"
            for p in self.points[:50]
        )
        more = f"<p>… {len(self.points) - 50} more points</p>" if len(self.points) > 50 else ""
        return (
            f"<div><b>tamp robust</b> {html.escape(self.model)}: eps={float(self.eps):g}, "
            f"{html.escape(self.prior)} prior, <b>{self.verdict}</b><table style='text-align:left'>"
            "<tr><th>point</th><th>class</th><th>lower</th><th>upper</th><th>time (s)</th></tr>"
            f"{rows}</table>{more}</div>"
        )


@dataclass
class EquivResult(_Certified):
    model_a: str
    model_b: str
    lower: Fraction  # Pr[A and B disagree] >= lower
    upper: Fraction
    width: float
    prior: str = "uniform"
    time_s: float = 0.0
    boxes: int = 0
    command = "equiv"

    def _widths(self) -> Iterable[Fraction]:
        return (self.upper - self.lower,)

    def to_json(self) -> Dict[str, Any]:
        return {
            **self._json_head(self.model_a),
            "models": [self.model_a, self.model_b],
            "prior": self.prior,
            "disagreement": _iv(self.lower, self.upper),
        }

    def render_text(self) -> str:
        iv = _iv(self.lower, self.upper)
        return (
            f"{self.model_a} vs {self.model_b}: {self.verdict}  Pr[the classes differ] in"
            f" [{iv['lower']:.6f}, {iv['upper']:.6f}] under the {self.prior} prior ({self.time_s:.3f} s)"
            + ("" if self.verdict == OK else f"\n  the interval is wider than {self.width:g} (time limit reached)")
        )

    def __repr__(self) -> str:
        iv = _iv(self.lower, self.upper)
        return f"EquivResult(disagreement in [{iv['lower']:.6f}, {iv['upper']:.6f}], {self.verdict})"

    def _repr_html_(self) -> str:
        return f"<div><b>tamp equiv</b> {html.escape(self.render_text())}</div>"
