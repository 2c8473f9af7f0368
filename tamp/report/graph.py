"""A drawing-neutral graph: what the report draws, built from a failure automaton or a CFA.

Both renderers (:mod:`tamp.report.dot` with graphviz, :mod:`tamp.report.layout` in pure
Python) draw a :class:`Graph`, so the automaton's content (λ/κ labels, back edges, exits)
is decided once, here.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from tamp.cfa.places import node_place
from tamp.show import show_expr, show_stmt

#: Longest text line inside a node box, and most lines per λ/κ label, before eliding.
WRAP = 56
MAX_LINES = 6
#: Larger automata are not drawn (a drawing of thousands of boxes helps nobody); their labels
#: are still listed, up to MAX_LISTED nodes.
MAX_DRAWN = 300
MAX_LISTED = 2000


@dataclass
class GNode:
    """A node: an id (``q3``), its text lines (first line is the heading), and a CSS class."""

    id: str
    lines: List[str]
    full: str  # the unabridged text, shown as a tooltip
    cls: str = "node"  # "node", plus " root" / " exit"


@dataclass
class GEdge:
    """An edge with its (short) label; ``cls`` is ``edge``, ``back-edge`` or ``split-edge``."""

    src: str
    dst: str
    label: str
    full: str
    cls: str = "edge"

    @property
    def back(self) -> bool:
        return "back-edge" in self.cls


@dataclass
class Graph:
    name: str
    nodes: List[GNode] = field(default_factory=list)
    edges: List[GEdge] = field(default_factory=list)
    root: Optional[str] = None


def wrap(prefix: str, text: str, width: int = WRAP, max_lines: int = MAX_LINES) -> List[str]:
    """``prefix + text`` wrapped to ``width`` columns, at most ``max_lines`` lines (the last
    one ends in … when text was dropped)."""
    lines = textwrap.wrap(
        prefix + text, width, subsequent_indent="   ", break_long_words=True, break_on_hyphens=False
    ) or [prefix]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1] + "…"
    return lines


def shorten(text: str, width: int = 48) -> str:
    """One line of at most ``width`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def automaton_graph(aut) -> Graph:
    """The failure automaton ``aut`` (:class:`tamp.prover.trace.automaton.FailureAutomaton`) as a
    graph: nodes show ``λ`` and ``κ``; sampling edges show their axiom family and cost."""
    g = Graph(aut.name, root=f"q{aut.root}")
    for nid in node_order(aut):
        n = aut.nodes[nid]
        head = aut.place(nid)  # the place in the program, never the node id (that names the node)
        lam, kap = show_expr(n.lam), show_expr(n.kappa)
        cls = "node" + (" root" if nid == aut.root else "") + (" exit" if nid in aut.exits else "")
        g.nodes.append(
            GNode(f"q{nid}", [head] + wrap("λ: ", lam) + wrap("κ: ", kap), f"{head}\nλ: {lam}\nκ: {kap}", cls)
        )
    for e in aut.edges:
        stmt = show_stmt(e.stmt)
        full = stmt
        label = shorten(stmt)
        if e.axiom is not None:
            ax = f"{e.axiom.family}: Pr[{show_expr(e.axiom.bad)}] <= {show_expr(e.axiom.cost)}"
            full += "\naxiom " + ax
            label += "\n" + shorten(f"{e.axiom.family}, cost {show_expr(e.axiom.cost)}")
        cls = "back-edge" if e.back else "split-edge" if e.kind == "split" else "edge"
        if e.back:
            full += "\n(back edge)"
        g.edges.append(GEdge(f"q{e.src}", f"q{e.dst}", label, full, cls))
    return g


def cfa_graph(cfa, failed_nodes=(), trace=()) -> Graph:
    """The control-flow automaton (drawn for a failed proof, which has no failure automaton);
    ``failed_nodes`` (CFA node numbers) get the class ``failed``, and the edges of ``trace`` (the
    failed trace's ``(line, statement)`` steps) and their nodes the class ``trace``."""
    on_trace = trace_edges(cfa, trace)
    ends = {n for u, v, _k in on_trace for n in (u, v)}
    g = Graph(cfa.name, root=f"n{cfa.entry}")
    for n in cfa.graph.nodes:
        lines = [node_place(cfa, n)]  # the place in the program; the node number only names it
        cls = (
            "node"
            + (" root" if n == cfa.entry else "")
            + (" exit" if n == cfa.exit else "")
            + (" failed" if n in failed_nodes else "")
            + (" trace" if n in ends else "")
        )
        g.nodes.append(GNode(f"n{n}", lines, "\n".join(lines), cls))
    for u, v, k, d in cfa.edges():
        stmt = show_stmt(d["stmt"])
        cls = ("back-edge" if d.get("back") else "edge") + (" trace" if (u, v, k) in on_trace else "")
        g.edges.append(GEdge(f"n{u}", f"n{v}", shorten(stmt), stmt + ("\n(back edge)" if d.get("back") else ""), cls))
    return g


def trace_edges(cfa, trace) -> set:
    """The CFA edges ``(u, v, key)`` a failed trace's steps name: the edge at the step's line with
    the step's statement, else (a statement shown differently) every edge at that line."""
    steps = [(ln, s[len("split ") :] if s.startswith("split ") else s) for ln, s in trace]
    out = set()
    for ln, stmt in steps:
        at_line = [(u, v, k) for u, v, k, d in cfa.edges() if d.get("line") == ln]
        same = [(u, v, k) for u, v, k, d in cfa.edges() if d.get("line") == ln and show_stmt(d["stmt"]) == stmt]
        out.update(same or at_line)
    return out


def node_order(aut) -> List[int]:
    """Nodes parents first (depth-first from the root over forward edges, children in edge
    order), then any node not reached; linear in the automaton's size."""
    children: Dict[int, List[int]] = {}
    for e in aut.edges:
        if not e.back:
            children.setdefault(e.src, []).append(e.dst)
    order, seen, stack = [], set(), [aut.root]
    while stack:
        n = stack.pop()
        if n in seen or n not in aut.nodes:
            continue
        seen.add(n)
        order.append(n)
        stack.extend(reversed(children.get(n, [])))
    return order + [n for n in aut.nodes if n not in seen]
