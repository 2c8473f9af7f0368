"""Exact rationals of binary floats, and their spelling as literals of the language.

Every binary float is a finite decimal (m·2^-k = m·5^k·10^-k), but not always a short one: the
smallest float64 subnormal 2^-1074 has 1074 decimals, beyond what the language reads (1000
digits, exponents within ±1000). :func:`literal` writes a rational as the shortest of its
decimal, scientific and ``(n/d)`` spellings that :func:`lang.parser.parse_number` reads back
exactly; a binary64 value always has one (``n`` < 2^1024, ``d`` <= 2^1074: at most 324 digits
each). :func:`check_binary64` refuses a number beyond the binary64 range with a message naming
where it comes from (the robustness engine bounds networks in binary64)."""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction
from typing import List, SupportsFloat

from lang.parser import MAX_DIGITS, MAX_EXPONENT, parse_number

from .errors import ModelError

FLOAT_MAX = Fraction(sys.float_info.max)
FLOAT_MIN = Fraction(1, 2**1074)  # the smallest positive binary64 (a subnormal)


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


def _reads_back(text: str, q: Fraction) -> bool:
    """``text`` (a literal, or ``(n/d)`` of two literals) is read by the language as exactly q."""
    body = text[1:-1] if text.startswith("(") else text
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("-")
    try:
        if "/" in body:
            n, d = body.split("/")
            return sign * parse_number(n).value / parse_number(d).value == q
        return sign * parse_number(body).value == q
    except ValueError:
        return False


def literal(q: Fraction, what: str = "a number", path: str = "<model>") -> str:
    """An exact spelling of q that the language reads back as q (module docstring): its plain
    decimal when the language reads it, else the shorter of ``Me±k`` and ``(n/d)``; a
    ModelError naming ``what`` when there is none (a rational with thousands of digits)."""
    sign = "-" if q < 0 else ""
    a = abs(q)
    frac = f"({sign}{a.numerator}/{a.denominator})" if a.denominator != 1 else f"{sign}{a.numerator}"
    first: List[str] = []
    rest = [frac]
    den, twos, fives = a.denominator, 0, 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den == 1 and a:  # a finite decimal: m·10^e with m not a multiple of 10
        k = max(twos, fives)
        m, e = a.numerator * 2 ** (k - twos) * 5 ** (k - fives), -k
        while m % 10 == 0:
            m //= 10
            e += 1
        if len(str(m)) + abs(e) <= 1001:  # else the plain decimal has too many digits anyway
            first.append(decimal_text(q))
        rest.append(f"{sign}{m}e{e}" if e else f"{sign}{m}")
    for text in first + sorted(rest, key=len):
        if _reads_back(text, q):
            return text
    raise ModelError(f"{what} cannot be written exactly in the language (more than 1000 digits)", path)


def check_binary64(q: Fraction, what: str, path: str, line: int = 0, col: int = 0, tiny: bool = False) -> Fraction:
    """q, or a ModelError when |q| is beyond the largest binary64 number (``tiny``: also when a
    non-zero |q| is below the smallest one, 2^-1074)."""
    if abs(q) > FLOAT_MAX:
        raise ModelError(f"{what} is out of range: beyond the largest binary64 number (about 1.8e308)", path, line, col)
    if tiny and q and abs(q) < FLOAT_MIN:
        raise ModelError(
            f"{what} is out of range: non-zero but below the smallest binary64 number (2^-1074)", path, line, col
        )
    return q


_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)")


def read_fraction(text: str) -> Fraction:
    """The exact rational of a number the user wrote (``-0.25``, ``1e-3``, ``3/4``), within the
    language's limits (at most MAX_DIGITS digits, an exponent within ±MAX_EXPONENT): Python's
    Fraction("1e999999999") would compute a billion-digit power. ValueError (or
    ZeroDivisionError) when it is not such a number."""
    m = _EXPONENT.search(text)
    if m and (len(m.group(1).lstrip("+-")) > 6 or abs(int(m.group(1))) > MAX_EXPONENT):
        raise ValueError(f"number out of range: the exponent must be within ±{MAX_EXPONENT}")
    if sum(c.isdigit() for c in text) > MAX_DIGITS:
        raise ValueError(f"number too long: more than {MAX_DIGITS} digits")
    return Fraction(text)
