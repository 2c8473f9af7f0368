"""Failure automata: graphs whose runs cover the CFA's runs, each node labelled (λ, κ).

λ is a state predicate and κ the failure accumulated so far (an expression over the state,
usually over the inputs and loop counters only). An edge carries the basic statement of the
CFA edge it follows (with the chosen axiom for a sampling), or a *split* guard: a case
split on a predicate that does not move in the CFA (both children follow the same CFA node).

For loop-free programs the automaton is the CFA unfolded into a tree (all traces, merged on
their common prefixes). MERGE is implicit: branches of the tree keep their own κ, and the
proof needs every exit's κ <= β — the maximum over the branches, never their sum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import graphviz

from axioms.base import AxiomInstance
from lang import ast as A
from tamp.prover.base.exprs import ZERO, and_all
from tamp.show import show_expr, show_stmt


@dataclass
class ANode:
    id: int
    cfa_node: int
    line: Optional[int] = None
    label: List[A.Expr] = field(default_factory=list)  # λ as conjuncts
    kappa: A.Expr = ZERO  # κ

    @property
    def lam(self) -> A.Expr:
        return and_all(self.label)


@dataclass
class AEdge:
    src: int
    dst: int
    stmt: A.Stmt  # A.Assign / A.Sample / A.Assume
    kind: str = "cfa"  # "cfa" | "split"
    cfa_edge: Optional[Tuple[int, int, int]] = None
    axiom: Optional[AxiomInstance] = None  # for samplings
    line: Optional[int] = None
    back: bool = False


@dataclass
class FailureAutomaton:
    name: str
    nodes: Dict[int, ANode] = field(default_factory=dict)
    edges: List[AEdge] = field(default_factory=list)
    root: int = 0
    exits: List[int] = field(default_factory=list)

    # ------------------------------------------------------------------ structure
    def add_node(self, cfa_node: int, line=None) -> ANode:
        n = ANode(len(self.nodes), cfa_node, line)
        self.nodes[n.id] = n
        return n

    def out(self, nid: int) -> List[AEdge]:
        return [e for e in self.edges if e.src == nid]

    def parent_edge(self, nid: int) -> Optional[AEdge]:
        for e in self.edges:
            if e.dst == nid and not e.back:
                return e
        return None

    def topological(self) -> List[int]:
        """Nodes parents-first (ignoring back edges)."""
        order, seen, stack = [], set(), [self.root]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            order.append(n)
            for e in reversed(self.out(n)):
                if not e.back:
                    stack.append(e.dst)
        return order

    def path_to(self, nid: int) -> List[AEdge]:
        path = []
        e = self.parent_edge(nid)
        while e is not None:
            path.append(e)
            e = self.parent_edge(e.src)
        return list(reversed(path))

    # ------------------------------------------------------------------ output
    def place(self, nid: int) -> str:
        """Node ``nid`` in the user's terms (as :func:`tamp.cfa.places.node_place` names CFA
        nodes): the start or the end of the program, a loop head, a branch, or the line and the
        statement that follows — what drawings and messages show instead of the node id."""
        if nid == self.root:
            return "the start of the program"
        if nid in self.exits:
            return "the end of the program"
        n = self.nodes[nid]
        outs = self.out(nid)
        line = (outs[0].line if outs else None) or n.line
        at = f" (line {line})" if line else ""
        if any(e.back and e.dst == nid for e in self.edges):
            return f"the head of the loop{at}"
        first = outs[0].stmt if outs else None
        if len(outs) >= 2 and isinstance(first, A.Assume) and all(isinstance(e.stmt, A.Assume) for e in outs):
            return f"the branch on `{show_expr(first.cond)}`{at}"
        if outs:
            return f"before `{show_stmt(outs[0].stmt)}`{at}"
        return f"line {line}" if line else "a place the compiler added"

    def to_text(self) -> str:
        lines = [f"automaton {self.name}: {len(self.nodes)} nodes, {len(self.edges)} edges, {len(self.exits)} exit(s)"]
        for nid in self.topological():
            n = self.nodes[nid]
            tag = " [exit]" if nid in self.exits else ""
            lines.append(f"  q{nid} — {self.place(nid)}{tag}: λ = {show_expr(n.lam)};  κ = {show_expr(n.kappa)}")
            for e in self.out(nid):
                ax = (
                    f"   [axiom {e.axiom.family}: Pr[{show_expr(e.axiom.bad)}] <= {show_expr(e.axiom.cost)}]"
                    if e.axiom is not None
                    else ""
                )
                split = "split " if e.kind == "split" else ""
                back = " (back edge)" if e.back else ""
                lines.append(f"      -> q{e.dst}  {split}{show_stmt(e.stmt)}{ax}{back}")
        return "\n".join(lines)

    def to_dot(self) -> str:
        """Graphviz text: nodes with λ and κ, edges with statements and axioms (split edges
        dashed, back edges blue)."""
        dot = graphviz.Digraph(self.name, node_attr={"shape": "box", "fontsize": "9"})
        for nid, n in self.nodes.items():
            label = "\\n".join(
                [
                    graphviz.escape(self.place(nid)),
                    "λ: " + graphviz.escape(show_expr(n.lam)),
                    "κ: " + graphviz.escape(show_expr(n.kappa)),
                ]
            )
            dot.node(f"q{nid}", label, **({"peripheries": "2"} if nid in self.exits else {}))
        for e in self.edges:
            lines = [graphviz.escape(show_stmt(e.stmt))]
            if e.axiom is not None:
                lines.append(graphviz.escape(f"{e.axiom.family}: cost {show_expr(e.axiom.cost)}"))
            style = {"style": "dashed"} if e.kind == "split" else {"color": "blue"} if e.back else {}
            dot.edge(f"q{e.src}", f"q{e.dst}", "\\n".join(lines), **style)
        return dot.source

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "root": self.root,
            "exits": list(self.exits),
            "nodes": [
                {
                    "id": n.id,
                    "cfa_node": n.cfa_node,
                    "line": n.line,
                    "lambda": show_expr(n.lam),
                    "kappa": show_expr(n.kappa),
                }
                for n in self.nodes.values()
            ],
            "edges": [
                {
                    "src": e.src,
                    "dst": e.dst,
                    "stmt": show_stmt(e.stmt),
                    "kind": e.kind,
                    "cfa_edge": list(e.cfa_edge) if e.cfa_edge else None,
                    "back": e.back,
                    "axiom": axiom_json(e.axiom) if e.axiom is not None else None,
                }
                for e in self.edges
            ],
        }


def axiom_json(ax) -> dict:
    param = ax.param
    if isinstance(param, A.Expr):
        param = show_expr(param)
    elif isinstance(param, tuple):
        param = [show_expr(p) if isinstance(p, A.Expr) else p for p in param]
    elif isinstance(param, (frozenset, set)):
        param = sorted(map(str, param))
    return {
        "family": ax.family,
        "param": param if isinstance(param, (str, int, float, list, type(None))) else str(param),
        "bad": show_expr(ax.bad),
        "cost": show_expr(ax.cost),
        "side": [show_expr(s) for s in ax.side],
    }


def unfold_tree(cfa, splits: Sequence[A.Expr] = (), max_nodes: int = 20000) -> FailureAutomaton:
    """The acyclic CFA unfolded into a tree (one automaton node per path prefix), below an
    optional case split on each predicate of ``splits`` (over the inputs)."""
    aut = FailureAutomaton(cfa.name)
    root = aut.add_node(cfa.entry, cfa.graph.nodes[cfa.entry].get("line"))
    aut.root = root.id
    frontier = [root.id]
    for pred in splits:
        nxt = []
        for nid in frontier:
            for g in (pred, A.Unary("!", pred)):
                c = aut.add_node(cfa.entry, aut.nodes[nid].line)
                aut.edges.append(AEdge(nid, c.id, A.Assume(g), "split", None, None, None))
                nxt.append(c.id)
        frontier = nxt
    stack = list(frontier)
    while stack:
        nid = stack.pop()
        cn = aut.nodes[nid].cfa_node
        if cn == cfa.exit:
            aut.exits.append(nid)
            continue
        for u, v, k, d in cfa.out_edges(cn):
            if len(aut.nodes) >= max_nodes:
                raise TooLarge(f"the unfolding has more than {max_nodes} nodes")
            c = aut.add_node(v, cfa.graph.nodes[v].get("line"))
            aut.edges.append(AEdge(nid, c.id, d["stmt"], "cfa", (u, v, k), None, d.get("line")))
            stack.append(c.id)
    return aut


class TooLarge(Exception):
    """The unfolding exceeds its size limit."""
