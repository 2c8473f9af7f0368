"""``tamp prove``'s text output: a one-line verdict per program, details on request.

Verbosity 0 (the default), as pytest or mypy would say it::

    randResp: proved  Pr[fail] <= 0.25  (0.16 s)
    half: unknown  Pr[fail] <= p / 2  (0.07 s)
      half.prob:7: no axiom for `y ~ bern(p)` (line 7) keeps the failure below p / 2 and proves …
        line 6: x ~ bern(0.5)

Verbosity 1 (``-v``) adds each program's synthesised axioms (formulas simplified, see
:mod:`tamp.report.pretty`), the derivation of the bound in one line (:mod:`tamp.report.derivation`,
``n iterations × p / n = p``), a summary of its failure automata and the prover's statistics;
verbosity 2 (``-vv``) shows everything the result has (:meth:`render_text`, the full automata).

The lines are :class:`Line` values (text and a style name) so that the command prints them in
colour on a terminal and as plain text elsewhere; the explanations themselves are the
engines' (this module only places them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional

from tamp.prover.trace.result import ProofResult
from tamp.results import PROVED, UNKNOWN, UNSPECIFIED, VERDICTS, VIOLATED

from .derivation import derivation_line
from .failed import failure_lines
from .pretty import simplify_text

#: A style per verdict (rich style names; ignored when the output is plain).
STYLES = {
    PROVED: "bold green",
    UNKNOWN: "bold yellow",
    VIOLATED: "bold red",
    UNSPECIFIED: "bold",
    "error": "bold red",
    "where": "bold",
    "detail": "dim",
    "": "",
}

MAX_TRACE_STEPS = 8  # steps of a failed trace shown by default (-v shows them all)


@dataclass
class Line:
    """One output line: its text, the style of the whole line, and optionally of a part of it
    (``span`` = (start, end, style)), e.g. the verdict word."""

    text: str
    style: str = ""
    span: Optional[tuple] = None


def seconds(t: float) -> str:
    return f"{t:.2f} s" if t < 10 else f"{t:.1f} s"


def verdict_line(r) -> Line:
    """``name: verdict  Pr[fail] <= BOUND  (time)`` — the bound simplified for reading."""
    head = f"{r.name}: "
    if r.kind == "privacy":  # `name: proved  private  ε <= eps  (0.8 s)`, `violated  not private  …`, `unknown`
        word = r.word
        text = f"{head}{word}  ε {'=' if r.verdict == VIOLATED else '<='} {r.epsilon}"
        if r.verdict == VIOLATED and r.counterexample is not None:
            text += " is exceeded: " + _counterexample_text(r.counterexample)
        text += f"  ({seconds(r.time_s)})"
        return Line(text, "", (len(head), len(head) + len(r.verdict), r.verdict))
    text = head + r.verdict
    bound = getattr(r, "bound", None)
    if bound is not None and r.kind in ("failure-bound", "mixed"):
        text += f"  Pr[fail] <= {simplify_text(str(bound))}"
    text += f"  ({seconds(r.time_s)})"
    return Line(text, "", (len(head), len(head) + len(r.verdict), r.verdict))


def program_lines(r, file: str, verbosity: int = 0) -> List[Line]:
    """Every line for one program's result at the given verbosity (0, 1, 2)."""
    out = [verdict_line(r)]
    if verbosity >= 2:
        out.extend(Line(ln, "") for ln in r.render_text().splitlines()[1:])
        return out
    for part in getattr(r, "parts", None) or [r]:
        out.extend(_part_lines(part, file, verbosity, mixed=part is not r))
    return out


def _counterexample_text(cx: Dict) -> str:
    """``q=[0,0], q'=[1,1], out < 0: 0.0313 vs 0.0026`` (the inputs that differ, the event,
    the two probabilities)."""
    same = {k for k, v in cx["inputs"].items() if cx["neighbour"].get(k) == v}
    ins = [f"{k}={_show(v)}" for k, v in cx["inputs"].items() if k not in same]
    ins += [f"{k}'={_show(v)}" for k, v in cx["neighbour"].items() if k not in same]
    p, q = cx["probability"], cx["neighbour_probability"]
    return f"{', '.join(ins)}, {cx['event']}: {_num(p['lower'])} vs {_num(q['upper'])}"


def _show(v) -> str:
    return "[" + ",".join(map(str, v)) + "]" if isinstance(v, list) else str(v)


def _num(v) -> str:
    from fractions import Fraction

    return f"{float(Fraction(str(v))):.4g}"


def _privacy_lines(part, file: str, verbosity: int, indent: str) -> List[Line]:
    """Why a privacy claim is not proved (at its line), and with ``-v`` the alignment per
    sampling statement and the loop invariants of the proof."""
    out: List[Line] = []
    if part.verdict == UNKNOWN and part.message:
        where = f"{file}:{part.line}: " if part.line else f"{file}: "
        out.append(Line(indent + where + part.message, "", (len(indent), len(indent) + len(where), "where")))
    if verbosity >= 1:
        out.extend(
            Line(indent + row.strip(), "detail")
            for row in part.render_text().splitlines()[1:]
            if row.strip() != (part.message or "").strip()
        )
    return out


def _part_lines(part, file: str, verbosity: int, mixed: bool) -> List[Line]:
    out: List[Line] = []
    if part.kind == "privacy":
        if mixed:
            out.append(Line("  " + verdict_line(part).text.split(": ", 1)[1], ""))
        return out + _privacy_lines(part, file, verbosity, "    " if mixed else "  ")
    if mixed:  # a program with several kinds of specification: one line per kind
        out.append(
            Line(
                f"  {part.kind}: {part.verdict}  ({seconds(part.time_s)})",
                "",
                (len(part.kind) + 4, len(part.kind) + 4 + len(part.verdict), part.verdict),
            )
        )
    indent = "    " if mixed else "  "
    if part.verdict == UNSPECIFIED:
        out.extend(Line(indent + ln.strip(), "detail") for ln in part.message.splitlines())
    elif part.verdict != PROVED:
        out.extend(_reason_lines(part, file, verbosity, indent))
    elif part.message:  # e.g. "holds vacuously": the engine's own caveat belongs to the verdict
        out.extend(Line(indent + ln.strip(), "detail") for ln in part.message.splitlines())
    said = {ln.strip() for ln in (part.message or "").splitlines()}
    rows = [row for row in part.render_text().splitlines()[1:] if row.strip() not in said]
    # an inferred bound or margin (`fails ?`, --infer) is the answer itself: always shown
    out.extend(Line(indent + row.strip(), "") for row in rows if row.strip().startswith("inferred "))
    rows = [row for row in rows if not row.strip().startswith("inferred ")]
    if part.kind == "probability":  # the claim and its computed value: short, and the reason itself
        decided = ("[holds]", "[fails]", "[undecided]")
        out.extend(
            Line(indent + row.strip(), "detail") for row in rows if row.rstrip().endswith(decided) or verbosity >= 1
        )
    elif part.kind != "failure-bound" and verbosity >= 1:
        out.extend(Line(indent + row.strip(), "detail") for row in rows)
    if verbosity >= 1 and hasattr(part, "applications_json"):  # a concentration proof: rules, margins
        out.extend(Line(indent + _simplify_margin(row[2:] if row.startswith("  ") else row), "detail") for row in rows)
    elif verbosity >= 1 and part.kind == "failure-bound":
        out.extend(_proof_summary(part, indent))
    return out


def _reason_lines(part, file: str, verbosity: int, indent: str) -> List[Line]:
    """Why a program is not proved, in the engine's words, at the source line it names."""
    out: List[Line] = []
    failure = part.failure if isinstance(part, ProofResult) else None
    fl = failure_lines(failure, part.cfa if isinstance(part, ProofResult) else None)
    message = (part.message or "").strip()
    if fl is not None and failure is not None:
        where = f"{file}:{fl.stuck_at}: " if fl.stuck_at else f"{file}: "
        rows = [r.strip() for r in failure.text().splitlines()]
        reason = fl.reason
        # the explanation's own continuation lines (before the trace's `line N:` steps)
        for row in rows[1:]:
            if row.startswith("line ") or row in ("on the trace:",):
                break
            reason += " " + row
        out.append(Line(indent + where + reason, "", (len(indent), len(indent) + len(where), "where")))
        steps = fl.steps if verbosity >= 1 else fl.steps[:MAX_TRACE_STEPS]
        out.extend(Line(f"{indent}  line {ln}: {stmt}", "detail") for ln, stmt in steps)
        if len(steps) < len(fl.steps):
            out.append(Line(f"{indent}  … {len(fl.steps) - len(steps)} more step(s) (-v shows them)", "detail"))
        if message:
            out.extend(Line(indent + ln.strip(), "detail") for ln in message.splitlines())
    elif message:
        first, *rest = message.splitlines()
        out.append(Line(f"{indent}{file}: {first.strip()}", "", (len(indent), len(indent) + len(file) + 1, "where")))
        out.extend(Line(indent + ln.strip(), "detail") for ln in rest if ln.strip())
    return out


def _proof_summary(part, indent: str) -> List[Line]:
    """``-v``: the synthesised axioms, each automaton's size, the prover's statistics."""
    out: List[Line] = []
    axioms = getattr(part, "axioms", None) or []
    if axioms:
        out.append(Line(indent + "axioms:", ""))
    for a in axioms:
        param = f"({_param(a.get('param'))})" if a.get("param") is not None else ""
        out.append(
            Line(
                f"{indent}  line {a['line']}: {a['stmt']}  —  {a['family']}{param}: "
                f"Pr[{simplify_text(a['bad'])}] <= {simplify_text(a['cost'])}",
                "detail",
            )
        )
    derivation = derivation_line(part)
    if derivation:
        out.append(Line(indent + "derivation: " + derivation, "detail"))
    for aut in getattr(part, "automata", None) or []:
        out.append(Line(indent + aut.to_text().splitlines()[0] + "  (-vv shows it)", "detail"))
    stats = getattr(part, "stats", None) or {}
    flat = {k: v for k, v in stats.items() if not isinstance(v, dict)}
    if flat:
        out.append(Line(indent + "statistics: " + ", ".join(f"{k} {v}" for k, v in flat.items()), "detail"))
    return out


_MARGIN = re.compile(r"^(\s*margin u = )(.*), probability f = (.*)$")


def _simplify_margin(row: str) -> str:
    """A concentration rule's ``margin u = …, probability f = …`` with both formulas simplified."""
    m = _MARGIN.match(row)
    if not m:
        return row
    return f"{m.group(1)}{simplify_text(m.group(2))}, probability f = {simplify_text(m.group(3))}"


def _param(p) -> str:
    if isinstance(p, list):
        return ", ".join((simplify_text(x) or x) if isinstance(x, str) else str(x) for x in p)
    return (simplify_text(p) or p) if isinstance(p, str) else str(p)


def count(verdicts: Iterable[str]) -> Dict[str, int]:
    out = {v: 0 for v in VERDICTS}
    for v in verdicts:
        out[v] += 1
    return out


def summary_line(counts: Dict[str, int], files: int, errors: int, time_s: float) -> Line:
    """``3 proved, 1 unknown, 0 violated  (2 files, 4.1 s)``; the worst count is styled."""
    text = ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS if v != UNSPECIFIED or counts.get(v))
    if errors:
        text += f", {errors} file(s) with errors"
    text += f"  ({files} file{'s' * (files != 1)}, {seconds(time_s)})"
    worst = "error" if errors else VIOLATED if counts.get(VIOLATED) else UNKNOWN if counts.get(UNKNOWN) else PROVED
    return Line(text, STYLES[worst])
