"""Invariant expectations for loops that stop early: piecewise on the exit flag.

A loop ``while (C && go) B`` (or ``while (!done && C) B``) whose body sets the flag to its
*stop* value on some draw (``go := false``, ``done := true``) ends at the first such draw:
fixed-sequence testing stops at the first non-rejected hypothesis, a retry at the first
success, sequential sampling at the first defect. The failure after such a loop is often
*settled* long before the loop ends: in fixed-sequence testing ``v >= 1`` (a false rejection)
holds from the first rejecting draw on, and the loop keeps running; the union bound pays ``a``
for every test (``a·m``), while the true chance is ``a`` — a second rejection needs the first.

The proposals here read the invariant piecewise on the flag. Where the loop has stopped its
expected failure is the continuation ``F`` itself, so the part of the failure that is already
decided is ``F[flag := stop]`` — what the continuation would give if the loop stopped now;
where it runs, a template ``T`` bounds what the iterations left can still add:

    core = F[flag := stop] + T

with ``T`` one of (:func:`exit_cores`):

* ``0`` and the claimed bound ``β`` (over inputs only) — fixed-sequence testing:
  ``[v != 0] + a``;
* ``exp(-q·left)`` for a per-iteration chance ``q`` of the body
  (:func:`.powers.trial_chances`) and ``left`` the iterations left
  (:func:`.powers.iterations_left`): every iteration left must miss;
* ``q·left``: the union bound over the iterations left;
* for a count ``c`` that the body raises by 1 and an atom ``c >= K`` (``c > K - 1``) of the
  continuation with a literal ``K <= 4``: ``c >= K ? 0 : q^(K - c)`` written as a chain of
  products of ``q`` (``c == K - 1 ? q : c == K - 2 ? q·q : …``) for a ``bern(q)`` chance
  (``q`` or ``1 - q``), or the exact chance ``cnt/N`` that a ``unif`` draw passes a threshold
  test (:func:`.powers.count_chances`, its ``min``/``max`` settled under ``requires``) — the count reaches K only if the next K - c draws all come up before
  the loop stops; and ``q^(K - 1 - c)`` for a loop counter, whose last step to K is taken
  whatever the draw (K attempts need K - 1 misses first).

Why this is sound: these are only proposals, exactly like the other cores of
:mod:`tamp.prover.expectation.prove`. A core is accepted only when INDUCT
``g ⇒ wpe(B, g ? cap(core) : F) <= cap(core)`` is valid for every state (the solver decides,
``unknown`` is failure), TERM holds for the loop, and BUDGET compares the program's
pre-expectation with the claim. The piecewise reading is in the invariant
``g ? cap(core) : F`` the engine always uses: on exit the continuation, while running the core.
The certificate carries the core and ``tamp check-proof`` rebuilds every obligation from the
source and the core (:mod:`tamp.certificate.exp_rules`), so the rule adds no certificate
section and nothing here is trusted.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Dict, Iterator, List, Set, Tuple

from lang import ast as A
from lang.walk import free_vars, written_vars
from tamp.prover.base.exprs import conjuncts, subst

from .powers import _unit_counters, count_chances, iterations_left, trial_chances

ONE = A.num(1)
ZERO = A.num(0)
MAX_LEVEL = 4  # the largest literal threshold K whose power q^(K - c) is written as products
MAX_CORES = 24


def exit_flags(g: A.Expr, body: A.Stmt, types: Dict[str, A.Type]) -> List[Tuple[str, bool]]:
    """``(flag, stop)`` for each Boolean conjunct of the guard ``g`` that is a variable ``v``
    (stop value false) or its negation ``!v`` (stop value true) and that ``body`` sets to the
    stop value by an assignment of that literal (a sampled flag is :func:`.prove.flag_cores`')."""
    out: List[Tuple[str, bool]] = []
    for c in conjuncts(g):
        if isinstance(c, A.Var):
            name, stop = c.name, False
        elif isinstance(c, A.Unary) and c.op == "!" and isinstance(c.operand, A.Var):
            name, stop = c.operand.name, True
        else:
            continue
        if types.get(name) != A.BOOL or name not in written_vars(body):
            continue
        sets = any(
            isinstance(n, A.Assign) and n.targets == (A.Var(name),) and n.value == A.BoolLit(stop) for n in A.walk(body)
        )
        if sets and (name, stop) not in out:
            out.append((name, stop))
    return out


def _bern_chances(body: A.Stmt, fixed: Set[str]) -> List[A.Expr]:
    out: List[A.Expr] = []
    for n in A.walk(body):
        if isinstance(n, A.Sample) and n.dist.func == "bern" and len(n.dist.args) == 1:
            q = n.dist.args[0]
            for x in (q, A.Binary("-", ONE, q)):  # either outcome may be the one counted
                if set(free_vars(q)) <= fixed and x not in out:
                    out.append(x)
    return out


def _thresholds(f: A.Expr, counts: Set[str]) -> List[Tuple[str, int]]:
    """``(c, K)`` for each atom ``c >= K``, ``c > K - 1``, ``K <= c`` or ``K - 1 < c`` of ``f``
    (negations included: ``c <= K - 1`` is the same test) with ``c`` in ``counts`` and a
    literal integer ``1 <= K <= MAX_LEVEL``."""
    out: List[Tuple[str, int]] = []
    for n in A.walk(f):
        if not (isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=")):
            continue
        a, b, op = n.left, n.right, n.op
        if isinstance(b, A.Var) and isinstance(a, A.Num):
            a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        if not (isinstance(a, A.Var) and a.name in counts and isinstance(b, A.Num)):
            continue
        v = Fraction(b.value)
        if v.denominator != 1:
            continue
        k = int(v) + (1 if op in (">", "<=") else 0)  # c > v ⇔ c >= v + 1; c <= v ⇔ !(c >= v + 1)
        if 1 <= k <= MAX_LEVEL and (a.name, k) not in out:
            out.append((a.name, k))
    return out


def _power_chain(c: str, k: int, q: A.Expr, shift: int = 0) -> A.Expr:
    """``c >= K ? 0 : q^max(0, K - shift - c)`` as a chain of literal cases (``c == K - 1``,
    …, the last case for ``c <= 0``); the power written as a product of ``q``."""

    def power(j: int) -> A.Expr:
        out: A.Expr = ONE
        for _ in range(j):
            out = q if out == ONE else A.Binary("*", out, q)
        return out

    cv = A.Var(c)
    chain: A.Expr = power(k - shift)
    for d in range(1, k):  # c == d, from the bottom up so that the chain tests c == K - 1 first
        chain = A.Cond(A.Binary("==", cv, A.num(d)), power(max(0, k - shift - d)), chain)
    return A.Cond(A.Binary(">=", cv, A.num(k)), ZERO, chain)


def exit_cores(
    s: A.Stmt,
    f: A.Expr,
    beta: A.Expr,
    params: Set[str],
    types: Dict[str, A.Type],
    fold: Callable[[A.Expr], A.Expr],
    settle: Callable[[A.Expr], A.Expr] = lambda e: e,
) -> Iterator[A.Expr]:
    """The proposals ``F[flag := stop] + T`` of the module docstring for the loop ``s`` with
    continuation ``f`` (``fold`` simplifies an expression, ``settle`` settles the ``min``/``max``
    that ``requires`` orders: only the proposal's form)."""
    if not isinstance(s, A.While):
        return
    flags = exit_flags(s.cond, s.body, types)
    if not flags:
        return
    fixed = set(params)
    tails: List[A.Expr] = [ZERO]
    if set(free_vars(beta)) <= fixed:
        tails.append(beta)
    lefts = iterations_left(s)
    for q in trial_chances(s.body, fixed):
        for left in lefts:
            tails.append(A.Call("exp", (A.Binary("*", A.Unary("-", q), left),)))
            tails.append(A.Binary("*", q, left))
    counts = _unit_counters(s.body) & written_vars(s.body)
    chain_chances = _bern_chances(s.body, fixed)
    if _thresholds(f, counts):  # a uniform draw's exact chance of passing a test, settled
        for q in count_chances(s.body, f, fixed, types):
            q = fold(settle(q))
            if q not in chain_chances:
                chain_chances.append(q)
    for c, k in _thresholds(f, counts):
        for q in chain_chances:
            tails += [_power_chain(c, k, q), _power_chain(c, k, q, 1)]
    seen: List[A.Expr] = []
    for flag, stop in flags:
        settled = fold(subst(f, {flag: A.BoolLit(stop)}))
        for t in tails:
            core = fold(A.Binary("+", settled, t))
            if core not in seen:
                seen.append(core)
                yield core
            if len(seen) >= MAX_CORES:
                return
