"""The vectorised interpreter: runs a program's body on many runs at once.

Statements transform a :class:`~.state.State` (a group of runs) into a new one. A branch
splits the group by its condition, runs each part, and merges them; a ``while`` loop keeps
iterating the runs whose guard holds and sets aside the others; ``assume(c)`` drops the runs
where ``c`` is false (conditioning), unless ``c`` reads inputs only (a precondition: the inputs
are then outside the claim, an error like a false ``requires``). States are used linearly, so writes never alias.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

import numpy as np

from lang import ast as A
from tamp.cfa.loops import CountedLoop

from .arith import BallDomain
from .distributions import Sampler
from .evaluate import ConstArray, Ctx, Evaluator, FailureLog
from .state import State, merge_states
from .values import ArrayVal, full

MAX_ITERATIONS = 50_000  # loop iterations of one simulation, all loops together
MAX_ARRAY_INDEX = 10**7


def _dtype_of(t: Optional[A.Type], real_dtype=np.complex128):
    if t is None:
        return None
    return {"bool": bool, "int": np.int64, "real": real_dtype}.get(t.name)


class Interpreter:
    """Executes statements (one method per statement type) with an :class:`Evaluator`."""

    def __init__(
        self,
        ev: Evaluator,
        types: Optional[Dict[str, A.Type]] = None,
        max_iterations: int = MAX_ITERATIONS,
        preconditions=frozenset(),
        counted: Optional[Dict[Tuple[int, int], CountedLoop]] = None,
    ):
        self.ev = ev
        # (line, col) of the assumes that read inputs only (tamp.cfa.dependence): preconditions
        self.preconditions = preconditions
        # the counted `for` loops by the statement's (line, col) (tamp.cfa.loops.counted_loop)
        self.counted = dict(counted or {})
        self.sampler = Sampler(ev)
        self.types = dict(types or {})
        self.max_iterations = max_iterations
        self.total_iterations = 0  # over every loop: nested loops share the budget
        self._dispatch: Dict[type, Callable[..., State]] = {}  # statement class -> its method

    def exec(self, s: A.Stmt, state: State) -> State:
        if state.n == 0:
            return state
        m = self._dispatch.get(type(s))
        if m is None:
            m = self._dispatch[type(s)] = getattr(self, "_" + type(s).__name__)
        return m(s, state)

    # ---------------------------------------------------------------- helpers
    def _ctx(self, state: State) -> Ctx:
        return Ctx(state, fail=FailureLog(state.n))

    def _flush_failures(self, ctx: Ctx, state: State) -> None:
        """OR the unreliable-operation failures of one statement into ``failed``."""
        if ctx.fail is not None and ctx.fail.mask is not None:
            old = state.vars.get("failed")
            new = ctx.fail.mask
            state.set("failed", new if old is None else np.logical_or(np.asarray(old), new))

    def _cast(self, name: str, v, node, ctx: Ctx):
        """A value to store in variable ``name``: an array of the variable's type."""
        a = np.asarray(v)
        if a.dtype == bool:
            return a
        t = self.types.get(name)
        if t == A.REAL and a.dtype.kind in "iu":
            return self.ev.dom.to_real(a)
        if t == A.INT and self.ev.dom.is_real(a):
            return self.ev.as_int(a, ctx, node, f"'{name}' is an int and its value")
        return a

    def _store(self, target, v, idx, state: State, node, ctx: Ctx) -> None:
        n = state.n
        if isinstance(target, A.Var):
            name = target.name
            if name in self.ev.params:
                raise self.ev.error(f"'{name}' is a parameter and cannot be assigned", target)
            if isinstance(v, tuple):
                state.set(name, tuple(full(x, n) for x in v))
            elif isinstance(v, ArrayVal):
                state.set(name, ArrayVal(v.data.copy(), v.written.copy()))
            elif isinstance(v, ConstArray):
                data = np.array(np.broadcast_to(v.values, (n, len(v.values))))
                state.set(name, ArrayVal(data, np.ones(data.shape, dtype=bool)))
            else:
                state.set(name, full(self._cast(name, v, node, ctx), n))
            return
        name = target.base.name
        if name in self.ev.params:
            raise self.ev.error(f"'{name}' is a parameter and cannot be assigned", target)
        if isinstance(v, (tuple, ArrayVal, ConstArray)):
            raise self.ev.error("an array element must be a number or a Boolean", node)
        idx = full(idx, n)
        if np.any(idx < 0):
            raise self.ev.error(f"negative array index ({int(idx[idx < 0][0])})", target.index)
        top = int(idx.max()) + 1
        if top > MAX_ARRAY_INDEX:
            raise self.ev.error(f"array index {top - 1} is too large for the simulator", target.index)
        val = np.asarray(v)
        elem = self.types.get(name)
        real_dt = object if not isinstance(self.ev.dom, BallDomain) else np.complex128
        edt = _dtype_of(elem.elem[0], real_dt) if elem is not None and elem.name == "array" else None
        if edt is not None and edt is not bool and edt is not np.int64 and val.dtype.kind in "iu":
            val = self.ev.dom.to_real(val)
        elif edt is np.int64 and self.ev.dom.is_real(val):
            val = self.ev.as_int(val, ctx, node, "an element of an int array")
        arr = state.vars.get(name)
        if not isinstance(arr, ArrayVal):
            dt = edt or val.dtype
            arr = ArrayVal(np.zeros((n, 0), dtype=dt), np.zeros((n, 0), dtype=bool))
        arr = arr.grown(top)
        want = np.result_type(arr.data.dtype, val.dtype) if edt is None else edt
        if arr.data.dtype != want:
            arr = ArrayVal(arr.data.astype(want), arr.written)
        rows = np.arange(n)
        arr.data[rows, idx] = val
        arr.written[rows, idx] = True
        state.vars[name] = arr

    def _assign_all(self, targets, v, ctx: Ctx, state: State, node) -> None:
        """Evaluate the target indices, record failures, then write every target."""
        if len(targets) > 1:
            if not isinstance(v, tuple) or len(v) != len(targets):
                raise self.ev.error(f"{len(targets)} targets need a tuple of {len(targets)} values", node)
            values = list(v)
        else:
            values = [v]
        idxs = [self.ev.eval_int(t.index, ctx) if isinstance(t, A.Index) else None for t in targets]
        self._flush_failures(ctx, state)
        for t, x, i in zip(targets, values, idxs):
            self._store(t, x, i, state, node, ctx)

    # ---------------------------------------------------------------- statements
    def _Block(self, s: A.Block, state: State) -> State:
        for x in s.stmts:
            state = self.exec(x, state)
        return state

    def _Assign(self, s: A.Assign, state: State) -> State:
        ctx = self._ctx(state)
        self._assign_all(s.targets, self.ev.eval(s.value, ctx), ctx, state, s)
        return state

    def _Sample(self, s: A.Sample, state: State) -> State:
        ctx = self._ctx(state)
        self._assign_all(s.targets, self.sampler.sample(s.dist, ctx), ctx, state, s)
        return state

    def _split(self, cond: A.Expr, state: State):
        ctx = self._ctx(state)
        c = self.ev.eval_bool(cond, ctx)
        self._flush_failures(ctx, state)
        return c

    def _If(self, s: A.If, state: State) -> State:
        c = self._split(s.cond, state)
        if c.all():
            return self.exec(s.then, state)
        if not c.any():
            return self.exec(s.other, state) if s.other is not None else state
        yes = self.exec(s.then, state.take(np.flatnonzero(c)))
        no = state.take(np.flatnonzero(~c))
        if s.other is not None:
            no = self.exec(s.other, no)
        return merge_states([yes, no])

    def _loop(self, s, state: State, guard, step=None) -> State:
        """Iterate ``s.body`` on the runs where ``guard(state)`` holds; set the others aside."""
        done = []
        iterations = 0
        while state.n > 0:
            c = guard(state)
            if not c.all():
                done.append(state.take(np.flatnonzero(~c)))
                if not c.any():
                    state = State.start(0)
                    break
                state = state.take(np.flatnonzero(c))
            iterations += 1
            self.total_iterations += 1
            over = iterations > self.max_iterations or self.total_iterations > self.max_iterations
            if over and state.unsure.all():
                done.append(state)  # runs on a guessed path: re-run, never an error
                break
            if iterations > self.max_iterations:
                raise self.ev.error(
                    f"loop still running after {self.max_iterations} iterations (on some run); giving up", s
                )
            if over:  # nested loops: the budget is for all of them together
                raise self.ev.error(
                    f"loops still running after {self.max_iterations} iterations in total (on some run); giving up", s
                )
            state = self.exec(s.body, state)
            if step is not None:
                state = step(state)
        return merge_states(done) if done else state

    def _While(self, s: A.While, state: State) -> State:
        return self._loop(s, state, lambda st: self._split(s.cond, st))

    def _For(self, s: A.For, state: State) -> State:
        ctx = self._ctx(state)
        lo = self.ev.eval_int(s.lo, ctx, "a loop bound")
        self._flush_failures(ctx, state)
        state.set(s.var, full(lo, state.n))
        self.types.setdefault(s.var, A.INT)
        cl = self.counted.get((s.pos.line, s.pos.col)) if s.pos is not None else None
        if state.n and cl is not None:
            # the CFA's loop analysis knows the trip count on entry (the bound reads nothing the
            # body writes, the counter moves by one per iteration): a loop longer than the limit
            # is refused now, not after max_iterations interpreted iterations
            at = self._ctx(state)
            trips = self.ev.eval_int(cl.hi, at, "a loop bound") - self.ev.eval_int(cl.lo, at, "a loop bound")
            longest = int(np.max(trips)) if np.size(trips) else 0
            if longest > self.max_iterations:
                raise self.ev.error(
                    f"loop would run {longest} iterations (on some run); the simulator stops at {self.max_iterations}",
                    s,
                )

        def guard(st):
            c = self._ctx(st)
            hi = self.ev.eval_int(s.hi, c, "a loop bound")
            self._flush_failures(c, st)
            i = st.vars[s.var]
            return full(i <= hi if s.inclusive else i < hi, st.n)

        def step(st):
            if st.n:
                st.set(s.var, st.vars[s.var] + 1)
            return st

        return self._loop(s, state, guard, step)

    def _Assume(self, s: A.Assume, state: State) -> State:
        c = self._split(s.cond, state) | state.unsure  # an unsure run is kept (and re-run)
        if c.all():
            return state
        if s.pos is not None and (s.pos.line, s.pos.col) in self.preconditions and not c.any():
            raise self.ev.error(
                "the given inputs do not satisfy this precondition `assume` (its condition "
                "depends on inputs only, so it restricts the inputs like `requires`)",
                s,
            )
        return state.take(np.flatnonzero(c))

    def _Skip(self, s, state: State) -> State:
        return state

    def _VarDecl(self, s: A.VarDecl, state: State) -> State:
        self.types.setdefault(s.name, s.type)
        return state
