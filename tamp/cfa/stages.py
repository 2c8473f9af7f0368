"""Two stages in sequence, their success chances multiplied: the *stage product*.

A program ``P; for r in lo..hi { B }; S`` (any top-level ``for`` whose range reads parameters
only and runs at least once under ``requires``) is cut after the loop's first iteration:

- **stage 1** is ``P; r := lo; B`` (the prefix and the first iteration), with the claim ``I``
  and the bound ``1 - a``;
- **stage 2** is ``for r in lo+1..hi { B }; S`` (the other iterations and the rest), run from
  *any* state that satisfies ``I`` — every variable it reads that stage 1 left is an input
  ``x$in`` copied into ``x``, and ``requires`` gains ``I`` over those inputs — with the
  program's own claim ``φ`` and the bound ``1 - b``.

``I`` is ``φ`` carried back through ``S`` when ``S`` is deterministic (assignments and ``if``s:
its weakest precondition), else ``φ`` itself. A claim whose bound is ``β = 1 - X`` with ``X`` a
product of factors is split into ``a`` (some of the factors) and ``b`` (the others).

Why it is sound. By the Markov property of the run at the cut, Pr[φ at the end] = E[Pr[φ |
the state at the cut]] >= E[1(I at the cut)·Pr[φ | state]] >= Pr[I at the cut]·b, because from
every state satisfying ``I`` (and ``requires``, which no statement changes: it reads parameters)
stage 2 reaches ``φ`` with chance at least ``b`` (its proof holds for all its inputs, a run that
does not end counting as failing). With Pr[I at the cut] >= a (stage 1's proof) and ``b >= 0``,
Pr[φ] >= Pr[I]·b >= a·b; when ``b < 0`` but ``a >= 0``, a·b <= 0 <= Pr[φ] (one of the two is
asked under ``requires``). So Pr[fail] <= 1 - a·b <= β (asked). Lower bounds of
nonnegative factors multiply: this is the product of per-stage chances that textbook arguments
write ``p·(1-p)^(d-1)``, with each stage's chance proved by any method (``(1-p)^(d-1) >= 1 -
(d-1)p``, Bernoulli's inequality, is the union bound over the later iterations). The cut in a
loop is sound only when the loop runs at least once (``hi - lo >= 1``, asked) and ``B`` does not
write ``r`` (a ``for`` counter), so that ``r := lo; B`` is its first iteration and the stage-2
loop the rest.

The prover (:mod:`tamp.prover.nesting.stages`) and ``tamp check-proof``
(:mod:`tamp.certificate.nest_checker`, form ``stages``) both build the stages with this module.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars, substitute, written_vars

from .nesting import _wp, entry_copy, live_in

__all__ = ["stage_cuts", "stage_programs", "stage_composition", "one_minus"]

#: the scalar types a stage-2 input may have
_SCALAR = (A.INT, A.REAL, A.BOOL)


def one_minus(bound: A.Expr) -> Optional[A.Expr]:
    """``X`` when ``bound`` is written ``1 - X``, else None."""
    if isinstance(bound, A.Binary) and bound.op == "-" and bound.left == A.num(1):
        return bound.right
    return None


def stage_cuts(prog: A.Program) -> List[int]:
    """The indices of the top-level ``for`` loops the program can be cut in (last first)."""
    params = {p.name for p in prog.params}
    out = []
    for i, st in enumerate(prog.body.stmts):
        if not isinstance(st, A.For) or st.var in written_vars(st.body):
            continue
        if not (free_vars(st.lo) | free_vars(st.hi)) <= params:
            continue
        if any(isinstance(n, A.Assume) for n in A.walk(st.body)):
            continue
        out.append(i)
    return out[::-1]


def _trips(loop: A.For) -> A.Expr:
    n: A.Expr = A.Binary("-", loop.hi, loop.lo)
    return A.Binary("+", n, A.num(1)) if loop.inclusive else n


def stage_programs(
    prog: A.Program, types: Dict[str, A.Type], cut: int, a: A.Expr, b: A.Expr
) -> Optional[Tuple[A.Program, A.Program]]:
    """``(stage 1, stage 2)`` of ``prog`` cut after the first iteration of its top-level loop
    ``cut`` (see the module docstring), or None when the cut is not one of :func:`stage_cuts`,
    ``a``/``b`` read more than parameters, or an input's type is not a scalar."""
    if cut not in stage_cuts(prog) or len(prog.ensures) != 1:
        return None
    params = {p.name for p in prog.params}
    if not (free_vars(a) | free_vars(b)) <= params:
        return None
    stmts = tuple(prog.body.stmts)
    loop = stmts[cut]
    assert isinstance(loop, A.For)
    phi = prog.ensures[0]
    inv = _wp(stmts[cut + 1 :], phi)
    if inv is None:
        inv = phi
    pos = loop.pos
    first = stmts[:cut] + (A.Assign((A.Var(loop.var),), loop.lo, pos=pos),) + tuple(loop.body.stmts)
    one = dataclasses.replace(
        prog,
        name=prog.name + "$stage1",
        body=A.Block(first, pos=prog.body.pos),
        ensures=(inv,),
        fails=A.Binary("-", A.num(1), a),
        rate=None,
        reliability=None,
        neighbours=None,
        private=None,
    )
    rest_loop = dataclasses.replace(loop, lo=A.Binary("+", loop.lo, A.num(1)))
    rest = (rest_loop,) + stmts[cut + 1 :]
    needed: FrozenSet[str] = live_in(A.Block(rest, pos=pos), free_vars(phi)) | free_vars(inv)
    needed = needed - params
    taken = set(params) | set(types)
    new_params: List[A.Param] = []
    copies: List[A.Stmt] = []
    rename: Dict[str, A.Expr] = {}
    for x in sorted(needed):
        t = types.get(x)
        if t not in _SCALAR:
            return None
        rename[x] = entry_copy(x, t, taken, new_params, copies, pos)
    two = dataclasses.replace(
        prog,
        name=prog.name + "$stage2",
        params=tuple(prog.params) + tuple(new_params),
        body=A.Block(tuple(copies) + rest, pos=prog.body.pos),
        requires=tuple(prog.requires) + (substitute(inv, rename),),
        ensures=(phi,),
        fails=A.Binary("-", A.num(1), b),
        rate=None,
        reliability=None,
        neighbours=None,
        private=None,
    )
    return one, two


def stage_composition(prog: A.Program, bound: A.Expr, cut: int, a: A.Expr, b: A.Expr) -> List[Tuple[str, A.Expr]]:
    """The side conditions, each to be valid under ``requires``: the loop runs at least once,
    ``b >= 0`` or ``a >= 0``, and ``1 - a·b <= β``."""
    loop = prog.body.stmts[cut]
    assert isinstance(loop, A.For)
    return [
        ("the loop runs at least once", A.Binary(">=", _trips(loop), A.num(1))),
        (
            "a chance is nonnegative",
            A.Binary("||", A.Binary(">=", b, A.num(0)), A.Binary(">=", a, A.num(0))),
        ),
        ("1 - a·b <= β", A.Binary("<=", A.Binary("-", A.num(1), A.Binary("*", a, b)), bound)),
    ]
