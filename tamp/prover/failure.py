"""Why a failure-bound proof failed, as data: the text output, the JSON and the report render it.

>>> f = ProofFailure(NO_AXIOM, stmt="y ~ bern(p)", line=10, bound="p / 2",
...                  steps=(TraceStep(8, "x ~ bern(0.5)"), TraceStep(9, "assume(x)")))
>>> print(f.text())
no axiom for `y ~ bern(p)` (line 10) keeps the failure below p / 2 and proves the postcondition
    on the trace:
      line 8: x ~ bern(0.5)
      line 9: assume(x)
>>> f.stuck_at
10
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Tuple

#: The kinds of failure. The loop-free search fails on a trace: no axiom for a sampling keeps the
#: failure below the bound (NO_AXIOM), no axiom family applies to it (NO_FAMILY), or the
#: postcondition or the bound does not follow at the trace's end (TRACE). The labelled automaton
#: may then fail the proof check (CHECK), and the loop prover may find no combination of axioms
#: whose failure bound fits (NO_COMBINATION).
NO_AXIOM, NO_FAMILY, TRACE, CHECK, NO_COMBINATION = "no-axiom", "no-family", "trace", "check", "no-combination"
NO_TERMINATION = "no-termination"  # the loop prover found no termination argument for a loop
#: the loop prover's labels did not give the postcondition after a loop: ``stmt`` names what the
#: loop at ``line`` computes that no kept fact relates to its iterations (or is empty when facts
#: about all of it were kept, and they were not enough); ``notes`` list some facts that were kept
NO_LOOP_FACT = "no-loop-invariant"


@dataclass(frozen=True)
class TraceStep:
    """One statement of the trace the search could not prove: its source line (None for the
    desugaring's own steps) and text; ``split`` marks a case split's guard."""

    line: Optional[int]
    stmt: str
    split: bool = False

    def text(self) -> str:
        return (f"line {self.line}: " if self.line else "") + ("split " if self.split else "") + self.stmt


@dataclass(frozen=True)
class FailedObligation:
    """A proof-check obligation that was not valid: its rule (INIT, COVER, STEP, BUDGET, EXIT),
    where (as the checker names it), the solver's status, and the automaton nodes it is about
    (``src``, and ``dst`` for an edge; None for a structural problem)."""

    rule: str
    where: str
    status: str
    src: Optional[int] = None
    dst: Optional[int] = None

    def text(self) -> str:
        return f"{self.rule} at {self.where} ({self.status})"

    @property
    def nodes(self) -> Tuple[int, ...]:
        return tuple(n for n in (self.src, self.dst) if n is not None)


@dataclass(frozen=True)
class ProofFailure:
    """Why the proof failed: the kind, the sampling statement and its line (NO_AXIOM, NO_FAMILY),
    the bound it had to stay below (NO_AXIOM), whether the solver answered unknown (TRACE), the
    trace's steps, the failed obligations (CHECK, first three), and why axiom choices with a cost
    were skipped (NO_COMBINATION, first two), and notes (why user invariants were dropped)."""

    kind: str
    stmt: str = ""
    line: Optional[int] = None
    bound: str = ""
    unknown: bool = False
    steps: Tuple[TraceStep, ...] = ()
    obligations: Tuple[FailedObligation, ...] = ()
    skipped: Tuple[str, ...] = ()
    notes: Tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        """The explanation's first line."""
        if self.kind == NO_AXIOM:
            at = f" (line {self.line})" if self.line else ""
            text = f"no axiom for `{self.stmt}`{at} keeps the failure below {self.bound} and proves the postcondition"
        elif self.kind == NO_FAMILY:
            text = f"no axiom family applies to `{self.stmt}`"
        elif self.kind == TRACE:
            text = "the postcondition or the bound does not follow on this trace" + (
                " (the solver answered unknown)" if self.unknown else ""
            )
        elif self.kind == CHECK:
            text = "the labelled automaton did not check: " + "; ".join(o.text() for o in self.obligations)
        elif self.kind == NO_TERMINATION:
            text = "no termination argument for a loop"
        elif self.kind == NO_COMBINATION:
            text = "no combination of axioms gives a failure bound within the budget"
        elif self.kind == NO_LOOP_FACT:
            at = f"the loop at line {self.line}" if self.line else "a loop"
            if self.stmt:
                text = (
                    f"the postcondition does not follow after {at}: no invariant relating {self.stmt} to the "
                    "iterations of the loop was found (an `invariant` clause on the loop can state it)"
                )
            else:
                text = (
                    f"the postcondition does not follow after {at} from the invariants found there "
                    "(an `invariant` clause on the loop can add the missing fact)"
                )
        else:
            raise ValueError(f"unknown failure kind {self.kind!r}")
        if self.skipped:
            text += "; axiom choices with a cost were skipped: " + "; ".join(self.skipped)
        return "; ".join((text,) + self.notes)

    @property
    def stuck_at(self) -> Optional[int]:
        """The source line where the proof stopped: the sampling's, else the trace's last step's."""
        if self.kind in (NO_AXIOM, NO_LOOP_FACT) and self.line:
            return self.line
        lines = [s.line for s in self.steps if s.line]
        return lines[-1] if lines else None

    def text(self) -> str:
        """The explanation as printed (``could not prove: …``) and in the JSON (``failed_trace``)."""
        if not self.steps:
            return self.reason
        return self.reason + "\n    on the trace:\n" + "\n".join("      " + s.text() for s in self.steps)


def check_failure(bad: Iterable) -> ProofFailure:
    """The CHECK failure for the obligations that were not valid (the first three are named)."""
    return ProofFailure(
        CHECK, obligations=tuple(FailedObligation(o.rule, o.where, o.status, o.src, o.dst) for o in list(bad)[:3])
    )
