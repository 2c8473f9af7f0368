"""A layered drawing of a :class:`~tamp.report.graph.Graph` as SVG, in pure Python.

Used when graphviz's ``dot`` binary is not installed, so a report always shows its automata.
The layout is the classic layered one, kept small:

1. back edges (marked by the prover, or closing a cycle in a depth-first search) are set
   aside, so the rest is acyclic;
2. each node's layer is its longest distance from a root;
3. nodes are ordered within their layer by the mean position of their parents (a few
   barycentre sweeps), and placed left to right under them without overlapping;
4. forward edges between neighbouring layers are straight arrows, longer ones curve around
   the left side; back edges are dashed red curves around the right side.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from html import escape
from typing import Dict, List, Set, Tuple

from .graph import GEdge, Graph

FONT = 11  # px, monospace
CHAR_W = 6.7  # px per character (DejaVu Sans Mono at 11 px is 6.6)
LINE_H = 14
PAD = 7
H_GAP = 28  # between nodes of one layer
MARGIN = 16
EDGE_FONT = 10
BACK_COLOUR = "#c0392b"
SPLIT_COLOUR = "#7f8c8d"


@dataclass
class Box:
    x: float = 0.0  # centre
    y: float = 0.0  # top
    w: float = 0.0
    h: float = 0.0
    layer: int = 0
    order: float = 0.0
    row_h: float = 0.0  # height of the tallest box of its layer (edge labels go below that)

    @property
    def right(self) -> float:
        return self.x + self.w / 2


def split_back_edges(g: Graph) -> Tuple[List[GEdge], List[GEdge]]:
    """(forward, back): the prover's back edges plus any edge closing a depth-first cycle."""
    ids = [n.id for n in g.nodes]
    succ: Dict[str, List[GEdge]] = {i: [] for i in ids}
    for e in g.edges:
        if not e.back and e.src in succ and e.dst in succ:
            succ[e.src].append(e)
    state: Dict[str, int] = {}
    cycles: Set[int] = set()
    starts = ([g.root] if g.root in succ else []) + ids
    for s in starts:
        if s in state:
            continue
        stack = [(s, iter(succ[s]))]
        state[s] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt.dst) == 1:
                cycles.add(id(nxt))
            elif nxt.dst not in state:
                state[nxt.dst] = 1
                stack.append((nxt.dst, iter(succ[nxt.dst])))
    fwd = [e for e in g.edges if not e.back and id(e) not in cycles and e.src in succ and e.dst in succ]
    back = [e for e in g.edges if e.back or id(e) in cycles]
    return fwd, back


def assign_layers(g: Graph, fwd: List[GEdge]) -> Dict[str, int]:
    """Longest-path layering over the forward edges."""
    preds: Dict[str, List[str]] = {n.id: [] for n in g.nodes}
    for e in fwd:
        preds[e.dst].append(e.src)
    layer: Dict[str, int] = {}

    def depth(n: str) -> int:
        stack = [n]
        while stack:
            cur = stack[-1]
            todo = [p for p in preds[cur] if p not in layer]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            layer[cur] = 1 + max((layer[p] for p in preds[cur]), default=-1)
        return layer[n]

    for n in g.nodes:
        depth(n.id)
    return layer


def measure(g: Graph) -> Dict[str, Box]:
    """The size of each node's box from its text."""
    return {
        n.id: Box(w=max(len(s) for s in n.lines) * CHAR_W + 2 * PAD, h=len(n.lines) * LINE_H + 2 * PAD - 2)
        for n in g.nodes
    }


def place(g: Graph, fwd: List[GEdge], boxes: Dict[str, Box], layer: Dict[str, int]) -> None:
    """Order the nodes inside their layers and give each box its coordinates."""
    parents: Dict[str, List[str]] = {n.id: [] for n in g.nodes}
    for e in fwd:
        parents[e.dst].append(e.src)
    layers: Dict[int, List[str]] = {}
    for i, n in enumerate(g.nodes):
        boxes[n.id].layer = layer[n.id]
        boxes[n.id].order = i
        layers.setdefault(layer[n.id], []).append(n.id)
    for _sweep in range(3):
        for k in sorted(layers):
            for nid in layers[k]:
                ps = parents[nid]
                if ps:
                    boxes[nid].order = sum(boxes[p].order for p in ps) / len(ps) + boxes[nid].order * 1e-6
            layers[k].sort(key=lambda n: boxes[n].order)
            for i, nid in enumerate(layers[k]):
                boxes[nid].order = i
    label_room = _label_room(g, fwd, layer)
    y: float = MARGIN
    for k in sorted(layers):
        row = layers[k]
        row_h = max(boxes[n].h for n in row)
        for nid in row:
            boxes[nid].y = y
            boxes[nid].row_h = row_h
        _place_row(row, boxes, parents)
        y += max(boxes[n].h for n in row) + label_room.get(k, 1) * (EDGE_FONT + 3) + 30
    left = min(b.x - b.w / 2 for b in boxes.values())
    for b in boxes.values():
        b.x += MARGIN - left


def _label_room(g: Graph, fwd: List[GEdge], layer: Dict[str, int]) -> Dict[int, int]:
    room: Dict[int, int] = {}
    for e in fwd:
        k = layer[e.src]
        room[k] = max(room.get(k, 1), len(e.label.splitlines()))
    return room


def _place_row(row: List[str], boxes: Dict[str, Box], parents: Dict[str, List[str]]) -> None:
    """Put each box under the mean of its parents, then push apart left to right, then shift
    the row back by the mean displacement (so it stays centred under its parents)."""
    want = []
    for nid in row:
        ps = [p for p in parents[nid] if boxes[p].y < boxes[nid].y]
        want.append(sum(boxes[p].x for p in ps) / len(ps) if ps else 0.0)
    xs: List[float] = []
    for i, nid in enumerate(row):
        x = want[i]
        if i:
            prev = boxes[row[i - 1]]
            x = max(x, xs[-1] + prev.w / 2 + H_GAP + boxes[nid].w / 2)
        xs.append(x)
    shift = sum(w - x for w, x in zip(want, xs)) / len(row)
    for nid, x in zip(row, xs):
        boxes[nid].x = x + shift


def svg_of(g: Graph) -> str:
    """The whole drawing: an ``<svg>`` element with classes ``node``/``exit``/``root`` on node
    groups and ``edge``/``back-edge``/``split-edge`` on edge groups, tooltips in ``<title>``."""
    if not g.nodes:
        return ""
    fwd, back = split_back_edges(g)
    layer = assign_layers(g, fwd)
    boxes = measure(g)
    place(g, fwd, boxes, layer)
    uid = "a" + hashlib.sha1((g.name + str(len(g.nodes)) + str(len(g.edges))).encode()).hexdigest()[:8]
    short = [e for e in fwd if boxes[e.dst].layer - boxes[e.src].layer <= 1]
    long_ = [e for e in fwd if boxes[e.dst].layer - boxes[e.src].layer > 1]
    lanes = [_long_lane(e, boxes, i) for i, e in enumerate(long_)]
    need = min([MARGIN] + [apex - 6 - _text_w(e.label) for e, apex in zip(long_, lanes)])
    if need < MARGIN:
        for b in boxes.values():
            b.x += MARGIN - need
        lanes = [apex + MARGIN - need for apex in lanes]
    parts: List[str] = []
    right = max(b.right for b in boxes.values())
    for e in short:
        parts.append(_forward_edge(e, boxes, uid))
        right = max(right, _label_right(e, boxes))
    for e, apex in zip(long_, lanes):
        parts.append(_long_edge(e, boxes, apex, uid))
    for i, e in enumerate(back):
        parts.append(_back_edge(e, boxes, right, i, uid))
    right = max([right] + [_back_extent(e, boxes, right, i) for i, e in enumerate(back)])
    for n in g.nodes:
        parts.append(_node(n, boxes[n.id]))
    width = int(right + MARGIN + 8)
    height = int(max(b.y + b.h for b in boxes.values()) + MARGIN)
    defs = (
        # arrow heads in drawing units: a highlighted (thicker) edge keeps the same head
        f'<defs><marker id="{uid}-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" '
        f'markerWidth="8.4" markerHeight="8.4" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        f'fill="#333"/></marker><marker id="{uid}-back" viewBox="0 0 10 10" refX="10" refY="5" '
        f'markerUnits="userSpaceOnUse" markerWidth="8.4" markerHeight="8.4" orient="auto-start-reverse">'
        f'<path d="M0,0 L10,5 L0,10 z" fill="{BACK_COLOUR}"/></marker></defs>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="automaton" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        f'role="img" aria-label="{escape(g.name)}">'
        f"<title>{escape(g.name)}</title>{defs}" + "".join(parts) + "</svg>"
    )


def _long_lane(e: GEdge, boxes: Dict[str, Box], i: int) -> float:
    """The leftmost x of a forward edge that skips layers: left of every box it passes by."""
    lo, hi = boxes[e.src].layer, boxes[e.dst].layer
    lefts = [b.x - b.w / 2 for b in boxes.values() if lo <= b.layer <= hi]
    return min(lefts) - 24 - 22 * i


def _long_edge(e: GEdge, boxes: Dict[str, Box], apex: float, uid: str) -> str:
    """A forward edge that skips layers, drawn as a curve around the left of the boxes between."""
    s, d = boxes[e.src], boxes[e.dst]
    x1, y1 = s.x - s.w / 2, s.y + s.h / 2
    x2, y2 = d.x - d.w / 2, d.y + d.h / 2
    xo = (apex - 0.125 * (x1 + x2)) / 0.75
    split = "split" in e.cls
    dash = f' stroke-dasharray="4 3" stroke="{SPLIT_COLOUR}"' if split else ' stroke="#333"'
    path = f"M{x1:.1f},{y1:.1f} C{xo:.1f},{y1:.1f} {xo:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
    return (
        f'<g class="{escape(e.cls)}"><title>{escape(e.full)}</title>'
        f'<path d="{path}" fill="none" stroke-width="1.2"{dash} marker-end="url(#{uid}-arrow)"/>'
        + _label(e.label, apex - 6, (y1 + y2) / 2, anchor="end")
        + "</g>"
    )


def _node(n, b: Box) -> str:
    exit_ = "exit" in n.cls.split()
    failed = "failed" in n.cls.split()
    fill = "#fdedec" if failed else "#eef6ee" if exit_ else "#f7f9fc"
    stroke = BACK_COLOUR if failed else "#34495e"
    rect = (
        f'<rect x="{b.x - b.w / 2:.1f}" y="{b.y:.1f}" width="{b.w:.1f}" height="{b.h:.1f}" rx="4" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="{2 if exit_ or failed else 1}"/>'
    )
    if exit_:
        rect += (
            f'<rect x="{b.x - b.w / 2 + 3:.1f}" y="{b.y + 3:.1f}" width="{b.w - 6:.1f}" '
            f'height="{b.h - 6:.1f}" rx="3" fill="none" stroke="#34495e" stroke-width="0.8"/>'
        )
    x0 = b.x - b.w / 2 + PAD
    lines = []
    for i, s in enumerate(n.lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        lines.append(
            f'<text x="{x0:.1f}" y="{b.y + PAD + (i + 1) * LINE_H - 4:.1f}" font-size="{FONT}"'
            f'{weight} xml:space="preserve">{escape(s)}</text>'
        )
    return (
        f'<g class="{escape(n.cls)}" id="{escape(n.id)}"><title>{escape(n.full)}</title>{rect}'
        + "".join(lines)
        + "</g>"
    )


def _forward_edge(e: GEdge, boxes: Dict[str, Box], uid: str) -> str:
    s, d = boxes[e.src], boxes[e.dst]
    x1, y1 = s.x, s.y + s.h
    x2, y2 = d.x, d.y
    split = "split" in e.cls
    dash = f' stroke-dasharray="4 3" stroke="{SPLIT_COLOUR}"' if split else ' stroke="#333"'
    lx, ly, anchor = _label_anchor(e, boxes)
    return (
        f'<g class="{escape(e.cls)}"><title>{escape(e.full)}</title>'
        f'<path d="M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}" fill="none" stroke-width="1.2"{dash} '
        f'marker-end="url(#{uid}-arrow)"/>' + _label(e.label, lx, ly, anchor=anchor) + "</g>"
    )


def _label_anchor(e: GEdge, boxes: Dict[str, Box]) -> Tuple[float, float, str]:
    """Where an edge's label starts: beside the line, a little below the source box; to the
    left of edges that go left (anchored at its end), to the right otherwise."""
    s, d = boxes[e.src], boxes[e.dst]
    x1, y1, x2, y2 = s.x, s.y + s.h, d.x, d.y
    y = s.y + s.row_h + 14
    t = min(max((y - y1) / (y2 - y1), 0.0), 1.0) if y2 > y1 else 0.0
    x = x1 + t * (x2 - x1)
    if x2 < x1 - 1:
        return x - 8, y, "end"
    return x + 6, y, "start"


def _label_right(e: GEdge, boxes: Dict[str, Box]) -> float:
    lx, _, anchor = _label_anchor(e, boxes)
    return lx + (_text_w(e.label) if anchor == "start" else 0)


def _text_w(label: str) -> float:
    return max(len(s) for s in label.splitlines() or [""]) * EDGE_FONT * 0.61


def _label(text: str, x: float, y: float, colour: str = "#1a5276", anchor: str = "start") -> str:
    out = []
    for i, s in enumerate(text.splitlines()):
        out.append(
            f'<text x="{x:.1f}" y="{y + i * (EDGE_FONT + 3):.1f}" font-size="{EDGE_FONT}" fill="{colour}" '
            f'text-anchor="{anchor}" '
            f'stroke="#ffffff" stroke-width="3" paint-order="stroke" xml:space="preserve">'
            f"{escape(s)}</text>"
        )
    return "".join(out)


def _back_x(e: GEdge, boxes: Dict[str, Box], right: float, i: int) -> float:
    """The control points' x of back edge number ``i``: the curve's rightmost point (at 3/4 of
    the way to the control points) clears every node and label by 24 px plus 22 px per edge."""
    s, d = boxes[e.src], boxes[e.dst]
    target = right + 24 + 22 * i
    return (target - 0.125 * (s.right + d.right)) / 0.75


def _back_apex(e: GEdge, boxes: Dict[str, Box], right: float, i: int) -> float:
    s, d = boxes[e.src], boxes[e.dst]
    return 0.75 * _back_x(e, boxes, right, i) + 0.125 * (s.right + d.right)


def _back_extent(e: GEdge, boxes: Dict[str, Box], right: float, i: int) -> float:
    return _back_apex(e, boxes, right, i) + 6 + _text_w(e.label)


def _back_edge(e: GEdge, boxes: Dict[str, Box], right: float, i: int, uid: str) -> str:
    s, d = boxes[e.src], boxes[e.dst]
    x1, y1 = s.right, s.y + s.h / 2
    x2, y2 = d.right, d.y + d.h / 2
    xo = _back_x(e, boxes, right, i)
    path = f"M{x1:.1f},{y1:.1f} C{xo:.1f},{y1:.1f} {xo:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
    ly = (y1 + y2) / 2
    label = _label(e.label, _back_apex(e, boxes, right, i) + 6, ly, BACK_COLOUR)
    return (
        f'<g class="{escape(e.cls)}"><title>{escape(e.full)}</title>'
        f'<path d="{path}" fill="none" stroke="{BACK_COLOUR}" stroke-width="1.5" stroke-dasharray="6 3" '
        f'marker-end="url(#{uid}-back)"/>' + label + "</g>"
    )
