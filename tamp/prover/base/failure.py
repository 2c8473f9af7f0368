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

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Tuple

from tamp.show import show_stmt

#: The kinds of failure. The loop-free search fails on a trace: no axiom for a sampling keeps the
#: failure below the bound (NO_AXIOM), no axiom family applies to it (NO_FAMILY), or the
#: postcondition or the bound does not follow at the trace's end (TRACE). The labelled automaton
#: may then fail the proof check (CHECK), and the loop prover may find no combination of axioms
#: whose failure bound fits (NO_COMBINATION).
NO_AXIOM, NO_FAMILY, TRACE, CHECK, NO_COMBINATION = "no-axiom", "no-family", "trace", "check", "no-combination"
NO_TERMINATION = "no-termination"  # the loop prover found no termination argument for a loop
#: the time limit (``--timeout``) ran out: ``stmt`` says during what, ``line`` where the work stood
#: (the sampling or loop being worked on, else the postcondition)
TIMED_OUT = "timeout"
#: the loop prover's labels did not give the postcondition after a loop: ``stmt`` names what the
#: loop at ``line`` computes that no kept fact relates to its iterations (or is empty when facts
#: about all of it were kept, and they were not enough); ``notes`` list some facts that were kept
NO_LOOP_FACT = "no-loop-invariant"
#: the loop prover's labels do not imply a conjunct of the postcondition at the program's end
#: (``missing``), after the loop at ``loop_line``: no invariant of that loop was found for it
NO_INVARIANT = "no-invariant"

#: What a failed obligation of the proof checker means, in the user's terms (no automaton states).
OBLIGATION_TEXT = {
    "INIT": "the proof cannot start from the inputs allowed by `requires`",
    "COVER": "the proof's case split does not cover every run",
    "BUDGET": "the failure probability spent so far may exceed the bound",
    "EXIT": "the postcondition does not follow at the end of the program",
    "STEP": "a fact the proof needs does not carry over a statement",
    "SIDE": "the failure bound does not cover the axiom chosen for a sampling",
}


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
    line: Optional[int] = None  # the source line of the statement or node it is about
    stmt: str = ""  # the statement of the edge (STEP), as written

    def text(self) -> str:
        """The obligation in the user's terms: what failed, the statement and its line."""
        rule = "SIDE" if self.rule == "STEP" and "(side, cost)" in self.where else self.rule
        text = OBLIGATION_TEXT.get(rule, "a proof obligation does not hold")
        if rule == "STEP" and self.stmt:
            text = f"a fact the proof needs does not carry over `{self.stmt}`"
        elif rule == "SIDE" and self.stmt:
            text = f"the failure bound does not cover the axiom chosen for `{self.stmt}`"
        if self.line:
            text += f" (line {self.line})"
        if self.status == "unknown":
            text += " (the solver answered unknown)"
        return text

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
    loop_line: Optional[int] = None  # NO_INVARIANT, NO_TERMINATION, NO_COMBINATION: the loop's line
    missing: Tuple[str, ...] = ()  # NO_INVARIANT: the postcondition's conjuncts not implied at the end
    needed: str = ""  # a failure bound the prover could prove, larger than the claimed ``bound``
    hint: str = ""  # what the user can do about it
    #: the postcondition failed at the exit: a conjunct that fails there and a state (from the
    #: solver's model) that every fact found at the exit allows and that violates it
    violated: str = ""
    state: str = ""
    boundary: str = ""  # a comparison of ``violated`` whose two sides are equal in ``state``

    @property
    def reason(self) -> str:
        """The explanation's first line."""
        if self.kind == NO_AXIOM:
            at = f" (line {self.line})" if self.line else ""
            text = f"no axiom for {sampling_text(self.stmt)}{at} keeps the failure below {self.bound} and proves the postcondition"
        elif self.kind == NO_FAMILY:
            text = f"no axiom family applies to `{self.stmt}`"
        elif self.kind == TRACE:
            text = "the postcondition or the bound does not follow on this trace" + (
                " (the solver answered unknown)" if self.unknown else ""
            )
        elif self.kind == CHECK:
            text = "the proof did not check: " + "; ".join(o.text() for o in self.obligations)
        elif self.kind == TIMED_OUT:
            text = "the time limit ran out " + (self.stmt or "before the proof was complete")
            if self.line:
                text += f" (line {self.line})"
        elif self.kind == NO_TERMINATION:
            text = "no termination argument for a loop" + (f" (line {self.loop_line})" if self.loop_line else "")
        elif self.kind == NO_COMBINATION:
            text = "no combination of axioms gives a failure bound within the budget"
            if self.stmt:
                text = f"no axiom for {sampling_text(self.stmt)}" + (f" (line {self.line})" if self.line else "")
                text += " keeps the failure, summed over the loop's iterations, within the bound"
        elif self.kind == NO_INVARIANT:
            what = " and ".join(f"`{m}`" for m in self.missing) or "the postcondition"
            text = f"{what} {'do' if len(self.missing) > 1 else 'does'} not follow at the end of the program"
            if self.loop_line:
                text += (
                    f": no invariant of the loop at line {self.loop_line} was found that implies "
                    f"{'them' if len(self.missing) > 1 else 'it'} when the loop ends"
                )
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
        if self.violated and self.state:
            text += (
                f"; at the end, the facts found allow a state where `{self.violated}` fails: {self.state}"
                " (if it is reachable, the claim is false)"
            )
            if self.boundary:
                text += f"; it lies on the boundary: {self.boundary}"
        if self.needed and self.bound:
            text += f"; the bound needed is {self.needed} but the claim says {self.bound}"
        if self.skipped:
            text += "; axiom choices with a cost were skipped: " + "; ".join(self.skipped)
        return "; ".join((text,) + self.notes + ((f"what you can do: {self.hint}",) if self.hint else ()))

    @property
    def stuck_at(self) -> Optional[int]:
        """The source line where the proof stopped: the sampling's, else the trace's last step's."""
        if self.kind in (NO_AXIOM, NO_LOOP_FACT, NO_COMBINATION, TIMED_OUT) and self.line:
            return self.line
        if self.loop_line and not self.steps:
            return self.loop_line
        named = [o.line for o in self.obligations if o.line]
        if named and not self.steps:
            return named[0]
        lines = [s.line for s in self.steps if s.line]
        return lines[-1] if lines else None

    def text(self) -> str:
        """The explanation as printed (``could not prove: …``) and in the JSON (``failed_trace``)."""
        if not self.steps:
            return self.reason
        return self.reason + "\n    on the trace:\n" + "\n".join("      " + s.text() for s in self.steps)


_FLIP = re.compile(r"^\$f\d+ ~ bern\((.*)\)$")


def sampling_text(stmt: str) -> str:
    """A sampling statement as the user knows it: the hidden coin that an unreliable operator
    (``+.``, ``-.`` …) desugars to (``$f1 ~ bern(r)``) is "the unreliable operation (fails with
    probability r)", any other sampling its own text in backquotes.

    >>> sampling_text("$f3 ~ bern(r)")
    'the unreliable operation (fails with probability r)'
    >>> sampling_text("a ~ lap(x, 1 / eps)")
    '`a ~ lap(x, 1 / eps)`'
    """
    m = _FLIP.match(stmt.strip())
    if m:
        return f"the unreliable operation (fails with probability {m.group(1)})"
    return f"`{stmt}`"


def check_failure(bad: Iterable, aut=None) -> ProofFailure:
    """The CHECK failure for the obligations that were not valid (the first three are named);
    given the automaton ``aut`` they were about, each names its statement and source line."""
    out = []
    for o in list(bad)[:3]:
        line, stmt = None, ""
        if aut is not None:
            edge = next((e for e in aut.edges if (e.src, e.dst) == (o.src, o.dst)), None) if o.dst is not None else None
            if edge is not None:
                line, stmt = edge.line, _show(edge.stmt)
            elif o.src is not None and o.src in aut.nodes:
                line = aut.nodes[o.src].line
        out.append(FailedObligation(o.rule, o.where, o.status, o.src, o.dst, line, stmt))
    return ProofFailure(CHECK, obligations=tuple(out))


def _show(stmt) -> str:
    return show_stmt(stmt)
