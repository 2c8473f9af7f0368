"""Lower bounds on an iteration's success chance from one success pattern.

An iteration that draws a coin ``play ~ bern(pp)`` and then, in a loop of ``w >= 1`` steps, a
coin ``s ~ bern(pq)`` under ``if (play)`` succeeds at least when ``play`` and the FIRST ``s``
both come up: one success pattern of chance ``pp·pq``. So the iteration misses with chance at
most ``1 - pp·pq``, and ``m`` iterations all miss with chance at most ``(1 - pp·pq)^m <=
exp(-pp·pq·m)`` — whatever the later draws do (they can only add successes).

Two kinds of proposals make this an induction (:func:`pattern_cores`):

* for the loop that runs the iterations, the power core ``facts ? F·exp(-p·q·m) : 1`` with
  ``p·q`` the chance of a pattern (:func:`pattern_chances`: a ``bern(q)`` draw inside an ``if``
  on a boolean drawn by ``bern(p)`` in the same iteration, at any depth of nested loops);
* for the loop inside the iteration, ``facts ? F·(G && left > 0 ? 1 - q : 1) : 1`` (G the tests
  that enclose the draw inside that loop, ``left`` its iterations left): "while a draw remains
  and its guard holds, the rest of this loop misses with chance at most 1 - q".

``facts`` are the signs of the counts the loops carry (:func:`.nested.sign_facts`).

Why sound: these are only proposals. Each core is accepted only when its INDUCT is valid for
every state (decided by the solver with the product lemmas), the coin's weighting is computed by
the pre-expectation of its sample, and BUDGET compares the result with the claim; the
certificate carries the cores and ``tamp check-proof`` rebuilds every obligation from the source
(:mod:`tamp.certificate.exp_rules`), so a changed chance or guard is rejected.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Set, Tuple

from lang import ast as A
from lang.walk import free_vars, written_vars

from .nested import sign_facts
from .powers import ONE, _minus, iterations_left

MAX_PATTERNS = 4


def _bern_draws(body: A.Stmt) -> Dict[str, A.Expr]:
    out: Dict[str, A.Expr] = {}
    for n in A.walk(body):
        if isinstance(n, A.Sample) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var):
            if n.dist.func == "bern" and len(n.dist.args) == 1:
                out[n.targets[0].name] = n.dist.args[0]
    return out


def guarded_draws(body: A.Stmt) -> List[Tuple[List[A.Expr], A.Expr]]:
    """``(tests, q)`` for each ``bern(q)`` sample of ``body``: the tests of the ``if`` branches
    that enclose it (negated in an else-branch), outermost first; loops are looked through."""
    out: List[Tuple[List[A.Expr], A.Expr]] = []

    def visit(st: A.Stmt, tests: List[A.Expr]) -> None:
        if isinstance(st, A.Block):
            for t in st.stmts:
                visit(t, tests)
        elif isinstance(st, A.If):
            visit(st.then, tests + [st.cond])
            if st.other is not None:
                visit(st.other, tests + [A.Unary("!", st.cond)])
        elif isinstance(st, (A.For, A.While)):
            visit(st.body, tests)
        elif isinstance(st, A.Sample) and st.dist.func == "bern" and len(st.dist.args) == 1:
            out.append((tests, st.dist.args[0]))

    visit(body, [])
    return out


def pattern_chances(body: A.Stmt, fixed: Set[str]) -> List[A.Expr]:
    """``p·q`` for a ``bern(q)`` draw of ``body`` under ``if (x)`` with ``x ~ bern(p)`` drawn in
    ``body`` (``(1 - p)·q`` under ``if (!x)``), p and q over ``fixed``."""
    coins = _bern_draws(body)
    out: List[A.Expr] = []
    for tests, q in guarded_draws(body):
        if not set(free_vars(q)) <= fixed:
            continue
        for t in tests:
            neg = isinstance(t, A.Unary) and t.op == "!"
            v = t.operand if neg else t  # type: ignore[union-attr,attr-defined]
            if isinstance(v, A.Var) and v.name in coins and set(free_vars(coins[v.name])) <= fixed:
                p = coins[v.name]
                e = A.Binary("*", _minus(ONE, p) if neg else p, q)
                if e not in out:
                    out.append(e)
    return out[:MAX_PATTERNS]


def pattern_cores(
    program_body: A.Stmt, s: A.Stmt, f: A.Expr, params: List[str], types: Dict[str, A.Type], step: bool = False
) -> Iterator[A.Expr]:
    """The proposals of the module docstring for the loop ``s`` with continuation ``f``: the
    power cores of a pattern's chance, or with ``step`` the ``1 - q`` cores of a loop inside an
    iteration (proposed after the nested power cores: valid but weaker than ``exp(-q·m)`` for a
    loop whose draws always run, and the search keeps an inner loop's first valid core)."""
    if not isinstance(s, (A.For, A.While)):
        return
    facts = sign_facts(program_body, f, s)
    written = set(written_vars(s.body))
    fixed = {p for p in params if p not in written and types.get(p) in (A.INT, A.REAL)}

    def guard(c: A.Expr) -> A.Expr:
        return c if facts is None else A.Cond(facts, c, ONE)

    lefts = iterations_left(s)
    if not step:
        for a in pattern_chances(s.body, fixed):
            for m in lefts:
                yield guard(A.Binary("*", f, A.Call("exp", (A.Unary("-", A.Binary("*", a, m)),))))
        return
    for tests, q in guarded_draws(s.body):
        if not set(free_vars(q)) <= fixed or any(set(free_vars(t)) & written for t in tests):
            continue
        for m in lefts:
            g: A.Expr = A.Binary(">", m, A.num(0))
            for t in reversed(tests):
                g = A.Binary("&&", t, g)
            yield guard(A.Binary("*", f, A.Cond(g, _minus(ONE, q), ONE)))
