"""Vectorised evaluation of expressions over a group of runs.

An expression is evaluated on a :class:`Ctx`: a :class:`~.state.State` and optionally a
subset of its runs (``rows``). ``&&``, ``||``, ``==>``, ``?:`` and the quantifiers evaluate
their right operand only on the runs that need it (short-circuit, per run), so a
guarded read like ``found ==> q[ans] >= t`` never reads ``ans`` where ``found`` is false.

Unreliable operators ``+. -. *.`` compute the exact value and fail independently on each run
with the program's rate; the failures are collected in ``ctx.fail`` (over all runs of the
state) for the interpreter to OR into the implicit flag ``failed``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Dict, Optional

import numpy as np

from lang import ast as A
from lang.errors import error_at

from .errors import SimulationError
from .values import ArrayVal, full, select, take

#: The comparison operators, for scalars and (element-wise) numpy arrays alike.
COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
               ">": operator.gt, ">=": operator.ge}

MAX_RANGE = 10 ** 6  # longest quantifier/sum range evaluated


@dataclass(frozen=True)
class ConstArray:
    """An input array (the same for every run)."""

    values: np.ndarray


class FailureLog:
    """The runs of a state where an unreliable operation failed (allocated on first failure)."""

    __slots__ = ("n", "mask")

    def __init__(self, n: int):
        self.n = n
        self.mask: Optional[np.ndarray] = None

    def mark(self, rows: np.ndarray) -> None:
        if self.mask is None:
            self.mask = np.zeros(self.n, dtype=bool)
        self.mask[rows] = True


@dataclass
class Ctx:
    """Where an expression is evaluated: ``state``'s runs ``rows`` (None: all of them).

    ``bound`` holds quantifier variables (valued on these rows); ``fail`` logs the failures of
    unreliable operations over *all* runs of ``state`` (None where none may occur)."""

    state: object
    rows: Optional[np.ndarray] = None
    bound: Dict[str, object] = field(default_factory=dict)
    fail: Optional[FailureLog] = None

    @property
    def n(self) -> int:
        return self.state.n if self.rows is None else len(self.rows)

    def restrict(self, mask: np.ndarray) -> "Ctx":
        """The same place, on the runs of this context where ``mask`` holds."""
        idx = np.flatnonzero(mask)
        rows = idx if self.rows is None else self.rows[idx]
        return Ctx(self.state, rows, {k: take(v, idx) for k, v in self.bound.items()}, self.fail)

    def mark_failed(self, local: np.ndarray) -> None:
        """Record unreliable-operation failures (``local`` is over this context's runs)."""
        idx = np.flatnonzero(local)
        self.fail.mark(idx if self.rows is None else self.rows[idx])


def as_int_array(v, n: int):
    """``v`` as integers (0-d or (n,)); None if some value is not integral."""
    a = np.asarray(v)
    if np.issubdtype(a.dtype, np.integer):
        return a
    if a.dtype == bool:
        return None
    if not np.all(np.isfinite(a)) or not np.all(a == np.floor(a)):
        return None
    return a.astype(np.int64)


class Evaluator:
    """Evaluates ``lang.ast`` expressions on a :class:`Ctx` (one method per node type)."""

    def __init__(self, params: Dict[str, object], rng: np.random.Generator, rate: Optional[float] = None,
                 path: str = "<string>", source: Optional[str] = None):
        self.params = params
        self.rng = rng
        self.rate = rate
        self.path = path
        self.source = source
        self._consts: Dict[int, object] = {}
        self._dispatch: Dict[type, object] = {}
        self._keep = []

    # ---------------------------------------------------------------- plumbing
    def error(self, msg: str, node) -> SimulationError:
        return error_at(SimulationError, msg, getattr(node, "pos", None), self.path, self.source)

    @staticmethod
    def runs(mask, n: int) -> str:
        k = int(np.count_nonzero(mask))
        return f"on {k} of {n} runs" if n > 1 else "on this run"

    def eval(self, e: A.Expr, ctx: Ctx):
        t = type(e)
        m = self._dispatch.get(t)
        if m is None:
            m = getattr(self, "_" + t.__name__, None)
            if m is None:
                raise self.error(f"{t.__name__} cannot be evaluated here", e)
            self._dispatch[t] = m
        return m(e, ctx)

    def eval_bool(self, e: A.Expr, ctx: Ctx) -> np.ndarray:
        """A condition as an (n,) bool array."""
        v = np.asarray(self.eval(e, ctx))
        if v.dtype != bool:
            raise self.error("a condition must be a Boolean", e)
        return full(v, ctx.n)

    def eval_int(self, e: A.Expr, ctx: Ctx, what: str = "an index"):
        v = self.eval(e, ctx)
        a = as_int_array(v, ctx.n) if not isinstance(v, (tuple, ArrayVal, ConstArray)) else None
        if a is None:
            raise self.error(f"{what} must be an integer", e)
        return a

    # ---------------------------------------------------------------- leaves
    def _Num(self, e, ctx):
        v = self._consts.get(id(e))
        if v is None:
            v = np.int64(int(e.value)) if e.is_int else np.float64(float(e.value))
            self._consts[id(e)] = v
            self._keep.append(e)  # keeps id(e) unique while cached
        return v

    def _BoolLit(self, e, ctx):
        return np.bool_(e.value)

    def _Var(self, e, ctx):
        name = e.name
        if name in ctx.bound:
            return ctx.bound[name]
        st = ctx.state
        if name in st.vars:
            und = st.undefined.get(name)
            if und is not None:
                und = und if ctx.rows is None else und[ctx.rows]
                if und.any():
                    raise self.error(f"'{name}' is read before it is assigned ({self.runs(und, ctx.n)})", e)
            v = st.vars[name]
            return v if ctx.rows is None else take(v, ctx.rows)
        if name in self.params:
            v = self.params[name]
            return ConstArray(v) if isinstance(v, np.ndarray) else v
        raise self.error(f"'{name}' is read before it is assigned", e)

    def _Index(self, e, ctx):
        if not isinstance(e.base, A.Var):
            raise self.error("only a named array can be indexed", e)
        name = e.base.name
        idx = self.eval_int(e.index, ctx)
        st = ctx.state
        if name in st.vars and name not in ctx.bound:
            arr = st.vars[name]
            if not isinstance(arr, ArrayVal):
                raise self.error(f"'{name}' is not an array", e.base)
            idx = full(idx, ctx.n)
            rows = np.arange(st.n) if ctx.rows is None else ctx.rows
            inside = (idx >= 0) & (idx < arr.capacity)
            safe = np.where(inside, idx, 0)
            ok = inside & arr.written[rows, safe]
            if not ok.all():
                bad = int(idx[~ok][0])
                raise self.error(f"read of an unwritten element of '{name}' (index {bad}, "
                                 f"{self.runs(~ok, ctx.n)})", e)
            return arr.data[rows, idx]
        base = self._Var(e.base, ctx)
        if not isinstance(base, ConstArray):
            raise self.error(f"'{name}' is not an array", e.base)
        vals = base.values
        bad = (idx < 0) | (idx >= len(vals))
        if np.any(bad):
            i = int(np.asarray(idx)[bad].flat[0]) if np.ndim(idx) else int(idx)
            raise self.error(f"index {i} is out of range for input '{name}' of length {len(vals)} "
                             f"({self.runs(bad, ctx.n) if np.ndim(bad) else 'on every run'})", e)
        return vals[idx]

    def _TupleExpr(self, e, ctx):
        return tuple(self.eval(x, ctx) for x in e.items)

    # ---------------------------------------------------------------- operators
    def _Unary(self, e, ctx):
        v = np.asarray(self.eval(e.operand, ctx))
        if e.op == "!":
            return np.logical_not(v)
        return np.negative(v)

    def _guarded(self, first, right: A.Expr, ctx: Ctx, when: bool, default: bool):
        """``right`` on the runs where ``first == when``; ``default`` on the others."""
        a = np.asarray(first)
        if a.ndim == 0:
            return self.eval_bool(right, ctx) if bool(a) == when else np.bool_(default)
        m = a if when else ~a
        if m.all():
            return self.eval_bool(right, ctx)
        out = np.full(ctx.n, default)
        if m.any():
            out[m] = self.eval_bool(right, ctx.restrict(m))
        return out

    def _Binary(self, e, ctx):
        op = e.op
        if op == "&&":
            return self._guarded(self.eval_bool(e.left, ctx), e.right, ctx, True, False)
        if op == "||":
            return self._guarded(self.eval_bool(e.left, ctx), e.right, ctx, False, True)
        if op == "==>":
            return self._guarded(self.eval_bool(e.left, ctx), e.right, ctx, True, True)
        x, y = self.eval(e.left, ctx), self.eval(e.right, ctx)
        if op in ("==", "!=") and (isinstance(x, tuple) or isinstance(y, tuple)):
            eq = np.bool_(True)
            for a, b in zip(x, y):
                eq = np.logical_and(eq, np.asarray(a) == np.asarray(b))
            return eq if op == "==" else np.logical_not(eq)
        x, y = np.asarray(x), np.asarray(y)
        if op == "<==>":
            return x == y
        if op in ("+.", "-.", "*."):
            return self._unreliable(e, x, y, ctx)
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if op == "/":
            zero = y == 0
            if np.any(zero):
                raise self.error(f"division by zero ({self.runs(zero, ctx.n) if zero.ndim else 'on every run'})", e)
            return np.true_divide(x, y)
        if op in ("div", "mod"):
            zero = y == 0
            if np.any(zero):
                raise self.error(f"'{op}' by zero ({self.runs(zero, ctx.n) if zero.ndim else 'on every run'})", e)
            q, r = np.floor_divide(x, y), np.mod(x, y)
            neg = r < 0  # Euclidean: 0 <= r < |y|, as in SMT-LIB
            q, r = np.where(neg, q + 1, q), np.where(neg, r - y, r)
            return q if op == "div" else r
        if op in COMPARISONS:
            return COMPARISONS[op](x, y)
        raise self.error(f"unknown operator '{op}'", e)

    def _unreliable(self, e, x, y, ctx):
        """An unreliable operation: the exact result; each run fails with the program's rate."""
        if self.rate is None:
            raise self.error(f"unreliable operator '{e.op}' needs a 'rate' clause", e)
        if ctx.fail is None:
            raise self.error(f"unreliable operator '{e.op}' cannot appear in a specification", e)
        if self.rate > 0:
            # i.i.d. Bernoulli(rate) failures: a Binomial count of failing runs, at uniformly
            # random distinct positions (same distribution, far fewer draws for tiny rates)
            k = int(self.rng.binomial(ctx.n, self.rate))
            if k:
                local = np.zeros(ctx.n, dtype=bool)
                local[self.rng.choice(ctx.n, size=k, replace=False)] = True
                ctx.mark_failed(local)
        return {"+.": np.add, "-.": np.subtract, "*.": np.multiply}[e.op](x, y)

    def _Cond(self, e, ctx):
        c = self.eval_bool(e.cond, ctx)
        if c.all():
            return self.eval(e.then, ctx)
        if not c.any():
            return self.eval(e.other, ctx)
        return select(c, self.eval(e.then, ctx.restrict(c)), self.eval(e.other, ctx.restrict(~c)), ctx.n)

    def _Call(self, e, ctx):
        f = e.func
        if f in ("fst", "snd"):
            t = self.eval(e.args[0], ctx)
            if not isinstance(t, tuple):
                raise self.error(f"'{f}' needs a pair", e)
            return t[0] if f == "fst" else t[1]
        args = [np.asarray(self.eval(a, ctx)) for a in e.args]
        if f == "abs":
            return np.abs(args[0])
        if f == "min":
            return np.minimum(args[0], args[1])
        if f == "max":
            return np.maximum(args[0], args[1])
        if f in ("log", "sqrt"):
            x = args[0]
            bad = x <= 0 if f == "log" else x < 0
            if np.any(bad):
                v = float(x[bad][0]) if x.ndim else float(x)
                what = "log of a non-positive number" if f == "log" else "sqrt of a negative number"
                runs = self.runs(bad, ctx.n) if x.ndim else "at these inputs"
                raise self.error(f"{what} ({v:g}, {runs})", e)
            return np.log(x.astype(float)) if f == "log" else np.sqrt(x.astype(float))
        if f == "exp":
            with np.errstate(over="ignore"):
                return np.exp(args[0].astype(float))
        raise self.error(f"'{f}' is not a function here (distributions only appear right of '~')", e)

    # ---------------------------------------------------------------- specifications
    def _range(self, e, ctx):
        lo = full(self.eval_int(e.lo, ctx, "a range bound"), ctx.n)
        hi = full(self.eval_int(e.hi, ctx, "a range bound"), ctx.n) + (1 if e.inclusive else 0)
        if ctx.n and int(hi.max()) - int(lo.min()) > MAX_RANGE:
            raise self.error(f"range longer than {MAX_RANGE} elements", e)
        return lo, hi

    def _Quant(self, e, ctx):
        lo, hi = self._range(e, ctx)
        forall = e.kind == "forall"
        result = np.full(ctx.n, forall)
        if ctx.n == 0:
            return result
        for j in range(int(lo.min()), int(hi.max())):
            active = (lo <= j) & (j < hi) & (result if forall else ~result)
            if not active.any():
                continue
            sub = ctx.restrict(active)
            sub.bound[e.var] = np.int64(j)
            result[active] = self.eval_bool(e.body, sub)
        return result

    def _Sum(self, e, ctx):
        lo, hi = self._range(e, ctx)
        acc = np.zeros(ctx.n, dtype=np.int64)
        if ctx.n == 0:
            return acc
        for j in range(int(lo.min()), int(hi.max())):
            active = (lo <= j) & (j < hi)
            if not active.any():
                continue
            sub = ctx.restrict(active)
            sub.bound[e.var] = np.int64(j)
            v = np.asarray(self.eval(e.body, sub))
            acc = acc.astype(np.result_type(acc.dtype, v.dtype))
            acc[active] += v
        return acc

    def _Prob(self, e, ctx):
        raise self.error("P(…) is a probability: it only appears in a probability specification", e)

    def _Independent(self, e, ctx):
        raise self.error("independent(…) is not a sampling property", e)

    def _SetLit(self, e, ctx):
        raise self.error("a set only appears as the argument of unif", e)

    def _ListLit(self, e, ctx):
        raise self.error("a list only appears as the argument of step", e)
