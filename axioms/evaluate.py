"""A small numeric evaluator of :mod:`lang.ast` expressions.

``evaluate(expr, env)`` computes the value of ``expr`` where ``env`` maps
variable names to values: numbers (``int``, ``Fraction``, ``float``), ``bool``,
sequences or dicts (arrays: ``a[i]`` is ``env["a"][i]``), tuples (pairs), and
also numpy arrays, in which case the operations broadcast element-wise (so a
``bad`` event can be evaluated on a whole vector of samples at once).

Arithmetic on ``int``/``Fraction`` stays exact (``+ - * /``, ``div``, ``mod``,
``min``, ``max``, ``abs``, comparisons); ``log``, ``exp``, ``sqrt`` return
floats. Errors in the expression (unknown variable, ``log`` of a non-positive
number, division by zero, unsupported construct) raise :class:`EvalError`.

Used by the axiom tests (to evaluate ``bad`` on samples and ``cost`` at
parameter values) and reusable by anyone who needs a scalar evaluator.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from lang import ast as A

try:  # numpy is a dependency of the project, but keep scalar use independent of it
    import numpy as np
except ImportError:  # pragma: no cover
    np = None


class EvalError(ValueError):
    """The expression has no value in this environment."""


_NDARRAY = np.ndarray if np is not None else ()


def _is_array(x) -> bool:
    return isinstance(x, _NDARRAY)


def _any_array(*xs) -> bool:
    for x in xs:
        if isinstance(x, _NDARRAY):
            return True
    return False


def _float_if_array(a, b):
    """Mixed Fraction/ndarray arithmetic: turn exact scalars into floats."""
    if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY):
        if isinstance(a, Fraction):
            a = float(a)
        if isinstance(b, Fraction):
            b = float(b)
    return a, b


def evaluate(expr: A.Expr, env: Mapping[str, Any] = None) -> Any:
    """The value of ``expr`` under ``env`` (see the module docstring)."""
    return _Evaluator(dict(env or {})).eval(expr)


def constant_value(expr: A.Expr) -> Any:
    """The value of a closed expression, or ``None`` if it reads a variable or cannot be
    evaluated (e.g. ``log(0)``)."""
    try:
        return evaluate(expr, {})
    except EvalError:
        return None


_METHOD: dict = {}


class _Evaluator:
    """One visitor: ``eval`` dispatches on the node class."""

    def __init__(self, env):
        self.env = env

    def eval(self, x: A.Expr):
        name = _METHOD.get(type(x))
        if name is None:
            name = _METHOD[type(x)] = "_" + type(x).__name__
        meth = getattr(self, name, None)
        if meth is None:
            raise EvalError(f"cannot evaluate {type(x).__name__}")
        return meth(x)

    # ----------------------------------------------------------------- leaves
    def _Num(self, x: A.Num):
        v = x.value
        return int(v) if v.denominator == 1 and x.is_int else v

    def _BoolLit(self, x: A.BoolLit):
        return x.value

    def _Var(self, x: A.Var):
        if x.name not in self.env:
            raise EvalError(f"unknown variable {x.name!r}")
        return self.env[x.name]

    def _Index(self, x: A.Index):
        base = self.eval(x.base)
        idx = self.eval(x.index)
        if _is_array(idx):
            raise EvalError("array-valued index")
        if isinstance(idx, Fraction):
            if idx.denominator != 1:
                raise EvalError(f"non-integer index {idx}")
            idx = int(idx)
        if isinstance(idx, float):
            if not idx.is_integer():
                raise EvalError(f"non-integer index {idx}")
            idx = int(idx)
        try:
            return base[idx]
        except (KeyError, IndexError, TypeError) as err:
            raise EvalError(f"bad index {idx}: {err}") from None

    def _TupleExpr(self, x: A.TupleExpr):
        return tuple(self.eval(i) for i in x.items)

    def _SetLit(self, x: A.SetLit):
        return tuple(self.eval(i) for i in x.items)

    def _ListLit(self, x: A.ListLit):
        return [self.eval(i) for i in x.items]

    # -------------------------------------------------------------- operators
    def _Unary(self, x: A.Unary):
        v = self.eval(x.operand)
        if x.op == "-":
            return -v
        if x.op == "!":
            return np.logical_not(v) if _is_array(v) else (not v)
        raise EvalError(f"unknown unary operator {x.op}")

    def _Binary(self, x: A.Binary):
        op = x.op
        if op in ("&&", "||", "==>"):
            return self._logic(op, x)
        a = self.eval(x.left)
        b = self.eval(x.right)
        arr = isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY)
        if arr:
            a, b = _float_if_array(a, b)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            if isinstance(a, tuple) and isinstance(b, tuple):  # product of finite sets
                return tuple((p, q) for p in a for q in b)
            return a * b
        if op == "/":
            if not arr and b == 0:
                raise EvalError("division by zero")
            if isinstance(a, int) and isinstance(b, int):
                return Fraction(a, b)
            return a / b
        if op in ("div", "mod"):
            if not arr and b == 0:
                raise EvalError("division by zero")
            return (a // b) if op == "div" else (a % b)
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
        if op == "<==>":
            return (a == b) if arr else (bool(a) == bool(b))
        raise EvalError(f"cannot evaluate operator {op}")

    def _logic(self, op: str, x: A.Binary):
        a = self.eval(x.left)
        if not _is_array(a):  # short-circuit on scalars
            if op == "&&" and not a:
                return False
            if op == "||" and a:
                return True
            if op == "==>" and not a:
                return True
        b = self.eval(x.right)
        if _any_array(a, b):
            if op == "&&":
                return np.logical_and(a, b)
            if op == "||":
                return np.logical_or(a, b)
            return np.logical_or(np.logical_not(a), b)
        return bool(b)

    def _Cond(self, x: A.Cond):
        c = self.eval(x.cond)
        if _is_array(c):
            return np.where(c, self.eval(x.then), self.eval(x.other))
        return self.eval(x.then) if c else self.eval(x.other)

    # -------------------------------------------------------------- functions
    def _Call(self, x: A.Call):
        args = [self.eval(a) for a in x.args]
        f = x.func
        arr = _any_array(*args)
        if f == "abs" and len(args) == 1:
            return abs(args[0])
        if f in ("min", "max") and len(args) == 2:
            a, b = _float_if_array(*args)
            if arr:
                return np.minimum(a, b) if f == "min" else np.maximum(a, b)
            return min(a, b) if f == "min" else max(a, b)
        if f in ("fst", "snd") and len(args) == 1:
            return args[0][0 if f == "fst" else 1]
        if f in ("log", "exp", "sqrt") and len(args) == 1:
            return self._transcendental(f, args[0])
        raise EvalError(f"cannot evaluate function {f}/{len(args)}")

    @staticmethod
    def _transcendental(f: str, v):
        if _is_array(v):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return {"log": np.log, "exp": np.exp, "sqrt": np.sqrt}[f](v.astype(float))
        if f == "log":
            if v <= 0:
                raise EvalError(f"log of non-positive {v}")
            fv = float(v)
            if isinstance(v, Fraction) and (fv == 0.0 or math.isinf(fv)):
                return math.log(v.numerator) - math.log(v.denominator)  # beyond float range
            return math.log(fv)
        if f == "sqrt":
            if v < 0:
                raise EvalError(f"sqrt of negative {v}")
            return math.sqrt(v)
        try:
            return math.exp(v)
        except OverflowError:
            return math.inf

    # ------------------------------------------------------------ spec forms
    def _range(self, x):
        lo = self.eval(x.lo)
        hi = self.eval(x.hi)
        return range(int(lo), int(hi) + (1 if x.inclusive else 0))

    def _bound(self, var, value, body):
        saved = self.env.get(var, _MISSING)
        self.env[var] = value
        try:
            return self.eval(body)
        finally:
            if saved is _MISSING:
                del self.env[var]
            else:
                self.env[var] = saved

    def _Sum(self, x: A.Sum):
        total = 0
        for j in self._range(x):
            total = total + self._bound(x.var, j, x.body)
        return total

    def _Quant(self, x: A.Quant):
        vals = (self._bound(x.var, j, x.body) for j in self._range(x))
        return all(vals) if x.kind == "forall" else any(vals)


_MISSING = object()
