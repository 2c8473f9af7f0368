"""Rigorous enclosures of exp, erfc and the normal CDF/density, in exact integer arithmetic.

Every function returns a pair ``(lo, hi)`` of exact :class:`~fractions.Fraction`
bounds (``lo <= true value <= hi``); the ``*_f`` variants return floats rounded
outward.  Nothing here trusts a library's stated accuracy: the only inputs are
integer arithmetic (exact), ``math.isqrt`` (exact floor square root) and forty
decimal digits of π (:data:`PI_LO` < π < :data:`PI_HI`).  The arguments:

* **Fixed point.**  A real r is held as an integer R with R/2^P close to r
  (P = :data:`PREC` bits).  A lower bound is computed with every product and
  quotient rounded *down* (``>>`` and ``//`` floor), an upper bound with every one
  rounded *up*.  Every quantity below is a sum or product of non-negative terms that
  increase with their inputs, so rounding the inputs and each step in one direction
  bounds the result in that direction (induction over the operations).

* **exp(y), y >= 0.**  With z = y/2^m <= 2^-10, e^z = Σ z^j/j! has positive terms
  whose ratio z/(j+1) is <= 1/2, so after stopping at term n the rest is at most
  twice the next term.  Then e^y = (e^z)^(2^m) by m squarings (each rounded in the
  bound's direction).  e^-y = 1/e^y, with the bounds exchanged.

* **erf(t), 0 <= t <= T_SERIES.**  erf(t) = (2/√π) e^(-t²) Σ_n 2^n t^(2n+1)/(2n+1)!!
  (A&S 7.1.6): positive terms, ratio 2t²/(2n+3); once that ratio is <= 1/2 the tail
  is at most twice the next term.  erfc = 1 - erf.

* **erfc(t), t > T_SERIES.**  √π e^(t²) erfc(t) = K(t) with the continued fraction
  K(t) = 1/(t + (1/2)/(t + 1/(t + (3/2)/(t + 2/(t + …))))) (A&S 7.1.14).  All its
  partial numerators a_k and denominators are positive and it converges for t > 0
  (a Stieltjes fraction), so its value is a_1/(t + x_1) with x_1 = a_2/(t + x_2), …,
  every tail x_k in [0, ∞).  Evaluating backwards from x_n ∈ [0, ∞) in interval
  arithmetic (x ↦ a/(t + x) is decreasing, so [lo, hi] ↦ [a/(t + hi), a/(t + lo)],
  rounded outward) encloses K(t) for t in an interval [t_lo, t_hi]; n = 48 terms give
  a relative width below 1e-20 for t >= 3 (checked; more terms are used if not).
  K is decreasing in t, and e^(-t²) too, so the bounds at the interval ends are sound.

* **Irrational arguments.**  The normal CDF at x is erfc((μ - x)/√(2v))/2; the
  argument is enclosed in [t_lo, t_hi] (exact floor square root of 2v scaled), and
  erfc is decreasing, so erfc(t) ∈ [erfc_lo(t_hi), erfc_hi(t_lo)]; for the series,
  erf(t) = (2/√π)·e^(-t²)·S(t) with S increasing and e^(-t²) decreasing, so the lower
  bound uses S(t_lo)·e^(-t_hi²) and the upper S(t_hi)·e^(-t_lo²).
* **Far tails.**  For t >= 27, erfc(t) <= e^(-t²)/(t√π) < 1e-300 (A&S 7.1.13), which
  is used as the bound instead of evaluating.

``tests/prob/test_rigorous.py`` checks containment of values computed by mpmath at
200 bits and the widths reached.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Tuple

PREC = 80  # fixed-point fraction bits
ONE = 1 << PREC
T_SERIES = 2 * ONE
T_TAIL = 27 * ONE
CF_TERMS = 48
PI_LO = Fraction("3.141592653589793238462643383279502884197")
PI_HI = Fraction("3.141592653589793238462643383279502884198")

Pair = Tuple[Fraction, Fraction]
FPair = Tuple[float, float]


# --------------------------------------------------------------------------- fixed point and floats


def fix_down(q: Fraction) -> int:
    """floor(q · 2^P)."""
    return (q.numerator << PREC) // q.denominator


def fix_up(q: Fraction) -> int:
    """ceil(q · 2^P)."""
    return -((-q.numerator << PREC) // q.denominator)


def _mul_down(a: int, b: int) -> int:
    return (a * b) >> PREC


def _mul_up(a: int, b: int) -> int:
    return -((-(a * b)) >> PREC)


def _cdiv(a: int, b: int) -> int:
    """ceil(a / b) for b > 0."""
    return -((-a) // b)


def sqrt_bounds(q: Fraction) -> Tuple[int, int]:
    """Fixed-point [lo, hi] with lo/2^P <= √q <= hi/2^P, for q >= 0."""
    n = (q.numerator << (2 * PREC)) // q.denominator  # floor(q · 4^P)
    r = math.isqrt(n)
    exact = r * r == n and (q.numerator << (2 * PREC)) % q.denominator == 0
    return r, (r if exact else r + 1)


def ratio_down(num: int, den: int) -> float:
    """The largest float <= num/den (num >= 0, den > 0); 0.0 below 1e-300."""
    if num <= 0:
        return 0.0
    s = 64 - (num.bit_length() - den.bit_length())
    q = (num << s) // den if s >= 0 else num // (den << -s)
    cut = q.bit_length() - 53
    f = math.ldexp(q >> cut, cut - s) if cut > 0 else math.ldexp(q, -s)
    return f if f >= 1e-300 else 0.0


def ratio_up(num: int, den: int) -> float:
    """The smallest float >= num/den (num >= 0, den > 0); at least 1e-300 when positive."""
    if num <= 0:
        return 0.0
    s = 64 - (num.bit_length() - den.bit_length())
    q = _cdiv(num << s, den) if s >= 0 else _cdiv(num, den << -s)
    cut = q.bit_length() - 53
    f = math.ldexp(_cdiv(q, 1 << cut), cut - s) if cut > 0 else math.ldexp(q, -s)
    return max(f, 1e-300)


def float_fix(x: float) -> Tuple[int, int]:
    """Fixed-point floor and ceiling of a float."""
    n, d = x.as_integer_ratio()
    return (n << PREC) // d, _cdiv(n << PREC, d)


# --------------------------------------------------------------------------- exp


def _exp_small(z_lo: int, z_hi: int) -> Tuple[int, int]:
    """Fixed-point bounds of e^z for z ∈ [z_lo, z_hi] / 2^P with 0 <= z <= 2^-10."""
    s_lo = s_hi = t_lo = t_hi = ONE
    j = 1
    while True:
        t_lo = _mul_down(t_lo, z_lo) // j
        t_hi = _cdiv(_mul_up(t_hi, z_hi), j)
        s_lo += t_lo
        s_hi += t_hi
        j += 1
        if t_hi <= 1:  # each later term is at most half the one before: the rest <= 2 t_hi
            return s_lo, s_hi + 2 * t_hi + 1


@lru_cache(maxsize=1 << 16)
def exp_fix(y_lo: int, y_hi: int) -> Tuple[int, int]:
    """Fixed-point bounds of e^y for y ∈ [y_lo, y_hi] / 2^P, 0 <= y_lo <= y_hi."""
    m = max(0, y_hi.bit_length() - (PREC - 10))
    lo, hi = _exp_small(y_lo >> m, _cdiv(y_hi, 1 << m))
    for _ in range(m):
        lo = _mul_down(lo, lo)
        hi = _mul_up(hi, hi)
    return lo, hi


def exp_bounds(y: Fraction) -> Pair:
    """Exact rational bounds of e^y for any rational y."""
    y = Fraction(y)
    if y >= 0:
        lo, hi = exp_fix(fix_down(y), fix_up(y))
        return Fraction(lo, ONE), Fraction(hi, ONE)
    lo, hi = exp_fix(fix_down(-y), fix_up(-y))
    return Fraction(ONE, hi), Fraction(ONE, lo)


# --------------------------------------------------------------------------- constants

SQRT_PI = (sqrt_bounds(PI_LO)[0], sqrt_bounds(PI_HI)[1])  # fixed point √π
TWO_OVER_SQRT_PI = ((2 * ONE << PREC) // SQRT_PI[1], _cdiv(2 * ONE << PREC, SQRT_PI[0]))


# --------------------------------------------------------------------------- erfc


def _erfc_series(T_lo: int, T_hi: int) -> Tuple[int, int, int, int]:
    """erfc over [T_lo, T_hi] / 2^P ⊆ [0, 2] as (lo_num, lo_den, hi_num, hi_den)."""
    x2_lo = 2 * _mul_down(T_lo, T_lo)
    x2_hi = 2 * _mul_up(T_hi, T_hi)
    s_lo, s_hi = T_lo, T_hi
    S_lo, S_hi = T_lo, T_hi
    n = 0
    while True:
        d = 2 * n + 3
        s_lo = _mul_down(s_lo, x2_lo) // d
        s_hi = _cdiv(_mul_up(s_hi, x2_hi), d)
        S_lo += s_lo
        S_hi += s_hi
        n += 1
        if s_hi <= 1 and 2 * x2_hi <= (2 * n + 3) * ONE:  # later ratios <= 1/2: tail <= 2 s_hi
            S_hi += 2 * s_hi + 1
            break
    # e^(-t²): lower at t_hi, upper at t_lo
    E_hi_of_thi = (
        exp_fix(x2_lo // 2, x2_hi // 2 + 1)[1]
        if T_lo == T_hi
        else exp_fix(_mul_down(T_hi, T_hi), _mul_up(T_hi, T_hi))[1]
    )
    E_lo_of_tlo = exp_fix(_mul_down(T_lo, T_lo), _mul_up(T_lo, T_lo))[0]
    # erf_lo = c_lo S_lo / E(t_hi)_hi ; erf_hi = c_hi S_hi / E(t_lo)_lo   (fixed point ratios)
    c_lo, c_hi = TWO_OVER_SQRT_PI
    a_num, a_den = _mul_down(c_lo, S_lo), E_hi_of_thi  # erf_lo = a_num / a_den
    b_num, b_den = _mul_up(c_hi, S_hi), E_lo_of_tlo  # erf_hi = b_num / b_den
    lo_num = max(b_den - b_num, 0)  # erfc_lo = 1 - erf_hi
    hi_num = a_den - a_num  # erfc_hi = 1 - erf_lo
    return lo_num, b_den, hi_num, a_den


def _erfc_cf(T_lo: int, T_hi: int, terms: int = CF_TERMS) -> Tuple[int, int, int, int]:
    """erfc over [T_lo, T_hi] / 2^P, T_lo >= 2·2^P, by the continued fraction of K (docstring)."""
    while True:
        X_lo, X_hi = 0, None
        for k in range(terms, 0, -1):
            num = ONE << PREC if k == 1 else (k - 1) << (2 * PREC - 1)  # a_k · 2^2P
            new_lo = num // (T_hi + X_hi) if X_hi is not None else 0
            X_hi = _cdiv(num, T_lo + X_lo)
            X_lo = new_lo
        # narrow enough: relative width 2^-60 beyond what the width of [t_lo, t_hi] causes
        # (K'/K is about -1/t, so that part is about (t_hi - t_lo)/t_lo)
        if ((X_hi - X_lo) * T_lo) << 60 <= X_lo * (T_lo + ((4 * (T_hi - T_lo)) << 60)) or terms >= 4096:
            break
        terms *= 2
    # erfc = K e^(-t²)/√π: lower K_lo / (√π_hi E(t_hi)_hi), upper K_hi / (√π_lo E(t_lo)_lo)
    E_hi = exp_fix(_mul_down(T_hi, T_hi), _mul_up(T_hi, T_hi))[1]
    E_lo = exp_fix(_mul_down(T_lo, T_lo), _mul_up(T_lo, T_lo))[0]
    return X_lo << PREC, SQRT_PI[1] * E_hi, X_hi << PREC, SQRT_PI[0] * E_lo


def erfc_fix(T_lo: int, T_hi: int) -> Tuple[int, int, int, int]:
    """Bounds of erfc over [T_lo, T_hi] / 2^P for 0 <= T_lo <= T_hi, as (lo_num, lo_den, hi_num,
    hi_den); erfc is decreasing, so the interval ends bound it."""
    if T_lo >= T_TAIL:
        return 0, 1, 1, 10**300  # erfc(t) <= e^(-t²)/(t√π) < 1e-300 for t >= 27
    if T_hi <= T_SERIES:
        return _erfc_series(T_lo, T_hi)
    if T_lo > T_SERIES:
        return _erfc_cf(T_lo, T_hi)
    lo = _erfc_cf(T_SERIES + 1, T_hi)  # the lower bound at t_hi (> 2)
    hi = _erfc_series(T_lo, T_lo)  # the upper bound at t_lo (<= 2)
    return lo[0], lo[1], hi[2], hi[3]


def erfc_bounds(t: Fraction) -> Pair:
    """Exact rational bounds of erfc(t) for a rational t (slow path, for tests and constants)."""
    t = Fraction(t)
    if t < 0:
        lo, hi = erfc_bounds(-t)
        return 2 - hi, 2 - lo
    a, b, c, d = erfc_fix(fix_down(t), fix_up(t))
    return Fraction(a, b), Fraction(c, d)


# --------------------------------------------------------------------------- distributions


class Normal:
    """Rigorous CDF and density of N(mean, var) at float points, as outward float pairs."""

    def __init__(self, mean: Fraction, var: Fraction):
        self.mean = Fraction(mean)
        self.var = Fraction(var)
        self._m = (fix_down(self.mean), fix_up(self.mean))
        self._s = sqrt_bounds(2 * self.var)  # √(2v), fixed point
        assert self._s[0] > 0, "variance too small"
        # 1/√(2πv) = 1/(√π √(2v)): fixed point bounds
        self._norm = (
            (ONE << (2 * PREC)) // (SQRT_PI[1] * self._s[1]),
            _cdiv(ONE << (2 * PREC), SQRT_PI[0] * self._s[0]),
        )

    def cdf(self, x: float) -> FPair:
        """Float bounds of P(X <= x) = erfc(t)/2, t = (mean - x)/√(2v)."""
        return self.cdf_range(x, x)

    def cdf_range(self, x_lo: float, x_hi: float) -> FPair:
        """(a lower bound of P(X <= x_lo), an upper bound of P(X <= x_hi)) for x_lo <= x_hi: the
        CDF increases, so these bound it over [x_lo, x_hi]."""
        X_lo, X_hi = float_fix(x_lo)[0], float_fix(x_hi)[1]
        d_lo, d_hi = self._m[0] - X_hi, self._m[1] - X_lo  # mean - x
        s_lo, s_hi = self._s
        if d_lo >= 0:  # t >= 0: Φ = erfc(t)/2
            a, b, c, d = erfc_fix((d_lo << PREC) // s_hi, _cdiv(d_hi << PREC, s_lo))
            return ratio_down(a, 2 * b), min(ratio_up(c, 2 * d), 1.0)
        if d_hi <= 0:  # t <= 0: Φ = 1 - erfc(|t|)/2
            a, b, c, d = erfc_fix((-d_hi << PREC) // s_hi, _cdiv(-d_lo << PREC, s_lo))
            return ratio_down(2 * d - c, 2 * d), min(ratio_up(2 * b - a, 2 * b), 1.0)
        # t straddles 0 (x within 2^-80 of the mean): Φ ∈ [erfc(t_hi)/2, 1 - erfc(|t_lo|)/2]
        a, b, _, _ = erfc_fix(_cdiv(d_hi << PREC, s_lo), _cdiv(d_hi << PREC, s_lo))
        a2, b2, _, _ = erfc_fix(_cdiv(-d_lo << PREC, s_lo), _cdiv(-d_lo << PREC, s_lo))
        return ratio_down(a, 2 * b), min(ratio_up(2 * b2 - a2, 2 * b2), 1.0)

    def pdf(self, x: float) -> FPair:
        """Float bounds of exp(-(x - mean)²/(2v)) / √(2πv); y = (x - mean)²/(2v) is enclosed in
        fixed point from |x - mean| ∈ [D_lo, D_hi] / 2^P."""
        X_lo, X_hi = float_fix(x)
        d_lo, d_hi = X_lo - self._m[1], X_hi - self._m[0]  # x - mean
        if d_lo >= 0:
            D_lo, D_hi = d_lo, d_hi
        elif d_hi <= 0:
            D_lo, D_hi = -d_hi, -d_lo
        else:
            D_lo, D_hi = 0, max(-d_lo, d_hi)
        vn, vd = self.var.numerator, self.var.denominator
        # y · 2^P = D² vd / (2^P · 2 vn)
        Y_lo = (D_lo * D_lo * vd) // (2 * vn << PREC)
        Y_hi = _cdiv(D_hi * D_hi * vd, 2 * vn << PREC)
        cap = 750 << PREC  # beyond: e^-750 · norm bounds the density above, 0 below
        if Y_lo >= cap:
            return 0.0, ratio_up(self._norm[1], exp_fix(cap, cap)[0])
        E_lo, E_hi = exp_fix(Y_lo, min(Y_hi, cap) if Y_hi > cap else Y_hi)
        lo = 0.0 if Y_hi > cap else ratio_down(self._norm[0], E_hi)
        return lo, ratio_up(self._norm[1], E_lo)

    def pdf_range(self, x_lo: float, x_hi: float) -> FPair:
        """Float bounds of the density over [x_lo, x_hi] with one exponential: the density
        decreases with |x - mean|, so the nearest and farthest points bound it (the peak when
        the interval may contain the mean)."""
        A_lo, A_hi = float_fix(x_lo)[0] - self._m[1], float_fix(x_hi)[1] - self._m[0]  # x - mean
        if A_lo >= 0:
            D_near, D_far = A_lo, A_hi
        elif A_hi <= 0:
            D_near, D_far = -A_hi, -A_lo
        else:
            D_near, D_far = 0, max(-A_lo, A_hi)
        vn, vd = self.var.numerator, self.var.denominator
        Y_lo = (D_near * D_near * vd) // (2 * vn << PREC)
        Y_hi = _cdiv(D_far * D_far * vd, 2 * vn << PREC)
        cap = 750 << PREC
        Y_lo, Y_hi = min(Y_lo, cap), min(Y_hi, cap)
        E_lo, E_hi = exp_fix(Y_lo, Y_hi)
        lo = 0.0 if Y_hi >= cap else ratio_down(self._norm[0], E_hi)
        return lo, ratio_up(self._norm[1], E_lo)

    def peak(self) -> float:
        """An upper bound of the density's maximum 1/√(2πv)."""
        return ratio_up(self._norm[1], ONE)


def exp_neg_f(y: Fraction) -> FPair:
    """Float bounds of e^-y for a rational y >= 0."""
    y = min(Fraction(y), Fraction(750))
    E_lo, E_hi = exp_fix(fix_down(y), fix_up(y))
    return (0.0 if y == 750 else ratio_down(ONE, E_hi)), ratio_up(ONE, E_lo)


def one_minus_half_exp_neg_f(y: Fraction, half: bool) -> FPair:
    """Float bounds of 1 - e^-y/2 (``half``) or 1 - e^-y, for a rational y >= 0."""
    y = Fraction(y)
    if y > 750:
        return (math.nextafter(1.0, 0.0), 1.0)
    E_lo, E_hi = exp_fix(fix_down(y), fix_up(y))
    k = 2 if half else 1
    # 1 - 1/(k E) = (k E - 1)/(k E), increasing in E
    return ratio_down(k * E_lo - ONE, k * E_lo), min(ratio_up(k * E_hi - ONE, k * E_hi), 1.0)
