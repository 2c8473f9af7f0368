"""One program's part of the report: verdict, source, axioms, automata, intervals, statistics.

:func:`program_section` is what ``ProgramResult._repr_html_`` shows in a notebook and what the
page repeats for every program of a file. It reads only the result objects' public data, by
type: failure-bound results (:class:`tamp.prover.ProofResult`), probability results
(:class:`tamp.probability.result.ProbResult`), anything else through ``details``.
"""

from __future__ import annotations

import re
from html import escape
from typing import Dict, List, Optional, Tuple

from tamp.probability.result import ProbResult, show_interval
from tamp.prover.concentration.proof import ConcentrationResult
from tamp.prover.trace.result import ProofResult
from tamp.results import ProgramResult, Result
from tamp.show import show_expr

from .concentration import concentration_body
from .derivation import derivation_line
from .drawing import draw
from .failed import failure_lines
from .graph import MAX_DRAWN, MAX_LISTED, automaton_graph, cfa_graph, node_order
from .plots import bound_plot, causal_plot, comparison_plot
from .source import LineMark, line_anchor, listing, program_ranges
from .zoom import zoomable


def anchor_prefix(name: str) -> str:
    """The id prefix of a program's section (``prog-noisyMax``)."""
    return "prog-" + re.sub(r"[^A-Za-z0-9_-]", "_", name)


def verdict_badge(verdict: str) -> str:
    return f'<span class="verdict {escape(verdict)}">{escape(verdict.upper())}</span>'


def parts_of(result: Result) -> List[ProgramResult]:
    """The per-engine results a program's result combines (itself when there is one engine)."""
    return list(result.parts)


def program_section(
    result,
    source: Optional[str] = None,
    engine: str = "auto",
    ranges: Optional[Dict[str, Tuple[int, int]]] = None,
    simulate: bool = False,
) -> str:
    """The ``<section>`` for one program's result. ``source`` is the file's text (the listing is
    left out without it); ``engine`` picks the automaton renderer: ``auto``, ``dot`` or ``builtin``;
    ``simulate`` adds ``tamp simulate``'s measured rates to the failure bound's plot."""
    prefix = anchor_prefix(result.name)
    out = [
        f'<section class="program" id="{prefix}">',
        f"<h2>{escape(result.name)} {verdict_badge(result.verdict)}</h2>",
        '<p class="meta">' + escape(_meta(result)) + "</p>",
    ]
    if result.message:
        out.append(f'<div class="message {escape(result.verdict)}">{escape(result.message)}</div>')
    parts = parts_of(result)
    if source:
        out.append(source_block(result, parts, source, prefix, ranges))
    link = prefix if source else None  # line links only when the listing is there
    for part in parts:
        body = _part_body(part, link, engine, simulate)
        if len(parts) > 1:
            body = (
                f'<section class="part"><h3>{escape(part.kind)} {verdict_badge(part.verdict)}</h3>'
                + (f'<div class="message">{escape(part.message)}</div>' if part.message else "")
                + body
                + "</section>"
            )
        out.append(body)
    out.append("</section>")
    return "\n".join(out)


def _meta(result) -> str:
    bits = [f"kind: {result.kind}"]
    if result.bound is not None:
        bits.append(f"bound: {result.bound}")
    bits.append(f"time: {result.time_s:.2f} s")
    return " · ".join(bits)


# ---------------------------------------------------------------------------- source


def source_block(result, parts, source: str, prefix: str, ranges) -> str:
    ranges = ranges if ranges is not None else program_ranges(source)
    first, last = ranges.get(result.name, (1, len(source.splitlines())))
    marks: Dict[int, LineMark] = {}
    for part in parts:
        if not isinstance(part, ProofResult):
            continue
        for ax in part.axioms:
            if ax.get("line"):
                marks.setdefault(ax["line"], LineMark()).add("axiom-line", _axiom_note(ax))
        if part.verdict != "proved":
            fl = failure_lines(part.failure, part.cfa)
            if fl is not None:
                for ln, _stmt in fl.steps:
                    marks.setdefault(ln, LineMark()).add("failed-trace")
                if fl.stuck_at is not None:
                    marks.setdefault(fl.stuck_at, LineMark()).add("failed-trace").add("failed-at", fl.note)
    legend = ""
    if any("failed-at" in m.classes for m in marks.values()):
        legend = (
            '<p class="legend">Highlighted: the trace the prover could not label '
            '(<span style="background:#fdebd0">on the trace</span>, '
            '<span style="background:#f5b7b1">where it stopped</span>).</p>'
        )
    return "<h3>Source</h3>" + legend + listing(source, prefix, first, last, marks)


def _axiom_note(ax: dict) -> str:
    return f"{ax.get('family')}: Pr[{ax.get('bad')}] <= {ax.get('cost')}"


# ---------------------------------------------------------------------------- bodies


def line_link(prefix: Optional[str], line: int) -> str:
    """``line N`` linked to the listing's line when there is one (``prefix`` not None)."""
    if prefix is None:
        return f"line {line}"
    return f'<a href="#{line_anchor(prefix, line)}">line {line}</a>'


def _part_body(part, prefix: Optional[str], engine: str, simulate: bool = False) -> str:
    if isinstance(part, ProofResult):
        return _failure_bound_body(part, prefix, engine, simulate)
    if isinstance(part, ProbResult):
        return _probability_body(part)
    return _details_body(part)


def _plot_block(title: str, svg: Optional[str]) -> str:
    return f'<h3>{escape(title)}</h3><div class="plot-box">{svg}</div>' if svg else ""


def _failure_bound_body(r: ProofResult, prefix: Optional[str], engine: str, simulate: bool = False) -> str:
    out = []
    if isinstance(r, ConcentrationResult) and r.proof is not None:
        out.append(concentration_body(r))
    axioms = r.axioms
    if axioms:
        rows = []
        for ax in axioms:
            ln = ax.get("line")
            link = line_link(prefix, ln) if ln else ""
            fam = escape(str(ax.get("family"))) + (
                f"({escape(_param(ax.get('param')))})" if ax.get("param") is not None else ""
            )
            side = "<br>".join(escape(s) for s in ax.get("side") or []) or "—"
            rows.append(
                f"<tr><td>{link}</td><td><code>{escape(ax.get('stmt', ''))}</code></td><td>{fam}</td>"
                f"<td><code>Pr[{escape(str(ax.get('bad')))}] &lt;= {escape(str(ax.get('cost')))}</code>"
                f"</td><td><code>{side}</code></td></tr>"
            )
        out.append(
            '<h3>Axioms</h3><table class="data axioms"><tr><th>where</th><th>sampling</th>'
            "<th>family</th><th>axiom</th><th>side conditions</th></tr>" + "".join(rows) + "</table>"
        )
    derivation = derivation_line(r)
    if derivation:
        out.append(f'<p class="derivation"><b>Derivation:</b> <code>{escape(derivation)}</code></p>')
    if r.verdict == "proved" and not isinstance(r, ConcentrationResult):
        out.append(_plot_block("Failure bound", bound_plot(r, simulate)))
    fl = failure_lines(r.failure, r.cfa) if r.verdict != "proved" else None
    if fl is not None:
        out.append(_failure_box(fl, prefix))
    automata = r.automata
    for aut in automata:
        out.append(_automaton_block(aut, engine))
    if not automata and r.cfa is not None and r.verdict != "proved":
        trace = list(fl.steps) + ([(fl.stuck_at, "")] if fl.stuck_at else []) if fl is not None else []
        svg, used = draw(cfa_graph(r.cfa, fl.nodes if fl is not None else (), trace), engine)
        out.append(
            '<h3>Control-flow automaton</h3><p class="legend">There is no failure automaton '
            "(the proof did not succeed); this is the program's control flow. "
            '<span class="back">Dashed red</span>: loop back edges'
            + ("; red box: where the proof check failed" if fl is not None and fl.nodes else "")
            + ('; <span class="trace-key">thick orange</span>: the trace the prover could not label' if trace else "")
            + ".</p>"
            + zoomable(svg, used)
        )
    if r.stats:
        out.append(_stats_table(r.stats, r.obligations))
    return "\n".join(out)


def _param(p) -> str:
    if isinstance(p, list):
        return ", ".join(map(str, p))
    return str(p)


def _failure_box(fl, prefix: Optional[str]) -> str:
    steps = "".join(f"<li>{line_link(prefix, ln)}: <code>{escape(s)}</code></li>" for ln, s in fl.steps)
    at = f" (stopped at {line_link(prefix, fl.stuck_at)}: {escape(fl.note)})" if fl.stuck_at is not None else ""
    return (
        f'<h3>Why the proof failed</h3><div class="message failed-trace-box">{escape(fl.reason)}{at}'
        + (f"<br>on the trace:<ol>{steps}</ol>" if steps else "")
        + "<br>A failed union-bound proof does not mean the claim is false: look for a counterexample "
        "with <code>tamp simulate</code>, or try a weaker bound.</div>"
    )


def _automaton_block(aut, engine: str) -> str:
    """The automaton drawn, a legend, and its full node labels in a table."""
    if len(aut.nodes) <= MAX_DRAWN:
        svg, used = draw(automaton_graph(aut), engine)
        figure = zoomable(svg, used)
    else:
        figure = (
            f'<div class="message">{len(aut.nodes)} nodes are too many to draw here (the limit is '
            f"{MAX_DRAWN}); <code>tamp prove FILE --dot DIR</code> writes the automaton for graphviz.</div>"
        )
    order = node_order(aut)
    rows = []
    for nid in order[:MAX_LISTED]:
        n = aut.nodes[nid]
        rows.append(
            f"<tr><td>{escape(aut.place(nid))}</td><td>{n.line or ''}</td>"
            f"<td><code>{escape(show_expr(n.lam))}</code></td>"
            f"<td><code>{escape(show_expr(n.kappa))}</code></td></tr>"
        )
    n_back = sum(1 for e in aut.edges if e.back)
    return (
        f"<h3>Failure automaton {escape(aut.name)}</h3>"
        f'<p class="legend">{len(aut.nodes)} nodes, {len(aut.edges)} edges, {len(aut.exits)} exit(s)'
        + (f", {n_back} back edge(s)" if n_back else "")
        + ". Each node q shows λ (what holds there) and κ (failure probability spent so far); "
        "double border: exit"
        + ('; <span class="back">dashed red</span>: back edge (loop)' if n_back else "")
        + "; dashed grey: case split.</p>"
        + figure
        + "<details><summary>node labels in full</summary>"
        '<table class="data nodes"><tr><th>place</th><th>line</th><th>λ</th><th>κ</th></tr>'
        + "".join(rows)
        + "</table>"
        + (f"<p>… and {len(order) - MAX_LISTED} more nodes.</p>" if len(order) > MAX_LISTED else "")
        + "</details>"
    )


def _stats_table(stats: dict, obligations) -> str:
    rows = []
    for k, v in stats.items():
        if isinstance(v, dict):
            v = ", ".join(f"{kk} {vv:.3f} s" if isinstance(vv, float) else f"{kk} {vv}" for kk, vv in v.items())
        rows.append(f"<tr><th>{escape(str(k).replace('_', ' '))}</th><td>{escape(str(v))}</td></tr>")
    if obligations:
        valid = sum(1 for o in obligations if o.status == "valid")
        rows.append(f"<tr><th>obligations valid</th><td>{valid} of {len(obligations)}</td></tr>")
    return '<h3>Statistics</h3><table class="data stats">' + "".join(rows) + "</table>"


def _probability_body(r: ProbResult) -> str:
    out = []
    if r.terms:
        rows = []
        for t in r.terms:
            iv = t.interval
            width = "—" if iv is None else ("exact" if iv.is_exact else f"{float(iv.hi - iv.lo):.3g}")
            rows.append(
                f'<tr><td><code>{escape(t.text)}</code></td><td class="mono">{escape(show_interval(iv))}'
                f"</td><td>{_interval_bar(iv)}</td><td>{width}</td></tr>"
            )
        out.append(
            '<h3>Probability terms</h3><table class="data terms"><tr><th>term</th>'
            "<th>value or certified interval</th><th>on [0, 1]</th><th>width</th></tr>" + "".join(rows) + "</table>"
        )
    if r.comparisons:
        rows = []
        for c in r.comparisons:
            state = {True: "holds", False: "fails", None: "undecided"}[c.holds]
            rows.append(
                f'<tr><td><code>{escape(c.text)}</code></td><td class="mono">{escape(show_interval(c.lhs))}'
                f'</td><td>{escape(c.op)}</td><td class="mono">{escape(show_interval(c.rhs))}</td>'
                f'<td class="{state}">{state}</td></tr>'
            )
        out.append(
            '<h3>Comparisons</h3><table class="data comparisons"><tr><th>clause</th><th>left</th>'
            "<th></th><th>right</th><th></th></tr>" + "".join(rows) + "</table>"
        )
    out.append(_plot_block("Certified intervals against their thresholds", comparison_plot(r)))
    out.append(
        '<h3>Statistics</h3><table class="data stats">'
        f"<tr><th>paths</th><td>{r.paths}</td></tr><tr><th>cells</th><td>{r.cells}</td></tr>"
        f"<tr><th>solver calls</th><td>{r.solver_calls}</td></tr></table>"
    )
    return "\n".join(out)


def _interval_bar(iv) -> str:
    """A 120-pixel bar for [0, 1] with the interval marked (a tick when it is a point)."""
    if iv is None:
        return ""
    lo, hi = float(iv.lo), float(iv.hi)
    if not (0.0 <= lo <= hi <= 1.0):
        return ""
    x1, x2 = 120 * lo, max(120 * hi, 120 * lo + 2)
    return (
        f'<svg class="bar" width="124" height="12" viewBox="0 0 124 12">'
        f'<rect x="0" y="4" width="120" height="4" fill="#d5dbe1"/>'
        f'<rect x="{x1:.1f}" y="1" width="{x2 - x1:.1f}" height="10" fill="#2e86c1"/></svg>'
    )


def _details_body(r) -> str:
    """Other engines (causal, …): their own text rendering, and their details as a table."""
    out = [f'<pre class="engine-text">{escape(r.render_text())}</pre>']
    out.append(_plot_block("Where the output depends on the sensitive input", causal_plot(r)))
    if r.details:
        rows = "".join(
            f'<tr><th>{escape(str(k))}</th><td class="mono">{escape(_short(v))}</td></tr>' for k, v in r.details.items()
        )
        out.append('<details><summary>details</summary><table class="data details">' + rows + "</table></details>")
    return "\n".join(out)


def _short(v, limit: int = 400) -> str:
    s = str(v)
    return s if len(s) <= limit else s[: limit - 1] + "…"
