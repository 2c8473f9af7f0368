"""Rows that share draws made before their loop: the iteration program that draws them itself.

A union-form flag loop (:mod:`tamp.cfa.nesting`) whose rows read draws made *before* the loop —
set balancing's sign vector ``for j in 0..m { b[j] ~ unif({-1, 1}); }`` drawn once, then every
row ``i`` tests ``|Σ_j a[i·m + j]·b[j]| >= t`` — gets from :func:`tamp.cfa.nesting.iteration_program`
an iteration program with ``b`` as an input: a worst case over the signs, which no bound below 1
survives. The union bound over the rows needs no independence between them, only each row's
*marginal* chance of moving the flag; and that chance is the chance of the program that makes
the prefix's draws itself and then runs the row.

:func:`shared_iteration_program` builds it: the program's parameters and the loop counter ``c``
(``lo <= c < hi``) as inputs, the prefix ``P`` as written, the flag set to its start value,
the body ``B``; claim and per-iteration bound as in :func:`tamp.cfa.nesting.iteration_program`.
The body's top-level bookkeeping that the flag does not depend on is dropped first
(:func:`unread_dropped`). It applies to the union form without an early exit only, and only when every variable the body
(or the loop's range) reads, besides the parameters, the counter and the flag, is one the loop
does not write; the prefix neither reads nor writes the counter's name.

*Why sound.* Write ``Pr[iteration c moves the flag]`` for the run of the program. The variables
iteration ``c`` reads are the parameters, ``c``, the flag (``b0`` when it has not moved) and
variables the loop never writes — so they hold the values the prefix left; and its draws are
fresh, independent of the prefix's and of the earlier iterations'. So the event "iteration
``c`` starts with the flag at ``b0`` and moves it" is contained in the event that a run of
``P; v := b0; B`` (at counter ``c``) moves it, whose draws have the same joint law: the
probability the iteration program bounds by ``u(c)``. The flag moved at the end only if some
iteration started at ``b0`` and moved it (or a run did not end, which the iteration program
counts as failing too: ``P`` ends, and a ``B`` that does not end is a failure of it), so
``Pr[fail] <= Σ_c u(c)``, the union composition of :func:`tamp.cfa.nesting.composition`.

*Draw fusion* (:func:`fuse_draws`). Concentration reads a sum of independent draws made in the
iteration of the loop that sums them; a vector drawn by an earlier loop over the same range is
moved into it: ``for j in lo..hi { x[j] ~ D(j); } S; for k in lo..hi { B }`` becomes ``S; for k
in lo..hi { x[k] ~ D(k); B }`` when (all at the top level) ``D`` and the range read only
parameters, ``S`` neither reads nor writes ``x``, ``B`` does not write ``x``, reads it only as
``x[k]`` and binds no other ``k``, and nothing after the loop reads ``x``. The two programs give
every run the same law: the draws ``x[lo..hi)`` are independent, nothing reads ``x[k]`` before
iteration ``k`` (``S`` does not read ``x``, iterations before ``k`` read only their own
element), and ``D(k)`` reads values that never change, so drawing ``x[k]`` at the start of
iteration ``k`` instead of before ``S`` changes neither the law of the draws nor any value
computed from them. The iteration program is fused before it is proved, and ``tamp
check-proof`` rebuilds the same fused program with this module.
"""

from __future__ import annotations

import dataclasses
from typing import FrozenSet, List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars, substitute, written_vars

from .epilogue import deterministic
from .nesting import FlagLoop, live_in

__all__ = ["shared_iteration_program", "fuse_draws", "reads_shared_draws", "unread_dropped"]


def _has_sample(stmts) -> bool:
    return any(isinstance(n, A.Sample) for s in stmts for n in A.walk(s))


def reads_shared_draws(prog: A.Program, fl: FlagLoop) -> bool:
    """The prefix samples, and the body reads a variable the prefix writes and the loop does not
    (the case the plain iteration program turns into a worst case over the prefix's draws)."""
    params = {p.name for p in prog.params}
    loop = fl.loop
    needed = (
        live_in(unread_dropped(loop.body, fl.flag), frozenset()) | free_vars(loop.lo) | free_vars(loop.hi)
    ) - params
    needed -= {loop.var, fl.flag}
    prefix_writes = frozenset().union(*(written_vars(s) for s in fl.prefix)) if fl.prefix else frozenset()
    return _has_sample(fl.prefix) and bool(needed & prefix_writes)


def shared_iteration_program(
    prog: A.Program, fl: FlagLoop, types, per_iteration: A.Expr, suffix: str = "$iter"
) -> Optional[A.Program]:
    """``P; v := b0; B`` with the parameters and the counter as inputs, fused
    (:func:`fuse_draws`), or None when the rule does not apply (see the module docstring)."""
    if fl.form != "union" or fl.early_exit or fl.rest is not None:
        return None
    params = {p.name for p in prog.params}
    loop, v = fl.loop, fl.flag
    if not set(free_vars(per_iteration)) <= params | {loop.var}:
        return None
    body = unread_dropped(loop.body, v)
    needed = (live_in(body, frozenset()) | free_vars(loop.lo) | free_vars(loop.hi)) - params - {loop.var, v}
    if needed & written_vars(body):
        return None  # the iteration reads state the loop carries: not the prefix's values
    prefix = tuple(fl.prefix)
    if any(loop.var in free_vars(s) | written_vars(s) for s in prefix):
        return None
    if not reads_shared_draws(prog, fl):
        return None
    c = A.Var(loop.var)
    in_range = A.Binary("&&", A.Binary("<=", loop.lo, c), A.Binary("<=" if loop.inclusive else "<", c, loop.hi))
    stmts = prefix + (A.Assign((A.Var(v),), A.BoolLit(fl.start), pos=loop.pos),) + tuple(body.stmts)
    stmts = fuse_draws(stmts, frozenset(params) | {loop.var})
    return dataclasses.replace(
        prog,
        name=prog.name + suffix,
        params=tuple(prog.params) + (A.Param(loop.var, A.INT, pos=loop.pos),),
        body=A.Block(stmts, pos=body.pos),
        requires=tuple(prog.requires) + (in_range,),
        ensures=(fl.ensures,),
        fails=per_iteration,
        rate=None,
        reliability=None,
        neighbours=None,
        private=None,
    )


def _dropped(body: A.Block, keep_vars: FrozenSet[str]) -> A.Block:
    stmts = list(body.stmts)
    while True:
        live, keep = keep_vars, []
        for st in reversed(stmts):
            if deterministic(st) and not (written_vars(st) & live):
                continue
            keep.append(st)
            live = live_in(st, live)
        keep.reverse()
        if len(keep) == len(stmts):
            return A.Block(tuple(stmts), pos=body.pos)
        stmts = keep


def unread_dropped(body: A.Block, flag: str) -> A.Block:
    """``body`` without its top-level deterministic statements (:func:`tamp.cfa.epilogue.deterministic`:
    scalar assignments of total expressions, branches on total tests) that write only variables
    the flag does not depend on, in this iteration or a later one — a row's bookkeeping such as
    ``if (size > largest) { largest := size; }``. The variables it depends on are a fixpoint:
    ``R = {flag} ∪ live_in(body without the statements writing no R-variable, R)``, so a carry
    ``s := carry; …; carry := s`` that a later row reads stays. Such a statement always ends,
    never fails, draws nothing and writes no variable of ``R``, whose updates read only ``R``,
    the draws and values nothing writes: every iteration moves the flag exactly as before."""
    relevant: FrozenSet[str] = frozenset({flag})
    while True:
        kept = _dropped(body, relevant)
        grown = relevant | live_in(kept, relevant)
        if grown == relevant:
            return kept
        relevant = grown


def _fill(s: A.Stmt, fixed: frozenset) -> Optional[Tuple[str, A.Sample]]:
    """``(x, x[j] ~ D(j))`` when ``s`` is ``for j in lo..hi { x[j] ~ D(j); }`` with ``D`` and the
    range reading only ``fixed`` names (and ``j``)."""
    if not (isinstance(s, A.For) and len(s.body.stmts) == 1 and not s.invariants):
        return None
    st = s.body.stmts[0]
    if not (isinstance(st, A.Sample) and len(st.targets) == 1 and isinstance(st.targets[0], A.Index)):
        return None
    tgt = st.targets[0]
    if not (isinstance(tgt.base, A.Var) and tgt.index == A.Var(s.var)):
        return None
    if not (free_vars(st.dist) <= fixed | {s.var} and (free_vars(s.lo) | free_vars(s.hi)) <= fixed):
        return None
    return tgt.base.name, st


def _reads_only_at(body: A.Block, x: str, k: str) -> bool:
    """``body`` reads ``x`` only as ``x[k]``, never writes it, and binds no other ``k``."""
    if x in written_vars(body) or k in written_vars(body):
        return False
    nodes = list(A.walk(body))
    if any(getattr(n, "var", None) == k for n in nodes):
        return False
    uses = sum(1 for n in nodes if isinstance(n, A.Var) and n.name == x)
    at_k = sum(1 for n in nodes if isinstance(n, A.Index) and n.base == A.Var(x) and n.index == A.Var(k))
    return uses == at_k


def _mentions(s: A.Stmt, x: str) -> bool:
    return x in free_vars(s) or x in written_vars(s) or any(isinstance(n, A.Var) and n.name == x for n in A.walk(s))


def fuse_draws(stmts: Tuple[A.Stmt, ...], fixed: frozenset) -> Tuple[A.Stmt, ...]:
    """``stmts`` (top level) with every draw loop moved into the one later loop over the same range
    that reads it (see the module docstring; ``fixed``: the names no statement writes)."""
    out: List[A.Stmt] = list(stmts)
    p = 0
    while p < len(out):
        got = _fill(out[p], fixed)
        if got is None:
            p += 1
            continue
        x, sample = got
        fill = out[p]
        assert isinstance(fill, A.For)
        q = next((q for q in range(p + 1, len(out)) if _mentions(out[q], x)), None)
        use = out[q] if q is not None else None
        if (
            q is None
            or not isinstance(use, A.For)
            or (use.lo, use.hi, use.inclusive) != (fill.lo, fill.hi, fill.inclusive)
            or any(_mentions(s, x) for s in out[q + 1 :])
            or not _reads_only_at(use.body, x, use.var)
            or use.var in free_vars(sample.dist) - {fill.var}
        ):
            p += 1
            continue
        k = A.Var(use.var)
        dist = substitute(sample.dist, {fill.var: k})
        assert isinstance(dist, A.Call)  # a call with its arguments renamed is a call
        draw = A.Sample((A.Index(A.Var(x), k, pos=sample.pos),), dist, pos=sample.pos)
        fused = dataclasses.replace(use, body=dataclasses.replace(use.body, stmts=(draw,) + tuple(use.body.stmts)))
        out = out[:p] + out[p + 1 : q] + [fused] + out[q + 1 :]
    return tuple(out)
