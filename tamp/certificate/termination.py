"""Rule TERMINATION of the certificate checker: every loop ends, by the certificate's arguments.

A failure bound counts a run that never ends as failing, and rules 1–5 of :mod:`.checker`
bound only the runs that end; so every loop head of the *rebuilt* CFA needs exactly one
termination argument from the certificate, and each argument's obligations are rebuilt here
from that CFA and the argument alone (nothing of the prover is used: the prover's search,
:mod:`tamp.prover.loops.termination`, writes these arguments; this module only checks them).

STRUCTURE  every cycle of the CFA passes a back edge, and every back edge ends at a loop head
           (so one argument per head covers every run).

A **ranking** (rank r, decreasing edges D, optionally an invariant I, optionally per path):

BOUNDED    the head has exactly two out-edges, both ``assume``, one ``assume(c)`` into the body;
           I ∧ c ⇒ r > 0;
PROGRESS   (per edge) every cycle from the head back to it inside the body passes an edge of D;
NONINC     (per edge) every body edge leaves r unchanged or smaller (a sampling gives any value);
DECREASE   (per edge) every edge of D lowers r by at least 1; (per path) every path through the
           body, the iteration composed, lowers r by 1 or makes c false;
ENTRY      I, pushed back over the straight-line code before the loop (substitution through
           assignments, ``c ==> I`` through ``assume(c)``), holds under ``requires``;
INDUCTIVE  every path through the body from a state satisfying I ends satisfying I.

So at each pass of the guard r > 0, r never rises and drops by 1 per iteration: at most ⌈r₀⌉
iterations. An inner loop met on a path (per-path rankings) is summarised by giving everything
it writes any value (it ends by its own argument).

A **geometric retry** (``while (!x)`` / ``while (x)`` whose body samples ``x ~ bern(e)``): no
inner loop; every path from the head back to it passes that sampling, no other body edge
writes x, e reads only inputs that no body edge writes; EXITPROB e > 0 (1 - e > 0 for
``while (x)``) under ``requires``. Each iteration then ends the loop with the same probability
q > 0: the runs that never end have probability lim (1 - q)^n = 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Set, Tuple, Union

import networkx as nx
import z3

from lang import ast as A
from lang.walk import free_vars, substitute
from tamp.cfa.loops import body_edges, loop_body
from tamp.core.encode import Encoder
from tamp.core.step import StepState, step
from tamp.core.z3expr import to_real

Edge = Tuple[int, int, int]
MAX_PATHS = 64  # the most paths through a loop body enumerated


@dataclass(frozen=True)
class Ranking:
    """A ranking argument as the certificate states it (``termination[i]`` with kind "rank")."""

    head: int
    rank: A.Expr
    decreasing: Tuple[Edge, ...]
    invariant: Optional[A.Expr] = None
    paths: bool = False


@dataclass(frozen=True)
class Geometric:
    """A geometric retry argument as the certificate states it (kind "geometric")."""

    head: int
    sample: Edge


Argument = Union[Ranking, Geometric]
Obligation = Tuple[str, str, z3.BoolRef]  # (rule, where, formula valid under `requires`)


class BadArgument(Exception):
    """The argument does not fit the rebuilt CFA (the message says how)."""


def check_arguments(cfa, args: List[Argument], enc: Encoder, valid: Callable[[z3.BoolRef], str]):
    """``(rule, where, status)`` for every termination obligation, in order, decided by
    ``valid`` ("valid" only on z3 ``unsat`` of the negation); a structural failure is rule
    "RANKING" with status "invalid" (and ends the list)."""
    problem = _structure_problem(cfa)
    if problem:
        return [("RANKING", problem, "invalid")]
    heads = [a.head for a in args]
    for h in cfa.loop_heads:
        if heads.count(h) != 1:
            return [
                ("RANKING", f"the loop at node {h} has {heads.count(h)} termination arguments (needs one)", "invalid")
            ]
    for h in heads:
        if h not in cfa.loop_heads:
            return [("RANKING", f"a termination argument is given for node {h}, which is not a loop head", "invalid")]
    out: List[Tuple[str, str, str]] = []
    for a in args:
        try:
            obs = _geometric(cfa, a, enc) if isinstance(a, Geometric) else _ranking(cfa, a, enc)
        except BadArgument as exc:
            return out + [("RANKING", f"the loop at node {a.head}: {exc}", "invalid")]
        for rule, where, f in obs:
            out.append((rule, where, valid(f)))
    return out


# ---------------------------------------------------------------------------- structure


def _structure_problem(cfa) -> str:
    dag = nx.DiGraph()
    dag.add_nodes_from(cfa.graph.nodes)
    for u, v, _k, d in cfa.edges():
        if not d.get("back"):
            dag.add_edge(u, v)
        elif v not in cfa.loop_heads:
            return f"the back edge {u}->{v} does not end at a loop head"
    return "" if nx.is_directed_acyclic_graph(dag) else "the CFA has a cycle without a back edge"


def _guard(cfa, head: int, body: Set[int]) -> A.Expr:
    outs = cfa.out_edges(head)
    stmts = [d["stmt"] for _u, _v, _k, d in outs]
    into = [d["stmt"] for _u, v, _k, d in outs if v in body]
    if len(outs) != 2 or len(into) != 1 or not all(isinstance(s, A.Assume) for s in stmts):
        raise BadArgument("its head is not a plain test `assume(c)` / `assume(!c)`")
    return into[0].cond


def _unavoidable(cfa, head: int, body: Set[int], marked) -> bool:
    """Every cycle from ``head`` back to it inside ``body`` passes an edge of ``marked``."""
    g = nx.DiGraph()
    g.add_node(head)
    for e, _st in body_edges(cfa, body):
        if e not in marked:
            g.add_edge(e[0], e[1])
    return not any(head in nx.descendants(g, v) or v == head for v in g.successors(head))


def _writes(st) -> Set[str]:
    out = set()
    for t in getattr(st, "targets", ()):
        while isinstance(t, A.Index):
            t = t.base
        if isinstance(t, A.Var):
            out.add(t.name)
    return out


def _paths(cfa, head: int, nodes: Set[int]) -> List[List[Edge]]:
    """Every path from ``head`` through ``nodes`` (no back edge but the last, into ``head``)."""
    out: List[List[Edge]] = []
    todo: List[Tuple[int, List[Edge]]] = [(head, [])]
    while todo:
        n, path = todo.pop()
        for u, v, k, d in cfa.out_edges(n):
            if v not in nodes:
                continue
            if d.get("back"):
                if v == head:
                    out.append(path + [(u, v, k)])
                    if len(out) > MAX_PATHS:
                        raise BadArgument(f"the loop body has more than {MAX_PATHS} paths")
            elif v != head:
                todo.append((v, path + [(u, v, k)]))
    return out


def _after(enc: Encoder, env0, hyps, stmts, havoc=()) -> StepState:
    """The symbolic state after ``stmts`` from ``env0`` under ``hyps``; ``havoc[i]``: names given
    any value before statement i (an inner loop's writes)."""
    st = StepState(dict(env0), list(hyps), [], z3.RealVal(0), [])
    for i, s in enumerate(stmts):
        for name in sorted(havoc[i] if havoc else ()):
            st.env[name] = z3.FreshConst(st.env[name].sort(), prefix=name + "!")
        st = step(enc, st, s, None)
    return st


def _number(enc: Encoder, e: A.Expr, env, what: str):
    t = enc.expr(e, env)
    if not z3.is_arith(t):
        raise BadArgument(f"the {what} is not a number")
    return to_real(t)


def _formula(enc: Encoder, e: A.Expr, env, what: str):
    t = enc.expr(e, env)
    if not z3.is_bool(t):
        raise BadArgument(f"the {what} is not a formula")
    return t


# ---------------------------------------------------------------------------- rankings


def _ranking(cfa, r: Ranking, enc: Encoder) -> List[Obligation]:
    body = loop_body(cfa, r.head)
    cond = _guard(cfa, r.head, body)
    edges = dict(body_edges(cfa, body))
    for e in r.decreasing:
        if e not in edges:
            raise BadArgument(f"the decreasing edge {e[0]}->{e[1]} is not in the loop body")
    if not r.paths and not _unavoidable(cfa, r.head, body, set(r.decreasing)):
        raise BadArgument("a path through the loop body does not pass a decreasing edge")
    env0 = enc.initial_env()
    r0 = _number(enc, r.rank, env0, "rank")
    inv = z3.BoolVal(True) if r.invariant is None else _formula(enc, r.invariant, env0, "invariant")
    where = f"loop at node {r.head}"
    c0 = _formula(enc, cond, env0, "loop condition")
    out: List[Obligation] = [("BOUNDED", where, z3.Implies(z3.And(inv, c0), r0 > 0))]
    if r.invariant is not None or r.paths:
        inner = [h for h in cfa.loop_heads if h != r.head and h in body]
        if inner and r.invariant is not None:
            raise BadArgument("an invariant needs a loop body without inner loops")
        # with inner loops a path passes an inner head by its exit edge, the inner loop's
        # writes given any value there (it ends by its own argument)
        paths = _paths(cfa, r.head, loop_body(cfa, r.head, forward_only=True) if inner else body)
        writes = {h: {x for _e, st in body_edges(cfa, loop_body(cfa, h)) for x in _writes(st)} for h in inner}
    if r.invariant is not None:
        out.extend(_entry(cfa, r.head, r.invariant, enc))
        for p in paths:
            s2 = _after(enc, env0, [inv], [edges[e] for e in p])
            i1 = _formula(enc, r.invariant, s2.env, "invariant")
            out.append(("INDUCTIVE", f"{where}, path {_text(p)}", z3.Implies(s2.context(), i1)))
    if r.paths:
        for p in paths:
            s2 = _after(enc, env0, [inv], [edges[e] for e in p], [writes.get(e[0], set()) for e in p])
            r1 = _number(enc, r.rank, s2.env, "rank")
            leaves = z3.Not(_formula(enc, cond, s2.env, "loop condition"))  # the next test exits
            out.append(("DECREASE", f"{where}, path {_text(p)}", z3.Implies(s2.context(), z3.Or(r1 <= r0 - 1, leaves))))
        return out
    for (u, v, k), st in edges.items():  # per edge, with no hypothesis (the invariant is BOUNDED's only)
        s2 = _after(enc, env0, [], [st])
        r1 = _number(enc, r.rank, s2.env, "rank")
        if (u, v, k) in r.decreasing:
            out.append(("DECREASE", f"edge {u}->{v}", z3.Implies(s2.context(), r1 <= r0 - 1)))
        elif not r1.eq(r0):
            out.append(("NONINC", f"edge {u}->{v}", z3.Implies(s2.context(), r1 <= r0)))
    return out


def _text(p: List[Edge]) -> str:
    return "->".join([str(p[0][0])] + [str(e[1]) for e in p]) if p else ""


def _entry(cfa, head: int, inv: A.Expr, enc: Encoder) -> List[Obligation]:
    """ENTRY along each edge into ``head`` that is not a back edge."""
    out: List[Obligation] = []
    for u, v, _k, d in cfa.edges():
        if v != head or d.get("back"):
            continue
        q = _pre(d["stmt"], inv)
        at = u
        while q is not None and at != cfa.entry and at not in cfa.loop_heads:
            ins = list(cfa.graph.in_edges(at, keys=True, data=True))
            if len(ins) != 1:
                break
            w, _v, _k2, dd = ins[0]
            q = _pre(dd["stmt"], q)
            at = w
        if q is None:
            raise BadArgument("the invariant cannot be pushed back before the loop (a sampling writes what it reads)")
        out.append(
            (
                "ENTRY",
                f"loop at node {head}, entered from node {u}",
                _formula(enc, q, enc.initial_env(), "invariant"),
            )
        )
    return out


def _pre(st, q: A.Expr) -> Optional[A.Expr]:
    """The weakest precondition of ``q`` over ``st``; None for a write it cannot push through."""
    if isinstance(st, A.Assume):
        return q if st.cond == A.BoolLit(True) else A.Binary("==>", st.cond, q)
    if isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var):
        return substitute(q, {st.targets[0].name: st.value})
    return None if _writes(st) & set(free_vars(q)) else q


# ---------------------------------------------------------------------------- geometric retries


def _geometric(cfa, g: Geometric, enc: Encoder) -> List[Obligation]:
    body = loop_body(cfa, g.head)
    if any(h != g.head and h in body for h in cfa.loop_heads):
        raise BadArgument("a retry loop must not contain another loop")
    cond = _guard(cfa, g.head, body)
    if isinstance(cond, A.Unary) and cond.op == "!" and isinstance(cond.operand, A.Var):
        x, exit_on_true = cond.operand.name, True
    elif isinstance(cond, A.Var):
        x, exit_on_true = cond.name, False
    else:
        raise BadArgument("its condition is not a variable or its negation")
    edges = dict(body_edges(cfa, body))
    st = edges.get(g.sample)
    if not (
        isinstance(st, A.Sample) and st.targets == (A.Var(x),) and st.dist.func == "bern" and len(st.dist.args) == 1
    ):
        raise BadArgument(f"edge {g.sample[0]}->{g.sample[1]} is not a sampling `{x} ~ bern(e)` in the loop body")
    p = st.dist.args[0]
    inputs = {q.name for q in cfa.params}
    if not set(free_vars(p)) <= inputs:
        raise BadArgument(f"the probability of `{x} ~ bern(…)` reads non-inputs")
    for e, other in edges.items():
        if e != g.sample and x in _writes(other):
            raise BadArgument(f"edge {e[0]}->{e[1]} of the body also writes '{x}'")
        if _writes(other) & set(free_vars(p)):
            raise BadArgument(f"edge {e[0]}->{e[1]} of the body writes the probability of `{x} ~ bern(…)`")
    if not _unavoidable(cfa, g.head, body, {g.sample}):
        raise BadArgument(f"a path through the loop body does not pass the sampling of '{x}'")
    e0 = _number(enc, p, enc.initial_env(), "probability")
    return [("EXITPROB", f"loop at node {g.head}", (e0 if exit_on_true else 1 - e0) > 0)]
