"""The outcome of simulating one program: counts, intervals, bound and verdict."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple, TypedDict, Union

from tamp.results import CONFIRMED, CONSISTENT, NOTEBOOK_VIEWS, REFUTED, UNDECIDED, exit_code_of

#: The simulation's verdict words and their exit statuses (the one vocabulary, tamp.results).
EXIT_CODES = {w: exit_code_of(w) for w in (CONSISTENT, CONFIRMED, UNDECIDED, REFUTED)}


def _num(x):
    """A JSON-friendly number (exact values as floats; infinities/NaN as strings)."""
    if x is None:
        return None
    if isinstance(x, Fraction):
        x = float(x)
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return str(x.numerator)
        return f"{float(x):.6g} (= {x})" if x.denominator < 10**6 else f"{float(x):.6g}"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


class Comparison(TypedDict):
    """One comparison with probability terms: the P side's estimate and interval against the
    other side (``threshold``: a number, or an interval when it is not one up to rounding)."""

    comparison: str
    side: str
    op: str
    estimate: float
    interval: List[float]
    threshold: Union[float, List[float]]
    holds: Optional[bool]  # None: undecided


@dataclass(repr=False)
class SimResult:
    """Monte Carlo outcome for one program at fixed inputs.

    ``runs`` counts the runs kept (those that passed every ``assume``), out of
    ``total_runs``; ``failures`` counts kept runs violating the (non-probabilistic)
    ``ensures``; ``ci`` is the exact Clopper–Pearson interval of the failure rate at
    ``confidence``. ``verdict`` is "consistent"/"refuted" for a failure bound and
    "confirmed"/"refuted"/"undecided" for a probability specification."""

    program: str
    kind: str  # "failure-bound" | "probability"
    runs: int
    total_runs: int
    failures: int
    confidence: float
    ci: Tuple[float, float]
    bound_text: Optional[str]
    bound_value: Optional[Union[int, float, Fraction]]
    verdict: str
    seed: int = 0
    prob_terms: List[Tuple[str, float, float, float]] = field(default_factory=list)
    term_counts: List[Tuple[int, int]] = field(default_factory=list)
    spec_estimate: Optional[bool] = None
    comparisons: List[Comparison] = field(default_factory=list)
    inputs: Dict[str, object] = field(default_factory=dict)
    time_s: float = 0.0
    message: str = ""
    undecided: int = 0  # runs with a comparison no number domain decided (never counted as failing)

    def __repr__(self) -> str:  # one line (a notebook's Out[])
        rate = f"rate {self.rate:.4g} [{self.ci[0]:.4g}, {self.ci[1]:.4g}]" if self.runs else "no run kept"
        bound = f"  bound {self.bound_text}" if self.bound_text is not None else ""
        return (
            f"<SimResult {self.program}: {self.verdict}  {rate}{bound}  ({self.total_runs} runs, {self.time_s:.2f} s)>"
        )

    def _repr_html_(self) -> str:  # notebooks: the rate's interval against the bound (tamp.report)
        view = NOTEBOOK_VIEWS.get("simulation_html")
        return view(self) if view else "<pre>" + html.escape(self.render_text()) + "</pre>"

    @property
    def rate(self) -> float:
        return self.failures / self.runs if self.runs else math.nan

    @property
    def kept(self) -> int:
        return self.runs

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_json(self) -> Dict[str, object]:
        out = {
            "program": self.program,
            "kind": self.kind,
            "verdict": self.verdict,
            "runs": self.total_runs,
            "kept": self.runs,
            "seed": self.seed,
            "confidence": self.confidence,
            "time_s": round(self.time_s, 4),
            "undecided": self.undecided,
        }
        if self.kind == "failure-bound" or self.failures or self.bound_text is not None:
            out.update(
                {
                    "failures": self.failures,
                    "rate": _num(self.rate),
                    "ci": [_num(self.ci[0]), _num(self.ci[1])],
                    "bound": self.bound_text,
                    "bound_value": _num(self.bound_value),
                }
            )
        if self.prob_terms:
            out["prob_terms"] = [
                {"term": t, "estimate": _num(e), "lo": _num(lo), "hi": _num(hi), "hits": h, "trials": n}
                for (t, e, lo, hi), (h, n) in zip(self.prob_terms, self.term_counts)
            ]
            out["term_confidence"] = 1 - (1 - self.confidence) / len(self.prob_terms)
            out["comparisons"] = [
                {k: (_num(v) if not isinstance(v, list) else [_num(x) for x in v]) for k, v in c.items()}
                for c in self.comparisons
            ]
        if self.message:
            out["message"] = self.message
        out["inputs"] = {
            k: (_num(v) if not isinstance(v, list) else [_num(x) for x in v]) for k, v in self.inputs.items()
        }
        return out

    def render_text(self) -> str:
        pct = f"{self.confidence * 100:g}%"
        head = f"{self.program}: {self.verdict}"
        if self.undecided:
            head += f" ({self.undecided} run{'s' if self.undecided > 1 else ''} undecided)"
        lines = [f"{head}  [{self.time_s:.2f} s]"]
        kept = (
            f"{self.runs} runs"
            if self.runs == self.total_runs
            else f"{self.runs} of {self.total_runs} runs kept by assume"
        )
        lines.append(f"  runs: {kept} (seed {self.seed})")
        if self.kind == "failure-bound" or self.bound_text is not None:
            lines.append(
                f"  failures: {self.failures}/{self.runs} = {_fmt(self.rate)}, "
                f"{pct} Clopper-Pearson interval [{self.ci[0]:.6g}, {self.ci[1]:.6g}]"
            )
            lines.append(f"  bound: {self.bound_text} = {_fmt(self.bound_value)}")
        if self.prob_terms:
            each = 1 - (1 - self.confidence) / len(self.prob_terms)
            lines.append(f"  probability terms ({each * 100:.4g}% each, {pct} jointly):")
            for (t, e, lo, hi), (h, n) in zip(self.prob_terms, self.term_counts):
                lines.append(f"    {t} = {_fmt(e)}  ({h}/{n})  [{lo:.6g}, {hi:.6g}]")
            for c in self.comparisons:
                lo, hi = c["interval"]
                holds = {True: "holds", False: "fails", None: "undecided"}[c["holds"]]
                lines.append(
                    f"  {c['side']} = {_fmt(c['estimate'])}, interval [{lo:.6g}, {hi:.6g}] "
                    f"{c['op']} {_fmt(c['threshold'])}: {holds}"
                )
        if self.message:
            lines.append(f"  {self.message}")
        return "\n".join(lines)
