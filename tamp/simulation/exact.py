"""Exact evaluation of expressions over the inputs: ``requires``, ``fails``, ``rate``, ``--bound``.

Numbers are ints and :class:`fractions.Fraction` (exact); ``log``/``exp``/``sqrt`` give exact
results where there is one (``log(1)``, ``exp(0)``, square roots of rational squares) and
otherwise arb balls (python-flint) that contain the exact value. A comparison, ``min``/``max``
or a division the balls do not decide is evaluated again at a higher precision (128, 1024,
8192 bits), and finally with sympy's exact numbers (equalities of algebraic numbers decided by
their minimal polynomial); if even that does not decide it, it is an error, never a guess.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, Optional

from flint import arb, ctx, fmpq

from lang import ast as A
from lang.errors import error_at
from lang.evaluate import euclid_divmod

from .arith import ExactDomain
from .errors import SimulationError
from .evaluate import COMPARISONS

_BUILTINS = ("abs", "min", "max", "log", "exp", "sqrt", "fst", "snd")


PRECISIONS = (128, 1024, 8192)


class _Undecided(Exception):
    """A comparison the current precision cannot decide (retried more precisely)."""


def _exact_sqrt(x):
    """sqrt(x) of a rational: exact for squares of rationals, else None."""
    f = Fraction(x)
    rn, rd = math.isqrt(f.numerator), math.isqrt(f.denominator)
    if rn * rn == f.numerator and rd * rd == f.denominator:
        return Fraction(rn, rd)
    return None


def _is_arb(v) -> bool:
    return type(v).__name__ == "arb"


def _is_sym(v) -> bool:
    return type(v).__module__.startswith("sympy")


def float_bounds(v):
    """(lo, hi) floats around a number (exact, arb ball or sympy number), rounded outwards."""
    if _is_arb(v):
        return (float(math.nextafter(float(v.lower()), -math.inf)), float(math.nextafter(float(v.upper()), math.inf)))
    if _is_sym(v):
        q = v.evalf(40)
        f = float(q)
        return math.nextafter(f, -math.inf), math.nextafter(f, math.inf)
    if isinstance(v, Fraction):
        f = float(v)
        return (f, f) if Fraction(f) == v else (math.nextafter(f, -math.inf), math.nextafter(f, math.inf))
    return float(v), float(v)


def approx(v) -> float:
    """A float close to a number (for display)."""
    lo, hi = float_bounds(v)
    return lo if lo == hi else lo / 2 + hi / 2


def exceeds(lo: float, bound) -> bool:
    """Whether the float ``lo`` is surely greater than ``bound`` (exact, ball or symbolic)."""
    if isinstance(bound, float):
        return lo > bound
    if _is_arb(bound) or _is_sym(bound):
        return Fraction(lo) > Fraction(float_bounds(bound)[1])
    return Fraction(lo) > Fraction(bound)


class ExactEvaluator:
    """Evaluates an expression whose free variables are all in ``env`` (the inputs)."""

    def __init__(
        self,
        env: Dict[str, object],
        path: str = "<string>",
        source: Optional[str] = None,
        what: str = "this expression",
    ):
        self.env = env
        self.path = path
        self.source = source
        self.what = what

    def error(self, msg: str, node) -> SimulationError:
        return error_at(SimulationError, msg, getattr(node, "pos", None), self.path, self.source)

    mode = None  # None: exact and arb at ``prec`` bits; "sym": sympy numbers
    prec = PRECISIONS[0]

    def eval(self, e: A.Expr, bound: Optional[Dict[str, object]] = None):
        """The exact value of ``e`` (an arb ball or sympy number when irrational); ``bound``
        holds quantifier variables. Comparisons are decided exactly or it is an error."""
        if self.mode is not None or self.prec != PRECISIONS[0]:
            return self._eval(e, bound or {})
        old = ctx.prec
        try:
            for prec in PRECISIONS:
                self.prec = ctx.prec = prec
                try:
                    return self._eval(e, bound or {})
                except _Undecided:
                    continue
            self.mode = "sym"
            try:
                return self._settle(self._eval(e, bound or {}))
            except _Undecided as exc:
                raise self.error(f"cannot decide this comparison exactly at the given inputs ({exc})", e) from None
        finally:
            self.mode, self.prec, ctx.prec = None, PRECISIONS[0], old

    def _eval(self, e: A.Expr, bound: Dict[str, object]):
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            raise self.error(f"{type(e).__name__} cannot appear in {self.what}", e)
        return m(e, bound)

    # ---------------------------------------------------------------- certified numbers
    def _num(self, v):
        """A rational as a number of the current mode."""
        if self.mode == "sym" and isinstance(v, (int, Fraction)) and not isinstance(v, bool):
            # deferred on purpose: sympy takes ~1 s to load; only this step needs it
            import sympy

            f = Fraction(v)
            return sympy.Rational(f.numerator, f.denominator)
        return v

    def _lift(self, x):
        """A number usable with arb balls (Fractions become fmpq)."""
        if isinstance(x, Fraction):
            return fmpq(x.numerator, x.denominator)
        return x

    def _sign(self, d, node) -> int:
        """The sign of a number, decided exactly, or _Undecided."""
        if isinstance(d, (int, Fraction)):
            return (d > 0) - (d < 0)
        if _is_arb(d):
            if d > 0:
                return 1
            if d < 0:
                return -1
            if d.is_zero():
                return 0
            raise _Undecided("the values are too close")
        s = ExactDomain("sym")._sym_sign(d)
        if s is None:
            raise _Undecided("sympy cannot decide it")
        return s

    def _arith(self, op, x, y):
        if isinstance(x, (int, Fraction)) and isinstance(y, (int, Fraction)):
            return {"+": x + y, "-": x - y, "*": x * y}[op]
        if self.mode == "sym":
            x, y = self._num(x), self._num(y)
        else:
            x, y = self._lift(x), self._lift(y)
        r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y}[op]()
        return self._settle(r)

    def _settle(self, r):
        """fmpq results back to Fractions; sympy rationals likewise."""
        if type(r).__name__ == "fmpq":
            return Fraction(int(r.p), int(r.q))
        if _is_sym(r) and getattr(r, "is_Rational", False):
            return Fraction(int(r.p), int(r.q))
        return r

    def _cmp(self, op, x, y, node):
        if isinstance(x, bool) or isinstance(y, bool) or isinstance(x, tuple):
            return COMPARISONS[op](x, y)
        if isinstance(x, (int, Fraction)) and isinstance(y, (int, Fraction)):
            return COMPARISONS[op](x, y)
        s = self._sign(self._arith("-", self._num(x), self._num(y)), node)
        return COMPARISONS[op](s, 0)

    def _Hole(self, e, b):
        raise self.error(
            "`fails ?` asks `tamp prove` to infer the bound; to simulate, give one with "
            "--bound (e.g. the bound `tamp prove` inferred)",
            e,
        )

    # ---------------------------------------------------------------- leaves
    def _Num(self, e, b):
        return self._num(int(e.value) if e.is_int else e.value)

    def _BoolLit(self, e, b):
        return e.value

    def _Var(self, e, b):
        if e.name in b:
            return b[e.name]
        if e.name in self.env:
            v = self.env[e.name]
            return [self._num(x) for x in v] if isinstance(v, list) else self._num(v)
        raise self.error(f"'{e.name}' is not an input; {self.what} may only mention the inputs", e)

    def _Index(self, e, b):
        arr = self._eval(e.base, b)
        i = self._eval(e.index, b)
        if not isinstance(arr, list):
            raise self.error("indexing something that is not an array", e)
        i = self._settle(i) if _is_sym(i) else i
        if isinstance(i, Fraction) and i.denominator == 1:
            i = int(i)
        if not isinstance(i, int) or isinstance(i, bool):
            raise self.error(f"array index must be an integer, got {i}", e.index)
        if not 0 <= i < len(arr):
            raise self.error(f"index {i} is out of range (the array has {len(arr)} elements)", e.index)
        return arr[i]

    def _TupleExpr(self, e, b):
        return tuple(self._eval(x, b) for x in e.items)

    # ---------------------------------------------------------------- operators
    def _Unary(self, e, b):
        v = self._eval(e.operand, b)
        return (not v) if e.op == "!" else -v

    def _Binary(self, e, b):
        op = e.op
        if op == "&&":
            return bool(self._eval(e.left, b)) and bool(self._eval(e.right, b))
        if op == "||":
            return bool(self._eval(e.left, b)) or bool(self._eval(e.right, b))
        if op == "==>":
            return (not self._eval(e.left, b)) or bool(self._eval(e.right, b))
        x, y = self._eval(e.left, b), self._eval(e.right, b)
        if op == "<==>":
            return bool(x) == bool(y)
        op = op.rstrip(".") if op in ("+.", "-.", "*.") else op
        if op in ("+", "-", "*"):
            return self._arith(op, x, y)
        if op == "/":
            if self._sign(y, e) == 0:
                raise self.error("division by zero at the given inputs", e)
            if isinstance(x, (int, Fraction)) and isinstance(y, (int, Fraction)):
                return Fraction(x) / Fraction(y)
            if self.mode == "sym":
                return self._settle(self._num(x) / self._num(y))
            return self._settle(self._lift(x) / self._lift(y))
        if op in ("div", "mod"):
            x, y = self._settle(x), self._settle(y)
            if y == 0:
                raise self.error(f"'{op}' by zero at the given inputs", e)
            q, r = euclid_divmod(int(x), int(y))
            return q if op == "div" else r
        if op in COMPARISONS:
            return self._cmp(op, x, y, e)
        raise self.error(f"unknown operator '{op}'", e)

    def _Cond(self, e, b):
        return self._eval(e.then, b) if self._eval(e.cond, b) else self._eval(e.other, b)

    def _Call(self, e, b):
        f = e.func
        if f not in _BUILTINS:
            raise self.error(f"'{f}' cannot appear in {self.what}", e)
        args = [self._eval(a, b) for a in e.args]
        if f == "fst":
            return args[0][0]
        if f == "snd":
            return args[0][1]
        x = args[0]
        if f == "abs":
            return -x if self._sign(x, e) < 0 else x
        if f in ("min", "max"):
            less = self._cmp("<=", args[0], args[1], e)
            return args[0] if less == (f == "min") else args[1]
        s = self._sign(x, e)
        if f == "log":
            if s <= 0:
                raise self.error(f"log of a non-positive number ({approx(x):g}) at the given inputs", e)
            if x == 1:
                return 0
        if f == "exp" and isinstance(x, (int, Fraction)) and x == 0:
            return 1
        if f == "sqrt":
            if s < 0:
                raise self.error(f"sqrt of a negative number ({approx(x):g}) at the given inputs", e)
            if isinstance(x, (int, Fraction)):
                r = _exact_sqrt(x)
                if r is not None:
                    return r
        if self.mode == "sym":
            # deferred on purpose: sympy takes ~1 s to load; only this step needs it
            import sympy

            return self._settle({"log": sympy.log, "exp": sympy.exp, "sqrt": sympy.sqrt}[f](self._num(x)))
        a = arb(self._lift(x)) if not _is_arb(x) else x
        return {"log": a.log, "exp": a.exp, "sqrt": a.sqrt}[f]()

    # ---------------------------------------------------------------- quantifiers
    def _range(self, e, b):
        lo, hi = self._settle(self._eval(e.lo, b)), self._settle(self._eval(e.hi, b))
        for v, node in ((lo, e.lo), (hi, e.hi)):
            if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, Fraction) and v.denominator == 1)):
                raise self.error("range bounds must be integers", node)
        return range(int(lo), int(hi) + (1 if e.inclusive else 0))

    def _Quant(self, e, b):
        test = all if e.kind == "forall" else any
        return test(bool(self._eval(e.body, {**b, e.var: self._num(j)})) for j in self._range(e, b))

    def _Sum(self, e, b):
        acc = 0
        for j in self._range(e, b):
            acc = self._arith("+", acc, self._eval(e.body, {**b, e.var: self._num(j)}))
        return acc


def as_exact(v):
    """A Python number/bool/list of them, made exact: floats through their shortest decimal."""
    if isinstance(v, bool) or isinstance(v, (int, Fraction)):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            return v
        return Fraction(repr(v))
    if isinstance(v, (list, tuple)):
        return [as_exact(x) for x in v]
    return v
