"""Places of a control-flow automaton in the user's terms: what a person reads instead of node
numbers (the proof checker's rejections, the automaton drawings).

A node is "the start of the program", "the end of the program", "the head of the loop (line
L)", "the branch on `c` (line L)" or "before `stmt` (line L)"; an edge is its statement with
its line. Node numbers stay where they are identifiers (graphviz node names, JSON), never in a
sentence.

>>> from lang.parser import parse
>>> from tamp.cfa import build_cfa
>>> cfa = build_cfa(parse('''program p(n: int) requires n >= 0 ensures true
...   { i := 0;
...     while (i < n) { i := i + 1; } }''').programs[0])
>>> node_place(cfa, cfa.entry), node_place(cfa, cfa.exit)
('the start of the program', 'the end of the program')
>>> node_place(cfa, next(iter(cfa.loop_heads)))
'the head of the loop (line 3)'
"""

from __future__ import annotations

from typing import Optional

from lang import ast as A

from ..show import show_expr, show_stmt


def node_line(cfa, node: int) -> Optional[int]:
    """The source line of CFA node ``node`` (None for a node the rebuilt CFA does not have)."""
    if node not in cfa.graph.nodes:
        return None
    return cfa.graph.nodes[node].get("line")


def node_place(cfa, node: int) -> str:
    """CFA node ``node`` in words (see the module docstring)."""
    if node == cfa.exit:
        return "the end of the program"
    if node == cfa.entry:
        return "the start of the program"
    if node not in cfa.graph.nodes:
        return "a place the program does not have"
    outs = [(d["stmt"], d.get("line")) for _u, _v, _k, d in cfa.out_edges(node) if not d.get("back")]
    line = (outs[0][1] if outs else None) or node_line(cfa, node)
    at = f" (line {line})" if line else ""
    if node in cfa.loop_heads:
        return f"the head of the loop{at}"
    if len(outs) >= 2 and all(isinstance(s, A.Assume) for s, _ln in outs):
        return f"the branch on `{show_expr(outs[0][0].cond)}`{at}"
    if outs:
        return f"before `{show_stmt(outs[0][0])}`{at}"
    return f"line {line}" if line else "a place the compiler added"


def edge_place(stmt: A.Stmt, line: Optional[int]) -> str:
    """An edge in words: its statement and, when known, its line."""
    return f"`{show_stmt(stmt)}`" + (f" (line {line})" if line else "")
