"""The number domains of the simulator: how a real value of a run is held and computed.

The vectorised evaluator never applies numpy arithmetic to real values itself: it calls a
domain. Ints are exact int64 in every domain (an overflow past 2^62 is an error) and
Booleans are bool; reals differ:

* :class:`BallDomain` (the fast pass): certified double balls (:mod:`.arith_ball`).
* :class:`ExactDomain` ``("arb", prec)``: numpy object arrays of exact rationals
  (``flint.fmpq``) and, once an irrational function is applied, arb balls at ``prec`` bits.
* :class:`ExactDomain` ``("sym",)``: object arrays of sympy numbers, exact; its comparisons
  decide equalities of algebraic numbers by their minimal polynomial, other equalities by
  sympy's simplification, and signs by certified numerical evaluation (``evalf(strict=True)``).

Every comparison returns ``(guess, unsure)``: the per-run result and where the domain could
not decide it. The caller marks unsure runs; they are re-run in a more precise domain and are
never counted as passing or failing on a guess.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, Optional

import numpy as np
from flint import arb, ctx, fmpq

from . import arith_ball as B


def is_int(a) -> bool:
    return np.asarray(a).dtype.kind in "iu"


def is_bool(a) -> bool:
    return np.asarray(a).dtype == bool


class BallDomain:
    """Certified double balls (complex128 = midpoint + radius·i)."""

    name = "double balls"

    def lit(self, q) -> np.ndarray:
        return B.of_fraction(q)

    def is_real(self, a) -> bool:
        return B.is_real(a)

    def to_real(self, a):
        return B.to_real(a)

    def from_floats(self, f) -> np.ndarray:
        return B.ball(f)

    def mid(self, a) -> np.ndarray:
        a = np.asarray(a)
        return a.real.copy() if a.dtype == np.complex128 else a

    def blank(self, n: int) -> np.ndarray:
        return np.zeros(n, dtype=np.complex128)

    def arith(self, op: str, x, y):
        return {"+": B.add, "-": B.sub, "*": B.mul}[op](x, y)

    def neg(self, x):
        return B.neg(x)

    def absolute(self, x):
        return B.absolute(x)

    def minimum(self, x, y):
        return B.minimum(x, y)

    def maximum(self, x, y):
        return B.maximum(x, y)

    def div(self, x, y):
        """(x / y, unsure where y may be zero); y known nonzero except there."""
        zero = B.contains_zero(y)
        return B.div(x, y), zero

    def is_zero(self, y):
        """(surely zero, unsure)."""
        y = B.to_real(y)
        sure_zero = (y.real == 0) & (y.imag == 0)
        return sure_zero, B.contains_zero(y) & ~sure_zero

    def call(self, f: str, x):
        if f == "sqrt":
            return B.sqrt(x)
        return B.transcendental(f, x)

    def compare(self, op: str, x, y):
        return B.compare(op, x, y)

    def floor(self, x):
        x = B.to_real(x)
        f = np.floor(x.real)
        ge, u1 = B.compare(">=", x, B.ball(f))
        lt, u2 = B.compare("<", x, B.ball(f + 1))
        unsure = u1 | u2 | ~ge | ~lt | ~np.isfinite(f) | (np.abs(f) >= 2.0**62)
        return np.where(unsure, 0, f).astype(np.int64), unsure


# ---------------------------------------------------------------- exact domains


#: the largest exact number an exact re-run keeps (numerator and denominator bits together):
#: 50 steps of a chaotic iteration double its digits 50 times, so a run whose numbers outgrow
#: this is left undecided (:class:`DigitBudget`) instead of filling the memory
MAX_EXACT_BITS = 1 << 18


class DigitBudget(Exception):
    """An exact number of a re-run outgrew :data:`MAX_EXACT_BITS` bits."""


def _bits(v) -> int:
    """Bits of an exact rational (flint fmpq/fmpz, sympy Rational/Integer, int); 0 for others."""
    p = getattr(v, "p", None)
    q = getattr(v, "q", None)
    if p is None and isinstance(v, int):
        return v.bit_length()
    if p is None or q is None:
        return 0
    return int(p).bit_length() + int(q).bit_length()


def sized(v):
    """``v``, or :class:`DigitBudget` when it is an exact number of more than :data:`MAX_EXACT_BITS` bits."""
    if _bits(v) > MAX_EXACT_BITS:
        raise DigitBudget()
    return v


def _fmpq(q):
    q = Fraction(q)
    return fmpq(q.numerator, q.denominator)


class ExactDomain:
    """Object arrays of exact rationals and arb balls (``("arb", prec)``) or sympy numbers
    (``("sym",)``)."""

    def __init__(self, kind: str, prec: int = 128):
        self.kind = kind
        self.prec = prec
        self.name = f"arb balls of {prec} bits" if kind == "arb" else "exact symbolic numbers"
        self._cache: Dict[tuple, object] = {}  # symbolic results by operation and operands
        if kind == "sym":
            # deferred on purpose: sympy takes ~1 s to load; only this step needs it
            import sympy

            self.sp = sympy
            self._x = sympy.Symbol("x")

    # -------------------------------------------------------------- values
    def scalar(self, q):
        """One exact rational as an element."""
        if self.kind == "sym":
            q = Fraction(q)
            return self.sp.Rational(q.numerator, q.denominator)
        return _fmpq(q)

    def lit(self, q) -> np.ndarray:
        out = np.empty((), dtype=object)
        out[()] = self.scalar(q)
        return out

    def is_real(self, a) -> bool:
        return np.asarray(a).dtype == object

    def to_real(self, a):
        a = np.asarray(a)
        if a.dtype == object:
            return a
        if a.dtype == np.complex128:
            raise TypeError("a double ball in an exact domain")
        conv = (lambda v: self.scalar(int(v))) if a.dtype.kind in "iu" else (lambda v: self.scalar(Fraction(float(v))))
        out = np.empty(a.shape, dtype=object)
        for i, v in np.ndenumerate(a):
            out[i] = conv(v)
        return out

    def from_floats(self, f) -> np.ndarray:
        return self.to_real(np.asarray(f, dtype=np.float64))

    def mid(self, a) -> np.ndarray:
        a = np.asarray(a)
        if a.dtype != object:
            return a
        out = np.empty(a.shape)
        for i, v in np.ndenumerate(a):
            out[i] = self._float(v)
        return out

    def _float(self, v) -> float:
        if self.kind == "sym":
            try:
                return float(v.evalf(20))
            except (TypeError, ValueError):
                return math.nan
        if isinstance(v, arb):
            return float(v.mid())
        return float(Fraction(int(v.p), int(v.q))) if hasattr(v, "p") else float(v)

    def blank(self, n: int) -> np.ndarray:
        out = np.empty(n, dtype=object)
        out[:] = self.scalar(0)
        return out

    # -------------------------------------------------------------- elementwise plumbing
    def _map(self, fn, *args):
        args = [np.asarray(a) for a in args]
        shape = np.broadcast_shapes(*[a.shape for a in args])
        bs = [np.broadcast_to(a, shape) for a in args]
        out = np.empty(shape, dtype=object)
        for i in np.ndindex(shape):
            out[i] = fn(*[b[i] for b in bs])
        return out

    def _map2(self, fn, *args):
        """Like _map for functions returning (value, flag): (object array, bool array)."""
        args = [np.asarray(a) for a in args]
        shape = np.broadcast_shapes(*[a.shape for a in args])
        bs = [np.broadcast_to(a, shape) for a in args]
        out, flag = np.empty(shape, dtype=object), np.zeros(shape, dtype=bool)
        for i in np.ndindex(shape):
            out[i], flag[i] = fn(*[b[i] for b in bs])
        return out, flag

    def _elem(self, v):
        """An element as an exact domain number (ints from int64 arrays become exact)."""
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            return self.scalar(int(v))
        return v

    def _memo(self, key, fn):
        """``fn()``, remembered by ``key`` in the symbolic domain (sympy numbers are hashable and
        slow; arb balls are neither)."""
        if self.kind != "sym":
            return fn()
        got = self._cache.get(key)
        if got is None:
            if len(self._cache) > 200_000:
                self._cache.clear()
            got = self._cache[key] = fn()
        return got

    def _with_prec(self, fn):
        if self.kind == "sym":
            return fn()
        old = ctx.prec
        ctx.prec = self.prec
        try:
            return fn()
        finally:
            ctx.prec = old

    # -------------------------------------------------------------- arithmetic
    def arith(self, op: str, x, y):
        f = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}[op]
        return self._with_prec(
            lambda: self._map(lambda a, b: self._memo((op, a, b), lambda: sized(f(self._elem(a), self._elem(b)))), x, y)
        )

    def neg(self, x):
        return self._with_prec(lambda: self._map(lambda a: -self._elem(a), x))

    def absolute(self, x):
        def one(a):
            a = self._elem(a)
            s = self._sign(a)
            if s is None:
                return abs(a) if self.kind == "arb" else self.sp.Abs(a)
            return -a if s < 0 else a

        return self._with_prec(lambda: self._map(one, x))

    def _pick(self, x, y, want_min: bool):
        def one(a, b):
            a, b = self._elem(a), self._elem(b)
            s = self._sign_diff(a, b)
            if s is None:  # undecided: a ball containing both (arb); sympy's Min/Max
                if self.kind == "arb":
                    return a.min(b) if want_min else a.max(b)
                return self.sp.Min(a, b) if want_min else self.sp.Max(a, b)
            return (a if s <= 0 else b) if want_min else (b if s <= 0 else a)

        return self._with_prec(lambda: self._map(one, x, y))

    def minimum(self, x, y):
        return self._pick(x, y, True)

    def maximum(self, x, y):
        return self._pick(x, y, False)

    def div(self, x, y):
        def one(a, b):
            a, b = self._elem(a), self._elem(b)
            s = self._sign(b)
            if s is None:
                return self.scalar(0), True
            if s == 0:
                return self.scalar(0), False
            return self._memo(("/", a, b), lambda: sized(a / b)), False

        return self._with_prec(lambda: self._map2(one, x, y))

    def is_zero(self, y):
        y = self.to_real(y)
        signs = self._with_prec(lambda: self._map(lambda b: self._sign(self._elem(b)), y))
        unsure = np.vectorize(lambda s: s is None, otypes=[bool])(signs) if signs.size else np.zeros(signs.shape, bool)
        zero = np.vectorize(lambda s: s == 0, otypes=[bool])(signs) if signs.size else np.zeros(signs.shape, bool)
        return zero, unsure

    def call(self, f: str, x):
        def one(a):
            a = self._elem(a)
            return self._memo((f, a), lambda: self._fn(f, a))

        return self._with_prec(lambda: self._map(one, x))

    def _fn(self, f: str, a):
        if self.kind == "sym":
            return {"sqrt": self.sp.sqrt, "log": self.sp.log, "exp": self.sp.exp}[f](a)
        if isinstance(a, fmpq):
            if f == "exp" and a == 0:
                return fmpq(1)
            if f == "log" and a == 1:
                return fmpq(0)
            if f == "sqrt" and a >= 0:
                rn, rd = math.isqrt(int(a.p)), math.isqrt(int(a.q))
                if rn * rn == int(a.p) and rd * rd == int(a.q):
                    return fmpq(rn, rd)
            a = arb(a)
        if f == "sqrt":
            return a.sqrt()
        return a.exp() if f == "exp" else a.log()

    # -------------------------------------------------------------- comparisons
    def _sign(self, a) -> Optional[int]:
        """-1 / 0 / 1, or None if this domain cannot decide."""
        if self.kind == "sym":
            return self._sym_sign(a)
        if isinstance(a, arb):
            if a > 0:
                return 1
            if a < 0:
                return -1
            if a.is_zero():
                return 0
            return None
        return (a > 0) - (a < 0)

    def _sign_diff(self, a, b) -> Optional[int]:
        return self._memo(("sign", a, b), lambda: self._sign(a - b))

    def _sym_sign(self, d) -> Optional[int]:
        sp = self.sp
        d = sp.sympify(d)
        if d.is_Rational:
            return 0 if d == 0 else 1 if d.is_positive else -1
        try:
            v = d.evalf(30, strict=True)
            if v.is_Number and v != 0:
                return 1 if v > 0 else -1
        except (sp.core.evalf.PrecisionExhausted, ValueError, TypeError):
            pass
        try:
            if sp.minimal_polynomial(d, self._x) == self._x:
                return 0
            return None  # algebraic and nonzero, but its sign is below 30 digits: give up
        except (NotImplementedError, sp.polys.polyerrors.NotAlgebraic, ValueError, TypeError):
            pass
        try:
            if sp.simplify(d) == 0:
                return 0
        except Exception:  # noqa: BLE001 - simplification failing is "undecided", never an answer
            pass
        return None

    def compare(self, op: str, x, y):
        def one(a, b):
            s = self._sign_diff(self._elem(a), self._elem(b))
            if s is None:
                return False, True
            return {"<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0, "==": s == 0, "!=": s != 0}[op], False

        with np.errstate(all="ignore"):
            out, unsure = self._with_prec(lambda: self._map2(one, x, y))
        return out.astype(bool), unsure

    def floor(self, x):
        def one(a):
            a = self._elem(a)
            if self.kind == "sym":
                f = self.sp.floor(a)
                if f.is_Integer:
                    return int(f), False
                return 0, True
            if isinstance(a, arb):
                z = a.floor().unique_fmpz()
                return (0, True) if z is None else (int(z), False)
            return int(a.floor()), False

        vals, unsure = self._with_prec(lambda: self._map2(one, x))
        big = np.vectorize(lambda v: abs(v) >= 2**62, otypes=[bool])(vals) if vals.size else np.zeros(vals.shape, bool)
        vals = np.where(big | unsure, 0, vals).astype(np.int64)
        return vals, unsure | big
