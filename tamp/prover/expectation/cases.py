"""Case splits on a coin the loop only reads: ``x ? C_true : C_false`` cores.

A boolean ``x`` drawn before a loop (``in1 ~ bern(p1)``: the target's cell, a play that works)
and only read inside it makes the loop two different loops: with ``x`` true some branches of
its body never run, with ``x`` false others. The failure of the program is then the
``p``-weighted sum of the two conditional failures, ``p·Fail(x = true) + (1 - p)·Fail(x =
false)``, and each conditional failure is bounded by the power core of the loop that runs only
the branches ``x`` leaves (:mod:`.powers`). This module proposes, for a loop that reads such an
``x`` and does not write it,

    core = x ? F·exp(-a_t·m_t) : F·exp(-a_f·m_f)

where ``a_b`` is a trial chance of the body with ``x`` fixed to ``b`` and ``m_b`` counts the
iterations left in which that trial still happens: the header's ``hi - i`` or, when the trial
sits under a test ``i < c`` of the loop counter (a loop that skips part of its iterations),
``c - i`` in the then-branch and ``hi - max(i, c)`` in the else-branch (written
``i < c ? exp(-a·(hi - c)) : exp(-a·(hi - i))``) (:func:`guarded_lefts`).

Why sound: these are only proposals. The core is an ordinary invariant expectation of the loop,
a function of the state that includes ``x``; the loop search accepts it only when INDUCT is
valid for every state (so for either value of ``x``), and the weighting by the coin is not
assumed but computed: the pre-expectation of ``x ~ bern(p)`` on the loop's invariant is ``p·core[x
:= true] + (1 - p)·core[x := false]``, and BUDGET compares that with the claim. The
certificate carries the core, and ``tamp check-proof`` rebuilds INDUCT, TERM and BUDGET from the
source and that core (:mod:`tamp.certificate.exp_rules`), so a changed chance, count or branch
is rejected there without any search. For ``x`` with ``x`` true at iterations the trial no
longer runs, ``exp(-a·(c - i))`` exceeds 1 and the invariant's cap ``min(1, ·)`` makes it the
plain failure indicator, which is what those iterations keep.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Set

from lang import ast as A
from lang.walk import free_vars, written_vars
from tamp.prover.base.exprs import subst

from .powers import ONE, _minus, _product, iterations_left, trial_chances

MAX_CASE_CORES = 24  # the most proposals per loop (pairs of conditional cores)


def read_coins(s: A.Stmt, types: Dict[str, A.Type]) -> List[str]:
    """Boolean variables the loop ``s`` reads in a test of its body and never writes."""
    if not isinstance(s, (A.For, A.While)):
        return []
    written = set(written_vars(s.body))
    out: List[str] = []
    for n in A.walk(s.body):
        if isinstance(n, A.If):
            for v in free_vars(n.cond):
                if types.get(v) == A.BOOL and v not in written and v not in out:
                    out.append(v)
    return out


def _truth(e: A.Expr) -> Optional[bool]:
    if isinstance(e, A.BoolLit):
        return e.value
    if isinstance(e, A.Unary) and e.op == "!":
        t = _truth(e.operand)
        return None if t is None else not t
    if isinstance(e, A.Binary) and e.op in ("&&", "||"):
        a, b = _truth(e.left), _truth(e.right)
        if e.op == "&&":
            return False if (a is False or b is False) else (True if a and b else None)
        return True if (a is True or b is True) else (False if a is False and b is False else None)
    return None


def specialise(st: A.Stmt, x: str, value: bool) -> A.Stmt:
    """``st`` with every test that ``x = value`` decides replaced by the branch it takes (the
    statements that run when ``x`` has that value; used only to read chances and counts)."""
    lit = {x: A.BoolLit(value)}
    if isinstance(st, A.Block):
        return A.Block(tuple(specialise(t, x, value) for t in st.stmts))
    if isinstance(st, A.If):
        t = _truth(subst(st.cond, lit))
        then = specialise(st.then, x, value)
        other = specialise(st.other, x, value) if st.other is not None else None
        if t is True:
            return then
        if t is False:
            return other if other is not None else A.Block(())
        return A.If(st.cond, then, other)  # type: ignore[arg-type]
    if isinstance(st, A.For):
        return A.For(st.var, st.lo, st.hi, st.inclusive, specialise(st.body, x, value), st.invariants)  # type: ignore[arg-type]
    return st


def guarded_lefts(s: A.Stmt, body: A.Stmt, fixed: Set[str]) -> List[A.Expr]:
    """Counts of iterations left of the ``for`` loop ``s`` in which a draw of ``body`` runs: the
    header's :func:`.powers.iterations_left`, and for a draw under ``if (i < c)`` (c over
    ``fixed``) ``c - i`` when it is in the then-branch, ``hi - max(i, c)`` in the else-branch
    (as ``i < c ? hi - c : hi - i``)."""
    out = list(iterations_left(s))
    if not isinstance(s, A.For) or s.inclusive:
        return out
    i = A.Var(s.var)
    for n in A.walk(body):
        if not isinstance(n, A.If):
            continue
        c = n.cond
        if not (isinstance(c, A.Binary) and c.op == "<" and c.left == i and set(free_vars(c.right)) <= fixed):
            continue
        has = [any(isinstance(m, A.Sample) for m in A.walk(b)) for b in (n.then, n.other or A.Block(()))]
        if has[0] and not has[1]:
            out.append(_minus(c.right, i))
        if has[1] and not has[0]:
            out.append(A.Cond(A.Binary("<", i, c.right), _minus(s.hi, c.right), _minus(s.hi, i)))
    return out


def _power(a: A.Expr, m: A.Expr) -> A.Expr:
    """``exp(-a·m)``; a count ``i < c ? hi - c : hi - i`` as that test of two powers (each
    iteration then compares a power with the same power or with one more factor)."""
    if isinstance(m, A.Cond):
        return A.Cond(m.cond, _power(a, m.then), _power(a, m.other))
    return A.Call("exp", (A.Unary("-", A.Binary("*", a, m)),))


def case_cores(s: A.Stmt, f: A.Expr, params: List[str], types: Dict[str, A.Type]) -> Iterator[A.Expr]:
    """The proposals ``x ? F·exp(-a_t·m_t) : F·exp(-a_f·m_f)`` of the module docstring for the
    loop ``s`` with continuation ``f``, for each boolean ``x`` of :func:`read_coins`."""
    if not isinstance(s, (A.For, A.While)):
        return
    written = set(written_vars(s.body))
    fixed = {p for p in params if p not in written and types.get(p) in (A.INT, A.REAL)}
    count = 0
    for x in read_coins(s, types)[:2]:
        sides = []
        for value in (True, False):
            body = specialise(s.body, x, value)
            fb = subst(f, {x: A.BoolLit(value)})
            chances = trial_chances(body, fixed)
            lefts = guarded_lefts(s, body, fixed)[::-1]  # the guarded counts first
            opts = [_product([fb, _power(a, m)]) for m in lefts for a in chances]
            opts.append(fb if chances else _product([fb, ONE]))  # a side with no trial: F itself
            sides.append(opts)
        for ct in sides[0]:
            for cf in sides[1]:
                if count >= MAX_CASE_CORES:
                    return
                count += 1
                yield A.Cond(A.Var(x), ct, cf)
