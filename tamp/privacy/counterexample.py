"""Counterexamples to privacy claims: two neighbouring inputs and an output set that separate.

For a claim the engine could not prove, small concrete instances are tried: the public inputs
as ``--input`` fixes them (else small values satisfying ``requires``), pairs of secret inputs
(``in``, ``in'``) from a few small values that satisfy ``requires`` both and ``neighbours``
(checked by z3 on the concrete values), and events over one scalar output (``o > c``,
``o < c``, ``o == v``, ``o``/``!o``). For each, the probability engine
(:mod:`tamp.probability`) computes ``P[event | in]`` and ``P[event | in']`` exactly or as
certified intervals, and the pair is reported only when the intervals *show* the violation:
``lower(P[event | in]) > upper(exp(E)) · upper(P[event | in']) + D``. A pair the intervals
cannot separate is not reported, so a reported counterexample is a proof that the claim is
false (as sound as the probability engine's intervals).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from fractions import Fraction
from typing import Any, Dict, Iterator, List, Optional, Tuple

import z3  # type: ignore[import-untyped,unused-ignore]

from lang import ast as A
from lang.typecheck import ProgramTypes
from tamp.core.interval import Interval
from tamp.core.z3expr import Z3Translation, rational

Value = Any
Term = Any
SMALL_INT = (1, 2)
SECRET_VALUES = (0, 1, -1, 2)
THRESHOLDS = (Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(1, 2))


def _literal(v: Value, t: A.Type) -> Term:
    if t.name == "bool":
        return z3.BoolVal(bool(v))
    if t.name == "int":
        return z3.IntVal(int(v))
    return rational(Fraction(v))


def _term(v: Value, t: A.Type) -> Term:
    if t.name == "array":
        arr = z3.K(z3.IntSort(), _literal(0, t.elem[0]))
        for i, x in enumerate(v):
            arr = z3.Store(arr, i, _literal(x, t.elem[0]))
        return arr
    return _literal(v, t)


def _holds(e: A.Expr, env: Dict[str, Term]) -> bool:
    """Whether ``e`` is true at the concrete values of ``env`` (z3 proves it)."""
    s = z3.Solver()
    s.set("timeout", 2000)
    try:
        s.add(z3.Not(Z3Translation().translate(e, env)))
    except Exception:  # noqa: BLE001 - what the translation cannot read is not a candidate
        return False
    return bool(s.check() == z3.unsat)


def _publics(prog: A.Program, secret: set, fixed: Dict[str, Value]) -> Iterator[Dict[str, Value]]:
    """Values of the public inputs: the fixed ones, small ones for the rest."""
    names = [p for p in prog.params if p.name not in secret and p.name not in fixed]
    fixed = {k: v for k, v in fixed.items() if k not in secret}
    choices: List[Tuple[Any, ...]] = []
    for p in names:
        if p.type.name == "int":
            choices.append(SMALL_INT)
        elif p.type.name == "real":
            choices.append((1, 0, 2))
        elif p.type.name == "bool":
            choices.append((False, True))
        else:
            return
    for combo in itertools.product(*choices):
        yield {**fixed, **{p.name: v for p, v in zip(names, combo)}}


def _length(public: Dict[str, Value]) -> int:
    ints = [v for v in public.values() if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 3]
    return max(ints) if ints else 2


def _secret_values(p: A.Param, length: int) -> List[Value]:
    t = p.type
    if t.name == "array":
        base = t.elem[0].name
        vals = (False, True) if base == "bool" else (0, 1)
        return [list(c) for c in itertools.product(vals, repeat=length)]
    if t.name == "bool":
        return [False, True]
    return list(SECRET_VALUES)


def _events(prog: A.Program, types: ProgramTypes, public: Dict[str, Value]) -> List[str]:
    assert prog.private is not None
    out: List[str] = []
    for o in prog.private.outputs:
        t = types.locals.get(o)
        if t == A.BOOL:
            out += [o, f"!{o}"]
        elif t == A.INT:
            out += [f"{o} == {v}" for v in range(_length(public))]
        elif t == A.REAL:
            for c in THRESHOLDS:
                out += [f"{o} > {c}", f"{o} < {c}"]
    return out


def search(
    prog: A.Program,
    types: ProgramTypes,
    fixed: Dict[str, Value],
    budget: float,
) -> Optional[Dict[str, Any]]:
    """A counterexample as the ``--json`` contract writes it, or None."""
    from tamp.probability import probability  # deferred: the probability engine loads pysmt
    from tamp.probability.dists import exp_interval

    claim, rel = prog.private, prog.neighbours
    assert claim is not None and rel is not None
    if isinstance(claim.epsilon, A.Hole):
        return None
    deadline = time.monotonic() + budget
    secret = {b for n in A.free_vars(rel) if (b := A.unprimed(n))}
    secret_params = [p for p in prog.params if p.name in secret]
    plain = dataclasses.replace(prog, requires=(), ensures=(), fails=None, neighbours=None, private=None)
    tr = Z3Translation()
    for public in _publics(prog, secret, fixed):
        pub_env = {p.name: _term(public[p.name], p.type) for p in prog.params if p.name in public}
        try:
            e_val = _constant(tr.translate(claim.epsilon, pub_env))
            d_val = _constant(tr.translate(claim.delta, pub_env)) if claim.delta is not None else Fraction(0)
        except Exception:  # noqa: BLE001 - ε not a number at these inputs: try others
            continue
        if e_val is None or d_val is None:
            continue
        factor: Interval = exp_interval(e_val)
        length = _length(public)
        pools = [_secret_values(p, length) for p in secret_params]
        pools_a = [[fixed[p.name]] if p.name in fixed else pool for p, pool in zip(secret_params, pools)]
        events = _events(prog, types, public)
        if not events:
            return None
        for combo in itertools.product(*pools_a):
            for combo2 in itertools.product(*pools):
                if time.monotonic() > deadline:
                    return None
                if combo == combo2:
                    continue
                run_a = {**public, **{p.name: v for p, v in zip(secret_params, combo)}}
                run_b = {**public, **{p.name: v for p, v in zip(secret_params, combo2)}}
                env_a = {**pub_env, **{p.name: _term(run_a[p.name], p.type) for p in secret_params}}
                env_b = {**pub_env, **{p.name: _term(run_b[p.name], p.type) for p in secret_params}}
                env_r = dict(env_a)
                env_r.update({A.primed(p.name): env_b[p.name] for p in secret_params})
                if not all(_holds(c, env_a) and _holds(c, env_b) for c in prog.requires):
                    continue
                if not _holds(rel, env_r):
                    continue
                for ev in events:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    try:
                        p = _interval(probability(plain, ev, inputs=run_a, timeout=min(left, 10)))
                        q = _interval(probability(plain, ev, inputs=run_b, timeout=min(left, 10)))
                    except Exception:  # noqa: BLE001 - the engine cannot compute it: no evidence
                        continue
                    if p.lo > factor.hi * q.hi + d_val:
                        return {
                            "inputs": _json_values(run_a, prog),
                            "neighbour": _json_values(run_b, prog),
                            "event": ev,
                            "probability": _json_interval(p),
                            "neighbour_probability": _json_interval(q),
                        }
    return None


def _constant(t: Term) -> Optional[Fraction]:
    v = z3.simplify(t)
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    return None


def _interval(v: Any) -> Interval:
    if isinstance(v, Interval):
        return v
    return Interval.point(Fraction(v))


def _json_interval(iv: Interval) -> Dict[str, Any]:
    def num(x: Fraction) -> Any:
        return x.numerator if x.denominator == 1 else f"{x.numerator}/{x.denominator}"

    return {"lower": num(iv.lo), "upper": num(iv.hi)}


def _json_values(vals: Dict[str, Value], prog: A.Program) -> Dict[str, Value]:
    out: Dict[str, Value] = {}
    for p in prog.params:
        v = vals[p.name]
        out[p.name] = [_plain(x) for x in v] if isinstance(v, list) else _plain(v)
    return out


def _plain(v: Value) -> Value:
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    return v
