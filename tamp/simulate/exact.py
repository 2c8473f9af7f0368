"""Exact evaluation of expressions over the inputs: ``requires``, ``fails``, ``rate``, ``--bound``.

Numbers are ints and :class:`fractions.Fraction` (exact); ``log``/``exp``/``sqrt`` give floats
unless the result is exact (``log(1)``, ``exp(0)``, square roots of rational squares).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Dict, Optional

from lang import ast as A
from lang.errors import error_at
from lang.evaluate import euclid_divmod

from .errors import SimulationError
from .evaluate import COMPARISONS

_BUILTINS = ("abs", "min", "max", "log", "exp", "sqrt", "fst", "snd")


def _exact_sqrt(x):
    """sqrt(x): exact for squares of rationals, else a float."""
    if isinstance(x, (int, Fraction)):
        f = Fraction(x)
        rn, rd = math.isqrt(f.numerator), math.isqrt(f.denominator)
        if rn * rn == f.numerator and rd * rd == f.denominator:
            return Fraction(rn, rd)
    return math.sqrt(x)


class ExactEvaluator:
    """Evaluates an expression whose free variables are all in ``env`` (the inputs)."""

    def __init__(self, env: Dict[str, object], path: str = "<string>", source: Optional[str] = None,
                 what: str = "this expression"):
        self.env = env
        self.path = path
        self.source = source
        self.what = what

    def error(self, msg: str, node) -> SimulationError:
        return error_at(SimulationError, msg, getattr(node, "pos", None), self.path, self.source)

    def eval(self, e: A.Expr, bound: Optional[Dict[str, object]] = None):
        """The exact value of ``e``; ``bound`` holds quantifier variables."""
        bound = bound or {}
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            raise self.error(f"{type(e).__name__} cannot appear in {self.what}", e)
        return m(e, bound)

    def _Hole(self, e, b):
        raise self.error("`fails ?` asks `tamp prove` to infer the bound; to simulate, give one with "
                         "--bound (e.g. the bound `tamp prove` inferred)", e)

    # ---------------------------------------------------------------- leaves
    def _Num(self, e, b):
        return int(e.value) if e.is_int else e.value

    def _BoolLit(self, e, b):
        return e.value

    def _Var(self, e, b):
        if e.name in b:
            return b[e.name]
        if e.name in self.env:
            return self.env[e.name]
        raise self.error(f"'{e.name}' is not an input; {self.what} may only mention the inputs", e)

    def _Index(self, e, b):
        arr = self.eval(e.base, b)
        i = self.eval(e.index, b)
        if not isinstance(arr, list):
            raise self.error("indexing something that is not an array", e)
        if isinstance(i, Fraction) and i.denominator == 1:
            i = int(i)
        if not isinstance(i, int) or isinstance(i, bool):
            raise self.error(f"array index must be an integer, got {i}", e.index)
        if not 0 <= i < len(arr):
            raise self.error(f"index {i} is out of range (the array has {len(arr)} elements)", e.index)
        return arr[i]

    def _TupleExpr(self, e, b):
        return tuple(self.eval(x, b) for x in e.items)

    # ---------------------------------------------------------------- operators
    def _Unary(self, e, b):
        v = self.eval(e.operand, b)
        return (not v) if e.op == "!" else -v

    def _Binary(self, e, b):
        op = e.op
        if op == "&&":
            return bool(self.eval(e.left, b)) and bool(self.eval(e.right, b))
        if op == "||":
            return bool(self.eval(e.left, b)) or bool(self.eval(e.right, b))
        if op == "==>":
            return (not self.eval(e.left, b)) or bool(self.eval(e.right, b))
        x, y = self.eval(e.left, b), self.eval(e.right, b)
        if op == "<==>":
            return bool(x) == bool(y)
        op = op.rstrip(".") if op in ("+.", "-.", "*.") else op
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if op == "/":
            if y == 0:
                raise self.error("division by zero at the given inputs", e)
            if isinstance(x, float) or isinstance(y, float):
                return x / y
            return Fraction(x) / Fraction(y)
        if op in ("div", "mod"):
            if y == 0:
                raise self.error(f"'{op}' by zero at the given inputs", e)
            q, r = euclid_divmod(int(x), int(y))
            return q if op == "div" else r
        if op in COMPARISONS:
            return COMPARISONS[op](x, y)
        raise self.error(f"unknown operator '{op}'", e)

    def _Cond(self, e, b):
        return self.eval(e.then, b) if self.eval(e.cond, b) else self.eval(e.other, b)

    def _Call(self, e, b):
        f = e.func
        if f not in _BUILTINS:
            raise self.error(f"'{f}' cannot appear in {self.what}", e)
        args = [self.eval(a, b) for a in e.args]
        if f == "abs":
            return abs(args[0])
        if f == "min":
            return min(args)
        if f == "max":
            return max(args)
        if f == "fst":
            return args[0][0]
        if f == "snd":
            return args[0][1]
        x = args[0]
        if f == "log":
            if x <= 0:
                raise self.error(f"log of a non-positive number ({float(x):g}) at the given inputs", e)
            return 0 if x == 1 else math.log(x)
        if f == "exp":
            if x == 0:
                return 1
            try:
                return math.exp(x)
            except OverflowError:
                return math.inf
        if x < 0:
            raise self.error(f"sqrt of a negative number ({float(x):g}) at the given inputs", e)
        return _exact_sqrt(x)

    # ---------------------------------------------------------------- quantifiers
    def _range(self, e, b):
        lo, hi = self.eval(e.lo, b), self.eval(e.hi, b)
        for v, node in ((lo, e.lo), (hi, e.hi)):
            if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, Fraction) and v.denominator == 1)):
                raise self.error("range bounds must be integers", node)
        return range(int(lo), int(hi) + (1 if e.inclusive else 0))

    def _Quant(self, e, b):
        test = all if e.kind == "forall" else any
        return test(bool(self.eval(e.body, {**b, e.var: j})) for j in self._range(e, b))

    def _Sum(self, e, b):
        return sum((self.eval(e.body, {**b, e.var: j}) for j in self._range(e, b)), 0)


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
