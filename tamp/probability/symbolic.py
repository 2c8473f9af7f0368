"""Symbolic values along one path: affine expressions over base variables and
Boolean formulas over linear atoms.

A base variable is an ``int`` id (see :mod:`tamp.probability.paths`); every sampled
real is an affine form over base variables (:class:`tamp.core.linear.Affine`, the one
linear-form type of every engine). A condition that depends on sampled reals is a :data:`Formula`: ``True``/``False``, a linear
literal :class:`Lit` (``aff <= 0``, ``aff < 0``, ``aff == 0`` or ``aff != 0``), or
:class:`And` / :class:`Or` / :class:`Not` of formulas.

:func:`cases` turns a formula into a list of *disjoint* conjunctions of literals
— the convex cells a path splits into — without any quantifier elimination.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, List, Union

from tamp.core.linear import Affine

ZERO = Fraction(0)


def as_affine(x) -> Affine:
    """Numbers and Affines as Affine."""
    if isinstance(x, Affine):
        return x
    return Affine.constant(Fraction(x))


def simplify(a: Affine):
    """A constant Affine becomes its Fraction; others stay."""
    return a.const if a.is_const else a


# --------------------------------------------------------------------------- formulas


@dataclass(frozen=True)
class Lit:
    """``aff op 0`` with op one of ``<=``, ``<``, ``==``, ``!=``."""

    aff: Affine
    op: str

    def negate(self) -> "Lit":
        if self.op == "<=":
            return Lit(self.aff.neg(), "<")
        if self.op == "<":
            return Lit(self.aff.neg(), "<=")
        return Lit(self.aff, "!=" if self.op == "==" else "==")


@dataclass(frozen=True)
class And:
    left: "Formula"
    right: "Formula"


@dataclass(frozen=True)
class Or:
    left: "Formula"
    right: "Formula"


@dataclass(frozen=True)
class Not:
    arg: "Formula"


Formula = Union[bool, Lit, And, Or, Not]


def compare(op: str, a, b) -> Formula:
    """The formula ``a op b`` for numbers/Affines (a Python bool when both are constants)."""
    d = as_affine(a).add(as_affine(b).neg())  # a - b
    if op in (">", ">="):
        d, op = d.neg(), "<" if op == ">" else "<="
    if d.is_const:
        c = d.const
        return {"<": c < 0, "<=": c <= 0, "==": c == 0, "!=": c != 0}[op]
    return Lit(d, op)


def f_and(a: Formula, b: Formula) -> Formula:
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return And(a, b)


def f_or(a: Formula, b: Formula) -> Formula:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return Or(a, b)


def f_not(a: Formula) -> Formula:
    if isinstance(a, bool):
        return not a
    if isinstance(a, Lit):
        return a.negate()
    if isinstance(a, Not):
        return a.arg
    return Not(a)


def f_iff(a: Formula, b: Formula) -> Formula:
    return f_or(f_and(a, b), f_and(f_not(a), f_not(b)))


def cases(f: Formula, want: bool = True) -> List[List[Lit]]:
    """Disjoint conjunctions of literals whose union is ``f`` (or ``!f`` when ``want`` is False).

    ``a && b`` false splits as ``!a`` or ``a && !b``, so the pieces never overlap and
    their probabilities add up.
    """
    if isinstance(f, bool):
        return [[]] if f == want else []
    if isinstance(f, Lit):
        return [[f if want else f.negate()]]
    if isinstance(f, Not):
        return cases(f.arg, not want)
    conj = isinstance(f, And) == want  # And wanted true, or Or wanted false: both parts
    if conj:
        return [x + y for x in cases(f.left, want) for y in cases(f.right, want)]
    first = cases(f.left, want)
    rest = [x + y for x in cases(f.left, not want) for y in cases(f.right, want)]
    return first + rest


def formula_vars(f: Formula) -> Iterable[int]:
    if isinstance(f, Lit):
        yield from f.aff.vars()
    elif isinstance(f, Not):
        yield from formula_vars(f.arg)
    elif isinstance(f, (And, Or)):
        yield from formula_vars(f.left)
        yield from formula_vars(f.right)
