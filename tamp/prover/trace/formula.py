"""The trace encoding (SSA) of a CFA path with one axiom per sampling statement.

For a path s1 … sn and axioms for its samplings, the trace is *proved* when

    requires ∧ enc(s1 … sn)  ⇒  ensures (if no bad event happened) ∧ ω_n <= β

and, at every sampling i (reached with no bad event so far), its axiom's side conditions hold
and ω_{i-1} + cost_i <= β. Here ``x := e`` is a functional update of the environment,
``assume(c)`` adds ``c``, and ``v ~ D`` makes ``v`` fresh, adds ``cost`` to ω and records
``bad`` (the run is excused when a bad event happens: Pr[bad] <= cost pays for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import z3

from lang import ast as A
from lang.errors import UnsupportedError
from tamp.prover.base.smt import Encoder, conj, sort_of, to_real


@dataclass
class StepState:
    """The symbolic state after a prefix: environment, path constraints, bad events, ω."""

    env: Dict[str, z3.ExprRef]
    constraints: List[z3.BoolRef] = field(default_factory=list)
    goods: List[z3.BoolRef] = field(default_factory=list)  # ¬bad of each sampling so far
    omega: z3.ArithRef = None
    obligations: List[z3.BoolRef] = field(default_factory=list)  # side/cost conditions, guarded

    def copy(self) -> "StepState":
        return StepState(dict(self.env), list(self.constraints), list(self.goods), self.omega, list(self.obligations))

    def context(self) -> z3.BoolRef:
        """Path constraints so far, with no bad event."""
        return conj(*self.constraints, *self.goods)


def initial_state(enc: Encoder) -> StepState:
    return StepState(enc.initial_env(), [], [], z3.RealVal(0), [])


def _store(enc: Encoder, env, target, value):
    """Write ``value`` into ``target`` (a Var or Index) in ``env``, functionally."""
    if isinstance(target, A.Var):
        old = env.get(target.name)
        if old is not None and z3.is_real(old) and z3.is_int(value):
            value = z3.ToReal(value)
        env[target.name] = value
        return
    if isinstance(target, A.Index) and isinstance(target.base, A.Var):
        arr = env[target.base.name]
        idx = enc.expr(target.index, env)
        rng = arr.sort().range()
        if rng == z3.RealSort():
            value = to_real(value)
        env[target.base.name] = z3.Store(arr, idx, value)
        return
    raise UnsupportedError("only variables and array elements can be assigned")


def _target_sort(enc: Encoder, target) -> z3.SortRef:
    if isinstance(target, A.Var):
        return sort_of(enc.types[target.name])
    t = enc.types[target.base.name]
    return sort_of(t.elem[0])


def step(enc: Encoder, st: StepState, stmt, axiom=None, beta: Optional[z3.ExprRef] = None) -> StepState:
    """The symbolic state after one basic statement (``axiom`` for a sampling)."""
    out = st.copy()
    if isinstance(stmt, A.Assume):
        out.constraints.append(enc.expr(stmt.cond, st.env))
        return out
    if isinstance(stmt, A.Assign):
        value = enc.expr(stmt.value, st.env)
        _store(enc, out.env, stmt.targets[0], value)
        return out
    if isinstance(stmt, A.Sample):
        pre = st.env
        for t in stmt.targets:
            name = A.target_name(t)
            v = z3.FreshConst(_target_sort(enc, t), prefix=name + "!")
            _store(enc, out.env, t, v)
        if axiom is None:
            return out
        cost = to_real(enc.expr(axiom.cost, pre))
        side = [enc.expr(s, pre) for s in axiom.side]
        ctx = st.context()
        checks = list(side)
        if beta is not None:
            checks.append(st.omega + cost <= beta)
        if checks:
            out.obligations.append(z3.Implies(ctx, conj(*checks)))
        out.omega = st.omega + cost
        out.goods.append(z3.Not(enc.expr(axiom.bad, out.env)))
        return out
    raise UnsupportedError(f"unexpected CFA statement {type(stmt).__name__}")


def trace_goal(enc: Encoder, st: StepState, ensures, beta: z3.ExprRef) -> z3.BoolRef:
    """The validity goal at the end of a path (with its accumulated side obligations)."""
    post = z3.And(*[enc.expr(e, st.env) for e in ensures]) if ensures else z3.BoolVal(True)
    final = z3.Implies(st.context(), conj(post, st.omega <= beta))
    return conj(*st.obligations, final)


def prefix_goal(st: StepState, beta: z3.ExprRef) -> z3.BoolRef:
    """Pruning: the obligations so far (side conditions, ω <= β) — a prefix failing them
    cannot be extended to a proved trace."""
    return conj(*st.obligations, z3.Implies(st.context(), st.omega <= beta))
