"""The step semantics of a CFA statement over symbolic states, shared by the prover and the
certificate checker.

A symbolic state (:class:`StepState`) is an environment (variable → z3 term), the path
constraints so far, the ``¬bad`` event of each sampling so far, the failure ω spent so far and
the side obligations met on the way. One statement (:func:`step`):

* ``assume(c)`` adds ``c`` to the constraints;
* ``x := e`` (or ``a[i] := e``) is a functional update of the environment (``Store`` for an
  element; an integer value written to a real variable is converted);
* ``v ~ D`` gives each target a fresh constant of its sort (any value: nothing is assumed about
  a sample), and with an axiom ``Pr[bad] <= cost`` (side conditions ``side``) adds ``cost`` to ω,
  records ``¬bad`` over the new state, and obliges — under the constraints so far and with no
  bad event yet — the side conditions and ``ω + cost <= β``.

Why this is sound: after a step, the environment and constraints describe exactly the states
a run of the statement can reach from one the old state describes (a sample is unconstrained),
so a formula valid over the new state holds after every such run; the bad events are recorded,
not assumed away, and their cost is charged to ω.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import z3  # type: ignore[import-untyped,unused-ignore]  # z3 ships no type information

from lang import ast as A
from lang.errors import UnsupportedError

from .z3expr import Term, conj, sort_of, to_real

__all__ = ["Encoding", "StepState", "initial_state", "step"]


class Encoding(Protocol):
    """What :func:`step` needs of an encoder (:class:`tamp.core.encode.Encoder`)."""

    types: Mapping[str, A.Type]

    def expr(self, e: A.Expr, env: Mapping[str, Term]) -> Term: ...

    def initial_env(self, suffix: str = "0") -> dict[str, Term]: ...


class Axiom(Protocol):
    """What :func:`step` reads of a sampling's axiom (:class:`axioms.base.AxiomInstance`)."""

    @property
    def bad(self) -> A.Expr: ...

    @property
    def cost(self) -> A.Expr: ...

    @property
    def side(self) -> Any: ...


@dataclass
class StepState:
    """The symbolic state after a prefix: environment, path constraints, bad events, ω."""

    env: dict[str, Term]
    constraints: list[Term] = field(default_factory=list)
    goods: list[Term] = field(default_factory=list)  # ¬bad of each sampling so far
    omega: Term = None
    obligations: list[Term] = field(default_factory=list)  # side/cost conditions, guarded

    def copy(self) -> StepState:
        return StepState(dict(self.env), list(self.constraints), list(self.goods), self.omega, list(self.obligations))

    def context(self) -> Term:
        """Path constraints so far, with no bad event."""
        return conj(*self.constraints, *self.goods)


def initial_state(enc: Encoding) -> StepState:
    return StepState(enc.initial_env(), [], [], z3.RealVal(0), [])


def _store(enc: Encoding, env: dict[str, Term], target: A.Expr, value: Term) -> None:
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


def _target_sort(enc: Encoding, target: A.Expr) -> Term:
    if isinstance(target, A.Var):
        return sort_of(enc.types[target.name])
    if isinstance(target, A.Index) and isinstance(target.base, A.Var):
        t = enc.types[target.base.name]
        return sort_of(t.elem[0])
    raise UnsupportedError("only variables and array elements can be sampled")


def step(enc: Encoding, st: StepState, stmt: A.Stmt, axiom: Axiom | None = None, beta: Term | None = None) -> StepState:
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
