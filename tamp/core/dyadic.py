"""Outward rounding of rationals to short dyadic rationals (numbers ``m · 2^e``).

Exact arithmetic on long-running sums and products makes denominators grow without bound;
rounding a lower bound *down* and an upper bound *up* to a dyadic grid keeps them short
and the enclosure sound. One grid primitive serves both uses in tamp: a fixed grid
(:func:`floor_grid`, e.g. masses on multiples of 2^-40) and a grid relative to the size
of the number (:func:`floor_bits`, about ``bits`` significant bits).
"""

from __future__ import annotations

import math
from fractions import Fraction


def floor_grid(q: Fraction, exp: int) -> Fraction:
    """The largest multiple of ``2**exp`` that is <= ``q``.

    >>> floor_grid(Fraction(1, 3), -4)
    Fraction(5, 16)
    >>> floor_grid(Fraction(-1, 3), -4)
    Fraction(-3, 8)
    >>> floor_grid(Fraction(13), 2)
    Fraction(12, 1)
    """
    if exp >= 0:
        step = 1 << exp
        return Fraction((q.numerator // (q.denominator * step)) * step)
    scale = 1 << -exp
    return Fraction(math.floor(q * scale), scale)


def ceil_grid(q: Fraction, exp: int) -> Fraction:
    """The smallest multiple of ``2**exp`` that is >= ``q``.

    >>> ceil_grid(Fraction(1, 3), -4)
    Fraction(3, 8)
    """
    return -floor_grid(-q, exp)


def floor_bits(q: Fraction, bits: int) -> Fraction:
    """The largest dyadic rational <= ``q`` with about ``bits`` significant bits; ``q``
    itself when its denominator already has at most ``bits`` bits.

    >>> floor_bits(Fraction(1, 1000), 8)
    Fraction(131, 131072)
    >>> floor_bits(Fraction(1, 3), 8)
    Fraction(1, 3)
    """
    if q.denominator.bit_length() <= bits:
        return q
    e = bits - (abs(q.numerator).bit_length() - q.denominator.bit_length())
    if e <= 0:
        return floor_grid(q, 0)
    return floor_grid(q, -e)


def ceil_bits(q: Fraction, bits: int) -> Fraction:
    """The smallest dyadic rational >= ``q`` with about ``bits`` significant bits.

    >>> ceil_bits(Fraction(1, 1000), 8)
    Fraction(33, 32768)
    """
    return -floor_bits(-q, bits)
