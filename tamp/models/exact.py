"""Exact rationals of binary floats, and their decimal spelling (every binary float is a finite
decimal: m·2^-k = m·5^k·10^-k)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import SupportsFloat

from .errors import ModelError


def exact(value: SupportsFloat, what: str, path: str) -> Fraction:
    """The exact rational a float32/float64 (or int) denotes; NaN and infinities are refused."""
    f = float(value)  # float32 -> float64 is exact
    if not math.isfinite(f):
        raise ModelError(f"{what} is {f}: not a finite number, the model cannot be represented exactly", path)
    return Fraction(f)


def decimal_text(q: Fraction) -> str:
    """The exact decimal spelling of a dyadic or decimal rational (no exponent, no rounding):
    0.100000001490116119384765625 for float32(0.1); other rationals as ``(n/d)``."""
    den = q.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"({q.numerator}/{q.denominator})"
    k = max(twos, fives)  # q = n / 10^k
    n = abs(q.numerator) * 2 ** (k - twos) * 5 ** (k - fives)
    digits = str(n).rjust(k + 1, "0")
    text = digits[: len(digits) - k] + ("." + digits[len(digits) - k :] if k else "")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return ("-" if q < 0 else "") + text
