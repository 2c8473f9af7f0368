"""Numeric evaluation of :mod:`lang.ast` expressions, compiled once to Python closures.

``evaluate(expr, env)`` computes the value of ``expr`` where ``env`` maps variable names to
values: numbers (``int``, ``Fraction``, ``float``), ``bool``, sequences or dicts (arrays:
``a[i]`` is ``env["a"][i]``), tuples (pairs), and also numpy arrays, in which case the
operations broadcast element-wise (so a ``bad`` event can be evaluated on a whole vector of
samples at once).

Arithmetic on ``int``/``Fraction`` stays exact; the operators mean what :mod:`lang.ops` says
(``div``/``mod`` Euclidean, ``/`` real division, ``log``/``exp``/``sqrt`` in binary64). Errors
in the expression (unknown variable, ``log`` of a non-positive number, division by zero,
unsupported construct) raise :class:`EvalError` — when the erroneous part is evaluated, so
``false ==> log(0) > 1`` is true, as with short-circuit evaluation.

:func:`compile_expr` turns an expression into a function of the environment; the result is
memoised per expression node, so a candidate invariant checked against hundreds of states
(:mod:`tamp.prover.base.samples`) is walked once, not once per state.

>>> from lang.parser import parse_expr
>>> evaluate(parse_expr("x * 2 + q[1]"), {"x": 3, "q": [0, 5]})
11
>>> f = compile_expr(parse_expr("forall j in 0..n: q[j] >= 0"))
>>> f({"n": 2, "q": [1, 2]}), f({"n": 2, "q": [1, -2]})
(True, False)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

import numpy as np

from lang import ast as A
from lang import ops
from lang.ops import euclid_divmod

__all__ = ["EvalError", "evaluate", "compile_expr", "constant_value", "euclid_divmod"]

Env = Mapping[str, Any]
Fn = Callable[[Env], Any]


class EvalError(ValueError):
    """The expression has no value in this environment."""


_NDARRAY = np.ndarray


def evaluate(expr: A.Expr, env: Optional[Env] = None) -> Any:
    """The value of ``expr`` under ``env`` (see the module docstring)."""
    return compile_expr(expr)({} if env is None else env)


def constant_value(expr: A.Expr) -> Any:
    """The value of a closed expression, or ``None`` if it reads a variable or cannot be
    evaluated (e.g. ``log(0)``)."""
    try:
        return evaluate(expr, {})
    except EvalError:
        return None


# ---------------------------------------------------------------------------- the compiler

_CACHE: Dict[int, Tuple[A.Expr, Fn]] = {}


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
    def f(env: Env) -> Any:
        raise EvalError(msg)

    return f


def _const(v: Any) -> Fn:
    return lambda env: v


def _num(e: A.Num) -> Fn:
    v = e.value
    return _const(int(v) if v.denominator == 1 and e.is_int else v)


def _var(e: A.Var) -> Fn:
    name = e.name

    def f(env: Env) -> Any:
        try:
            return env[name]
        except KeyError:
            raise EvalError(f"unknown variable {name!r}") from None

    return f


def _as_index(idx: Any) -> Any:
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

    def f(env: Env) -> Any:
        idx = index(env)
        if type(idx) is not int:
            idx = _as_index(idx)
        try:
            return base(env)[idx]
        except (KeyError, IndexError, TypeError) as err:
            raise EvalError(f"bad index {idx}: {err}") from None

    return f


def _items(e: Union[A.TupleExpr, A.SetLit, A.ListLit]) -> List[Fn]:
    return [compile_expr(x) for x in e.items]


def _tuple(e: Union[A.TupleExpr, A.SetLit]) -> Fn:
    items = _items(e)
    return lambda env: tuple(g(env) for g in items)


def _list(e: A.ListLit) -> Fn:
    items = _items(e)
    return lambda env: [g(env) for g in items]


def _unary(e: A.Unary) -> Fn:
    g = compile_expr(e.operand)
    if e.op == "-":
        return lambda env: -g(env)
    if e.op == "!":

        def f(env: Env) -> Any:
            v = g(env)
            return np.logical_not(v) if isinstance(v, _NDARRAY) else (not v)

        return f
    return _fail(f"unknown unary operator {e.op}")


def _floats(a: Any, b: Any) -> Tuple[Any, Any]:
    """Mixed Fraction/ndarray arithmetic: exact scalars become floats."""
    if isinstance(a, Fraction):
        a = float(a)
    if isinstance(b, Fraction):
        b = float(b)
    return a, b


def _arith(op: str) -> Optional[Callable[[Any, Any], Any]]:
    """The scalar/array function of a non-logical binary operator."""
    meaning = ops.BINARY.get(op)
    if meaning is None or (meaning.kind == "logic" and op != "<==>"):
        return None
    if op == "*":

        def mul(a: Any, b: Any) -> Any:
            if isinstance(a, tuple) and isinstance(b, tuple):  # product of finite sets
                return tuple((p, q) for p in a for q in b)
            return a * b

        return mul
    if op in ("/", "div", "mod"):
        exact, k = meaning.exact, (0 if op == "div" else 1)

        def div(a: Any, b: Any) -> Any:
            if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY):
                return a / b if op == "/" else ops.euclid_divmod_elementwise(a, b)[k]
            try:
                return exact(a, b)
            except ops.DomainError as err:
                raise EvalError(str(err)) from None

        return div
    if op == "<==>":

        def iff(a: Any, b: Any) -> Any:
            if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY):
                return a == b
            return meaning.exact(a, b)

        return iff
    return meaning.exact


def _binary(e: A.Binary) -> Fn:
    if type(e.left) is A.Binary:
        return _chain(e)
    op = e.op
    left, right = compile_expr(e.left), compile_expr(e.right)
    if op in ("&&", "||", "==>"):
        return _logic(op, left, right)
    return _binary_fn(op, left, right)


def _binary_fn(op: str, left: Fn, right: Fn) -> Fn:
    fn = _arith(op)
    if fn is None:
        return _fail(f"cannot evaluate operator {op}")

    nd = _NDARRAY

    def f(env: Env) -> Any:
        a = left(env)
        b = right(env)
        if type(a) is nd or type(b) is nd:
            a, b = _floats(a, b)
        return fn(a, b)

    return f


def _chain(e: A.Binary) -> Fn:
    """A left-deep chain ``a + b - c …``, compiled and evaluated iteratively (a flat sum of
    100,000 terms must not nest 100,000 closures): the first operand, then one step per
    operator combining the value so far with the operator's right operand."""
    spine = A.left_spine(e)
    first = compile_expr(spine[-1].left)
    steps = [_step(node.op, compile_expr(node.right)) for node in reversed(spine)]

    def f(env: Env) -> Any:
        a = first(env)
        for step in steps:
            a = step(a, env)
        return a

    return f


def _step(op: str, right: Fn) -> Callable[[Any, Env], Any]:
    """``(value of the left operand, env) ↦ value of `left op right```, with the same
    semantics as :func:`_binary` (short-circuit connectives, exact scalars, numpy arrays)."""
    if op in ops.SHORT_CIRCUIT:
        stop, result = ops.SHORT_CIRCUIT[op]

        def logic(a: Any, env: Env) -> Any:
            if not isinstance(a, _NDARRAY) and bool(a) is stop:
                return result
            b = right(env)
            return _logic_arrays(op, a, b) if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY) else bool(b)

        return logic
    fn = _arith(op)
    if fn is None:
        msg = f"cannot evaluate operator {op}"

        def fail(a: Any, env: Env) -> Any:
            raise EvalError(msg)

        return fail
    nd = _NDARRAY

    def arith(a: Any, env: Env) -> Any:
        b = right(env)
        if type(a) is nd or type(b) is nd:
            a, b = _floats(a, b)
        return fn(a, b)

    return arith


def _logic_arrays(op: str, a: Any, b: Any) -> Any:
    """A connective element-wise, when an operand is a numpy array."""
    if op == "&&":
        return np.logical_and(a, b)
    if op == "||":
        return np.logical_or(a, b)
    return np.logical_or(np.logical_not(a), b)


def _logic(op: str, left: Fn, right: Fn) -> Fn:
    stop, result = ops.SHORT_CIRCUIT[op]

    def f(env: Env) -> Any:
        a = left(env)
        if not isinstance(a, _NDARRAY) and bool(a) is stop:  # short-circuit on scalars
            return result
        b = right(env)
        return _logic_arrays(op, a, b) if isinstance(a, _NDARRAY) or isinstance(b, _NDARRAY) else bool(b)

    return f


def _cond(e: A.Cond) -> Fn:
    c, t, o = compile_expr(e.cond), compile_expr(e.then), compile_expr(e.other)

    def f(env: Env) -> Any:
        v = c(env)
        if isinstance(v, _NDARRAY):
            return np.where(v, t(env), o(env))
        return t(env) if v else o(env)

    return f


def _transcendental(name: str, v: Any) -> Any:
    if isinstance(v, _NDARRAY):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return {"log": np.log, "exp": np.exp, "sqrt": np.sqrt}[name](v.astype(float))
    try:
        return ops.approx_fn(name, v)
    except ops.DomainError as err:
        raise EvalError(str(err)) from None


def _call(e: A.Call) -> Fn:
    args = [compile_expr(a) for a in e.args]
    name, n = e.func, len(args)
    if name == "abs" and n == 1:
        g = args[0]
        return lambda env: abs(g(env))
    if name in ("min", "max") and n == 2:
        g, h = args
        pick, npick = (min, np.minimum) if name == "min" else (max, np.maximum)

        def f(env: Env) -> Any:
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


def _bound_body(e: Union[A.Sum, A.Quant], reduce: Callable[[Iterator[Any]], Any]) -> Fn:
    """``sum`` and the quantifiers: ``reduce`` over the body's values for ``var`` in the range."""
    lo, hi, body, var = compile_expr(e.lo), compile_expr(e.hi), compile_expr(e.body), e.var
    extra = 1 if e.inclusive else 0

    def f(env: Env) -> Any:
        rng = range(int(lo(env)), int(hi(env)) + extra)
        local = dict(env)

        def values() -> Iterator[Any]:
            for j in rng:
                local[var] = j
                yield body(local)

        return reduce(values())

    return f


def _sum(values: Iterator[Any]) -> Any:
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
