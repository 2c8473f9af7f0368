"""The loops of a CFA: the natural loop of a loop head and the edges inside it.

A loop head's *latches* are the sources of its back edges. Its *body* is the head and every node
that reaches a latch without passing the head. Walking back over every edge gives the whole
natural loop, inner loops included (what a termination argument ranges over); walking back over
forward edges only (the CFA minus its back edges) gives the loop's own level: an inner loop's
head and the path out of it, but not the nodes that reach the outer latch only through the
inner loop's back edge (what the prover's loop rules summarise one level at a time). On
``while (i < n) { j := 0; while (j < m) { ... } i := i + 1; }`` the first holds both loops'
statements, the second the outer loop's and the inner loop's head.

:func:`entry_value` reads the value a variable holds on entry to a loop off the straight-line code
before it (the counter's start, an accumulator's initial value, a sentinel's "nothing yet").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Any, Dict, List, Optional, Set, Tuple

from lang import ast as A
from lang.walk import free_vars, substitute

Edge = Tuple[int, int, int]


def latches(cfa: Any, head: int) -> List[int]:
    """The sources of the back edges into ``head``, in edge order."""
    return [u for u, v, _k, d in cfa.edges() if v == head and d.get("back")]


def loop_body(cfa: Any, head: int, *, forward_only: bool = False) -> Set[int]:
    """The natural loop of ``head``: the head and every node that reaches one of its latches
    without passing the head, walking back over all edges (inner loops included) or, with
    ``forward_only``, over the edges that are not back edges (inner loops' bodies left out,
    their heads kept)."""
    memo = getattr(cfa, "memo", None)
    if memo is not None:
        return set(memo(("loop_body", head, forward_only), lambda: frozenset(_natural_loop(cfa, head, forward_only))))
    return _natural_loop(cfa, head, forward_only)


def _natural_loop(cfa: Any, head: int, forward_only: bool) -> Set[int]:
    g = cfa.graph
    body = {head}
    stack = latches(cfa, head)
    while stack:
        n = stack.pop()
        if n in body:
            continue
        body.add(n)
        stack.extend(w for w, _v, d in g.in_edges(n, data=True) if not (forward_only and d.get("back")))
    return body


def body_edges(cfa: Any, body: Set[int]) -> List[Tuple[Edge, A.Stmt]]:
    """The edges with both ends in ``body``, each with its statement, in edge order."""
    return [((u, v, k), d["stmt"]) for u, v, k, d in cfa.edges() if u in body and v in body]


def _written_names(st: A.Stmt) -> Set[str]:
    """The variables ``st`` writes, arrays by their name."""
    out: Set[str] = set()
    for t in getattr(st, "targets", ()):
        while isinstance(t, A.Index):
            t = t.base
        if isinstance(t, A.Var):
            out.add(t.name)
    return out


def entry_value(
    cfa: Any,
    head: int,
    body: AbstractSet[int],
    name: str,
    *,
    stop_at_loop_heads: bool = False,
    unchanged: Optional[AbstractSet[str]] = None,
    compose: bool = False,
) -> Optional[A.Expr]:
    """The value assigned to ``name`` on the straight-line path into loop ``head``: walking back
    from the head over its one entry edge (edges from ``body`` and back edges left out), then over
    each node's one in-edge, the right-hand side of the first assignment ``name := e`` met. None
    when the path branches or joins before it, when the write is a sampling, assigns several
    targets or reads ``name`` itself.

    ``stop_at_loop_heads``: another loop's head on the way also gives None (the value would be the
    one on entry to that loop, not the same on every arrival at ``head``). ``unchanged``: when
    given, the names written in the loop (arrays by name); ``e`` must not read them nor anything
    written between the assignment and the head, so that ``e`` evaluated at the head still has
    its value from the assignment. ``compose``: a write that reads ``name`` (``r := r - 1`` after
    ``r := n - 1``) is composed with the value before it, found the same way (``n - 1 - 1``)."""
    later: Optional[Set[str]] = None if unchanged is None else set(unchanged)
    cur, seen = head, set()
    pending: list[A.Expr] = []  # self-reading writes met so far (compose), in the order they run
    while cur not in seen:
        seen.add(cur)
        if stop_at_loop_heads and cur != head and cur in cfa.loop_heads:
            return None
        ins = [
            (w, d)
            for w, _v, _k, d in cfa.graph.in_edges(cur, keys=True, data=True)
            if not d.get("back") and (cur != head or w not in body)
        ]
        if len(ins) != 1:
            return None
        w, d = ins[0]
        st = d["stmt"]
        if isinstance(st, (A.Assign, A.Sample)) and any(isinstance(t, A.Var) and t.name == name for t in st.targets):
            if isinstance(st, A.Sample) or len(st.targets) != 1:
                return None
            reads = set(free_vars(st.value))
            if later is not None and reads - {name} & later:
                return None
            if name not in reads:
                value = st.value
                for f in pending:  # the earliest self-reading write applies first
                    value = substitute(f, {name: value})
                return value
            if not compose:
                return None
            pending.insert(0, st.value)
        if later is not None:
            later |= _written_names(st)
        cur = w
    return None


def loop_writes(cfa: Any, head: int) -> frozenset:
    """The variables the natural loop of ``head`` writes (inner loops included; arrays by name)."""
    written: Set[str] = set()
    for _e, st in body_edges(cfa, loop_body(cfa, head)):
        written |= _written_names(st)
    return frozenset(written)


def bound_changes(cfa: Any, head: int, bound: A.Expr) -> List[str]:
    """The variables ``bound`` reads that the loop at ``head`` writes, sorted (an array read
    ``b[0]`` reads ``b``): empty when the bound is the same at every test of the loop — what a
    trip count read off the guard needs (:func:`counted_loop`, and the loop prover's counters)."""
    return sorted(set(free_vars(bound)) & loop_writes(cfa, head))


# ---------------------------------------------------------------------------- counted loops


class NotCounted(Exception):
    """The loop is not a counted loop (:func:`counted_loop`); the message says why."""


@dataclass(frozen=True)
class CountedLoop:
    """A loop whose number of iterations is known on entry (:func:`counted_loop`).

    ``counter`` moves by one (up when ``up``) exactly once per iteration; the guard compares it
    with ``bound``, which reads nothing the loop writes. On entry the counter holds ``start``
    (an expression over the state on entry to the loop: the value assigned before the loop when
    the straight-line code before it has one, else the counter itself). The counter then runs
    over the half-open range [``lo``, ``hi``), one value per iteration, when ``lo <= hi``
    (:attr:`obligations`): the loop runs ``hi - lo`` times (:attr:`trips`), every iteration that
    ends included, and ends with the counter at ``hi`` counting up, ``lo - 1`` counting down.
    ``lo``, ``hi`` and ``trips`` are over the state on entry too."""

    head: int
    counter: str
    up: bool
    start: A.Expr
    bound: A.Expr
    lo: A.Expr
    hi: A.Expr
    step: Edge
    written: frozenset

    @property
    def trips(self) -> A.Expr:
        return self.hi if self.lo == A.num(0) else A.Binary("-", self.hi, self.lo)

    @property
    def final(self) -> A.Expr:
        """The counter's value when the loop ends."""
        return self.hi if self.up else A.Binary("-", self.lo, A.num(1))

    @property
    def obligations(self) -> List[Tuple[str, A.Expr]]:
        """What the trip count rests on besides the graph checks of :func:`counted_loop`, to be
        proved valid on entry (under ``requires``): the range is not empty the wrong way round."""
        return [("loop runs", A.Binary("<=", self.lo, self.hi))]


_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _int_expr(e: A.Expr, types: Any) -> bool:
    """``e`` is an integer: an integer literal, an ``int`` variable, an element of an ``int``
    array, ``+ - * div mod min max abs`` and negation of integers (a real bound ``H`` would make
    ``while (i < H)`` run ``ceil(H - i)`` times, not ``H - i``)."""
    if isinstance(e, A.Num):
        return bool(e.is_int)
    if isinstance(e, A.Var):
        return types.get(e.name) == A.INT
    if isinstance(e, A.Index) and isinstance(e.base, A.Var):
        return types.get(e.base.name) == A.array_of(A.INT) and _int_expr(e.index, types)
    if isinstance(e, A.Call) and e.func in ("min", "max", "abs"):
        return all(_int_expr(a, types) for a in e.args)
    if isinstance(e, A.Unary) and e.op == "-":
        return _int_expr(e.operand, types)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "div", "mod"):
        return _int_expr(e.left, types) and _int_expr(e.right, types)
    return False


def _where(cfa: Any, head: int) -> str:
    line = cfa.graph.nodes[head].get("line")
    return f"the loop at line {line}" if line else f"the loop at node {head}"


def counted_loop(cfa: Any, head: int) -> CountedLoop:
    """The counted loop at ``head``, or :class:`NotCounted` saying why not. Read off the CFA
    (what the loop does, whatever the source's sugar: a ``for`` loop's bound is tested at every
    iteration like a ``while`` loop's), with these checks, each of which the trip count needs:

    * the head's only out-edges are the guard ``assume(c)`` into the loop and ``assume(!c)`` out
      of it, and no other edge leaves the loop (every run leaves through the guard);
    * ``c`` is ``i < H``, ``i <= H`` (or ``i > H``, ``i >= H``, or mirrored) with ``i`` and ``H``
      integers;
    * no edge of the loop (inner loops included) writes a variable ``H`` reads: the bound is the
      same at every test;
    * exactly one edge of the loop writes ``i``: ``i := i + 1`` (``i - 1`` counting down); it is
      not inside an inner loop, and every path from the head back to it passes that edge — so
      every iteration moves ``i`` by exactly one toward ``H``.

    Then the guard holds for exactly the values of [lo, hi) (see :class:`CountedLoop`), one per
    iteration. (Every iteration ends when the inner loops end: a caller with inner loops needs
    their termination too.)"""
    if head not in cfa.loop_heads:
        raise NotCounted(f"node {head} is not a loop head")
    where = _where(cfa, head)
    body = loop_body(cfa, head)
    outs = cfa.out_edges(head)
    into = [d["stmt"] for _u, v, _k, d in outs if v in body]
    if len(outs) != 2 or len(into) != 1 or not all(isinstance(d["stmt"], A.Assume) for _u, _v, _k, d in outs):
        raise NotCounted(f"{where}: its test is not a plain condition")
    for u, v, _k, _d in cfa.edges():
        if u in body and v not in body and u != head:
            raise NotCounted(f"{where}: a run can leave it other than through its test")
    c = into[0].cond
    edges = body_edges(cfa, body)
    written = set(loop_writes(cfa, head))
    if not (isinstance(c, A.Binary) and c.op in _MIRROR):
        raise NotCounted(f"{where}: its condition is not a comparison `i < H` of a counter with a bound")
    # the counter is the side the loop writes (H > i is i < H)
    sides = [c, A.Binary(_MIRROR[c.op], c.right, c.left)]
    picked = [x for x in sides if isinstance(x.left, A.Var) and x.left.name in written]
    if not picked:
        raise NotCounted(f"{where}: its condition compares no variable the loop moves")
    c = picked[0]
    counter = c.left
    assert isinstance(counter, A.Var)  # picked above
    i, bound, up = counter.name, c.right, c.op in ("<", "<=")
    if not (_int_expr(counter, cfa.types) and _int_expr(bound, cfa.types)):
        raise NotCounted(f"{where}: its counter '{i}' and bound are not both integers")
    changed = bound_changes(cfa, head, bound)
    if changed:
        raise NotCounted(f"{where}: its bound reads '{changed[0]}', which the loop writes (the bound changes)")
    writes = [(e, st) for e, st in edges if i in _written_names(st)]
    step = A.Binary("+" if up else "-", A.Var(i), A.num(1))
    if len(writes) != 1 or not (
        isinstance(writes[0][1], A.Assign) and writes[0][1].targets == (A.Var(i),) and writes[0][1].value == step
    ):
        raise NotCounted(f"{where}: its counter '{i}' is not moved by exactly one `{i} := {show_step(step)}`")
    (su, sv, sk) = writes[0][0]
    for h2 in cfa.loop_heads:
        if h2 != head and h2 in body and {su, sv} <= loop_body(cfa, h2):
            raise NotCounted(f"{where}: its counter '{i}' is moved inside an inner loop")
    if _reaches_latch_avoiding(cfa, head, body, (su, sv, sk)):
        raise NotCounted(f"{where}: an iteration can skip `{i} := {show_step(step)}`")
    start = entry_value(cfa, head, body, i, unchanged=written) or A.Var(i)
    one = A.num(1)
    lo, hi = {
        "<": (start, bound),
        "<=": (start, A.Binary("+", bound, one)),
        ">": (A.Binary("+", bound, one), A.Binary("+", start, one)),
        ">=": (bound, A.Binary("+", start, one)),
    }[c.op]
    return CountedLoop(head, i, up, start, bound, lo, hi, (su, sv, sk), frozenset(written))


def show_step(e: A.Binary) -> str:
    return f"{e.left.name} {e.op} 1" if isinstance(e.left, A.Var) else "?"


def _reaches_latch_avoiding(cfa: Any, head: int, body: Set[int], edge: Edge) -> bool:
    """A path from ``head`` to one of its latches inside ``body`` that does not take ``edge``."""
    targets = set(latches(cfa, head))
    seen, stack = {head}, [head]
    while stack:
        n = stack.pop()
        if n in targets:
            return True
        for u, v, k, d in cfa.graph.out_edges(n, keys=True, data=True):
            if (u, v, k) == edge or v not in body or v in seen or (v == head and d.get("back")):
                continue
            seen.add(v)
            stack.append(v)
    return False


def counted_loops_by_step(cfa: Any) -> Dict[Tuple[int, int], CountedLoop]:
    """The counted loops of ``cfa`` (:func:`counted_loop`; the others left out), each under the
    source position (line, col) of its counter's step statement — for a ``for`` loop the
    position of the ``for`` statement itself (the CFA gives its implicit ``i := i + 1`` that
    position), so an engine that runs the statements directly finds the analysis of a ``for``
    loop by the statement's position."""
    out: Dict[Tuple[int, int], CountedLoop] = {}
    for head in cfa.loop_heads:
        try:
            cl = counted_loop(cfa, head)
        except NotCounted:
            continue
        pos = getattr(cfa.graph.edges[cl.step]["stmt"], "pos", None)
        if pos is not None:
            out[(pos.line, pos.col)] = cl
    return out
