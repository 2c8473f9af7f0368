"""A postcondition split into conjuncts, and the programs that claim a part of it.

The conjunct split (:mod:`tamp.prover.conjuncts`, re-checked by
:mod:`tamp.certificate.conj_checker`) reads ``ensures C1; …; Ck`` as the conjunction of its
*conjuncts*: each clause broken at its top-level ``&&``, and through ``!(x || y)`` into ``!x``
and ``!y`` (De Morgan; a double negation ``!!x`` is read as ``x``). A run satisfies the
postcondition exactly when it satisfies every conjunct, so for a set ``S`` of conjuncts and the
rest ``R``: the runs that fail the whole claim (a violated conjunct, a failed ``assert``, or no
end at all) are the runs that fail the claim ``ensures S`` or the claim ``ensures R`` of the same
program. The union bound then gives Pr[fail] <= Pr[fail S] + Pr[fail R]; more generally, for parts
``P_1, …, P_k`` that together hold every conjunct, Pr[fail] <= Σ Pr[fail P_i], so bounds
``s_i`` proved for the parts prove the claim's bound β when ``Σ s_i <= β`` (:func:`shares_fit`,
asked of the solver under ``requires``).

Both the prover and the checker build the two claims here, from the program alone:
:func:`conjuncts` and :func:`part_program`. Only plain failure-bound programs are split
(:func:`splittable`): a ``reliability`` claim adds its own conjunct and bound when compiled
(:func:`tamp.cfa.build_cfa`), and is left to the product rule.
"""

from __future__ import annotations

import dataclasses
from typing import List, Sequence

from lang import ast as A

__all__ = ["conjuncts", "part_program", "shares_fit", "splittable"]


def conjuncts(ensures: Sequence[A.Expr]) -> List[A.Expr]:
    """The conjuncts of the clauses ``ensures``, in source order, each once (a repeated
    conjunct is one condition)."""
    out: List[A.Expr] = []
    for e in ensures:
        for c in _split(e):
            if c not in out:
                out.append(c)
    return out


def _split(e: A.Expr) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "&&":
        return _split(e.left) + _split(e.right)
    if isinstance(e, A.Unary) and e.op == "!":
        inner = e.operand
        if isinstance(inner, A.Binary) and inner.op == "||":
            return _split(A.Unary("!", inner.left, pos=e.pos)) + _split(A.Unary("!", inner.right, pos=e.pos))
        if isinstance(inner, A.Unary) and inner.op == "!":
            return _split(inner.operand)
    return [e]


def splittable(prog: A.Program) -> bool:
    """Whether ``prog``'s claim is a plain failure bound the split applies to: no
    ``reliability`` (its compiled claim adds ``!failed`` and its own bound) and no value
    reliability, a postcondition of at least two conjuncts."""
    if prog.reliability is not None or prog.value_reliability is not None:
        return False
    return len(conjuncts(prog.ensures)) >= 2


def part_program(prog: A.Program, part: Sequence[A.Expr], bound: A.Expr) -> A.Program:
    """``prog`` (its failure-bound claim, inputs fixed) claiming only the conjuncts ``part``,
    each a clause of its own, with the bound ``bound`` (``fails``)."""
    return dataclasses.replace(prog, ensures=tuple(part), fails=bound)


def shares_fit(shares: Sequence[A.Expr], bound: A.Expr) -> A.Expr:
    """``s_1 + … + s_k <= bound``: the side condition of a split that gives each part a share
    ``s_i`` of the claim's bound (Pr[fail] <= Σ Pr[fail part i] <= Σ s_i); valid under
    ``requires`` it makes the parts' bounds prove the claim's."""
    total = shares[0]
    for s in shares[1:]:
        total = A.Binary("+", total, s)
    return A.Binary("<=", total, bound)
