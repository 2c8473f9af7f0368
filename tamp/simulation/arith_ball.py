"""Certified floating-point balls, vectorised: the simulator's fast arithmetic.

A real value of a run is a ball ``[m - r, m + r]`` that contains the exact value, stored as one
``complex128`` number ``m + r·i`` (so that numpy's indexing, concatenation and ``np.where``
carry balls like any other array; nothing here ever multiplies them as complex numbers).
Ints are exact int64 (an overflow is an error), Booleans are bool.

Soundness rests on IEEE 754 double arithmetic with round-to-nearest (what numpy does): the
basic operations ``+ - * /`` and ``sqrt`` are correctly rounded, and their rounding errors
are either computed exactly (error-free transformations: TwoSum, Dekker's TwoProduct, the
remainder of a division) — so that a ball stays a point while the arithmetic is exact — or
bounded by ``u·|result| + η`` (``u = 2⁻⁵³``, ``η`` the smallest subnormal). Sums of radii
are rounded upwards by a factor ``1 + 2⁻⁴⁸`` that covers the few roundings of the bound's own
computation. ``log`` and ``exp`` are not correctly rounded in any libm, so they are evaluated
by arb (python-flint) on each ball and the resulting ball is rounded outwards to doubles.
An overflow gives an infinite radius: such a ball decides no comparison.

A comparison is decided when the balls are disjoint (or both exact); otherwise its result is
the floating-point guess and the run is marked *unsure* (the caller re-runs it exactly).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, ctx

U = 2.0**-53
ETA = 2.0**-1074
UP = 1.0 + 2.0**-48  # rounds a sum of a few non-negative rounded terms upwards
INT_LIMIT = 2**62
_SPLIT = 134217729.0  # 2^27 + 1 (Dekker)


def is_real(a) -> bool:
    return np.asarray(a).dtype == np.complex128


def ball(mid, rad=0.0) -> np.ndarray:
    """Balls from midpoints and radii (not ``mid + 1j * rad``: 1j * inf has a NaN real part)."""
    mid, rad = np.asarray(mid, dtype=np.float64), np.asarray(rad, dtype=np.float64)
    out = np.empty(np.broadcast_shapes(mid.shape, rad.shape), dtype=np.complex128)
    out.real = mid
    out.imag = rad
    return out


def mid(a) -> np.ndarray:
    a = np.asarray(a)
    return a.real if a.dtype == np.complex128 else a


def rad(a) -> np.ndarray:
    a = np.asarray(a)
    return a.imag if a.dtype == np.complex128 else np.zeros(a.shape)


def of_fraction(q) -> np.ndarray:
    """The ball of an exact rational (a point when it is a double)."""
    q = Fraction(q)
    m = float(q)
    err = abs(q - Fraction(m))
    r = 0.0 if err == 0 else np.nextafter(float(err), np.inf)
    return ball(m, r)


def to_real(a) -> np.ndarray:
    """An int or real array as balls (ints beyond 2^53 get a radius)."""
    a = np.asarray(a)
    if a.dtype == np.complex128:
        return a
    if a.dtype == bool:
        raise TypeError("a Boolean is not a number")
    m = a.astype(np.float64)
    if a.dtype.kind in "iu":
        big = np.abs(m) > 2.0**53
        r = np.where(big, np.abs(m) * 2.0**-52, 0.0)
    else:
        r = np.zeros(m.shape)
    return ball(m, r)


# ---------------------------------------------------------------- error-free transformations


def _two_sum(a, b):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), err, np.inf)


def _split(a):
    c = _SPLIT * a
    h = c - (c - a)
    return h, a - h


def _two_prod(a, b):
    """(p, |error bound|) of p = fl(a*b): exact (Dekker) away from overflow and underflow."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = np.abs(((ah * bh - p) + ah * bl + al * bh) + al * bl)
    aa, ab = np.abs(a), np.abs(b)
    safe = (aa < 2.0**995) & (ab < 2.0**995) & ((np.abs(p) > 2.0**-960) | (p == 0) & ((a == 0) | (b == 0)))
    err = np.where(safe, err, U * np.abs(p) + ETA)
    return p, np.where(np.isfinite(p), err, np.inf)


def _inexact(x):
    """A bound on the rounding error of a correctly rounded result ``x``."""
    return np.where(np.isfinite(x), U * np.abs(x) + ETA, np.inf)


# ---------------------------------------------------------------- ints


def _int_result(r, approx, on_overflow):
    if np.any(np.abs(approx) >= INT_LIMIT):
        on_overflow()
    return r


def int_op(op: str, x, y, on_overflow):
    """``x op y`` on int64 arrays; ``on_overflow()`` is called (and raises) past 2^62."""
    xf, yf = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if op == "+":
        return _int_result(np.add(x, y), xf + yf, on_overflow)
    if op == "-":
        return _int_result(np.subtract(x, y), xf - yf, on_overflow)
    return _int_result(np.multiply(x, y), xf * yf, on_overflow)


# ---------------------------------------------------------------- reals


def add(x, y) -> np.ndarray:
    x, y = to_real(x), to_real(y)
    s, err = _two_sum(x.real, y.real)
    return ball(s, (x.imag + y.imag + np.abs(err)) * UP)


def neg(x) -> np.ndarray:
    x = to_real(x)
    return ball(-x.real, x.imag)


def sub(x, y) -> np.ndarray:
    return add(x, neg(y))


def mul(x, y) -> np.ndarray:
    x, y = to_real(x), to_real(y)
    p, err = _two_prod(x.real, y.real)
    rx, ry = x.imag, y.imag
    with np.errstate(invalid="ignore"):
        r = (np.abs(x.real) * ry + np.abs(y.real) * rx + rx * ry + err) * UP
        r = np.where((rx > 0) | (ry > 0), r + ETA, r)
    return ball(p, np.where(np.isnan(r), np.inf, r))


def contains_zero(y) -> np.ndarray:
    """Where the ball ``y`` may be zero."""
    y = to_real(y)
    return ~(np.abs(y.real) > y.imag * UP)


def div(x, y) -> np.ndarray:
    """``x / y`` where ``y`` excludes zero (elsewhere the result is meaningless)."""
    x, y = to_real(x), to_real(y)
    mx, my, rx, ry = x.real, y.real, x.imag, y.imag
    with np.errstate(all="ignore"):
        q = mx / my
        p, perr = _two_prod(q, my)
        exact = (perr == 0) & (mx - p == 0) & np.isfinite(q) & (np.abs(q) > 2.0**-960) | (mx == 0)
        rounding = np.where(exact, 0.0, _inexact(q))
        denom = (np.abs(my) - ry) * (1 - 2.0**-50)
        spread = (rx + (np.abs(q) * (1 + 2.0**-52) + ETA) * ry) / denom * UP
        spread = np.where((rx > 0) | (ry > 0), spread + ETA, 0.0)
        r = np.where(denom > 0, (spread + rounding) * UP, np.inf)
    return ball(q, np.where(np.isnan(r), np.inf, r))


def absolute(x) -> np.ndarray:
    x = to_real(x)
    return ball(np.abs(x.real), x.imag)  # |.| is 1-Lipschitz


def minimum(x, y) -> np.ndarray:
    x, y = to_real(x), to_real(y)  # min is 1-Lipschitz in the max norm
    return ball(np.minimum(x.real, y.real), np.maximum(x.imag, y.imag))


def maximum(x, y) -> np.ndarray:
    x, y = to_real(x), to_real(y)
    return ball(np.maximum(x.real, y.real), np.maximum(x.imag, y.imag))


def sqrt(x) -> np.ndarray:
    """sqrt on balls whose lower end is >= 0 (elsewhere meaningless)."""
    x = to_real(x)
    m, r = x.real, x.imag
    with np.errstate(all="ignore"):
        s = np.sqrt(np.maximum(m, 0.0))
        p, perr = _two_prod(s, s)
        exact = (p == m) & (perr == 0)
        rounding = np.where(exact, 0.0, _inexact(s))
        spread = np.minimum(np.sqrt(r), np.where(s > 0, r / s, np.inf)) * UP
        spread = np.where(r > 0, spread + ETA, 0.0)
    return ball(s, (spread + rounding) * UP)


def transcendental(f: str, x) -> np.ndarray:
    """``log`` or ``exp`` of every ball, by arb, rounded outwards to balls of doubles."""
    x = to_real(x)
    values, where = np.unique(x.ravel(), return_inverse=True)
    mids, rads = np.empty(values.shape), np.empty(values.shape)
    old = ctx.prec
    ctx.prec = 80
    try:
        for i, z in enumerate(values):
            mids[i], rads[i] = _arb_ball(f, z.real, z.imag, arb)
    finally:
        ctx.prec = old
    return ball(mids[where].reshape(x.shape), rads[where].reshape(x.shape))


def _arb_ball(f: str, m: float, r: float, arb):
    if not (np.isfinite(m) and np.isfinite(r)):
        return 0.0, np.inf
    if f == "exp" and m == 0 and r == 0:
        return 1.0, 0.0
    if f == "log" and m == 1 and r == 0:
        return 0.0, 0.0
    z = arb(m, r) if r else arb(m)
    v = z.exp() if f == "exp" else z.log()
    if not v.is_finite():
        return 0.0, np.inf
    lo = np.nextafter(float(v.lower()), -np.inf)
    hi = np.nextafter(float(v.upper()), np.inf)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return (float(v.mid()) if np.isfinite(float(v.mid())) else 0.0), np.inf
    c = lo / 2 + hi / 2
    return c, max(hi - c, c - lo) * UP + ETA


# ---------------------------------------------------------------- comparisons


def compare(op: str, x, y):
    """(guess, unsure): ``x op y`` per run, and where the balls do not decide it."""
    x, y = to_real(x), to_real(y)
    with np.errstate(invalid="ignore"):
        d, err = _two_sum(x.real, -y.real)
        t = (x.imag + y.imag + np.abs(err)) * UP
        point = t == 0
        if op in ("<", ">=", ">", "<="):
            guess = {"<": d < 0, ">=": d >= 0, ">": d > 0, "<=": d <= 0}[op]
            decided = point | (np.abs(d) > t)
            decided = decided & np.isfinite(d) & np.isfinite(t) | point & np.isfinite(d)
        else:
            guess = (d == 0) if op == "==" else (d != 0)
            decided = (point & np.isfinite(d)) | (np.abs(d) > t) & np.isfinite(t)
    return guess, ~decided


def floor(x):
    """(floor as int64, unsure): unsure where the ball contains an integer other than its low end."""
    x = to_real(x)
    m, r = x.real, x.imag
    with np.errstate(invalid="ignore"):
        lo_guess = np.floor(m)
        ok = np.isfinite(m) & (np.abs(m) < 2.0**62)
        # the exact value lies in [m - r, m + r]: decided when both ends have the same floor
        lo = np.floor(m - r * UP - np.where(r > 0, ETA, 0))
        hi = np.floor(m + r * UP + np.where(r > 0, ETA, 0))
        sure = ok & (lo == hi) & ((r == 0) | (lo == lo_guess))
    return np.where(ok, lo_guess, 0).astype(np.int64), ~sure
