"""Vectorised evaluation of expressions over a group of runs.

An expression is evaluated on a :class:`Ctx`: a :class:`~.state.State` and optionally a
subset of its runs (``rows``). ``&&``, ``||``, ``==>``, ``?:`` and the quantifiers evaluate
their right operand only on the runs that need it (short-circuit, per run), so a
guarded read like ``found ==> q[ans] >= t`` never reads ``ans`` where ``found`` is false.

Numbers are computed in a domain (:mod:`.arith`): certified double balls in the fast pass,
exact rationals and arb balls or sympy numbers when a run is re-run. A comparison the domain
cannot decide marks the run *unsure* (``State.unsure``) and goes on with a guess; an error
(division by zero, log of a non-positive number, …) is raised only when it surely happens on a
run that is not unsure — on an unsure run it only confirms that the run must be re-run.

Unreliable operators ``+. -. *.`` compute the exact value and fail independently on each run
with the program's rate; the failures are collected in ``ctx.fail`` (over all runs of the
state) for the interpreter to OR into the implicit flag ``failed``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

import numpy as np

from lang import ast as A
from lang.errors import error_at
from lang.walk import free_vars

from . import arith_ball
from .arith import BallDomain, is_bool, is_int
from .draws import uniforms, words
from .errors import SimulationError
from .state import State
from .values import ArrayVal, full, select, take

#: The comparison operators, for scalars and (element-wise) numpy arrays alike.
COMPARISONS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

MAX_RANGE = 10**6  # longest quantifier/sum range evaluated


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

    state: State
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
        if self.fail is None:  # only contexts of unreliable operations carry a log
            raise RuntimeError("an unreliable operation failed where no failure can be recorded")
        self.fail.mark(idx if self.rows is None else self.rows[idx])

    def _global(self, name: str) -> np.ndarray:
        a = getattr(self.state, name)
        return a if self.rows is None else a[self.rows]

    def unsure(self) -> np.ndarray:
        """Which runs of this context are unsure (a copy)."""
        return self._global("unsure").copy()

    def mark_unsure(self, local) -> None:
        """Mark runs of this context unsure (``local``: a mask over them, or a 0-d flag)."""
        local = np.asarray(local)
        if not local.any():
            return
        if local.ndim == 0:
            local = np.ones(self.n, dtype=bool)
        if self.rows is None:
            self.state.unsure |= local
        else:
            self.state.unsure[self.rows[local]] = True

    def uniforms(self, key) -> np.ndarray:
        """One fresh uniform on (0, 1) per run of this context (keyed by run and draw number)."""
        st = self.state
        rows = np.arange(st.n) if self.rows is None else self.rows
        u = uniforms(key, st.run_id[rows], st.draws[rows])
        st.draws[rows] += 1
        return u

    def words(self, key) -> np.ndarray:
        """One fresh 64-bit random word (uint64) per run of this context (the same keying)."""
        st = self.state
        rows = np.arange(st.n) if self.rows is None else self.rows
        w = words(key, st.run_id[rows], st.draws[rows])
        st.draws[rows] += 1
        return w


def as_int_array(v, n: int):
    """``v`` as integers (0-d or (n,)) if it is an int array; None otherwise."""
    a = np.asarray(v)
    if np.issubdtype(a.dtype, np.integer):
        return a
    return None


def _is_constant(v) -> bool:
    """A value that is the same for every run (0-d), which can be reused by any context."""
    if isinstance(v, tuple):
        return all(_is_constant(x) for x in v)
    return not isinstance(v, (ArrayVal, ConstArray)) and np.ndim(v) == 0


class Evaluator:
    """Evaluates ``lang.ast`` expressions on a :class:`Ctx` (one method per node type)."""

    def __init__(
        self,
        params: Dict[str, object],
        key,
        rate: Optional[float] = None,
        path: str = "<string>",
        source: Optional[str] = None,
        dom=None,
    ):
        self.params = params
        self.key = key
        self.dom = dom if dom is not None else BallDomain()
        self.rate = rate
        self.path = path
        self.source = source
        self._consts: Dict[int, object] = {}
        self._closed: Dict[int, Tuple[bool, Set[str]]] = {}
        self._const_values: Dict[int, object] = {}
        self._dispatch: Dict[type, Callable[[A.Expr, Ctx], object]] = {}
        self._keep: List[A.Expr] = []  # the expressions keyed by id() above stay alive

    # ---------------------------------------------------------------- plumbing
    def error(self, msg: str, node) -> SimulationError:
        return error_at(SimulationError, msg, getattr(node, "pos", None), self.path, self.source)

    @staticmethod
    def runs(mask, n: int) -> str:
        k = int(np.count_nonzero(mask))
        return f"on {k} of {n} runs" if n > 1 else "on this run"

    def eval(self, e: A.Expr, ctx: Ctx):
        """The per-run value of ``e``; an expression over the inputs only is computed once."""
        closed = self._closed.get(id(e))
        if closed is None:
            fv = set(free_vars(e))
            pure = fv <= self.params.keys() and not any(
                isinstance(n, A.Binary) and n.op in ("+.", "-.", "*.") for n in A.walk(e)
            )
            closed = self._closed[id(e)] = (pure, fv)
            self._keep.append(e)
        if closed[0] and not (closed[1] & ctx.bound.keys()):
            hit = self._const_values.get(id(e))
            if hit is not None:
                return hit
            clean = ctx.state is None or not ctx.state.unsure.any()
            v = self._eval(e, ctx)
            if clean and (ctx.state is None or not ctx.state.unsure.any()) and _is_constant(v):
                self._const_values[id(e)] = v  # decided everywhere, no error hidden: reusable
            return v
        return self._eval(e, ctx)

    def _eval(self, e: A.Expr, ctx: Ctx):
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
        if isinstance(v, (tuple, ArrayVal, ConstArray)) or is_bool(v):
            raise self.error(f"{what} must be an integer", e)
        return self.as_int(v, ctx, e, what)

    def as_int(self, v, ctx: Ctx, node, what: str = "a value"):
        """An int array from an int or a real value that is (surely) integral."""
        a = as_int_array(v, ctx.n)
        if a is not None:
            return a
        f, unsure = self.dom.floor(v)
        eq, u2 = self.dom.compare("==", v, f)
        unsure = unsure | u2
        self.check(~eq & ~unsure, ctx, node, lambda k: f"{what} must be an integer ({k})")
        ctx.mark_unsure(unsure)
        return f

    def check(self, bad, ctx: Ctx, node, message) -> None:
        """Raise ``message(where)`` if ``bad`` (surely bad) holds on a run that is not unsure."""
        bad = np.asarray(bad)
        if not bad.any():
            return
        if bad.ndim == 0:
            bad = np.full(ctx.n, bool(bad))
        if ctx.state is not None:
            definite = bad & ~ctx.unsure()
        else:
            definite = bad
        if definite.any():
            raise self.error(message(self.runs(definite, ctx.n)), node)

    # ---------------------------------------------------------------- numbers
    def num_op(self, op: str, x, y, ctx: Ctx, node):
        """``x op y`` for ``+ - *``: exact on ints (an overflow is an error), else in the domain."""
        if is_int(x) and is_int(y):

            def overflow():
                raise self.error("integer overflow: the simulator computes ints in 64 bits", node)

            return arith_ball.int_op(op, x, y, overflow)
        return self.dom.arith(op, self.real(x, node), self.real(y, node))

    def real(self, v, node):
        if is_bool(v) or isinstance(v, (tuple, ArrayVal, ConstArray)):
            raise self.error("a number is needed here", node)
        return self.dom.to_real(v)

    def compare(self, op: str, x, y, ctx: Ctx):
        """``x op y`` per run; runs the domain cannot decide are marked unsure (result: a guess)."""
        x, y = np.asarray(x), np.asarray(y)
        if (is_int(x) or is_bool(x)) and (is_int(y) or is_bool(y)):
            return COMPARISONS[op](x, y)
        guess, unsure = self.dom.compare(op, self.dom.to_real(x), self.dom.to_real(y))
        ctx.mark_unsure(unsure)
        return guess

    # ---------------------------------------------------------------- leaves
    def _Num(self, e, ctx):
        v = self._consts.get(id(e))
        if v is None:
            if e.is_int and abs(int(e.value)) >= 2**62:
                raise self.error("integer literal too large for the simulator (64-bit ints)", e)
            v = np.int64(int(e.value)) if e.is_int else self.dom.lit(e.value)
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
                    self.check(und, ctx, e, lambda k: f"'{name}' is read before it is assigned ({k})")
            v = st.vars[name]
            return v if ctx.rows is None else take(v, ctx.rows)
        if name in self.params:
            v = self.params[name]
            return ConstArray(v) if isinstance(v, np.ndarray) and v.ndim == 1 else v
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
                self.check(~ok, ctx, e, lambda k: f"read of an unwritten element of '{name}' (index {bad}, {k})")
            return arr.data[rows, safe]
        base = self._Var(e.base, ctx)
        if not isinstance(base, ConstArray):
            raise self.error(f"'{name}' is not an array", e.base)
        vals = base.values
        bad = (idx < 0) | (idx >= len(vals))
        if np.any(bad):
            i = int(np.asarray(idx)[bad].flat[0]) if np.ndim(idx) else int(idx)
            self.check(
                bad,
                ctx,
                e,
                lambda k: (
                    f"index {i} is out of range for input '{name}' of length "
                    f"{len(vals)} ({k if np.ndim(bad) else 'on every run'})"
                ),
            )
            if not len(vals):
                return self.dom.blank(ctx.n) if self.dom.is_real(vals) else np.zeros(ctx.n, dtype=vals.dtype)
            idx = np.where(bad, 0, idx)
        return vals[idx]

    def _TupleExpr(self, e, ctx):
        return tuple(self.eval(x, ctx) for x in e.items)

    # ---------------------------------------------------------------- operators
    def _Unary(self, e, ctx):
        v = np.asarray(self.eval(e.operand, ctx))
        if e.op == "!":
            return np.logical_not(v)
        if is_int(v):
            return self.num_op("-", np.int64(0), v, ctx, e)
        return self.dom.neg(self.real(v, e))

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

    def _equal_tuples(self, x, y, ctx):
        eq = np.bool_(True)
        for a, b in zip(x, y):
            same = self._equal_tuples(a, b, ctx) if isinstance(a, tuple) else self.compare("==", a, b, ctx)
            eq = np.logical_and(eq, same)
        return eq

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
            if not (isinstance(x, tuple) and isinstance(y, tuple)) or len(x) != len(y):
                raise self.error("comparing a pair with something that is not a pair of that size", e)
            eq = self._equal_tuples(x, y, ctx)
            return eq if op == "==" else np.logical_not(eq)
        x, y = np.asarray(x), np.asarray(y)
        if op == "<==>":
            return x == y
        if op in ("+.", "-.", "*."):
            return self._unreliable(e, x, y, ctx)
        if op in ("+", "-", "*"):
            return self.num_op(op, x, y, ctx, e)
        if op == "/":
            x, y = self.real(x, e.left), self.real(y, e.right)
            zero, unsure = self.dom.is_zero(y)
            self.check(zero, ctx, e, lambda k: f"division by zero ({k if np.ndim(zero) else 'on every run'})")
            ctx.mark_unsure(unsure)
            return self._div(x, np.where(zero | unsure, self.dom.lit(1), y))
        if op in ("div", "mod"):
            x, y = (
                self.as_int(x, ctx, e.left, "an operand of div/mod"),
                self.as_int(y, ctx, e.right, "an operand of div/mod"),
            )
            zero = y == 0
            self.check(zero, ctx, e, lambda k: f"'{op}' by zero ({k if np.ndim(zero) else 'on every run'})")
            y = np.where(zero, 1, y)
            q, r = np.floor_divide(x, y), np.mod(x, y)
            neg = r < 0  # Euclidean: 0 <= r < |y|, as in SMT-LIB
            q, r = np.where(neg, q + 1, q), np.where(neg, r - y, r)
            return q if op == "div" else r
        if op in COMPARISONS:
            return self.compare(op, x, y, ctx)
        raise self.error(f"unknown operator '{op}'", e)

    def _div(self, x, y):
        q, _ = self.dom.div(x, y)
        return q

    def _unreliable(self, e, x, y, ctx):
        """An unreliable operation: the exact result; each run fails with the program's rate."""
        if self.rate is None:
            raise self.error(f"unreliable operator '{e.op}' needs a 'rate' clause", e)
        if ctx.fail is None:
            raise self.error(f"unreliable operator '{e.op}' cannot appear in a specification", e)
        if self.rate > 0:
            # each run fails independently with the rate (one keyed uniform per run)
            local = ctx.uniforms(self.key) < self.rate
            if local.any():
                ctx.mark_failed(local)
        return self.num_op(e.op[0], x, y, ctx, e)

    def _Cond(self, e, ctx):
        c = self.eval_bool(e.cond, ctx)
        if c.all():
            return self.eval(e.then, ctx)
        if not c.any():
            return self.eval(e.other, ctx)
        a, b = self.eval(e.then, ctx.restrict(c)), self.eval(e.other, ctx.restrict(~c))
        if (
            not isinstance(a, tuple)
            and not isinstance(b, tuple)
            and self.dom.is_real(a) != self.dom.is_real(b)
            and not (is_bool(a) or is_bool(b))
        ):
            a, b = self.dom.to_real(a), self.dom.to_real(b)
        return select(c, a, b, ctx.n)

    def _Call(self, e, ctx):
        f = e.func
        if f in ("fst", "snd"):
            t = self.eval(e.args[0], ctx)
            if not isinstance(t, tuple):
                raise self.error(f"'{f}' needs a pair", e)
            return t[0] if f == "fst" else t[1]
        args = [np.asarray(self.eval(a, ctx)) for a in e.args]
        if f in ("abs", "min", "max") and all(is_int(a) for a in args):
            return {
                "abs": lambda: np.abs(args[0]),
                "min": lambda: np.minimum(args[0], args[1]),
                "max": lambda: np.maximum(args[0], args[1]),
            }[f]()
        args = [self.real(a, e) for a in args]
        if f == "abs":
            return self.dom.absolute(args[0])
        if f == "min":
            return self.dom.minimum(args[0], args[1])
        if f == "max":
            return self.dom.maximum(args[0], args[1])
        if f in ("log", "sqrt"):
            x = args[0]
            zero = self.dom.lit(0)
            bad, unsure = self.dom.compare("<=" if f == "log" else "<", x, zero)
            bad = bad & ~unsure
            if np.any(bad):
                v = float(np.asarray(self.dom.mid(x))[bad].flat[0]) if np.ndim(bad) else float(self.dom.mid(x))
                what = "log of a non-positive number" if f == "log" else "sqrt of a negative number"
                self.check(bad, ctx, e, lambda k: f"{what} ({v:g}, {k if np.ndim(bad) else 'at these inputs'})")
            ctx.mark_unsure(unsure)
            one = self.dom.lit(1)
            return self.dom.call(f, np.where(bad | unsure, one, x))
        if f == "exp":
            return self.dom.call("exp", args[0])
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
            if not is_int(v) and is_int(acc):
                acc = self.dom.to_real(acc)
            acc[active] = self.num_op("+", acc[active], v, sub, e)
        return acc

    def _Prob(self, e, ctx):
        raise self.error("P(…) is a probability: it only appears in a probability specification", e)

    def _Independent(self, e, ctx):
        raise self.error("independent(…) is not a sampling property", e)

    def _Hole(self, e, ctx):
        raise self.error(
            "`?` asks `tamp prove` to infer this value; to simulate, write the value "
            "`tamp prove` inferred in its place",
            e,
        )

    def _SetLit(self, e, ctx):
        raise self.error("a set only appears as the argument of unif", e)

    def _ListLit(self, e, ctx):
        raise self.error("a list only appears as the argument of step", e)
