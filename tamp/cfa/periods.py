"""A flag loop taken in blocks of ``k`` iterations: the period of a body that reads ``c mod k``.

When the body ``B`` of a flag loop ``for c in 0..hi`` (:class:`tamp.cfa.nesting.FlagLoop`)
branches on its counter modulo a small literal ``k`` (``if (c mod 2 == 0) {…} else {…}``), no
single per-iteration bound need fit every iteration, but every *block* of ``k`` consecutive
iterations is alike. When ``hi = k·M`` (valid under ``requires``, ``M`` an integer expression),
the loop is the same as the *block loop*

    for j in 0..M { B[c := k·j]; G(B[c := k·j + 1]); …; G(B[c := k·j + k - 1]) }

where ``G(S)`` is ``if (v == b0) { S }`` for a loop that stops once its flag moved (the
original runs iteration ``k·j + r`` exactly when the flag is still at ``b0``: the test the
early exit made) and ``S`` itself otherwise. In each copy, ``(k·j + r) mod d`` for a literal
``d`` dividing ``k`` is written ``r mod d``: ``j >= 0`` in the block loop's range and ``r >= 0``,
so ``k·j + r >= 0`` and ``(k·j + r) mod d = r mod d`` (``d`` divides ``k·j``), whatever the sign
convention of ``mod`` for negative numbers. Both loops run the same statements in the same
order (iteration ``c = k·j + r`` is copy ``r`` of block ``j``; when ``hi <= 0`` neither runs),
so the program with the block loop has the same distribution of final states; the block loop is
a flag loop of the same form, flag and early exit, and the per-iteration composition
(:mod:`tamp.cfa.nesting`) applies to it as to any flag loop, its iteration program being one
block. ``tamp check-proof`` rebuilds the block loop from the period alone and re-checks
``hi == k·M`` (:mod:`tamp.certificate.nest_checker`).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import List, Optional

from lang import ast as A
from lang.walk import Transformer, free_vars, substitute

__all__ = ["PERIODS", "period_of", "block_loop", "block_count", "periodic", "period_loop"]

#: the periods tried: a body alternating over more kinds of iterations is rare and its block long
PERIODS = (2, 3, 4)


def _literal_int(e: A.Expr) -> Optional[int]:
    if isinstance(e, A.Num) and e.value.denominator == 1:
        return int(e.value)
    return None


def _rebinds(loop: A.For) -> bool:
    """The body binds the counter's name again (a ``sum``, quantifier or ``for``): a ``c mod d``
    there is not the counter's, so no block is built."""
    return any(isinstance(n, (A.Sum, A.Quant, A.For)) and n.var == loop.var for n in A.walk(loop.body))


def period_of(loop: A.For) -> Optional[int]:
    """The least common multiple of the literal moduli ``d`` in ``c mod d`` the body reads (``c``
    the loop's counter), when it is one of :data:`PERIODS`; else None."""
    if _rebinds(loop):
        return None
    mods = {
        _literal_int(n.right)
        for n in A.walk(loop.body)
        if isinstance(n, A.Binary) and n.op == "mod" and n.left == A.Var(loop.var)
    }
    if not mods or None in mods or any(d is None or d < 2 for d in mods):
        return None
    k = 1
    for d in mods:
        assert d is not None
        a, b = k, d
        while b:
            a, b = b, a % b
        k = k * d // a
    return k if k in PERIODS else None


def _is_int_expr(e: A.Expr, types) -> bool:
    """``e`` is built from integer literals and ``int`` variables by ``+``, ``-``, ``*``."""
    for n in A.walk(e):
        if isinstance(n, A.Var) and types.get(n.name) != A.INT:
            return False
        if isinstance(n, A.Num) and n.value.denominator != 1:
            return False
        if isinstance(n, A.Binary) and n.op not in ("+", "-", "*"):
            return False
        if isinstance(n, A.Unary) and n.op != "-":
            return False
        if not isinstance(n, (A.Var, A.Num, A.Binary, A.Unary)):
            return False
    return True


def block_count(loop: A.For, k: int, types) -> Optional[A.Expr]:
    """``M`` with ``hi = k·M`` written as such (``hi`` is ``c * M`` or ``M * c`` for a literal
    multiple ``c`` of ``k``, ``M`` then ``(c/k) * M``, or a literal multiple of ``k``), for a loop ``for c in 0..hi`` (exclusive); ``M`` an integer expression."""
    if loop.lo != A.num(0) or loop.inclusive:
        return None
    hi = loop.hi
    m: Optional[A.Expr] = None
    lit = _literal_int(hi)
    if lit is not None and lit % k == 0:
        m = A.num(lit // k)
    elif isinstance(hi, A.Binary) and hi.op == "*":
        for lit_side, other in ((hi.left, hi.right), (hi.right, hi.left)):
            c = _literal_int(lit_side)
            if c is not None and c > 0 and c % k == 0:
                m = other if c == k else A.Binary("*", A.num(c // k), other)
                break
    return m if m is not None and _is_int_expr(m, types) else None


class _Residue(Transformer):
    """``c mod d`` (``d`` a literal dividing ``k``) becomes ``r mod d``."""

    def __init__(self, c: str, k: int, r: int) -> None:
        super().__init__()
        self.c, self.k, self.r = c, k, r

    def Binary(self, node: A.Binary, kids):  # noqa: N802 - named after the node class
        d = _literal_int(node.right)
        if node.op == "mod" and node.left == A.Var(self.c) and d is not None and d >= 1 and self.k % d == 0:
            return A.Num(Fraction(self.r % d), True, pos=node.pos)
        return self.default(node, kids)


def _copy(body: A.Block, c: str, j: str, k: int, r: int) -> A.Block:
    reduced = _Residue(c, k, r).walk(body)
    at: A.Expr = A.Binary("*", A.num(k), A.Var(j))
    if r:
        at = A.Binary("+", at, A.num(r))
    out = substitute(reduced, {c: at})
    assert isinstance(out, A.Block)
    return out


def block_loop(loop: A.For, k: int, m: A.Expr, flag: str, start: bool, early_exit: bool, taken) -> Optional[A.For]:
    """The block loop (module docstring) of ``loop`` for the period ``k`` and ``hi = k·m``;
    ``taken``: the names in use (the block counter gets a fresh one). None when ``c`` is written."""
    c = loop.var
    j, i = c + "$block", 1
    while j in taken:
        i += 1
        j = f"{c}$block{i}"
    if c in free_vars(m):
        return None
    stmts: List[A.Stmt] = []
    for r in range(k):
        copy = _copy(loop.body, c, j, k, r)
        if r and early_exit:
            test = A.Binary("==", A.Var(flag), A.BoolLit(start))
            stmts.append(A.If(test, copy, None, pos=loop.body.pos))
        else:
            stmts.extend(copy.stmts)
    return dataclasses.replace(
        loop, var=j, lo=A.num(0), hi=m, inclusive=False, body=A.Block(tuple(stmts), pos=loop.body.pos), invariants=()
    )


def periodic(prog: A.Program, fl, types, k: int):
    """The flag loop ``fl`` (:class:`tamp.cfa.nesting.FlagLoop`) of ``prog`` with its loop
    replaced by the block loop of period ``k`` (module docstring), or None when its range is not
    ``0..k·M`` or it has a rest next to the flag (read where the loop stopped, mid-block)."""
    if k not in PERIODS or fl.rest is not None or _rebinds(fl.loop):
        return None
    m = block_count(fl.loop, k, types)
    if m is None:
        return None
    taken = {p.name for p in prog.params} | set(types) | {n.var for n in A.walk(prog.body) if isinstance(n, A.For)}
    loop = block_loop(fl.loop, k, m, fl.flag, fl.start, fl.early_exit, taken)
    return None if loop is None else dataclasses.replace(fl, loop=loop)


def period_loop(prog: A.Program, fl, types):
    """``(block flag loop, k)`` for the period ``k`` the body of ``fl`` reads (:func:`period_of`),
    or None."""
    k = period_of(fl.loop)
    got = None if k is None else periodic(prog, fl, types, k)
    return None if got is None or k is None else (got, k)
