"""Nested power cores: an inner loop's miss chance as a factor of the outer loop's power core.

``r`` runs of an inner loop of ``n`` coins ``bern(f)`` whose hits are counted (``c := c + 1``)
and summed (``total := total + c``) miss every time with probability ``((1 - f)^n)^r <=
exp(-f·n·r)``. The outer core is ``[total == 0]·exp(-f·n·(r - k))`` (the inner loop's trip
count multiplies its chance, :func:`.powers.trial_chances`), and the inner loop's core is its
continuation — the outer invariant after ``total := total + c`` — times ``exp(-f·(n - j))``:
one factor per inner coin, so the outer INDUCT step receives the inner loop's own result
``exp(-f·n)`` and multiplies it into ``exp(-f·n·(r - k - 1))``.

Both steps need to know that a hit can never be undone: ``total + c + 1 >= 1`` only if ``total
>= 0`` and ``c >= 0``. Neither is a loop counter, so :func:`sign_facts` reads them off the
program: a variable is a *count* when each assignment to it is a non-negative literal, itself
plus a non-negative literal, or itself plus a count (a fixpoint over the program, never by a
sample or any other write). The proposals are then ``facts ? F·P(m) : 1``.

Why sound: these are only proposals. ``facts`` is a guard of the core, not an assumption: a
state outside it gets the core 1, which bounds every failure chance, and INDUCT (decided by the
solver for every state, reachable or not) checks the core as a whole. The certificate carries
the core with its guard, and ``tamp check-proof`` rebuilds INDUCT, TERM and BUDGET from the
source (:mod:`tamp.certificate.exp_rules`), so a changed count, chance or guard is rejected.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Dict, Iterator, List, Optional, Set

from lang import ast as A
from lang.walk import free_vars

from .powers import power_cores


def counts_of(body: A.Stmt) -> Set[str]:
    """Variables every write of which keeps them >= 0 given they were (see the module)."""
    writes: Dict[str, List[Optional[A.Expr]]] = {}
    for n in A.walk(body):
        if isinstance(n, (A.Assign, A.Sample)):
            for t in n.targets:
                if isinstance(t, A.Var):
                    writes.setdefault(t.name, []).append(n.value if isinstance(n, A.Assign) else None)
                else:
                    for v in free_vars(t):
                        writes.setdefault(v, []).append(None)
        if isinstance(n, A.For):
            writes.setdefault(n.var, []).append(None)
    out = set(writes)
    changed = True
    while changed:
        changed = False
        for v in sorted(out):
            if not all(_keeps(v, e, out) for e in writes[v]):
                out.discard(v)
                changed = True
    return out


def _nonneg_literal(e: A.Expr) -> bool:
    return isinstance(e, A.Num) and Fraction(e.value) >= 0


def _keeps(v: str, e: Optional[A.Expr], counts: Set[str]) -> bool:
    if e is None:
        return False
    if _nonneg_literal(e):
        return True
    if isinstance(e, A.Binary) and e.op == "+":
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if a == A.Var(v) and (_nonneg_literal(b) or (isinstance(b, A.Var) and b.name in counts)):
                return True
    return False


def sign_facts(program_body: A.Stmt, f: A.Expr, s: A.Stmt) -> Optional[A.Expr]:
    """``v >= 0`` for each count (:func:`counts_of`) whose value the loop ``s`` carries: read by
    the continuation ``f``, or written in ``s`` only by increments (a count the loop resets
    first, ``c := 0``, is not a fact of the loop's head: the state before the program does not
    have it). None when there is none."""
    counts = counts_of(program_body)
    resets = set()
    for n in A.walk(s):
        if isinstance(n, A.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], A.Var):
            if _nonneg_literal(n.value):
                resets.add(n.targets[0].name)
    read = set(free_vars(f))
    for n in A.walk(s):
        if isinstance(n, A.Expr):
            read |= set(free_vars(n))
    vs = sorted(v for v in counts if v in set(free_vars(f)) or (v in read and v not in resets))
    if not vs:
        return None
    out: A.Expr = A.Binary(">=", A.Var(vs[0]), A.num(0))
    for v in vs[1:]:
        out = A.Binary("&&", out, A.Binary(">=", A.Var(v), A.num(0)))
    return out


def nested_power_cores(
    program_body: A.Stmt,
    s: A.Stmt,
    f: A.Expr,
    params: List[str],
    types: Dict[str, A.Type],
    settle: Optional[Callable[[A.Expr], A.Expr]] = None,
) -> Iterator[A.Expr]:
    """``facts ? F·P(m) : 1`` for the power cores ``F·P(m)`` of :func:`.powers.power_cores` and
    the counts' signs ``facts`` of :func:`sign_facts` (nothing when there are none)."""
    facts = sign_facts(program_body, f, s)
    if facts is None:
        return
    for c in power_cores(s, f, params, types, None, settle):
        yield A.Cond(facts, c, A.num(1))
