"""Control-flow automata: a program compiled to a graph over basic statements.

Every edge carries exactly one basic statement (``edge["stmt"]``):

* ``Assign`` with ONE target (a ``Var`` or an ``Index``),
* ``Sample`` (one target, or two for tuple sampling ``(x, y) ~ unif(S1 * S2)``),
* ``Assume(c)`` — branch conditions of ``if`` / ``while`` and user ``assume`` statements; the
  edge of a user ``assume`` carries ``user_assume=True`` (guards do not): the two mean different
  things (a guard only routes runs; a user ``assume`` is a precondition or conditioning).

There is one entry and one exit node; ``while`` loops are cycles whose head is in
``CFA.loop_heads``. Desugarings (documented here, mirrored by the prover):

* ``for i in lo..hi { B }``  →  ``i := lo; while (i < hi) { B; i := i + 1 }`` (``<=`` for ``..=``);
* a loop's ``invariant`` clauses produce no edge: they are kept in ``CFA.invariants`` by loop
  head (after ``i := lo`` for a ``for`` loop), as candidates the prover checks, never trusts;
* ``(x, y) := (e1, e2)``     →  ``$t1 := e1; $t2 := e2; x := $t1; y := $t2`` (simultaneous);
* an unreliable operator ``e1 +. e2`` (also ``-.``, ``*.``) inside a statement → before the
  statement ``$fK ~ bern(r); failed := failed || $fK`` and the reliable ``+`` in the statement
  (``r`` is the ``rate`` clause); ``failed := false`` is the first edge of such a program;
* ``reliability E``  →  ``ensures !failed`` and ``fails 1 - E``;
* ``skip`` and ``var x: T`` produce no edge.

A user ``assume(c)`` whose condition depends only on inputs is a precondition; one that depends
on a sample is conditioning (docs/language.md, "assume"). :mod:`tamp.cfa.dependence` tells them
apart; the failure-bound prover reads a blocked run as "not counted", which is the precondition
meaning, so it refuses programs with a conditioning ``assume`` (see :mod:`tamp.prover`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import graphviz
import networkx as nx

from lang import ast as A
from lang.errors import TypeCheckError, UnsupportedError, error_at
from lang.typecheck import ProgramTypes, check_program
from lang.walk import DESCEND, Transformer, rebuild
from tamp.show import show_expr, show_stmt

from .bound_names import rename_apart

UNRELIABLE = {"+.": "+", "-.": "-", "*.": "*"}
FAILED = "failed"


@dataclass
class CFA:
    """A program as a control-flow automaton plus its (desugared) specification."""

    name: str
    graph: nx.MultiDiGraph
    entry: int
    exit: int
    loop_heads: List[int]
    params: Tuple[A.Param, ...]
    requires: Tuple[A.Expr, ...]
    ensures: Tuple[A.Expr, ...]
    bound: A.Expr
    types: Dict[str, A.Type] = field(default_factory=dict)
    program: Optional[A.Program] = None
    # the user's `invariant` clauses, by loop head (candidates for the prover, never trusted)
    invariants: Dict[int, Tuple[A.Expr, ...]] = field(default_factory=dict)
    path: str = "<string>"

    # ------------------------------------------------------------------ queries
    def edges(self):
        """Every edge as (src, dst, key, data), in insertion order (a new list each call; the
        tuple behind it is built once per shape of the graph, see :meth:`memo`)."""
        return list(self.memo("edges", lambda: tuple(self.graph.edges(keys=True, data=True))))

    def memo(self, key, compute):
        """``compute()``, remembered on this CFA under ``key``: the analyses that walk the graph
        (loop bodies, edge lists, body paths) ask the same questions many times in one proof.
        :func:`build_cfa` freezes the graph (``nx.freeze``: adding or removing a node or an
        edge raises), so a remembered answer cannot go stale; a CFA over a graph that is not
        frozen remembers nothing. The value must not be mutated by callers (hand out copies)."""
        if not nx.is_frozen(self.graph):
            return compute()
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def out_edges(self, node):
        return list(self.graph.out_edges(node, keys=True, data=True))

    def is_acyclic(self) -> bool:
        return nx.is_directed_acyclic_graph(self.graph)

    def sample_edges(self):
        return [e for e in self.edges() if isinstance(e[3]["stmt"], A.Sample)]

    def input_names(self):
        return [p.name for p in self.params]

    # ------------------------------------------------------------------ output
    def to_text(self) -> str:
        """Nodes with their source line, then every edge with its statement."""
        g = self.graph
        lines = [
            f"CFA of {self.name}: {g.number_of_nodes()} nodes, {g.number_of_edges()} edges; "
            f"entry {self.entry}, exit {self.exit}"
            + (f", loop heads {', '.join(map(str, self.loop_heads))}" if self.loop_heads else "")
        ]
        lines.append("  requires " + (" && ".join(show_expr(e) for e in self.requires) or "true"))
        lines.append("  ensures  " + (" && ".join(show_expr(e) for e in self.ensures) or "true"))
        lines.append("  fails    " + show_expr(self.bound))
        for h, invs in sorted(self.invariants.items()):
            lines += [f"  invariant at node {h}: {show_expr(e)}" for e in invs]
        for n, d in g.nodes(data=True):
            tag = d.get("kind", "")
            line = d.get("line")
            lines.append(
                f"  node {n}" + (f" [{tag}]" if tag and tag != "plain" else "") + (f" line {line}" if line else "")
            )
        for u, v, _k, d in self.edges():
            ln = f"line {d['line']}" if d.get("line") else ""
            back = " (back edge)" if d.get("back") else ""
            back += " (user assume)" if d.get("user_assume") else ""
            lines.append(f"  {u} -> {v}  {show_stmt(d['stmt'])}  {ln}{back}".rstrip())
        return "\n".join(lines)

    def to_dot(self) -> str:
        """Graphviz text: nodes labelled with their number and source line, edges with statements."""
        dot = graphviz.Digraph(self.name, node_attr={"shape": "circle", "fontsize": "10"})
        for n, d in self.graph.nodes(data=True):
            dot.node(
                f"n{n}",
                f"{n}" + (f"\\nL{d['line']}" if d.get("line") else ""),
                shape="doublecircle" if n == self.exit else "circle",
                **({"style": "bold"} if n in self.loop_heads else {}),
            )
        dot.node("start", shape="point")
        dot.edge("start", f"n{self.entry}")
        for u, v, _k, d in self.edges():
            dot.edge(f"n{u}", f"n{v}", label=graphviz.escape(show_stmt(d["stmt"])))
        return dot.source

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "entry": self.entry,
            "exit": self.exit,
            "loop_heads": list(self.loop_heads),
            "requires": [show_expr(e) for e in self.requires],
            "ensures": [show_expr(e) for e in self.ensures],
            "fails": show_expr(self.bound),
            "nodes": [
                {"id": n, "line": d.get("line"), "kind": d.get("kind", "plain")} for n, d in self.graph.nodes(data=True)
            ],
            "edges": [
                {
                    "src": u,
                    "dst": v,
                    "stmt": show_stmt(d["stmt"]),
                    "line": d.get("line"),
                    "kind": type(d["stmt"]).__name__.lower(),
                    "back": bool(d.get("back")),
                    "user_assume": bool(d.get("user_assume")),
                }
                for u, v, _k, d in self.edges()
            ],
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2)


# ---------------------------------------------------------------------------- types


def infer_types(prog: A.Program) -> Dict[str, A.Type]:
    """The type of every parameter and local (the type checker's; raises its located
    :class:`lang.errors.TypeCheckError` for an ill-typed program)."""
    return dict(check_program(prog).vars)


# ---------------------------------------------------------------------------- building


class _Reliable(Transformer):
    """An expression with its unreliable operators replaced by the reliable ones; ``found``
    lists the replaced operators in source order (outermost first)."""

    def __init__(self) -> None:
        self.found: List[A.Binary] = []

    def enter(self, node):
        if isinstance(node, A.Binary) and node.op in UNRELIABLE:
            self.found.append(node)
        return DESCEND

    def Binary(self, node, kids):
        if node.op in UNRELIABLE:
            return A.Binary(UNRELIABLE[node.op], kids[0], kids[1], pos=node.pos)
        return rebuild(node, kids)


class _Builder:
    """Compiles one program's statements into a MultiDiGraph (one visitor over statements)."""

    def __init__(self, prog: A.Program, path: str, source: Optional[str]):
        self.prog = prog
        self.path = path
        self.source = source
        self.g = nx.MultiDiGraph()
        self.next_id = 0
        self.loop_heads: List[int] = []
        self.temps = 0
        self.flips = 0
        self.types: Dict[str, A.Type] = {}
        self.invariants: Dict[int, Tuple[A.Expr, ...]] = {}

    def node(self, line=None, kind="plain") -> int:
        n = self.next_id
        self.next_id += 1
        self.g.add_node(n, line=line, kind=kind)
        return n

    def edge(self, u, v, stmt, line=None, back=False, user_assume=False):
        if user_assume:
            self.g.add_edge(u, v, stmt=stmt, line=line, back=back, user_assume=True)
        else:
            self.g.add_edge(u, v, stmt=stmt, line=line, back=back)

    def line_of(self, node) -> Optional[int]:
        return node.pos.line if getattr(node, "pos", None) is not None else None

    # -------------------------------------------------------------- unreliable ops
    def reliable(self, e: A.Expr, at: int, line) -> Tuple[A.Expr, int]:
        """Replace unreliable operators in ``e`` by reliable ones, emitting the failure flips
        before them; returns the new expression and the node after the flips."""
        strip = _Reliable()
        new = strip.walk(e)
        found = strip.found
        for op in found:
            if self.prog.rate is None:
                raise error_at(
                    UnsupportedError,
                    f"unreliable operator '{op.op}' needs a `rate` clause in the program header",
                    op.pos,
                    self.path,
                    self.source,
                )
            self.flips += 1
            flip = A.Var(f"$f{self.flips}")
            self.types[flip.name] = A.BOOL
            mid = self.node(line)
            self.edge(at, mid, A.Sample((flip,), A.Call("bern", (self.prog.rate,), pos=op.pos), pos=op.pos), line)
            nxt = self.node(line)
            self.edge(mid, nxt, A.Assign((A.Var(FAILED),), A.Binary("||", A.Var(FAILED), flip), pos=op.pos), line)
            at = nxt
        return new, at

    # -------------------------------------------------------------- statements
    def stmt(self, s: A.Stmt, at: int) -> int:
        """Compile ``s`` starting at node ``at``; return the node where it ends."""
        line = self.line_of(s)
        if isinstance(s, A.Block):
            for x in s.stmts:
                at = self.stmt(x, at)
            return at
        if isinstance(s, (A.Skip, A.VarDecl)):
            return at
        if isinstance(s, A.Assign):
            return self.assign(s, at, line)
        if isinstance(s, A.Sample):
            args = []
            for a in s.dist.args:
                a2, at = self.reliable(a, at, line)
                args.append(a2)
            targets = []
            for t in s.targets:
                if isinstance(t, A.Index):
                    idx, at = self.reliable(t.index, at, line)
                    t = A.Index(t.base, idx, pos=t.pos)
                targets.append(t)
            nxt = self.node(line)
            self.edge(at, nxt, A.Sample(tuple(targets), dataclasses.replace(s.dist, args=tuple(args)), pos=s.pos), line)
            return nxt
        if isinstance(s, A.Assume):
            c, at = self.reliable(s.cond, at, line)
            nxt = self.node(line)
            self.edge(at, nxt, A.Assume(c, pos=s.pos), line, user_assume=True)
            return nxt
        if isinstance(s, A.If):
            c, at = self.reliable(s.cond, at, line)
            t0 = self.node(self.line_of(s.then.stmts[0]) if s.then.stmts else line)
            self.edge(at, t0, A.Assume(c, pos=s.cond.pos), line)
            t1 = self.stmt(s.then, t0)
            e0 = self.node(line)
            self.edge(at, e0, A.Assume(A.Unary("!", c, pos=s.cond.pos), pos=s.cond.pos), line)
            e1 = self.stmt(s.other, e0) if s.other is not None else e0
            join = self.node(line)
            self.edge(t1, join, A.Assume(A.BoolLit(True)), None)
            self.edge(e1, join, A.Assume(A.BoolLit(True)), None)
            return join
        if isinstance(s, A.While):
            return self.loop(s.cond, s.body, at, line, None, s.invariants)
        if isinstance(s, A.For):
            i = A.Var(s.var, pos=s.pos)
            lo, at = self.reliable(s.lo, at, line)
            nxt = self.node(line)
            self.edge(at, nxt, A.Assign((i,), lo, pos=s.pos), line)
            self.types.setdefault(s.var, A.INT)
            cond = A.Binary("<=" if s.inclusive else "<", i, s.hi, pos=s.pos)
            step = A.Assign((i,), A.Binary("+", i, A.num(1)), pos=s.pos)
            return self.loop(cond, s.body, nxt, line, step, s.invariants)
        raise error_at(
            UnsupportedError,
            f"statement {type(s).__name__} is not supported by the CFA",
            getattr(s, "pos", None),
            self.path,
            self.source,
        )

    def loop(self, cond, body, at, line, step, invariants=()) -> int:
        head = self.node(line, "loop_head")
        self.loop_heads.append(head)
        if invariants:
            self.invariants[head] = tuple(invariants)
        self.edge(at, head, A.Assume(A.BoolLit(True)), None)
        c, test = self.reliable(cond, head, line)
        b0 = self.node(self.line_of(body.stmts[0]) if body.stmts else line)
        self.edge(test, b0, A.Assume(c, pos=cond.pos), line)
        b1 = self.stmt(body, b0)
        if step is not None:
            b2 = self.node(line)
            self.edge(b1, b2, step, line)
            b1 = b2
        self.edge(b1, head, A.Assume(A.BoolLit(True)), None, back=True)
        out = self.node(line)
        self.edge(test, out, A.Assume(A.Unary("!", c, pos=cond.pos), pos=cond.pos), line)
        return out

    def assign(self, s: A.Assign, at: int, line) -> int:
        value, at = self.reliable(s.value, at, line)
        targets = []
        for t in s.targets:
            if isinstance(t, A.Index):
                idx, at = self.reliable(t.index, at, line)
                t = A.Index(t.base, idx, pos=t.pos)
            targets.append(t)
        if len(targets) == 1:
            nxt = self.node(line)
            self.edge(at, nxt, A.Assign((targets[0],), value, pos=s.pos), line)
            return nxt
        # simultaneous tuple assignment via temporaries
        if isinstance(value, A.TupleExpr) and len(value.items) == len(targets):
            parts = list(value.items)
        else:
            if len(targets) != 2:
                raise error_at(
                    UnsupportedError, "only pairs can be assigned from a tuple value", s.pos, self.path, self.source
                )
            parts = [A.Call("fst", (value,)), A.Call("snd", (value,))]
        temps = []
        for p in parts:
            self.temps += 1
            tv = A.Var(f"$t{self.temps}")
            temps.append(tv)
            nxt = self.node(line)
            self.edge(at, nxt, A.Assign((tv,), p, pos=s.pos), line)
            at = nxt
        for t, tv in zip(targets, temps):
            nxt = self.node(line)
            self.edge(at, nxt, A.Assign((t,), tv, pos=s.pos), line)
            at = nxt
        return at


def _uses_unreliable(prog: A.Program) -> bool:
    return any(isinstance(n, A.Binary) and n.op in UNRELIABLE for n in A.walk(prog.body))


def _complement(reliability: A.Expr) -> A.Expr:
    """``1 - reliability``, written without the double complement when ``reliability`` is
    ``1 - D`` itself (``D``: exactly equal over the reals)."""
    r = reliability
    if isinstance(r, A.Binary) and r.op == "-" and isinstance(r.left, A.Num) and r.left.value == 1:
        return r.right
    return A.Binary("-", A.num(1), r)


def build_cfa(
    prog: A.Program, bound: Optional[A.Expr] = None, path: str = "<string>", source: Optional[str] = None
) -> CFA:
    """Compile ``prog`` (and its specification) to a :class:`CFA`.

    ``bound`` replaces the ``fails`` clause; the default bound is 0. ``reliability E`` adds
    ``ensures !failed`` and, unless a bound is given, ``fails 1 - E`` (``fails D`` for the usual
    ``reliability 1 - D``: the same real number, as the user wrote it).
    """
    b = _Builder(prog, path, source)
    entry = b.node(prog.body.pos.line if prog.body.pos else None, "entry")
    at = entry
    ensures = tuple(prog.ensures)
    fails = prog.fails
    if prog.reliability is not None:
        if prog.fails is not None and bound is None:
            raise error_at(
                UnsupportedError, "a program with `reliability` cannot also have `fails`", prog.fails.pos, path, source
            )
        ensures = ensures + (A.Unary("!", A.Var(FAILED)),)
        fails = _complement(prog.reliability)
    if prog.reliability is not None or _uses_unreliable(prog):
        reserved = prog.param(FAILED)
        if reserved is not None:
            raise error_at(
                UnsupportedError, "the name 'failed' is reserved for the reliability flag", reserved.pos, path, source
            )
        nxt = b.node(None)
        b.edge(at, nxt, A.Assign((A.Var(FAILED),), A.BoolLit(False)), None)
        b.types[FAILED] = A.BOOL
        at = nxt
    end = b.stmt(prog.body, at)
    exit_ = b.node(None, "exit")
    b.edge(end, exit_, A.Assume(A.BoolLit(True)), None)
    g = _contract_trivial(b.g, entry, exit_, set(b.loop_heads))
    types = infer_types(prog)
    types.update(b.types)
    _type_temporaries(g, types, prog.name)
    bnd = bound if bound is not None else (fails if fails is not None else A.num(0))
    # a quantifier variable named like a program variable is renamed apart (bound_names.py)
    taken = set(types) | {p.name for p in prog.params}
    ensures = tuple(rename_apart(e, taken) for e in ensures)
    return CFA(
        prog.name,
        nx.freeze(g),  # the shape is final: analyses remember their answers (CFA.memo)
        entry,
        exit_,
        list(b.loop_heads),
        prog.params,
        tuple(prog.requires),
        ensures,
        bnd,
        types,
        prog,
        dict(b.invariants),
        path,
    )


def _type_temporaries(g: nx.MultiDiGraph, types: Dict[str, A.Type], program: str) -> None:
    """Give the desugaring's temporaries (``$t1`` …) the type of the value they hold (a
    temporary's value may read another temporary, so the values are typed until none is left)."""
    env = ProgramTypes(program, locals=types)  # type_of reads the (growing) dict itself
    pending = [
        (st.targets[0].name, st.value)
        for _u, _v, d in g.edges(data=True)
        for st in [d["stmt"]]
        if isinstance(st, A.Assign) and isinstance(st.targets[0], A.Var) and st.targets[0].name not in types
    ]
    while pending:
        left = []
        for name, value in pending:
            if name in types:
                continue
            try:
                types[name] = env.type_of(value)
            except TypeCheckError:
                left.append((name, value))
        if len(left) == len(pending):  # no progress: the first one's error is the reason
            env.type_of(left[0][1])
        pending = left


def _contract_trivial(g: nx.MultiDiGraph, entry: int, exit_: int, keep: set) -> nx.MultiDiGraph:
    """Remove ``assume(true)`` edges u→v by merging u into v, when that changes no path:
    u has that single out-edge and neither node is the entry/exit or a loop head.
    Back edges are kept (they mark loops), so are edges into loop heads."""
    changed = True
    while changed:
        changed = False
        for u, v, _k, d in list(g.edges(keys=True, data=True)):
            st = d["stmt"]
            if not (isinstance(st, A.Assume) and isinstance(st.cond, A.BoolLit) and st.cond.value):
                continue
            if d.get("back") or u == v or u in keep or u == entry:
                continue
            if g.out_degree(u) != 1:
                continue
            # redirect u's in-edges to v and drop u
            for w, _, _k2, d2 in list(g.in_edges(u, keys=True, data=True)):
                g.add_edge(w, v, **d2)
            if g.nodes[v].get("line") is None:
                g.nodes[v]["line"] = g.nodes[u].get("line")
            g.remove_node(u)
            changed = True
            break
    return g
