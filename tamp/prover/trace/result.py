"""The failure-bound prover's result: verdict, axioms, automata, statistics (its certificate is
written by :func:`tamp.certificate.writer.program_certificate`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from tamp.prover.base.failure import ProofFailure
from tamp.prover.trace.automaton import axiom_json
from tamp.results import ProgramResult
from tamp.show import show_expr, show_stmt


@dataclass(repr=False)  # the one-line repr of ProgramResult
class ProofResult(ProgramResult):
    """A :class:`ProgramResult` of kind ``"failure-bound"`` (verdict "proved" or "unknown" —
    this prover never says "violated": a failed union-bound proof proves nothing false)."""

    cfa: Any = None
    automata: List[Any] = field(default_factory=list)
    axioms: List[Dict[str, Any]] = field(default_factory=list)
    stats: Dict[str, Any] = field(default_factory=dict)
    obligations: List[Any] = field(default_factory=list)
    failure: Optional[ProofFailure] = None  # why the proof failed (None when proved)
    # facts (lang.ast expressions over inputs and state) proved valid under `requires` and used as
    # extra hypotheses by the checker (loop budget hints, see tamp.prover.loops.prove.budget_hints)
    facts: List[Any] = field(default_factory=list)
    # a ranking function per loop (tamp.prover.loops.termination.Ranking): every run terminates
    rankings: List[Any] = field(default_factory=list)
    # κ's loop terms (tamp.prover.loops.kappa.LoopTerm: cost per iteration × iterations) of a proved loop
    # program: the bookkeeping the report and `-v` show as `n iterations × p / n = p`
    loop_terms: List[Any] = field(default_factory=list)
    # proved with the fixed inputs (--input) free: the claim at the fixed values follows by
    # instantiation (tamp.api.prove_fixed); its certificate is checked against the free claim
    inputs_free: bool = False

    def __post_init__(self):
        super().__post_init__()
        assert self.verdict != "violated", "the failure-bound prover never reports 'violated'"

    @property
    def failed_trace(self) -> Optional[str]:
        """The explanation of a failed proof as text (the JSON's ``failed_trace``)."""
        return self.failure.text() if self.failure is not None else None

    # ------------------------------------------------------------------ output
    def to_json(self) -> Dict[str, Any]:
        out = super().to_json()
        out["axioms"] = self.axioms
        out["statistics"] = self.stats
        out["automata"] = [a.to_json() for a in self.automata]
        if self.failed_trace:
            out["failed_trace"] = self.failed_trace
        if self.facts:
            out["facts"] = [show_expr(f) for f in self.facts]
        out["obligations"] = {
            "total": len(self.obligations),
            "valid": sum(1 for o in self.obligations if o.status == "valid"),
        }
        return out

    def render_text(self) -> str:
        lines = [super().render_text()]
        if self.axioms:
            lines.append("  axioms:")
            for a in self.axioms:
                lines.append(
                    f"    line {a['line']}: {a['stmt']}  —  {a['family']}"
                    f"{'(' + _param(a['param']) + ')' if a.get('param') is not None else ''}: "
                    f"Pr[{a['bad']}] <= {a['cost']}"
                )
        for aut in self.automata:
            lines.extend("  " + ln for ln in aut.to_text().splitlines())
        if self.stats:
            s = self.stats
            lines.append("  statistics: " + ", ".join(f"{k} {v}" for k, v in s.items() if not isinstance(v, dict)))
            if isinstance(s.get("time"), dict):
                lines.append("  time: " + ", ".join(f"{k} {v:.3f} s" for k, v in s["time"].items()))
        if self.failed_trace and self.verdict != "proved":
            lines.append("  could not prove: " + self.failed_trace)
        return "\n".join(lines)

    def to_dot(self) -> Dict[str, str]:
        """One graphviz text per automaton (keyed by a file stem), plus the CFA."""
        out = {}
        if self.cfa is not None:
            out[f"{self.name}.cfa"] = self.cfa.to_dot()
        for i, a in enumerate(self.automata):
            out[f"{self.name}.automaton{i}"] = a.to_dot()
        return out


def axioms_table(aut) -> List[Dict[str, Any]]:
    """The synthesised axiom of each sampling edge, with its statement and source line."""
    out = []
    for e in aut.edges:
        if e.axiom is None:
            continue
        row = {"line": e.line, "stmt": show_stmt(e.stmt), "edge": f"q{e.src}->q{e.dst}"}
        row.update(axiom_json(e.axiom))
        out.append(row)
    return out


def _param(p) -> str:
    """An axiom's parameter as written: ``(0, 1)``, not ``['(0, 1)']``."""
    return ", ".join(map(str, p)) if isinstance(p, (list, tuple)) else str(p)
