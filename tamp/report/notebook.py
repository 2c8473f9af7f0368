"""Compact notebook views of results (Jupyter's ``_repr_html_``): a card, not the whole report.

A card shows the verdict, the bound and the time on one line; the reason when the claim is not
proved (as ``tamp prove`` prints it); the derivation of a proved bound; a small drawing of the
failure automaton (or, for a failed proof, the control flow with the failed trace highlighted);
a plot where the answer is an interval or a region (probability comparisons, causal fairness);
and the source, folded, left-aligned. A card stays under :data:`MAX_BYTES`: the drawing, then the
plot, are left out (with a note) when they would not fit. The full report is
``tamp prove FILE --report OUT.html``.
"""

from __future__ import annotations

from fractions import Fraction
from html import escape
from typing import List, Optional

from tamp.probability.result import ProbResult
from tamp.prover.trace.result import ProofResult

from .derivation import derivation_line
from .drawing import draw
from .failed import failure_lines
from .graph import automaton_graph, cfa_graph
from .plots import causal_plot, comparison_plot
from .pretty import simplify_text
from .sections import anchor_prefix, source_block, verdict_badge
from .style import CSS
from .text import program_lines, seconds
from .zoom import script, zoomable

#: Largest card, in characters of HTML.
MAX_BYTES = 30_000
#: Largest automaton drawn in a card (nodes).
MAX_CARD_NODES = 40

_SIM_BADGE = {"consistent": "proved", "confirmed": "proved", "undecided": "unknown", "refuted": "violated"}


def _head(name: str, verdict: str, badge: str, bits: List[str]) -> str:
    return (
        f'<div class="card-line"><b>{escape(name)}</b> {verdict_badge(badge).replace(badge.upper(), verdict.upper())}'
        + "".join(f" · {escape(b)}" for b in bits)
        + "</div>"
    )


def _drawing(part) -> Optional[str]:
    if not isinstance(part, ProofResult):
        return None
    if part.automata:
        aut = part.automata[0]
        if len(aut.nodes) > MAX_CARD_NODES:
            return None
        svg, used = draw(automaton_graph(aut))
        return zoomable(svg, used)
    if part.cfa is not None and part.verdict != "proved" and len(part.cfa.graph.nodes) <= MAX_CARD_NODES:
        fl = failure_lines(part.failure, part.cfa)
        trace = (list(fl.steps) + ([(fl.stuck_at, "")] if fl.stuck_at else [])) if fl is not None else []
        svg, used = draw(cfa_graph(part.cfa, fl.nodes if fl is not None else (), trace))
        return zoomable(svg, used)
    return None


def _plot(part) -> Optional[str]:
    if isinstance(part, ProbResult):
        return comparison_plot(part)
    if "certified" in (getattr(part, "details", None) or {}):
        return causal_plot(part)
    return None


def program_card(result, source: Optional[str] = None, engine: str = "auto") -> str:
    """One program's card (``ProgramResult._repr_html_``)."""
    return _wrap([_card_body(result, source, MAX_BYTES)])


def _card_body(result, source: Optional[str], budget: int) -> str:
    """The inside of a program's card, within ``budget`` characters with the stylesheet."""
    bits = []
    if result.bound is not None and result.kind in ("failure-bound", "mixed"):
        bits.append(f"Pr[fail] <= {simplify_text(str(result.bound))}")
    bits += [seconds(result.time_s), result.kind]
    out = [_head(result.name, result.verdict, result.verdict, bits)]
    lines = [ln.text for ln in program_lines(result, getattr(result, "path", None) or "<source>", 0)[1:]]
    if lines:
        out.append(f'<pre class="engine-text">{escape(chr(10).join(lines))}</pre>')
    optional = []
    for part in result.parts:
        derivation = derivation_line(part)
        if derivation:
            out.append(f'<p class="derivation">derivation: <code>{escape(derivation)}</code></p>')
        drawing, plot = _drawing(part), _plot(part)
        optional += [("drawing", drawing)] if drawing else []
        optional += [("plot", f'<div class="plot-box">{plot}</div>')] if plot else []
    tail = []
    if source:
        listing = source_block(result, result.parts, source, anchor_prefix(result.name) + "-nb", None)
        tail.append("<details><summary>source</summary>" + listing.replace("<h3>Source</h3>", "", 1) + "</details>")
    size = sum(map(len, out + tail)) + len(CSS) + len(script()) + 500
    for what, html in optional:
        if size + len(html) <= budget:
            out.append(html)
            size += len(html)
        else:
            out.append(f'<p class="legend">(the {what} is left out here: see the report, --report OUT.html)</p>')
    return '<div class="program-card">' + "".join(out + tail) + "</div>"


def file_card(file_result, source: Optional[str] = None, engine: str = "auto") -> str:
    """A whole file: one line per program, then the first programs' cards while they fit."""
    rows = "".join(
        f"<tr><td>{escape(r.name)}</td><td>{verdict_badge(r.verdict)}</td>"
        f"<td><code>{escape(simplify_text(str(r.bound)) or '' if r.bound is not None else '')}</code></td>"
        f"<td>{seconds(r.time_s)}</td></tr>"
        for r in file_result.programs
    )
    out = [
        _head(file_result.file, file_result.verdict, file_result.verdict, [f"{len(file_result.programs)} program(s)"]),
        f'<table class="data summary"><tr><th>program</th><th>verdict</th><th>bound</th><th>time</th></tr>{rows}</table>',
    ]
    if len(file_result.programs) == 1:
        return program_card(file_result.programs[0], source, engine)
    size = sum(map(len, out)) + len(CSS) + len(script()) + 200
    for r in file_result.programs:  # the programs' own cards while they fit
        card = _card_body(r, source, MAX_BYTES - size)
        if size + len(card) > MAX_BYTES:
            out.append('<p class="legend">(the other programs are left out here: see the report)</p>')
            break
        out.append(card)
        size += len(card)
    return _wrap(out)


def simulation_card(sim) -> str:
    """A :class:`tamp.simulation.result.SimResult`: the failure rate's interval against the bound."""
    bits = [f"{sim.total_runs} runs", seconds(sim.time_s)]
    out = [_head(sim.program, sim.verdict, _SIM_BADGE.get(sim.verdict, "unknown"), bits)]
    if sim.kind == "failure-bound" and sim.runs:
        lo, hi = float(sim.ci[0]), float(sim.ci[1])
        b = (
            float(sim.bound_value)
            if isinstance(sim.bound_value, (int, float)) or _is_fraction(sim.bound_value)
            else None
        )
        out.append(
            f'<p class="card-line">failure rate {sim.failures}/{sim.runs} = {sim.failures / sim.runs:.4g}, '
            f"{sim.confidence:.0%} interval [{lo:.4g}, {hi:.4g}]"
            + (f" · bound {escape(str(sim.bound_text))} = {b:.4g}" if b is not None else "")
            + "</p>"
            + _rate_bar(lo, hi, b)
        )
    if sim.message:
        out.append(f'<pre class="engine-text">{escape(sim.message)}</pre>')
    return _wrap(out)


def _is_fraction(x) -> bool:
    return isinstance(x, Fraction)


def _rate_bar(lo: float, hi: float, bound: Optional[float]) -> str:
    """The interval as a bar on [0, top], the bound as a black tick."""
    top = max(hi, bound or 0.0) * 1.25 or 1.0
    w = 300

    def x(v: float) -> float:
        return 2 + (w - 4) * min(max(v / top, 0.0), 1.0)

    tick = (
        f'<line x1="{x(bound):.1f}" y1="0" x2="{x(bound):.1f}" y2="18" stroke="black" stroke-width="2"/>'
        if bound is not None
        else ""
    )
    return (
        f'<svg class="bar rate" width="{w}" height="30" viewBox="0 0 {w} 30" role="img" aria-label="failure rate">'
        f'<rect x="2" y="7" width="{w - 4}" height="4" fill="#d5dbe1"/>'
        f'<rect x="{x(lo):.1f}" y="3" width="{max(x(hi) - x(lo), 2):.1f}" height="12" fill="#2e86c1"/>{tick}'
        f'<text x="2" y="28" font-size="9">0</text><text x="{w - 2}" y="28" font-size="9" text-anchor="end">'
        f"{top:.3g}</text></svg>"
    )


def _wrap(parts: List[str]) -> str:
    return f'<div class="tamp-report tamp-card"><style>{CSS}</style>' + "".join(parts) + "</div>" + script()
