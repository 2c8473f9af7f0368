"""Termination: a checked termination argument for every loop.

A failure bound is *total*: a run that never ends counts as failing (docs/language.md). The
checker's rules (:mod:`.check`) bound the probability of the runs that end violating
``ensures``; a run that loops forever is counted nowhere there. So a proof of a program with
loops also needs every loop to end with probability 1, which this module establishes with one
argument per loop head h — either kind gives obligations that the prover and ``tamp
check-proof`` decide with their own solvers, built here from the CFA alone:

**A ranking function** (:class:`Ranking`, every run ends):

* rank r, an expression over the state (for a counter loop ``while (i < n)`` with ``i := i + 1``
  in the body, r = n - i; for ``i <= n``, r = n - i + 1; counting down, r = i - n (+ 1));
* BOUNDED   the head has exactly two out-edges, the guard ``assume(c)`` into the loop body and
            ``assume(!c)`` out of it, and under ``requires``, c ⇒ r > 0;
* NONINC    every edge of the loop's body (its natural loop, inner loops included) leaves r
            unchanged or smaller: r(after) <= r(before), for every state (samplings make their
            targets arbitrary, so r must not read a sampled variable);
* DECREASE  the edges listed as decreasing lower r by at least 1: r(after) <= r(before) - 1;
* PROGRESS  every cycle from h back to h inside the body passes a decreasing edge (a graph check).

Two variants, for loops without inner loops (their paths through the body are enumerated):

* *per path* (``paths``): instead of NONINC, DECREASE and PROGRESS per edge, DECREASE once per
  path from h through the body back to h, the iteration's statements composed — binary search's
  ``lo := mid + 1`` lowers ``hi - lo`` only given ``mid := (lo + hi) div 2`` and ``lo < hi`` before
  it on the path; a path may instead make the condition c false (``found := true`` under
  ``while (lo < hi && !found)``), since the head's next test then leaves the loop;
* *with an invariant* I (``invariant``, for ``while (i != n)``: I = ``i <= n``): BOUNDED and the
  per-path DECREASE may assume I, established by
  ENTRY      I pushed back (weakest precondition) over the straight-line code before the loop to
             the CFA entry, a join or another loop's head is valid under ``requires`` there;
  INDUCTIVE  every path through the body from a state satisfying I ends in one satisfying I.
  Both treat a sampling as giving any value (no axiom is assumed), so I holds at every visit
  of h on every run, whatever was sampled.

The rank comes from the loop's counter (:func:`counter_ranking`), else from a conjunct of its
condition (:func:`guard_ranking`, e.g. n - i for ``i < n`` with ``i := i + 2``; :func:`neq_ranking`
for ``i != n``; :func:`path_ranking` per path).

At the k-th pass of the guard r > 0, and between two passes r dropped by at least 1 (PROGRESS,
DECREASE) and never rose (NONINC), so the loop runs at most ⌈r₀⌉ iterations, each finite when
the inner loops' arguments hold.

**A geometric retry** (:class:`Geometric`, the loop ends almost surely), for
``while (!x) { …; x ~ bern(e); … }`` (or ``while (x)``, exiting when x is false):

* the head tests ``assume(c)`` / ``assume(!c)`` with c = ``!x`` or ``x``, x a variable;
* the body has no inner loop (each iteration is finite) and every path from h back to h passes
  the sampling ``x ~ bern(e)``, and no other edge of the body writes x — so at each test, x is
  the outcome of this iteration's fresh sampling;
* e reads only inputs (never written), and EXITPROB under ``requires``: e > 0 for ``!x``
  (1 - e > 0 for ``x``).

Each iteration then ends the loop with the same probability q > 0 whatever happened before, so
n iterations happen with probability (1 - q)^n → 0: the runs that never end have probability 0
and the bound on the runs that end is the whole failure probability.

Every cycle of a CFA goes through a loop head (its graph without back edges is acyclic, back
edges end at loop heads — checked), so one argument per head covers every run. A loop with
neither (:func:`missing_ranking_message`) makes the prover answer "unknown" naming the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Set, Tuple, Union

import networkx as nx
import z3

from lang import ast as A
from lang.serialize import to_json
from lang.walk import free_vars, substitute
from tamp.cfa.loops import NotCounted, body_edges, counted_loop, loop_body
from tamp.prover.base.exprs import conjuncts
from tamp.prover.base.smt import to_real
from tamp.prover.trace.explain import termination_why
from tamp.prover.trace.formula import StepState, step
from tamp.show import show_expr

Edge = Tuple[int, int, int]


@dataclass(frozen=True)
class Ranking:
    """The termination argument of the loop at CFA node ``head``: with ``invariant`` I, the rules
    BOUNDED and DECREASE may assume I at the head (it is established by ENTRY and INDUCTIVE);
    with ``paths``, DECREASE is asked once per path through the body (the composed iteration)
    instead of per edge."""

    head: int
    rank: A.Expr
    decreasing: Tuple[Edge, ...]
    invariant: Optional[A.Expr] = None
    paths: bool = False

    def to_json(self) -> dict:
        out = {
            "head": self.head,
            "kind": "rank",
            "rank": to_json(self.rank),
            "decreasing": [list(e) for e in self.decreasing],
        }
        if self.invariant is not None:
            out["invariant"] = to_json(self.invariant)
        if self.paths:
            out["paths"] = True
        return out


@dataclass(frozen=True)
class Geometric:
    """The almost-sure termination argument of a retry loop at CFA node ``head``: ``sample`` is
    the body's sampling ``x ~ bern(e)`` of the variable its guard tests."""

    head: int
    sample: Edge

    def to_json(self) -> dict:
        return {"head": self.head, "kind": "geometric", "sample": list(self.sample)}


Argument = Union[Ranking, Geometric]  # one loop's termination argument


class NotRanked(Exception):
    """The ranking does not fit the CFA's structure (the message says where)."""


# ---------------------------------------------------------------------------- structure


def loop_guard(cfa, head: int, body: Set[int]) -> A.Expr:
    """The condition c of the head's guard ``assume(c)`` into the body (rule BOUNDED's shape)."""
    outs = cfa.out_edges(head)
    into = [d["stmt"] for _u, v, _k, d in outs if v in body]
    if (
        len(outs) != 2
        or len(into) != 1
        or not isinstance(into[0], A.Assume)
        or not all(isinstance(d["stmt"], A.Assume) for _u, _v, _k, d in outs)
    ):
        raise NotRanked("its head is not a plain test `assume(c)` / `assume(!c)`")
    return into[0].cond


def structure_problem(cfa) -> str:
    """'' when every cycle of the CFA goes through a back edge into a loop head."""
    dag = nx.DiGraph()
    dag.add_nodes_from(cfa.graph.nodes)
    for u, v, _k, d in cfa.edges():
        if d.get("back"):
            if v not in cfa.loop_heads:
                return f"the back edge {u}->{v} does not end at a loop head"
        else:
            dag.add_edge(u, v)
    if not nx.is_directed_acyclic_graph(dag):
        return "the CFA has a cycle without a back edge"
    return ""


def progress_problem(cfa, head: int, body: Set[int], decreasing) -> str:
    """'' when every cycle from ``head`` back to it inside ``body`` passes a decreasing edge."""
    dec = set(decreasing)
    g = nx.DiGraph()
    for (u, v, k), _st in body_edges(cfa, body):
        if (u, v, k) not in dec:
            g.add_edge(u, v)
    if head not in g:
        return ""
    seen, stack = set(), [v for _u, v in g.out_edges(head)]
    while stack:
        n = stack.pop()
        if n == head:
            return "a path through the loop body does not pass a decreasing edge"
        if n in seen:
            continue
        seen.add(n)
        stack.extend(v for _u, v in g.out_edges(n))
    return ""


# ---------------------------------------------------------------------------- obligations


def obligations(cfa, ranking: Argument, enc) -> List[Tuple[str, str, z3.BoolRef]]:
    """(rule, where, formula) for every solver obligation of ``ranking`` (a :class:`Ranking` or a
    :class:`Geometric`; each formula to be valid under ``requires``); raises :class:`NotRanked`
    when the structure does not fit."""
    if isinstance(ranking, Geometric):
        return geometric_obligations(cfa, ranking, enc)

    if ranking.head not in cfa.loop_heads:
        raise NotRanked(f"node {ranking.head} is not a loop head")
    body = loop_body(cfa, ranking.head)
    cond = loop_guard(cfa, ranking.head, body)
    edges = dict(body_edges(cfa, body))
    for e in ranking.decreasing:
        if tuple(e) not in edges:
            raise NotRanked(f"the decreasing edge {e[0]}->{e[1]} is not in the loop body")
    problem = "" if ranking.paths else progress_problem(cfa, ranking.head, body, ranking.decreasing)
    if problem:
        raise NotRanked(problem)
    env0 = enc.initial_env()
    r0 = enc.expr(ranking.rank, env0)
    if not z3.is_arith(r0):
        raise NotRanked("the rank is not a number")
    r0 = to_real(r0)
    inv = enc.expr(ranking.invariant, env0) if ranking.invariant is not None else z3.BoolVal(True)
    where = f"loop at node {ranking.head}"
    out = [("BOUNDED", where, z3.Implies(z3.And(inv, enc.expr(cond, env0)), r0 > 0))]
    if ranking.invariant is not None or ranking.paths:
        inner = [h for h in cfa.loop_heads if h != ranking.head and h in body]
        if inner and ranking.invariant is not None:
            raise NotRanked("an invariant needs a loop body without inner loops")
        # with inner loops, a path passes each inner loop's head by its exit edge, the inner
        # loop summarised as "whatever it writes is arbitrary" (it ends by its own argument)
        level = loop_body(cfa, ranking.head, forward_only=True) if inner else body
        paths = iteration_paths(cfa, ranking.head, level)
        havoc = {h: _written_in(cfa, loop_body(cfa, h)) for h in inner}
    if ranking.invariant is not None:
        out.extend(entry_obligations(cfa, ranking.head, ranking.invariant, enc))
        for path in paths:
            st2 = _run(enc, env0, [inv], [edges[e] for e in path])
            out.append(
                (
                    "INDUCTIVE",
                    f"{where}, path {_path_text(path)}",
                    z3.Implies(st2.context(), enc.expr(ranking.invariant, st2.env)),
                )
            )
    if ranking.paths:
        for path in paths:
            st2 = _run(enc, env0, [inv], [edges[e] for e in path], [havoc.get(e[0], set()) for e in path])
            r1 = to_real(enc.expr(ranking.rank, st2.env))
            leaves = z3.Not(enc.expr(cond, st2.env))  # the path ends the loop: the next test exits
            out.append(
                (
                    "DECREASE",
                    f"{where}, path {_path_text(path)}",
                    z3.Implies(st2.context(), z3.Or(r1 <= r0 - 1, leaves)),
                )
            )
        return out
    dec = {tuple(e) for e in ranking.decreasing}
    for (u, v, k), st in edges.items():
        st2 = step(enc, StepState(dict(env0), [], [], z3.RealVal(0), []), st, None)
        r1 = to_real(enc.expr(ranking.rank, st2.env))
        if (u, v, k) in dec:
            out.append(("DECREASE", f"edge {u}->{v}", z3.Implies(st2.context(), r1 <= r0 - 1)))
        elif not r1.eq(r0):
            out.append(("NONINC", f"edge {u}->{v}", z3.Implies(st2.context(), r1 <= r0)))
    return out


MAX_PATHS = 64


def iteration_paths(cfa, head: int, body: Set[int]) -> List[List[Edge]]:
    """Every path through the (inner-loop-free) body of the loop at ``head``, from the head along
    its guard to a back edge into it, as a list of CFA edges; :class:`NotRanked` when there are
    more than ``MAX_PATHS``."""
    out: List[List[Edge]] = []
    stack: List[Tuple[int, List[Edge]]] = [(head, [])]
    while stack:
        n, path = stack.pop()
        for u, v, k, d in cfa.edges():
            if u != n or v not in body:
                continue
            e = (u, v, k)
            if d.get("back"):
                if v == head:
                    out.append(path + [e])
                    if len(out) > MAX_PATHS:
                        raise NotRanked(f"the loop body has more than {MAX_PATHS} paths")
                continue
            if v != head:
                stack.append((v, path + [e]))
    return out


def _run(enc, env0, hyps, stmts, havocs=None):
    """The symbolic state after ``stmts`` from ``env0`` under ``hyps``; before the i-th statement
    the names ``havocs[i]`` (an inner loop's writes) are given fresh values."""
    st = StepState(dict(env0), list(hyps), [], z3.RealVal(0), [])
    for i, x in enumerate(stmts):
        for name in sorted(havocs[i] if havocs else ()):
            st.env[name] = z3.FreshConst(st.env[name].sort(), prefix=name + "!")
        st = step(enc, st, x, None)
    return st


def _written_in(cfa, body: Set[int]) -> Set[str]:
    """The names the edges inside ``body`` write (arrays by name)."""
    return {x for _e, st in body_edges(cfa, body) for x in _written(st)}


def _path_text(path: List[Edge]) -> str:
    return "->".join([str(path[0][0])] + [str(e[1]) for e in path]) if path else ""


def entry_obligations(cfa, head: int, inv: A.Expr, enc) -> List[Tuple[str, str, z3.BoolRef]]:
    """ENTRY: the invariant holds whenever control enters the loop at ``head`` from outside. Along
    each entry edge it is pushed back (weakest precondition: substitution through assignments,
    ``c ==> Q`` through ``assume(c)``) over the straight-line code before the loop, up to the CFA
    entry, a join or another loop's head; what is left there must be valid under ``requires``."""
    out = []
    for u, v, _k, d in cfa.edges():
        if v != head or d.get("back"):
            continue
        q = _wp(d["stmt"], inv)
        cur = u
        while q is not None and cur != cfa.entry and cur not in cfa.loop_heads:
            ins = [(w, dd) for w, _v, _k, dd in cfa.graph.in_edges(cur, keys=True, data=True)]
            if len(ins) != 1:
                break
            w, dd = ins[0]
            q = _wp(dd["stmt"], q)
            cur = w
        if q is None:
            raise NotRanked("the invariant cannot be pushed back before the loop (a sampling writes what it reads)")
        out.append(("ENTRY", f"loop at node {head}, entered from node {u}", enc.expr(q, enc.initial_env())))
    return out


def _wp(st, q: A.Expr) -> Optional[A.Expr]:
    if isinstance(st, A.Assume):
        if isinstance(st.cond, A.BoolLit) and st.cond.value:
            return q
        return A.Binary("==>", st.cond, q)
    if isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
        return substitute(q, {st.targets[0].name: st.value})
    if _written(st) & set(free_vars(q)):
        return None
    return q


def _guard_var(cond) -> Tuple[Optional[str], bool]:
    """(x, exit_when_true) for a guard ``!x`` (exit when x) or ``x`` (exit when !x); else (None, _)."""
    if isinstance(cond, A.Unary) and cond.op == "!" and isinstance(cond.operand, A.Var):
        return cond.operand.name, True
    if isinstance(cond, A.Var):
        return cond.name, False
    return None, False


def _written(st) -> Set[str]:
    out = set()
    for t in getattr(st, "targets", ()):
        while isinstance(t, A.Index):
            t = t.base
        if isinstance(t, A.Var):
            out.add(t.name)
    return out


def geometric_obligations(cfa, g: Geometric, enc) -> List[Tuple[str, str, z3.BoolRef]]:
    """The structure checks of a :class:`Geometric` argument (raising :class:`NotRanked`) and its
    one solver obligation EXITPROB."""
    if g.head not in cfa.loop_heads:
        raise NotRanked(f"node {g.head} is not a loop head")
    body = loop_body(cfa, g.head)
    if any(h != g.head and h in body for h in cfa.loop_heads):
        raise NotRanked("a retry loop must not contain another loop")
    x, exit_when_true = _guard_var(loop_guard(cfa, g.head, body))
    if x is None:
        raise NotRanked("its condition is not a variable or its negation")
    edges = dict(body_edges(cfa, body))
    sample: Edge = (g.sample[0], g.sample[1], g.sample[2])
    st = edges.get(sample)
    if not (
        isinstance(st, A.Sample) and st.targets == (A.Var(x),) and st.dist.func == "bern" and len(st.dist.args) == 1
    ):
        raise NotRanked(f"edge {g.sample[0]}->{g.sample[1]} is not a sampling `{x} ~ bern(e)` in the loop body")
    for e, other in edges.items():
        if e != sample and x in _written(other):
            raise NotRanked(f"edge {e[0]}->{e[1]} of the body also writes '{x}'")
    problem = progress_problem(cfa, g.head, body, [sample])
    if problem:
        raise NotRanked(problem.replace("a decreasing edge", f"the sampling of '{x}'"))
    prob = st.dist.args[0]
    params = {p.name for p in cfa.params}
    if not set(free_vars(prob)) <= params:
        raise NotRanked(f"the probability of `{x} ~ bern(…)` reads non-inputs {sorted(set(free_vars(prob)) - params)}")
    for edge, other in edges.items():
        if _written(other) & set(free_vars(prob)):
            raise NotRanked(f"edge {edge[0]}->{edge[1]} of the body writes the probability of `{x} ~ bern(…)`")
    e = to_real(enc.expr(prob, enc.initial_env()))
    q = e if exit_when_true else 1 - e
    return [("EXITPROB", f"loop at node {g.head}", q > 0)]


def geometric_argument(cfa, head: int) -> Optional[Geometric]:
    """The :class:`Geometric` argument of the loop at ``head`` when its shape fits (the solver
    obligation is still to be decided), else None."""
    body = loop_body(cfa, head)
    try:
        x, _w = _guard_var(loop_guard(cfa, head, body))
    except NotRanked:
        return None
    if x is None:
        return None
    samples = [
        e
        for e, st in body_edges(cfa, body)
        if isinstance(st, A.Sample) and st.targets == (A.Var(x),) and st.dist.func == "bern"
    ]
    return Geometric(head, samples[0]) if len(samples) == 1 else None


# ---------------------------------------------------------------------------- finding rankings


def counter_ranking(cfa, head: int, counter) -> Ranking:
    """The ranking of a counter loop (:class:`tamp.prover.loops.prove.Counter`): the distance of the
    counter to its final value; decreasing edges are the counter's own updates."""
    x = A.Var(counter.name)
    if counter.step > 0:
        rank = A.Binary("-", counter.limit, x)
    else:
        rank = A.Binary("-", x, counter.limit)
    if not counter.strict:
        rank = A.Binary("+", rank, A.num(1))
    body = loop_body(cfa, head)
    dec = tuple(e for e, st in body_edges(cfa, body) if isinstance(st, A.Assign) and st.targets[0] == x)
    return Ranking(head, rank, dec)


def counted_ranking(cfa, head: int) -> Optional[Ranking]:
    """The ranking of a counted loop of the CFA's loop analysis (:func:`tamp.cfa.loops.counted_loop`):
    the distance of the counter to its value when the loop ends, lowered by the counter's one
    step. None when the loop is not counted. (A candidate: its obligations are checked.)"""
    try:
        cl = counted_loop(cfa, head)
    except NotCounted:
        return None
    x = A.Var(cl.counter)
    rank = A.Binary("-", cl.final, x) if cl.up else A.Binary("-", x, cl.final)
    return Ranking(head, rank, (cl.step,))


def guard_measures(cfa, head: int, body) -> List[A.Expr]:
    """The candidate measures read off a loop's condition: for each conjunct ``a < b`` (``<=``,
    ``>``, ``>=``) the expression b - a (+ 1 when not strict); none when the guard is not readable."""
    try:
        cond = loop_guard(cfa, head, body)
    except NotRanked:
        return []
    out: List[A.Expr] = []
    for atom in conjuncts(cond):
        if not (isinstance(atom, A.Binary) and atom.op in ("<", "<=", ">", ">=")):
            continue
        lo, hi = (atom.left, atom.right) if atom.op in ("<", "<=") else (atom.right, atom.left)
        rank: A.Expr = A.Binary("-", hi, lo)
        if atom.op in ("<=", ">="):
            rank = A.Binary("+", rank, A.num(1))
        out.append(rank)
    return out


def guard_ranking(cfa, head: int, enc, valid) -> Optional[Ranking]:
    """A ranking read off the loop condition, for loops without a unit-step counter
    (``while (i < n) { …; i := i + 2; }``): for each conjunct ``a < b`` (``<=``, ``>``, ``>=``) the
    candidate r = b - a (+ 1 when not strict), decreasing on the body edges that write its
    variables. The first candidate whose obligations all come back valid from ``valid``."""
    body = loop_body(cfa, head)
    for rank in guard_measures(cfa, head, body):
        reads = set(free_vars(rank))
        dec = tuple(e for e, st in body_edges(cfa, body) if _written(st) & reads)
        if not dec:
            continue
        cand = Ranking(head, rank, dec)
        try:
            obs = obligations(cfa, cand, enc)
        except (NotRanked, z3.Z3Exception):
            continue
        if all(valid(f) == "valid" for _rule, _where, f in obs):
            return cand
    return None


def neq_ranking(cfa, head: int) -> Optional[Ranking]:
    """For ``while (i != L)`` (a conjunct of the condition) where the body's only writes to i are
    ``i := i + 1`` (or ``- 1``), one on every path, and L reads nothing the body writes: the rank
    L - i (i - L) under the invariant ``i <= L`` (``i >= L``), which ENTRY must establish."""
    body = loop_body(cfa, head)
    try:
        cond = loop_guard(cfa, head, body)
    except NotRanked:
        return None
    if any(h != head and h in body for h in cfa.loop_heads):
        return None
    edges = body_edges(cfa, body)
    writes = {x for _e, st in edges for x in _written(st)}
    for atom in conjuncts(cond):
        if not (isinstance(atom, A.Binary) and atom.op == "!="):
            continue
        for x, lim in ((atom.left, atom.right), (atom.right, atom.left)):
            if not isinstance(x, A.Var) or set(free_vars(lim)) & writes:
                continue
            steps = {st.value.op for _e, st in edges if x.name in _written(st) and _unit_step(st, x)}  # type: ignore[attr-defined]
            if len(steps) != 1 or any(x.name in _written(st) and not _unit_step(st, x) for _e, st in edges):
                continue
            dec = tuple(e for e, st in edges if x.name in _written(st))
            try:
                paths = iteration_paths(cfa, head, body)
            except NotRanked:
                continue
            if any(sum(1 for e in p if e in dec) != 1 for p in paths):
                continue
            up = steps == {"+"}
            rank = A.Binary("-", lim, x) if up else A.Binary("-", x, lim)
            inv = A.Binary("<=", x, lim) if up else A.Binary(">=", x, lim)
            return Ranking(head, rank, dec, inv)
    return None


def _unit_step(st, x: A.Var) -> bool:
    return (
        isinstance(st, A.Assign)
        and st.targets == (x,)
        and isinstance(st.value, A.Binary)
        and st.value.op in ("+", "-")
        and st.value.left == x
        and st.value.right == A.num(1)
    )


def path_ranking(cfa, head: int, enc, valid) -> Optional[Ranking]:
    """A ranking read off the condition (as :func:`guard_ranking`) whose decrease is checked per
    path through the body, the iteration composed (binary search: ``lo := mid + 1`` lowers
    ``hi - lo`` only given ``mid := (lo + hi) div 2`` and ``lo < hi`` earlier on the path)."""
    body = loop_body(cfa, head)
    for rank in guard_measures(cfa, head, body):
        cand = Ranking(head, rank, (), None, True)
        try:
            obs = obligations(cfa, cand, enc)
        except (NotRanked, z3.Z3Exception):
            continue
        if all(valid(f) == "valid" for _rule, _where, f in obs):
            return cand
    return None


def prove_termination(cfa, loops: Dict[int, dict], enc, valid):
    """A checked termination argument for every loop: (arguments, their obligations as
    (rule, where, status, head)) when every loop has one, else (None, message naming the first
    loop without one). Per loop the candidates are tried in order — the counter's ranking or the
    geometric retry argument, the counted loop's ranking (the CFA's loop analysis), then rankings
    from the condition's conjuncts — and the first whose
    obligations all come back valid from ``valid`` is kept."""
    problem = structure_problem(cfa)
    if problem:
        return None, missing_ranking_message(cfa, cfa.loop_heads[0], problem)
    first, _missing = find_rankings(cfa, loops)
    by_head = {a.head: a for a in first}
    chosen: List[Argument] = []
    results: List[Tuple[str, str, str, Optional[int]]] = []
    for h in cfa.loop_heads:
        why = ""
        done = False
        finders: List[Callable[[int], Optional[Argument]]] = [
            lambda h: by_head.get(h),
            lambda h: counted_ranking(cfa, h),
            lambda h: guard_ranking(cfa, h, enc, valid),
            lambda h: neq_ranking(cfa, h),
            lambda h: path_ranking(cfa, h, enc, valid),
        ]
        for find in finders:
            cand = find(h)
            if cand is None:
                continue
            try:
                obs = [(rule, where, valid(f), h) for rule, where, f in obligations(cfa, cand, enc)]
            except NotRanked as exc:
                why = str(exc)
                continue
            bad = [o for o in obs if o[2] != "valid"]
            if bad:
                why = termination_why(cfa, bad[0][0], bad[0][1], bad[0][2])  # explain.py: no edge numbers
                continue
            chosen.append(cand)
            results.extend(obs)
            done = True
            break
        if not done:
            return None, missing_ranking_message(cfa, h, why or no_argument_reason(cfa, h))
    return chosen, results


def no_argument_reason(cfa, head: int) -> str:
    """What is missing when no finder proposed a termination argument for the loop at ``head``
    (every candidate that was proposed and failed has its own reason): why the loop is not a
    counted loop (:func:`tamp.cfa.loops.counted_loop`'s reason, e.g. a ``for`` loop whose bound
    the body writes), that its condition has no conjunct ``a < b`` (``<=``, ``>``, ``>=``) to rank
    by, and why it is not a retry loop (no Boolean condition variable, or not exactly one
    ``bern`` sampling of it in the body)."""
    body = loop_body(cfa, head)
    parts: List[str] = []
    try:
        counted_loop(cfa, head)
    except NotCounted as exc:
        text = str(exc)
        parts.append("not a counted loop: " + (text.split(": ", 1)[1] if ": " in text else text))
    try:
        cond = loop_guard(cfa, head, body)
    except NotRanked as exc:
        return "; ".join(parts + [f"its test cannot be read: {exc}"])
    if not guard_measures(cfa, head, body):
        parts.append(f"its condition `{show_expr(cond)}` has no comparison `a < b` to rank by")
    else:
        parts.append(
            f"no comparison in its condition `{show_expr(cond)}` gives a distance that drops on every iteration"
        )
    x, _w = _guard_var(cond)
    if guard_measures(cfa, head, body):  # a comparison loop (a `for` among them): no retry expected
        return "; ".join(parts)
    if x is None:
        parts.append("its condition is not a single Boolean variable, so it is no retry loop")
    else:
        n = sum(
            1
            for _e, st in body_edges(cfa, body)
            if isinstance(st, A.Sample) and st.targets == (A.Var(x),) and st.dist.func == "bern"
        )
        parts.append(f"its body samples `{x} ~ bern(e)` {n} times (a retry loop samples it exactly once)")
    return "; ".join(parts)


def find_rankings(cfa, loops: Dict[int, dict]) -> Tuple[List[Argument], List[int]]:
    """A termination argument per loop head — a ranking from its counter, else a geometric retry
    argument when the loop has that shape — and the heads that have neither."""
    found: List[Argument] = []
    missing: List[int] = []
    for h in cfa.loop_heads:
        counter = loops.get(h, {}).get("counter")
        if counter is not None:
            found.append(counter_ranking(cfa, h, counter))
            continue
        geo = geometric_argument(cfa, h)
        if geo is not None:
            found.append(geo)
        else:
            missing.append(h)
    return found, missing


def loop_where(cfa, head: int) -> str:
    """``file:line`` of the loop at ``head``."""
    line = cfa.graph.nodes[head].get("line")
    return f"{cfa.path}:{line}" if line else f"{cfa.path} (a loop the compiler added)"


def missing_ranking_message(cfa, head: int, why: str = "") -> str:
    why = why or no_argument_reason(cfa, head)
    return (
        f"not proved: the loop at {loop_where(cfa, head)} may not terminate ({why})"
        + "; a failure bound counts a run that never ends as failing, and the prover proves "
        "termination for loops with a conjunct `a < b` (or <=, >, >=) in the condition whose "
        "difference b - a drops by at least 1 on every path through the body (a counter `i := i + 1` "
        "with `i < n`) and for retry loops `while (!x) { … x ~ bern(e); … }` (x sampled on every "
        "iteration, e > 0 over inputs only, no inner loop)"
    )


def check_termination(cfa, rankings: List[Argument], enc, valid) -> List[Tuple[str, str, str, Optional[int]]]:
    """Every termination obligation of ``rankings`` over ``cfa``, decided by ``valid`` (a
    formula -> "valid" / other status; "valid" only on z3 ``unsat``): (rule, where, status, head).
    Structural problems come back as rule "RANKING" with status "invalid". All loop heads need exactly one ranking."""
    out: List[Tuple[str, str, str, Optional[int]]] = []
    problem = structure_problem(cfa)
    if problem:
        return [("RANKING", problem, "invalid", None)]
    heads = [r.head for r in rankings]
    for h in cfa.loop_heads:
        if heads.count(h) != 1:
            out.append(
                (
                    "RANKING",
                    f"the loop at node {h} has {heads.count(h)} termination arguments (needs one)",
                    "invalid",
                    h,
                )
            )
    for h in heads:
        if h not in cfa.loop_heads:
            out.append(
                ("RANKING", f"a termination argument is given for node {h}, which is not a loop head", "invalid", h)
            )
    if out:
        return out
    for r in rankings:
        try:
            obs = obligations(cfa, r, enc)
        except NotRanked as exc:
            out.append(("RANKING", f"the loop at node {r.head}: {exc}", "invalid", r.head))
            continue
        for rule, where, f in obs:
            out.append((rule, where, valid(f), r.head))
    return out
