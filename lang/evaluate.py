"""Numeric evaluation of :mod:`lang.ast` expressions, compiled once to Python closures.

``evaluate(expr, env)`` computes the value of ``expr`` where ``env`` maps variable names to
values: numbers (``int``, ``Fraction``, ``float``), ``bool``, sequences or dicts (arrays:
``a[i]`` is ``env["a"][i]``), tuples (pairs), and also numpy arrays, in which case the
operations broadcast element-wise (so a ``bad`` event can be evaluated on a whole vector of
samples at once).

Arithmetic on ``int``/``Fraction`` stays exact (``+ - * /``, ``div``, ``mod``, ``min``,
``max``, ``abs``, comparisons); ``div``/``mod`` on integers are Euclidean, as in SMT-LIB
(``a = b·q + r`` with ``0 <= r < |b|``); ``log``, ``exp``, ``sqrt`` return floats. Errors
in the expression (unknown variable, ``log`` of a non-positive number, division by zero,
unsupported construct) raise :class:`EvalError` — when the erroneous part is evaluated, so
``false ==> log(0) > 1`` is true, as with short-circuit evaluation.

:func:`compile_expr` turns an expression into a function of the environment; the result is
memoised per expression node, so a candidate invariant checked against hundreds of states
(:mod:`tamp.prover.samples`) is walked once, not once per state.

>>> from lang.parser import parse_expr
>>> evaluate(parse_expr("x * 2 + q[1]"), {"x": 3, "q": [0, 5]})
11
>>> f = compile_expr(parse_expr("forall j in 0..n: q[j] >= 0"))
>>> f({"n": 2, "q": [1, 2]}), f({"n": 2, "q": [1, -2]})
(True, False)
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np

from lang import ast as A

__all__ = ["EvalError", "evaluate", "compile_expr", "constant_value", "euclid_divmod"]

Env = Mapping[str, Any]
Fn = Callable[[Env], Any]


class EvalError(ValueError):
    """The expression has no value in this environment."""


_NDARRAY = np.ndarray


def evaluate(expr: A.Expr, env: Env = None) -> Any:
    """The value of ``expr`` under ``env`` (see the module docstring)."""
    return compile_expr(expr)({} if env is None else env)


def constant_value(expr: A.Expr) -> Any:
    """The value of a closed expression, or ``None`` if it reads a variable or cannot be
    evaluated (e.g. ``log(0)``)."""
    try:
        return evaluate(expr, {})
    except EvalError:
        return None


def euclid_divmod(a: int, b: int):
    """SMT-LIB integer division: ``a = b*q + r`` with ``0 <= r < |b|``."""
    q, r = divmod(a, b)
    if r < 0:  # only when b < 0 (Python's r takes b's sign)
        q, r = q + 1, r - b
    return q, r


# ---------------------------------------------------------------------------- the compiler

_CACHE: dict = {}


def compile_expr(e: A.Expr) -> Fn:
    """A function ``env ↦ value of e`` (memoised per node, by identity: the node is kept in
    the cache so its id stays its own; expressions are immutable)."""
    hit = _CACHE.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    maker = _MAKERS.get(type(e))
    fn = maker(e) if maker is not None else _fail(f"cannot evaluate {type(e).__name__}")
    if len(_CACHE) > 200_000:
        _CACHE.clear()
    _CACHE[id(e)] = (e, fn)
    return fn


def _fail(msg: str) -> Fn:
    def f(env):
        raise EvalError(msg)
    return f


def _const(v) -> Fn:
    return lambda env: v


def _num(e: A.Num) -> Fn:
    v = e.value
    return _const(int(v) if v.denominator == 1 and e.is_int else v)


def _var(e: A.Var) -> Fn:
    name = e.name

    def f(env):
        try:
            return env[name]
        except KeyError:
            raise EvalError(f"unknown variable {name!r}") from None
    return f


def _as_index(idx):
    if isinstance(idx, _NDARRAY):
        raise EvalError("array-valued index")
    if isinstance(idx, Fraction):
        if idx.denominator != 1:
            raise EvalError(f"non-integer index {idx}")
        return int(idx)
    if isinstance(idx, float):
        if not idx.is_integer():
            raise EvalError(f"non-integer index {idx}")
        return int(idx)
    return idx


def _index(e: A.Index) -> Fn:
    base, index = compile_expr(e.base), compile_expr(e.index)

    def f(env):
        idx = index(env)
        if type(idx) is not int:
            idx = _as_index(idx)
        try:
            return base(env)[idx]
        except (KeyError, IndexError, TypeError) as err:
            raise EvalError(f"bad index {idx}: {err}") from None
    return f


def _items(e) -> list:
    return [compile_expr(x) for x in e.items]


def _tuple(e) -> Fn:
    items = _items(e)
    return lambda env: tuple(g(env) for g in items)


def _list(e) -> Fn:
    items = _items(e)
    return lambda env: [g(env) for g in items]


def _unary(e: A.Unary) -> Fn:
    g = compile_expr(e.operand)
    if e.op == "-":
        return lambda env: -g(env)
    if e.op == "!":
        def f(env):
            v = g(env)
            return np.logical_not(v) if isinstance(v, _NDARRAY) else (not v)
        return f
    return _fail(f"unknown unary operator {e.op}")


def _floats(a, b):
    """Mixed Fraction/ndarray arithmetic: exact scalars become floats."""
    if isinstance(a, Fraction):
        a = float(a)
    if isinstance(b, Fraction):
        b = float(b)
    return a, b


_OPERATOR = {"+": operator.add, "-": operator.sub, "==": operator.eq, "!=": operator.ne,
             "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _arith(op: str):
    """The scalar/array function of a non-logical binary operator."""
    if op in _OPERATOR:
        return _OPERATOR[op]
    if op == "*":
        def mul(a, b):
            if isinstance(a, tuple) and isinstance(b, tuple):  # product of finite sets
                return tuple((p, q) for p in a for q in b)
            return a * b
        return mul
    if op == "/":
        def div(a, b):
            if type(a) is int and type(b) is int:
                if b == 0:
                    raise EvalError("division by zero")
                return Fraction(a, b)
            if not isinstance(b, _NDARRAY) and b == 0:
                raise EvalError("division by zero")
            return a / b
        return div
    if op in ("div", "mod"):
        k = 0 if op == "div" else 1

        def idiv(a, b):
            if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY):
                return (a // b) if k == 0 else (a % b)
            if b == 0:
                raise EvalError("division by zero")
            if type(a) is int and type(b) is int:
                return euclid_divmod(a, b)[k]
            return (a // b) if k == 0 else (a % b)
        return idiv
    if op == "<==>":
        def iff(a, b):
            if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY):
                return a == b
            return bool(a) == bool(b)
        return iff
    return None


def _binary(e: A.Binary) -> Fn:
    op = e.op
    left, right = compile_expr(e.left), compile_expr(e.right)
    if op in ("&&", "||", "==>"):
        return _logic(op, left, right)
    fn = _arith(op)
    if fn is None:
        return _fail(f"cannot evaluate operator {op}")

    nd = _NDARRAY

    def f(env):
        a = left(env)
        b = right(env)
        if type(a) is nd or type(b) is nd:
            a, b = _floats(a, b)
        return fn(a, b)
    return f


#: for each connective: the value of the left operand that decides it alone, and the result then
_SHORT = {"&&": (False, False), "||": (True, True), "==>": (False, True)}


def _logic(op: str, left: Fn, right: Fn) -> Fn:
    stop, result = _SHORT[op]

    def arrays(a, b):
        if op == "&&":
            return np.logical_and(a, b)
        if op == "||":
            return np.logical_or(a, b)
        return np.logical_or(np.logical_not(a), b)

    def f(env):
        a = left(env)
        if not isinstance(a, _NDARRAY) and bool(a) is stop:  # short-circuit on scalars
            return result
        b = right(env)
        return arrays(a, b) if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY) else bool(b)
    return f


def _cond(e: A.Cond) -> Fn:
    c, t, o = compile_expr(e.cond), compile_expr(e.then), compile_expr(e.other)

    def f(env):
        v = c(env)
        if isinstance(v, _NDARRAY):
            return np.where(v, t(env), o(env))
        return t(env) if v else o(env)
    return f


def _transcendental(name: str, v):
    if isinstance(v, _NDARRAY):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return {"log": np.log, "exp": np.exp, "sqrt": np.sqrt}[name](v.astype(float))
    if name == "log":
        if v <= 0:
            raise EvalError(f"log of non-positive {v}")
        fv = float(v)
        if isinstance(v, Fraction) and (fv == 0.0 or math.isinf(fv)):
            return math.log(v.numerator) - math.log(v.denominator)  # beyond float range
        return math.log(fv)
    if name == "sqrt":
        if v < 0:
            raise EvalError(f"sqrt of negative {v}")
        return math.sqrt(v)
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _call(e: A.Call) -> Fn:
    args = [compile_expr(a) for a in e.args]
    name, n = e.func, len(args)
    if name == "abs" and n == 1:
        g = args[0]
        return lambda env: abs(g(env))
    if name in ("min", "max") and n == 2:
        g, h = args
        pick, npick = (min, np.minimum) if name == "min" \
            else (max, np.maximum)

        def f(env):
            a, b = g(env), h(env)
            if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY):
                return npick(*_floats(a, b))
            return pick(a, b)
        return f
    if name in ("fst", "snd") and n == 1:
        g, k = args[0], (0 if name == "fst" else 1)
        return lambda env: g(env)[k]
    if name in ("log", "exp", "sqrt") and n == 1:
        g = args[0]
        return lambda env: _transcendental(name, g(env))
    return _fail(f"cannot evaluate function {name}/{n}")


def _bound_body(e, reduce) -> Fn:
    """``sum`` and the quantifiers: ``reduce`` over the body's values for ``var`` in the range."""
    lo, hi, body, var = compile_expr(e.lo), compile_expr(e.hi), compile_expr(e.body), e.var
    extra = 1 if e.inclusive else 0

    def f(env):
        rng = range(int(lo(env)), int(hi(env)) + extra)
        local = dict(env)

        def values():
            for j in rng:
                local[var] = j
                yield body(local)
        return reduce(values())
    return f


def _sum(values):
    total = 0
    for v in values:
        total = total + v
    return total


def _quant(e: A.Quant) -> Fn:
    return _bound_body(e, all if e.kind == "forall" else any)


_MAKERS = {
    A.Num: _num,
    A.BoolLit: lambda e: _const(e.value),
    A.Var: _var,
    A.Index: _index,
    A.TupleExpr: _tuple,
    A.SetLit: _tuple,
    A.ListLit: _list,
    A.Unary: _unary,
    A.Binary: _binary,
    A.Cond: _cond,
    A.Call: _call,
    A.Sum: lambda e: _bound_body(e, _sum),
    A.Quant: _quant,
}
