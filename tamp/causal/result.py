"""Result objects of the causal engine: :class:`CausalResult` and :class:`QueryResult`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, List, Optional

from tamp.results import NO, UNKNOWN, VACUOUS, YES, ProgramResult, exit_code_of

#: A fraction longer than this many characters (numerator, slash and denominator) is shown by
#: its rounded decimal alone (``~0.698258``): a witness computed from an imported model's exact
#: weights can have hundreds of digits, which no reader uses.
LONG_FRACTION = 24


def show(v) -> str:
    """A value as the user would write it: integers plain, fractions as decimals when short,
    ``n/d (~x)`` when the fraction is short, ``~x`` (6 significant digits) when it is long."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Fraction):
        # (the bit lengths first: str() of an integer past 4300 digits raises)
        short = v.numerator.bit_length() + v.denominator.bit_length() <= 4 * LONG_FRACTION
        exact = f"{v.numerator}/{v.denominator}" if short else ""
        short = short and len(exact) <= LONG_FRACTION
        try:
            f = float(v)
        except OverflowError:  # beyond binary64 (e.g. 1e400)
            return (
                str(v.numerator) if v.denominator == 1 and short else exact if short else ("~-inf" if v < 0 else "~inf")
            )
        if v.denominator == 1:
            return str(v.numerator) if short else f"~{f:.6g}"
        if Fraction(repr(f)) == v:
            return repr(f)
        return f"{exact} (~{f:.6g})" if short else f"~{f:.6g}"
    return str(v)


#: How a biased-mass interval's ``stopped`` reason is said.
STOPPED = {
    "exact": "exact",
    "decided": "every box decided; the population's masses are intervals",
    "width": "width reached",
    "timeout": "time limit reached",
    "limit": "smallest boxes reached",
}


def mass_text(bm: Dict[str, Any], stopped: Optional[str]) -> str:
    """The biased mass in words, never more precise than its interval: an exact value with six
    decimals; an interval as percentages rounded outward, with as many decimals as its width
    needs (at most 4), and why the refinement stopped."""
    lo_x, hi_x = Fraction(bm["lower_exact"]), Fraction(bm["upper_exact"])
    if lo_x == hi_x:
        return f"biased mass {float(lo_x):.6f} ({STOPPED['exact']})"
    width = float(hi_x - lo_x) * 100  # in percentage points
    digits = min(4, max(1, 1 - math.floor(math.log10(width))))
    scale = 10**digits
    lo = Fraction(math.floor(lo_x * 100 * scale), scale)
    hi = Fraction(math.ceil(hi_x * 100 * scale), scale)
    why = STOPPED.get(stopped or "", stopped or "")
    return f"biased mass between {float(lo):.{digits}f}% and {float(hi):.{digits}f}%" + (f" ({why})" if why else "")


def plain(v):
    """JSON-friendly exact values: ints and bools stay, other Fractions become floats."""
    if isinstance(v, Fraction):
        if v.denominator == 1:
            return v.numerator
        try:
            return float(v)
        except OverflowError:
            return str(v)
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


@dataclass(repr=False)  # the one-line repr of ProgramResult
class CausalResult(ProgramResult):
    """Outcome of certifying ``independent(e, s)``: verdict plus fractions, biased mass bounds, witness."""

    #: The first claim's settled boxes as ``({input: (lo, hi)}, KIND)``, KIND one of fair, biased,
    #: partly biased (a measured share) or unknown: the report draws them; not part of the JSON.
    regions: List[Any] = field(default_factory=list, compare=False)

    def render_text(self) -> str:
        d = self.details
        lines = [f"{self.name}: {self.verdict}  [{self.time_s:.2f} s]"]
        if self.message:
            lines.append(f"  {self.message}")
        if "certified" in d:
            # "biased" only when the boxes found biased are biased as a whole (up to the 0.01% shown):
            # boxes with a witness whose biased share is only bounded are "mixed", not biased mass
            found = "biased" if (d.get("mixed_share") or 0) < 0.00005 else "biased or mixed"
            lines.append(
                f"  certified {d['certified']:.2%}  {found} {d['biased']:.2%}  unknown {d['unknown']:.2%}"
                f"  (coverage {d['coverage']:.2%})"
            )
            lines.append(f"  {mass_text(d['biased_mass'], d.get('stopped'))} under {d['distribution']}")
            leaves = d.get("leaves", {})
            extra = ""
            if leaves.get("measured"):
                extra += f"  measured exactly {leaves['measured']}"
            if d.get("mixed_share"):
                extra += f"  mixed (bias unmeasured) {d['mixed_share']:.2%}"
            lines.append(f"  boxes {d['boxes']}  SMT calls {d['smt_calls']}{extra}")
        w = d.get("witness")
        if w:
            ins = ", ".join(f"{k}={show(v)}" for k, v in w["inputs"].items())
            a, b = w["pair"]
            s = [k for k in a if k != "out"][0]
            lines.append(
                f"  witness: {ins}: {s}={show(a[s])} gives {show(a['out'])}, {s}={show(b[s])} gives {show(b['out'])}"
            )
            for m in (a, b):
                if "model_inputs" in m:
                    feats = ", ".join(f"{k}={show(v)}" for k, v in m["model_inputs"].items())
                    lines.append(f"    model inputs {feats} -> class {show(m['class'])}")
        if d.get("engine"):
            lines.append(f"  engine: {d['engine']}")
        regions = d.get("regions")
        if regions and regions.get("boxes"):
            lines.append(
                f"  biased regions: {regions['count']} boxes, largest biased mass first ({regions['listed']} in --json):"
            )
            for r in regions["boxes"][:5]:
                parts = []
                for k, v in r["features"].items():
                    parts.append(f"{k} in [{show(v[0])}, {show(v[1])}]" if isinstance(v, list) else f"{k}={show(v)}")
                lines.append(f"    {', '.join(parts)}: {float(r['biased_share']):.2%} biased")
        return "\n".join(lines)

    def to_json(self) -> Dict[str, Any]:
        return plain(super().to_json())


@dataclass
class QueryResult:
    """The answer to a counterfactual query: yes/no (None = undetermined) and a concrete model."""

    question: str
    answer: Optional[bool]
    model: Optional[Dict[str, Any]] = None
    time_s: float = 0.0
    probability: Optional[Dict[str, Any]] = None
    message: str = ""
    details: Dict[str, Any] = field(default_factory=dict)
    vacuous: bool = False  # the scenario has no execution: neither yes nor no means anything

    def __repr__(self) -> str:  # one line (a notebook's Out[])
        return f"<QueryResult {self.verdict}: {self.question}  ({self.time_s:.2f} s)>"

    @property
    def verdict(self) -> str:
        if self.vacuous:
            return VACUOUS
        return {True: YES, False: NO, None: UNKNOWN}[self.answer]

    @property
    def exit_code(self) -> int:
        """The exit status ``tamp query`` returns for this answer."""
        return exit_code_of(self.verdict)

    def to_json(self) -> Dict[str, Any]:
        out = {
            "answer": self.answer,
            "verdict": self.verdict,
            "model": plain(self.model) if self.model is not None else None,
            "question": self.question,
            "time_s": round(self.time_s, 4),
        }
        if self.probability is not None:
            out["probability"] = plain(self.probability)
        if self.message:
            out["message"] = self.message
        return out

    def render_text(self) -> str:
        lines = [f"{self.verdict}: {self.question}"]
        if self.message:
            lines.append(f"  {self.message}")
        if self.model:
            label = self.details.get("model_label", "model")
            lines.append(f"  {label}: " + ", ".join(f"{k}={show(v)}" for k, v in self.model.items()))
        if self.probability is not None:
            p = self.probability
            lines.append(f"  probability in [{float(p['lower']):.6g}, {float(p['upper']):.6g}]")
        return "\n".join(lines)
