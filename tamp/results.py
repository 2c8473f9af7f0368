"""Result objects shared by every engine.

Every engine (failure-bound prover, probability engine, causal certifier)
returns, per program, a :class:`ProgramResult` — the :class:`Result` protocol:
``name``, ``kind``, ``verdict`` (one of :data:`VERDICTS`), ``time_s``, ``bound``,
``message``, ``parts``, ``to_json()`` and ``render_text()``, which the text output,
the JSON output and the report (:mod:`tamp.report`) all render. Engines subclass it
to add their own typed data (automata, intervals, witnesses …); a program whose
specification needs several engines gets a :class:`MixedResult` of their results.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple

PROVED, UNKNOWN, VIOLATED = "proved", "unknown", "violated"
#: A program that states no specification (no ``ensures``, ``fails``, ``reliability`` …): there
#: is nothing to prove, and that is not a proof of anything (exit status 0, as proved).
UNSPECIFIED = "unspecified"
#: The other commands' words: a simulation's (evidence, never a proof), a certificate check's,
#: a question's, a benchmark run's, a weighted model count's; ``error`` for input that could not
#: be used (the located message, exit status 2).
CONSISTENT, CONFIRMED, UNDECIDED, REFUTED = "consistent", "confirmed", "undecided", "refuted"
OK, REJECTED, UNEXPECTED, TIMEOUT, ERROR = "ok", "rejected", "unexpected", "timeout", "error"
YES, NO, VACUOUS, SAME, CHANGED = "yes", "no", "vacuous", "same", "changed"


@dataclass(frozen=True)
class Word:
    """One verdict word: what it means and the exit status every command gives it."""

    exit_code: int
    meaning: str


#: The one verdict vocabulary (docs/json.md prints this table): every command's text, its
#: ``--json`` and the Python API's result objects say a verdict with one of these words, in lower
#: case, and a word has the same exit status wherever it is used. Words differ only where their
#: meanings differ: ``proved``/``violated`` are decided, ``consistent``/``confirmed``/``refuted``
#: are a simulation's evidence at a stated confidence, which is never a proof.
VOCABULARY: Dict[str, Word] = {
    PROVED: Word(0, "the claim holds for every input that satisfies `requires`: a proof was found and checked"),
    UNSPECIFIED: Word(0, "the program states no claim: nothing to prove (and nothing proved)"),
    UNKNOWN: Word(1, "no answer: no proof and no counterexample found, or the time limit stopped the search"),
    VIOLATED: Word(3, "the claim is false: a counterexample, or certified bounds that exclude it"),
    CONSISTENT: Word(0, "simulation: the samples do not contradict the failure bound (evidence, not a proof)"),
    CONFIRMED: Word(0, "simulation: the confidence intervals show the probability claim true (evidence, not a proof)"),
    UNDECIDED: Word(1, "simulation: the confidence intervals neither confirm nor refute the claim"),
    REFUTED: Word(3, "simulation: the confidence intervals show the claim false (at the stated confidence)"),
    OK: Word(
        0,
        "the command did what was asked (file checked, model imported, proofs re-checked, intervals as narrow as asked)",
    ),
    REJECTED: Word(3, "check-proof: a certificate's proof did not re-check"),
    UNEXPECTED: Word(1, "bench: some program's verdict differs from its file's `// expect`"),
    TIMEOUT: Word(1, "wmi: the time limit stopped the count"),
    YES: Word(0, "query: the question's answer is yes"),
    NO: Word(0, "query: the question's answer is no"),
    VACUOUS: Word(1, "query: the question's condition can never hold"),
    SAME: Word(0, "query --replay: every recorded answer is unchanged"),
    CHANGED: Word(3, "query --replay: some recorded answer changed"),
    ERROR: Word(2, "the input could not be used: one located message `file:line:col: error: …`"),
}

#: The words each command answers with (besides ``error``, which every command may answer).
COMMAND_VERDICTS: Dict[str, Tuple[str, ...]] = {
    "prove": (PROVED, UNKNOWN, VIOLATED, UNSPECIFIED),
    "prob": (PROVED, UNKNOWN, VIOLATED),
    "fairness": (PROVED, UNKNOWN, VIOLATED),
    "simulate": (CONSISTENT, CONFIRMED, UNDECIDED, REFUTED),
    "check-proof": (OK, REJECTED),
    "bench": (OK, UNEXPECTED),
    "check": (OK,),
    "import": (OK,),
    "cfa": (OK,),
    "robust": (OK, UNKNOWN),  # unknown: an interval wider than --width when time ran out
    "equiv": (OK, UNKNOWN),
    "query": (YES, NO, UNKNOWN, VACUOUS, SAME, CHANGED),  # same/changed: --replay
    "wmi": (OK, TIMEOUT),
}


def exit_code_of(verdict: str) -> int:
    """The exit status of a verdict word (the same for every command)."""
    return VOCABULARY[verdict].exit_code


#: The version of every command's ``--json`` output (docs/json.md): bumped when a key is removed
#: or changes meaning (adding keys keeps it).
JSON_SCHEMA_VERSION = 1
VERDICTS = (PROVED, UNKNOWN, VIOLATED, UNSPECIFIED)

#: How a notebook shows results (``program_html``, ``program_svg``, ``file_html``): the report
#: (:mod:`tamp.report`, a layer above the engines) registers its views here when it is imported;
#: without them a result shows as its text.
NOTEBOOK_VIEWS: Dict[str, Callable[..., Any]] = {}


class Result(Protocol):
    """What every program's result offers its renderers (text, JSON, report)."""

    name: str
    kind: str
    verdict: str
    time_s: float
    bound: Optional[str]
    message: str

    @property
    def parts(self) -> Sequence["ProgramResult"]: ...

    def to_json(self) -> Dict[str, Any]: ...

    def render_text(self) -> str: ...

    def to_dot(self) -> Dict[str, str]: ...


@dataclass
class ProgramResult:
    """The outcome of checking one program's specification."""

    name: str
    kind: str  # "failure-bound" | "probability" | "causal" | "none" (no specification)
    verdict: str
    time_s: float = 0.0
    bound: Optional[str] = None
    message: str = ""
    details: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        assert self.verdict in VERDICTS, self.verdict

    @property
    def parts(self) -> Sequence["ProgramResult"]:
        """The per-engine results this one combines: itself (see :class:`MixedResult`)."""
        return [self]

    def to_json(self) -> Dict[str, Any]:
        out = {
            "name": self.name,
            "kind": self.kind,
            "verdict": self.verdict,
            "bound": self.bound,
            "time_s": round(self.time_s, 4),
        }
        if self.message:
            out["message"] = self.message
        out.update(self.details)
        return out

    def render_text(self) -> str:
        head = f"{self.name}: {self.verdict}"
        if self.bound is not None:
            head += f" (bound {self.bound})"
        head += f"  [{self.time_s:.2f} s]"
        return head + (f"\n  {self.message}" if self.message else "")

    def to_dot(self) -> Dict[str, str]:
        """Graphviz texts of what the result can draw, keyed by a file stem (none here)."""
        return {}

    def __repr__(self) -> str:  # one line (a notebook's Out[], a list of results)
        return f"<{type(self).__name__} {short_line(self)}>"

    #: The text of the program's file and its path when known (set by ``tamp.prove``; not
    #: dataclass fields). The notebook view lists the source and places the reasons with them.
    source = None  # type: Optional[str]
    path = None  # type: Optional[str]

    def _repr_html_(self) -> str:  # notebooks: the report's section for this program
        view = NOTEBOOK_VIEWS.get("program_html")
        return view(self, self.source) if view else "<pre>" + html.escape(self.render_text()) + "</pre>"

    def _repr_svg_(self):  # notebooks: the failure automaton, when the result has one
        view = NOTEBOOK_VIEWS.get("program_svg")
        return view(self) if view else None


@dataclass(repr=False)
class MixedResult(ProgramResult):
    """One program's result when its specification goes to several engines: the verdict is
    violated if any part is violated, proved if all are proved, else unknown."""

    components: List[ProgramResult] = field(default_factory=list)

    @property
    def parts(self) -> Sequence[ProgramResult]:
        return list(self.components)

    def to_json(self) -> Dict[str, Any]:
        out = super().to_json()
        out["parts"] = [p.to_json() for p in self.components]
        return out

    def render_text(self) -> str:
        return "\n".join(p.render_text() for p in self.components)


def short_line(r) -> str:
    """``name: verdict  bound B  (0.12 s)`` on one line (long bounds cut)."""
    text = f"{r.name}: {r.verdict}"
    if r.bound is not None:
        bound = " ".join(str(r.bound).split())
        text += f"  bound {bound if len(bound) <= 60 else bound[:59] + '…'}"
    return text + f"  ({r.time_s:.2f} s)"


def combine(name: str, parts: List[ProgramResult]) -> ProgramResult:
    """One program's result from its per-engine results (the only one when there is one)."""
    if len(parts) == 1:
        return parts[0]
    vs = [p.verdict for p in parts]
    verdict = VIOLATED if VIOLATED in vs else PROVED if all(v == PROVED for v in vs) else UNKNOWN
    return MixedResult(
        name,
        "mixed",
        verdict,
        sum(p.time_s for p in parts),
        bound=next((p.bound for p in parts if p.bound), None),
        components=list(parts),
    )


class ExitCode(int):
    """An exit status that is an ``int`` (``result.exit_code == 0``) and, for code written when
    ``exit_code`` was a method, also callable (``result.exit_code()`` returns the same int)."""

    def __call__(self) -> int:
        return int(self)


@dataclass
class FileResult:
    """The outcome for a whole file: one result per program checked."""

    file: str
    programs: List[ProgramResult]
    command: str = "prove"  # the command this is the answer of (``prob`` for tamp.prob)
    time_s: Optional[float] = None  # the whole call's time (default: the programs' times added)

    @property
    def verdict(self) -> str:
        """The worst program's: violated, then unknown; proved when every program with a
        specification is proved; unspecified when no program has one."""
        vs = [p.verdict for p in self.programs]
        if any(v == VIOLATED for v in vs):
            return VIOLATED
        if vs and all(v == UNSPECIFIED for v in vs):
            return UNSPECIFIED
        if all(v in (PROVED, UNSPECIFIED) for v in vs):
            return PROVED
        return UNKNOWN

    def to_json(self) -> Dict[str, Any]:
        """The very object the command's ``--json`` prints (docs/json.md): the common keys
        (``schema_version``, ``command``, ``verdict``, ``exit_code``, ``time_s``), ``file`` and
        ``programs``."""
        time_s = self.time_s if self.time_s is not None else sum(p.time_s for p in self.programs)
        return {
            "schema_version": JSON_SCHEMA_VERSION,
            "command": self.command,
            "verdict": self.verdict,
            "exit_code": int(self.exit_code),
            "time_s": round(time_s, 4),
            "file": self.file,
            "programs": [p.to_json() for p in self.programs],
        }

    def file_json(self) -> Dict[str, Any]:
        """This file's entry in a several-file answer (``files``): ``file``, ``verdict``,
        ``time_s`` and ``programs``."""
        out = self.to_json()
        return {k: out[k] for k in ("file", "verdict", "time_s", "programs")}

    def render_text(self) -> str:
        return "\n".join(p.render_text() for p in self.programs)

    @property
    def exit_code(self) -> "ExitCode":
        """The exit status the command returns for this file (0 proved, 1 unknown, 3 violated)."""
        return ExitCode(exit_code_of(self.verdict))

    def __repr__(self) -> str:
        names = ", ".join(f"{p.name} {p.verdict}" for p in self.programs[:4])
        more = f", … {len(self.programs) - 4} more" if len(self.programs) > 4 else ""
        time_s = sum(p.time_s for p in self.programs)
        return f"<FileResult {self.file}: {self.verdict} ({names}{more})  ({time_s:.2f} s)>"

    #: The file's text when known (set by ``tamp.prove``; not a dataclass field).
    source = None  # type: Optional[str]

    def _repr_html_(self) -> str:  # notebooks: every program's report section
        view = NOTEBOOK_VIEWS.get("file_html")
        return view(self, self.source) if view else "<pre>" + html.escape(self.render_text()) + "</pre>"


@dataclass
class ProgramSummary:
    """One program of a checked file: its parameters' and locals' types (as written in the
    language reference) and the kind of its specification (``failure-bound``, ``probability``,
    ``causal``, ``none``)."""

    name: str
    params: Dict[str, str]
    locals: Dict[str, str]
    kind: str

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "locals": dict(self.locals), "kind": self.kind}


@dataclass
class CheckedFile:
    """A file that parsed and type-checked (``tamp check``, ``tamp.check``): its programs.
    A file that does not check raises a located :class:`lang.errors.TampError` instead."""

    file: str
    programs: List[ProgramSummary]
    time_s: float = 0.0

    @property
    def ok(self) -> bool:
        return True

    @property
    def verdict(self) -> str:
        return OK

    @property
    def exit_code(self) -> int:
        return exit_code_of(OK)

    def summary(self) -> str:
        """``FILE: ok (N programs: a, b)``."""
        names = [p.name for p in self.programs]
        count = f"{len(names)} program" + ("" if len(names) == 1 else "s")
        return f"{self.file}: ok ({count}{': ' + ', '.join(names) if names else ''})"

    def to_json(self) -> Dict[str, Any]:
        return {"file": self.file, "ok": True, "programs": [p.to_json() for p in self.programs]}

    def render_text(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<CheckedFile {self.summary()}>"

    def _repr_html_(self) -> str:  # notebooks: one row per program
        rows = "".join(
            "<tr><td><b>{}</b></td><td>{}</td><td>{}</td><td>{}</td></tr>".format(
                html.escape(p.name),
                html.escape(", ".join(f"{n}: {t}" for n, t in p.params.items())),
                html.escape(", ".join(f"{n}: {t}" for n, t in p.locals.items())),
                html.escape(p.kind),
            )
            for p in self.programs
        )
        return (
            f"<div><b>{html.escape(self.file)}</b>: ok</div>"
            '<table style="text-align:left"><tr><th>program</th><th>parameters</th><th>locals</th>'
            f"<th>specification</th></tr>{rows}</table>"
        )
