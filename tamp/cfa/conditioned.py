"""Conditioning on the first draws: a program's leading uniform draws read as inputs.

``mine ~ unif(1, d); c := 0; for i in 0..n { b ~ unif(1, d); if (b == mine) { c := c + 1; } }``
counts the later draws equal to an earlier one. Given ``mine = v`` the count is a sum of
independent Bernoulli(1/d) indicators for every ``v`` in ``1..d``: its mean and variance are the
same for every value of the earlier draw, and Chebyshev's bound with them holds given each. The
engines that compute moments read a sum of fresh draws compared with an *input*; so the earlier
draw becomes one.

:func:`conditioned_program` takes the program's leading top-level draws ``x ~ unif(lo, hi)``
(an integer range) or ``x ~ unif({c1, …, ck})`` (a finite set) whose arguments read parameters
only, of a variable ``x`` that nothing after writes, and makes each ``x`` an input with its
support as a ``requires`` (``lo <= x && x <= hi``, or ``x == c1 || … || x == ck``); the claim and
its bound are the program's (the bound reads parameters only).

*Why sound.* Write ``P = x ~ D; R``. A run of ``P`` draws ``x = v`` with ``Pr[x = v]`` for each
``v`` of the support of ``D`` (non-empty: ``lo <= hi`` is an obligation under the program's
``requires``, :func:`support_obligations`; a set literal is never empty) and then runs ``R``
from ``x = v``, which is a run of the conditioned program at the input ``x = v``, where its
``requires`` holds. A proof of the conditioned program bounds ``Pr[R fails | x = v] <= β`` for
every such ``v`` (β does not read ``x``), so ``Pr[P fails] = Σ_v Pr[x = v]·Pr[R fails | x = v]
<= β`` (total probability). Several leading draws are conditioned on together (their joint
values, each in its support). ``R`` does not write ``x``, so the input is read-only as every
input is.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars, written_vars

__all__ = ["conditioned_program", "support_obligations"]


def _support(x: A.Var, dist: A.Expr) -> Optional[A.Expr]:
    """The support of ``unif(lo, hi)`` or ``unif({c1, …})`` as a formula of ``x``, else None."""
    if not (isinstance(dist, A.Call) and dist.func == "unif"):
        return None
    args = dist.args
    if len(args) == 2:
        return A.Binary("&&", A.Binary("<=", args[0], x), A.Binary("<=", x, args[1]))
    if len(args) == 1 and isinstance(args[0], A.SetLit) and args[0].items:
        out: Optional[A.Expr] = None
        for c in args[0].items:
            eq = A.Binary("==", x, c)
            out = eq if out is None else A.Binary("||", out, eq)
        return out
    return None


def _leading(prog: A.Program, types) -> List[Tuple[str, A.Sample, A.Expr]]:
    params = {p.name for p in prog.params}
    stmts = prog.body.stmts
    out: List[Tuple[str, A.Sample, A.Expr]] = []
    for k, st in enumerate(stmts):
        if not (isinstance(st, A.Sample) and len(st.targets) == 1 and isinstance(st.targets[0], A.Var)):
            break
        x = st.targets[0].name
        if x in params or types.get(x) != A.INT or not free_vars(st.dist) <= params:
            break
        if any(x in written_vars(s) for s in stmts[k + 1 :]) or any(x == n for n, _s, _f in out):
            break
        fact = _support(A.Var(x), st.dist)
        if fact is None:
            break
        out.append((x, st, fact))
    return out


def conditioned_program(prog: A.Program, types) -> Optional[Tuple[A.Program, Tuple[str, ...]]]:
    """``(program, names)``: ``prog`` with its leading uniform draws ``names`` made inputs (see the
    module docstring), or None when it starts with none."""
    lead = _leading(prog, types)
    if not lead:
        return None
    names = tuple(x for x, _s, _f in lead)
    rest = tuple(prog.body.stmts[len(lead) :])
    new = dataclasses.replace(
        prog,
        params=tuple(prog.params) + tuple(A.Param(x, A.INT, pos=st.pos) for x, st, _f in lead),
        requires=tuple(prog.requires) + tuple(f for _x, _s, f in lead),
        body=A.Block(rest, pos=prog.body.pos),
    )
    return new, names


def support_obligations(prog: A.Program, types) -> List[Tuple[str, str, A.Expr]]:
    """``(kind, where, formula)``: each conditioned integer range is non-empty, ``lo <= hi``, to be
    valid under the *program's* ``requires`` (so every input of the program has a run of the
    conditioned one)."""
    out: List[Tuple[str, str, A.Expr]] = []
    for x, st, _f in _leading(prog, types):
        args = st.dist.args
        if len(args) == 2:
            out.append(("SUPPORT", f"the values of {x} are not empty", A.Binary("<=", args[0], args[1])))
    return out
