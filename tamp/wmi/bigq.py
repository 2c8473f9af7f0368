"""Fast exact rationals for the hot sums of the vertex-cone formula.

The per-vertex terms of :mod:`tamp.wmi.integrate` carry denominators of tens of
thousands of bits that cancel only in the total; summing them costs big-integer
gcds.  GMP (through ``gmpy2``) computes those gcds subquadratically and is
many times faster than :class:`fractions.Fraction` on such numbers, so when
``gmpy2`` is importable the sums are done in ``gmpy2.mpq``; otherwise they fall
back to ``Fraction``.  Either way the arithmetic is exact, and results leave
this module as ``Fraction`` (:func:`to_fraction`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import List

import gmpy2 as _gmpy2

from tamp.core.z3expr import fraction

_MPQ = type(_gmpy2.mpq(0))


def make_q(num: int, den: int = 1, use_gmp: bool = True):
    """The exact rational ``num/den`` (``den != 0``) as ``mpq`` or ``Fraction``."""
    if use_gmp:
        return _gmpy2.mpq(num, den)
    return Fraction(num, den)


def make_z(x: int, use_gmp: bool = True):
    """The integer ``x`` as ``mpz`` (GMP multiplication) or as ``int``."""
    if use_gmp:
        return _gmpy2.mpz(x)
    return x


def to_fraction(q) -> Fraction:
    """Exact conversion of an ``mpq``/``Fraction``/``int`` to ``Fraction``."""
    if isinstance(q, Fraction):
        return q
    if isinstance(q, int):
        return Fraction(q)
    return Fraction(int(q.numerator), int(q.denominator))


def z3_fraction(v) -> Fraction:
    """Exact ``Fraction`` of a z3 rational numeral (:func:`tamp.core.z3expr.fraction`: a model
    value can have more digits than Python's limit for ``int(str)``, hit by a cell's interior
    point on nr9_3)."""
    out = fraction(v)
    if out is None:
        raise ValueError(f"not a rational numeral: {v}")
    return out


def _as_mpq(x):
    """Exact ``mpq`` from an int, Fraction or any exact rational number."""
    x = x if isinstance(x, (int, Fraction)) else Fraction(x)
    if isinstance(x, int):
        return _gmpy2.mpq(x)
    return _gmpy2.mpq(x.numerator, x.denominator)


def tree_sum(terms: List, use_gmp: bool = True) -> Fraction:
    """Exact sum of rationals by balanced pairwise addition, as ``Fraction``.

    The vertex terms carry large artificial denominators (the ``E_j`` of the
    vertex-cone formula) that cancel only in the total; adding them one by one
    to a running sum costs a gcd of the growing running denominator for every
    term, pairwise summation keeps most gcds small."""
    if not terms:
        return Fraction(0)
    if use_gmp:
        terms = [t if type(t) is _MPQ else _as_mpq(t) for t in terms]
    while len(terms) > 1:
        nxt = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        if len(terms) % 2:
            nxt.append(terms[-1])
        terms = nxt
    return to_fraction(terms[0])
