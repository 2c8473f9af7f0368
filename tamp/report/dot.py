"""Drawing a :class:`~tamp.report.graph.Graph` with graphviz's ``dot``, when it is installed.

The ``dot`` binary is optional (Debian package ``graphviz``); :func:`dot_svg` returns None
without it and the report falls back to :mod:`tamp.report.layout`. The SVG is cleaned for
inlining: no XML prolog, no DOCTYPE (which names an external DTD), and every edge and node
group keeps the class the report's tests and stylesheet look for.
"""

from __future__ import annotations

import re
import shutil
from typing import Optional

import graphviz

from .graph import Graph
from .layout import BACK_COLOUR, SPLIT_COLOUR

MONO = "DejaVu Sans Mono"


def dot_available() -> bool:
    """True when graphviz's ``dot`` binary is installed (the ``graphviz`` Python package, which
    runs it, is a dependency)."""
    return shutil.which("dot") is not None


def dot_source(g: Graph) -> str:
    """Graphviz text for ``g``: boxes with left-aligned λ/κ lines, back edges dashed and red,
    split edges dashed and grey. Each element's ``id`` carries its class (see :func:`_restore_classes`)."""
    dot = graphviz.Digraph(
        g.name,
        graph_attr={"rankdir": "TB", "nodesep": "0.35", "ranksep": "0.45", "fontname": MONO},
        node_attr={
            "shape": "box",
            "style": "rounded,filled",
            "fillcolor": "#f7f9fc",
            "color": "#34495e",
            "fontname": MONO,
            "fontsize": "10",
        },
        edge_attr={"fontname": MONO, "fontsize": "9", "color": "#333333", "fontcolor": "#1a5276"},
    )
    for i, n in enumerate(g.nodes):
        attrs = {"id": f"n{i}__{n.cls.replace(' ', '_')}", "label": _left_lines(n.lines), "tooltip": _text(n.full)}
        if "exit" in n.cls.split():
            attrs.update(peripheries="2", fillcolor="#eef6ee")
        if "failed" in n.cls.split():
            attrs.update(color=BACK_COLOUR, fillcolor="#fdedec", penwidth="2")
        dot.node(n.id, **attrs)
    for i, e in enumerate(g.edges):
        attrs = {"id": f"e{i}__{e.cls}", "label": _left_lines(e.label.splitlines()), "tooltip": _text(e.full)}
        if e.back:
            attrs.update(style="dashed", color=BACK_COLOUR, fontcolor=BACK_COLOUR, constraint="false")
        elif "split" in e.cls:
            attrs.update(style="dashed", color=SPLIT_COLOUR)
        dot.edge(e.src, e.dst, **attrs)
    return dot.source


def dot_svg(g: Graph, timeout: float = 20.0) -> Optional[str]:
    """The drawing as an inline ``<svg>`` element, or None when ``dot`` is missing or fails."""
    if not g.nodes or not dot_available():
        return None
    try:
        raw = graphviz.Source(dot_source(g)).pipe(format="svg", encoding="utf-8")
    except Exception:  # noqa: BLE001 - any failure of the optional renderer means: use ours
        return None
    return clean_svg(raw)


def clean_svg(raw: str) -> str:
    """Strip the prolog/DOCTYPE/comments of graphviz's output and restore element classes."""
    start = raw.find("<svg")
    svg = raw[start:] if start >= 0 else raw
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = svg.replace('xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    svg = re.sub(r"<svg\b", '<svg class="automaton"', svg, count=1)
    return _restore_classes(svg)


def _restore_classes(svg: str) -> str:
    """Graphviz writes ``<g id="e3__back&#45;edge" class="edge">``: turn the id's suffix into the class."""

    def fix(m: re.Match) -> str:
        ident, cls = m.group(1), m.group(2).replace("&#45;", "-").replace("_", " ")
        return f'<g id="{ident}" class="{cls}"'

    svg = re.sub(r'<g id="((?:n|e)\d+)__((?:\w|-|&#45;)+)" class="(?:node|edge)"', fix, svg)
    # tooltips become <a xlink:title=…> wrappers; keep the text, drop the link element
    svg = re.sub(r"<g id=\"a_[^\"]*\"><a xlink:title=\"([^\"]*)\">", r"<g><title>\1</title>", svg)
    svg = svg.replace("</a>\n</g>", "</g>")
    return svg


def _text(s: str) -> str:
    """``s`` as literal text in a DOT string (graphviz's own escaping; a line break is DOT's ``\\n``)."""
    return graphviz.escape(s).replace("\n", "\\n")


def _left_lines(lines) -> str:
    """Lines of a label, each left-aligned (ended by DOT's ``\\l``), their text taken literally."""
    return "".join(_text(s) + "\\l" for s in lines)
