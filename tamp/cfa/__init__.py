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
from lang.typecheck import ProgramTypes, check_program, input_reliabilities
from lang.walk import Transformer, free_vars, rebuild, written_vars
from tamp.show import show_expr, show_stmt

from .bound_names import rename_apart
from .faults import ARBITRARY, events, has_loop, kind_of, memory_rates, op_rate, reliable_op, taintable

FAILED = "failed"
#: the value-level flag of variable x is ``$bad_x``: x may differ from its reliable value
BAD = "$bad_"
#: set when the real run may have left the reliable run's control flow around a loop
DIVERGED = "$div"


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
    """An expression with its unreliable and candidate operators replaced by the reliable ones."""

    def Binary(self, node, kids):
        if kind_of(node.op) is not None:
            return A.Binary(reliable_op(node.op), kids[0], kids[1], pos=node.pos)
        return rebuild(node, kids)


def _or(parts: List[A.Expr]) -> A.Expr:
    """``p1 || p2 || …`` (``false`` for none)."""
    out: Optional[A.Expr] = None
    for p in parts:
        out = p if out is None else A.Binary("||", out, p)
    return out if out is not None else A.BoolLit(False)


def _is_false(e: A.Expr) -> bool:
    return isinstance(e, A.BoolLit) and not e.value


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
        self.memory = memory_rates(prog)
        self.arbitrary = False  # a fault event whose failed result is arbitrary (faults.ARBITRARY)
        # value-level reliability: a flag `$bad_v` per taintable variable, the control taint
        self.value_level = prog.value_reliability is not None
        self.tainted: frozenset = taintable(prog) if self.value_level else frozenset()
        self.pc: List[A.Var] = []
        self.pcs = 0
        self.diverge = False  # some faulty loop/branch may make the real run diverge ($div)
        self.stmt_flips: List[A.Var] = []  # the failure flips of the statement being compiled

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

    def step(self, at: int, stmt: A.Stmt, line) -> int:
        nxt = self.node(line)
        self.edge(at, nxt, stmt, line)
        return nxt

    # -------------------------------------------------------------- unreliable ops
    def reliable(self, e: A.Expr, at: int, line) -> Tuple[A.Expr, int]:
        """Replace unreliable operators in ``e`` by reliable ones, emitting a failure flip before
        the statement for every fault event of ``e`` (an unreliable or candidate operator, a read
        of unreliable memory); returns the new expression and the node after the flips. The flips
        are also kept in ``stmt_flips`` (the value-level flags read them)."""
        for op, kind in events(e, self.memory):
            if kind == "read":
                region = self.memory.get(op.name if isinstance(op, A.Var) else op.base.name)  # type: ignore[attr-defined]
                rate = region if region is not None else self.prog.rate
            else:
                rate = op_rate(self.prog, kind)
            if rate is None:
                what = (
                    "a read of unreliable memory"
                    if kind == "read"
                    else f"unreliable operator '{getattr(op, 'op', kind)}'"
                )
                raise error_at(
                    UnsupportedError,
                    f"{what} needs a `rate` clause in the program header",
                    op.pos,
                    self.path,
                    self.source,
                )
            self.arbitrary = self.arbitrary or kind in ARBITRARY
            self.flips += 1
            flip = A.Var(f"$f{self.flips}")
            self.types[flip.name] = A.BOOL
            self.stmt_flips.append(flip)
            mid = self.node(line)
            self.edge(at, mid, A.Sample((flip,), A.Call("bern", (rate,), pos=op.pos), pos=op.pos), line)
            nxt = self.node(line)
            self.edge(mid, nxt, A.Assign((A.Var(FAILED),), A.Binary("||", A.Var(FAILED), flip), pos=op.pos), line)
            at = nxt
        return _Reliable().walk(e), at

    # -------------------------------------------------------------- value-level taint
    def bad(self, *exprs: A.Expr, flips: bool = True) -> A.Expr:
        """Whether a value computed from ``exprs`` in this statement may differ from the reliable
        run: a fault of the statement, a tainted variable read, or the control taint."""
        parts: List[A.Expr] = list(self.stmt_flips) if flips else []
        names = sorted({v for e in exprs for v in free_vars(e)} & self.tainted)
        parts += [A.Var(BAD + v) for v in names]
        parts += list(self.pc)
        return _or(parts)

    def taint(self, at: int, target: A.Expr, *reads: A.Expr, line=None) -> int:
        """After ``target := f(reads)``: the target's flag (strong update for a scalar, weak for
        an array element: the other elements keep their flag)."""
        if not self.value_level:
            return at
        if isinstance(target, A.Index):
            name = target.base.name  # type: ignore[attr-defined]
            if name not in self.tainted:
                return at
            flag = A.Var(BAD + name)
            value = _or([flag, self.bad(target.index, *reads)])
        else:
            name = target.name  # type: ignore[attr-defined]
            if name not in self.tainted:
                return at
            flag = A.Var(BAD + name)
            value = self.bad(*reads)
        self.types[flag.name] = A.BOOL
        return self.step(at, A.Assign((flag,), value), line)

    def control(self, at: int, cond: A.Expr, writes, line, sticky: Optional[A.Var] = None):
        """Before a branch (or a loop test) on ``cond``: when the condition may be faulty, every
        variable the construct writes may differ (the real run may take the other branch or
        another number of iterations): their flags absorb the control taint. Returns the node
        and the control flag to push (None when the condition cannot be faulty)."""
        if not self.value_level:
            return at, None
        bc = self.bad(cond)
        if sticky is not None:
            at = self.step(at, A.Assign((sticky,), _or([sticky, bc])), line)
            flag = sticky
        else:
            if _is_false(bc):
                return at, None
            self.pcs += 1
            flag = A.Var(f"$pc{self.pcs}")
            self.types[flag.name] = A.BOOL
            at = self.step(at, A.Assign((flag,), bc), line)
        for w in sorted(set(writes) & self.tainted):
            f = A.Var(BAD + w)
            self.types[f.name] = A.BOOL
            at = self.step(at, A.Assign((f,), A.Binary("||", f, flag)), line)
        return at, flag

    def faulty_cond(self, cond: A.Expr) -> bool:
        """Whether a condition may be faulty at all (statically): a fault event or a taintable
        variable; the dynamic flags are kept only then."""
        return bool(events(cond, self.memory)) or bool(free_vars(cond) & self.tainted)

    # -------------------------------------------------------------- statements
    def stmt(self, s: A.Stmt, at: int) -> int:
        """Compile ``s`` starting at node ``at``; return the node where it ends."""
        line = self.line_of(s)
        self.stmt_flips = []
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
            at = self.step(at, A.Sample(tuple(targets), dataclasses.replace(s.dist, args=tuple(args)), pos=s.pos), line)
            for t in targets:
                at = self.taint(at, t, *args, line=line)
            return at
        if isinstance(s, A.Assume):
            c, at = self.reliable(s.cond, at, line)
            if self.value_level and (self.pc or self.faulty_cond(s.cond)):
                raise error_at(
                    UnsupportedError,
                    "value-level reliability: an `assume` whose condition (or the branch it is in) may be "
                    "faulty would condition on the faults",
                    s.pos,
                    self.path,
                    self.source,
                )
            nxt = self.node(line)
            self.edge(at, nxt, A.Assume(c, pos=s.pos), line, user_assume=True)
            return nxt
        if isinstance(s, A.If):
            c, at = self.reliable(s.cond, at, line)
            pushed = None
            if self.value_level and self.faulty_cond(s.cond):
                writes = written_vars(s.then) | (written_vars(s.other) if s.other is not None else frozenset())
                at, pushed = self.control(at, c, writes, line)
                if pushed is not None and (has_loop(s.then) or (s.other is not None and has_loop(s.other))):
                    at = self.diverges(at, pushed, line)
            if pushed is not None:
                self.pc.append(pushed)
            t0 = self.node(self.line_of(s.then.stmts[0]) if s.then.stmts else line)
            self.edge(at, t0, A.Assume(c, pos=s.cond.pos), line)
            t1 = self.stmt(s.then, t0)
            e0 = self.node(line)
            self.edge(at, e0, A.Assume(A.Unary("!", c, pos=s.cond.pos), pos=s.cond.pos), line)
            e1 = self.stmt(s.other, e0) if s.other is not None else e0
            if pushed is not None:
                self.pc.pop()
            join = self.node(line)
            self.edge(t1, join, A.Assume(A.BoolLit(True)), None)
            self.edge(e1, join, A.Assume(A.BoolLit(True)), None)
            return join
        if isinstance(s, A.While):
            return self.loop(s.cond, s.body, at, line, None, s.invariants, written_vars(s.body))
        if isinstance(s, A.For):
            i = A.Var(s.var, pos=s.pos)
            lo, at = self.reliable(s.lo, at, line)
            at = self.step(at, A.Assign((i,), lo, pos=s.pos), line)
            at = self.taint(at, i, lo, line=line)
            self.types.setdefault(s.var, A.INT)
            cond = A.Binary("<=" if s.inclusive else "<", i, s.hi, pos=s.pos)
            step = A.Assign((i,), A.Binary("+", i, A.num(1)), pos=s.pos)
            return self.loop(cond, s.body, at, line, step, s.invariants, written_vars(s.body) | {s.var})
        raise error_at(
            UnsupportedError,
            f"statement {type(s).__name__} is not supported by the CFA",
            getattr(s, "pos", None),
            self.path,
            self.source,
        )

    def diverges(self, at: int, flag: A.Var, line) -> int:
        """A faulty condition of a construct with a loop inside: the real run may not come back
        (an iteration count the reliable run never takes); ``$div`` records it."""
        self.diverge = True
        self.types[DIVERGED] = A.BOOL
        d = A.Var(DIVERGED)
        return self.step(at, A.Assign((d,), A.Binary("||", d, flag)), line)

    def loop(self, cond, body, at, line, step, invariants=(), writes=frozenset()) -> int:
        """A ``while`` loop. The fault events of the condition (its flips) and, for value-level
        reliability, its control taint are emitted *before* each test: on entry and at the end of
        every iteration, the state the test reads. The head's out-edges are then the test itself,
        as the termination rules expect (flips write no variable the condition reads)."""
        sticky = None
        if self.value_level and self.faulty_cond(cond):
            # the loop's control taint is sticky: once one test may have gone the other way, the
            # real run's iterations no longer match the reliable run's, whatever later tests say
            self.pcs += 1
            sticky = A.Var(f"$pc{self.pcs}")
            self.types[sticky.name] = A.BOOL
            at = self.step(at, A.Assign((sticky,), _or(list(self.pc))), line)
        c, at = self.before_test(at, cond, writes, line, sticky)
        head = self.node(line, "loop_head")
        self.loop_heads.append(head)
        if invariants:
            self.invariants[head] = tuple(invariants)
        self.edge(at, head, A.Assume(A.BoolLit(True)), None)
        if sticky is not None:
            self.pc.append(sticky)
        b0 = self.node(self.line_of(body.stmts[0]) if body.stmts else line)
        self.edge(head, b0, A.Assume(c, pos=cond.pos), line)
        b1 = self.stmt(body, b0)
        if step is not None:
            self.stmt_flips = []
            b1 = self.step(b1, step, line)
            b1 = self.taint(b1, step.targets[0], step.value, line=line)
        if sticky is not None:
            self.pc.pop()
        _c, b1 = self.before_test(b1, cond, writes, line, sticky)
        self.edge(b1, head, A.Assume(A.BoolLit(True)), None, back=True)
        out = self.node(line)
        self.edge(head, out, A.Assume(A.Unary("!", c, pos=cond.pos), pos=cond.pos), line)
        if sticky is not None:
            out = self.diverges(out, sticky, line)
        return out

    def before_test(self, at: int, cond: A.Expr, writes, line, sticky: Optional[A.Var]) -> Tuple[A.Expr, int]:
        """The flips of one evaluation of a loop condition and its control taint; returns the
        reliable condition and the node after them."""
        self.stmt_flips = []
        c, at = self.reliable(cond, at, line)
        if sticky is not None:
            at, _ = self.control(at, c, writes, line, sticky)
        return c, at

    def assign(self, s: A.Assign, at: int, line) -> int:
        value, at = self.reliable(s.value, at, line)
        targets = []
        for t in s.targets:
            if isinstance(t, A.Index):
                idx, at = self.reliable(t.index, at, line)
                t = A.Index(t.base, idx, pos=t.pos)
            targets.append(t)
        if len(targets) == 1:
            at = self.step(at, A.Assign((targets[0],), value, pos=s.pos), line)
            return self.taint(at, targets[0], value, line=line)
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
            at = self.step(at, A.Assign((tv,), p, pos=s.pos), line)
            if self.value_level:
                # a temporary is as faulty as what it holds (it is read only by the next edges)
                self.tainted = self.tainted | {tv.name}
                at = self.taint(at, tv, p, line=line)
        for t, tv in zip(targets, temps):
            at = self.step(at, A.Assign((t,), tv, pos=s.pos), line)
            at = self.taint(at, t, tv, line=line)
        return at


def _uses_unreliable(prog: A.Program) -> bool:
    return bool(prog.memory) or any(isinstance(n, A.Binary) and kind_of(n.op) is not None for n in A.walk(prog.body))


def _conditions(body: A.Block) -> List[A.Expr]:
    """The branch and loop conditions of ``body`` (a ``for`` loop's as ``i < hi``)."""
    out: List[A.Expr] = []
    for n in A.walk(body):
        if isinstance(n, (A.If, A.While)):
            out.append(n.cond)
        elif isinstance(n, A.For):
            out.append(A.Binary("<", A.Var(n.var), n.hi))
    return out


def _guarded(c: A.Expr, loops: bool) -> bool:
    """Whether claim ``c`` is unaffected by the arbitrary values of failed operations, so that its
    probability is decided on the runs without a failure, where the real run and the compiled
    (reliable-valued) run coincide: ``c`` implies ``!failed`` (a conjunct ``!failed``), or —
    in a program without loops — holds whenever ``failed`` does (``!failed ==> X``,
    ``failed || X``). With a loop, a run whose arbitrary value sends a loop on forever would
    satisfy ``!failed ==> X`` in the compiled run while failing (never ending) in the real one."""
    fl = A.Var(FAILED)
    nf = A.Unary("!", fl)
    if c == nf:
        return True
    if isinstance(c, A.Binary):
        if c.op == "==>" and c.left == nf:
            return not loops
        if c.op == "||" and fl in (c.left, c.right):
            return not loops
        if c.op == "&&":
            return nf in (c.left, c.right) or (_guarded(c.left, loops) and _guarded(c.right, loops))
    return False


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
    value = prog.value_reliability
    if value is not None and prog.fails is None:
        # a `fails` clause (or `fails ?`) is the bound when given; the inputs' reliabilities
        # `R(a)` are factors proved by conditioning on correct inputs (input_reliabilities)
        fails = _complement(input_reliabilities(value.bound)[0])
    if prog.reliability is not None or value is not None or _uses_unreliable(prog):
        reserved = prog.param(FAILED)
        if reserved is not None:
            raise error_at(
                UnsupportedError, "the name 'failed' is reserved for the reliability flag", reserved.pos, path, source
            )
        nxt = b.node(None)
        b.edge(at, nxt, A.Assign((A.Var(FAILED),), A.BoolLit(False)), None)
        b.types[FAILED] = A.BOOL
        at = nxt
    for name in sorted(b.tainted):
        at = b.step(at, A.Assign((A.Var(BAD + name),), A.BoolLit(False)), None)
        b.types[BAD + name] = A.BOOL
    if value is not None and any(b.faulty_cond(c) for c in _conditions(prog.body)):
        at = b.step(at, A.Assign((A.Var(DIVERGED),), A.BoolLit(False)), None)
        b.types[DIVERGED] = A.BOOL
    end = b.stmt(prog.body, at)
    if value is not None:
        # candidate invariants (checked by the prover, never trusted): every flag is raised by a
        # fault, and every fault raises `failed`
        flags = [n for n in b.types if n.startswith((BAD, "$pc")) or n == DIVERGED]
        implied = tuple(A.Binary("==>", A.Var(n), A.Var(FAILED)) for n in sorted(flags))
        for h in b.loop_heads:
            b.invariants[h] = tuple(b.invariants.get(h, ())) + implied
    if b.arbitrary:
        # a failed comparison, division or memory read gives an arbitrary value: the compiled
        # run keeps the reliable one, which is the real run's only while nothing failed
        loops = bool(b.loop_heads)
        ensures = tuple(c if _guarded(c, loops) else A.Binary("&&", c, A.Unary("!", A.Var(FAILED))) for c in ensures)
    if value is not None:
        ensures = ensures + tuple(A.Unary("!", A.Var(BAD + x)) for x in value.names if x in b.tainted)
        if b.diverge:
            ensures = ensures + (A.Unary("!", A.Var(DIVERGED)),)
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
