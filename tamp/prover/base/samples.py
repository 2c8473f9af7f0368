"""Dynamic pre-filtering of invariant candidates: run the CFA on random inputs, keep the states.

Houdini (:mod:`.invariants`) may start from any set of candidates, and dropping a candidate is
always safe (it only weakens λ; the checker decides). Running the program concretely is a
cheap way to drop most false candidates before any solver call (the Daikon idea): a
candidate that is false in a state reached by a run *in which no axiom's bad event has
happened yet* can never be part of the labelling, since λ must hold on all such runs.

Runs start from inputs satisfying ``requires``, with random values for the uninitialised
locals (the prover assumes nothing about them either), draw every sampling from its
distribution, and stop at the first bad event (the union bound excuses what follows), at
the exit, or after ``max_steps`` steps (``TOTAL_STEPS`` over all runs). At most ``per_node``
states are kept per CFA node (a uniform sample of the visits).

Values are exact rationals, whose digits can explode (50 Newton steps double them 50 times): a
run stops at the first value larger than ``MAX_BITS`` bits. The states it kept are exact and
reachable, so they still only drop candidates that are false; a shorter run refutes fewer
candidates and leaves more to the solver, which decides them — never an unsound filter.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any, Callable, Dict, List, Optional, Tuple

from lang import ast as A
from lang.evaluate import EvalError, compile_expr, evaluate

MAX_STEPS = 4000
TOTAL_STEPS = 20000
PER_NODE = 25
#: a run stops at a value (integer or rational) with more bits than this (numerator and denominator)
MAX_BITS = 1024


class _Excused(Exception):
    """A bad event happened: the run stops counting."""


class _TooBig(Exception):
    """A value's digits outgrew :data:`MAX_BITS`: the run stops (its states so far are kept)."""


def _checked(v):
    """``v``, or :class:`_TooBig` when it is an exact number of more than :data:`MAX_BITS` bits."""
    if isinstance(v, Fraction):
        if v.numerator.bit_length() + v.denominator.bit_length() > MAX_BITS:
            raise _TooBig()
    elif isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > MAX_BITS:
        raise _TooBig()
    return v


class LazyArray(dict):
    """An array whose unwritten elements get (and keep) a random value on first read."""

    def __init__(self, maker, *args):
        super().__init__(*args)
        self.maker = maker

    def __missing__(self, key):
        v = self.maker()
        self[key] = v
        return v

    def updated(self, key, value) -> "LazyArray":
        new = LazyArray(self.maker, self)
        new[key] = value
        return new


def _maker(t: A.Type, rng: random.Random):
    if t.name == "bool":
        return lambda: rng.random() < 0.5
    if t.name == "int":
        return lambda: rng.randint(-5, 20)
    # exact rationals (multiples of 1/8): two ways of summing them (a running window sum, or a
    # sum counted down, and its closed form) agree exactly, so a true equality between them
    # is not refuted by floating-point rounding
    return lambda: Fraction(round(rng.uniform(-5, 20) * 8), 8)


def _random_value(t: A.Type, rng: random.Random):
    if t.name == "array":
        return LazyArray(_maker(t.elem[0], rng))
    if t.name in ("bool", "int", "real"):
        return _maker(t, rng)()
    return None


def _draw(dist: A.Call, env, rng: random.Random):
    """One sample (a tuple of target values) of ``dist``, or None when unsupported."""
    f = dist.func
    args: List[Any] = [evaluate(a, env) for a in dist.args] if f != "unif" or len(dist.args) == 2 else []
    if f == "lap":
        m, s = float(args[0]), float(args[1])
        return (m + s * (rng.expovariate(1.0) - rng.expovariate(1.0)),)
    if f == "exp":
        return (float(args[0]) + float(args[1]) * rng.expovariate(1.0),)
    if f == "bern":
        return (rng.random() < float(args[0]),)
    if f == "gauss":
        return (rng.gauss(float(args[0]), math.sqrt(float(args[1]))),)
    if f == "unif" and args:
        return (rng.randint(int(args[0]), int(args[1])),)
    if f == "unif":
        items = evaluate(dist.args[0], env)
        if isinstance(items, (tuple, list, set, frozenset)) and items:
            v = rng.choice(sorted(items, key=repr))
            return tuple(v) if isinstance(v, tuple) else (v,)
    return None


def _store(env, target, value):
    if isinstance(target, A.Var):
        env[target.name] = value
    else:
        arr = env[target.base.name]
        idx = evaluate(target.index, env)
        env[target.base.name] = arr.updated(int(idx), value)


def _moves(cfa, axioms: Dict):
    """Each CFA node's out-edges as (target, statement, compiled guard or value, compiled bad
    event) — the CFA walked once, expressions compiled once, for all runs."""
    out = {}
    for node in cfa.graph.nodes:
        moves: List[Tuple[int, A.Stmt, Optional[Callable[..., Any]], Optional[Callable[..., Any]]]] = []
        for u, v, k, d in cfa.out_edges(node):
            st = d["stmt"]
            ax = axioms.get((u, v, k))
            if isinstance(st, A.Assume):
                moves.append((v, st, compile_expr(st.cond), None))
            elif isinstance(st, A.Assign):
                moves.append((v, st, compile_expr(st.value), None))
            else:
                moves.append((v, st, None, compile_expr(ax.bad) if ax is not None else None))
        out[node] = moves
    return out


def collect_states(
    cfa, axioms: Dict, input_points: List[dict], seed: int = 11, max_steps: int = MAX_STEPS, per_node: int = PER_NODE
) -> Dict[int, List[dict]]:
    """States (name → value) observed at each CFA node on bad-event-free run prefixes."""
    rng = random.Random(seed)
    seen: Dict[int, List[dict]] = {}
    counts: Dict[int, int] = {}
    moves = _moves(cfa, axioms)
    total = 0
    for point in input_points:
        if total >= TOTAL_STEPS:
            break
        env = {}
        for name, t in cfa.types.items():
            env[name] = _exact(point[name]) if name in point else _random_value(t, rng)
        node, steps = cfa.entry, 0
        try:
            while steps < max_steps:
                steps += 1
                total += 1
                _keep(seen, counts, node, env, per_node, rng)
                if node == cfa.exit:
                    break
                nxt = _step(moves[node], env, rng)
                if nxt is None:
                    break
                node = nxt
        except (_Excused, _TooBig):
            continue
        except (EvalError, TypeError, KeyError, ValueError, ZeroDivisionError, OverflowError, IndexError):
            continue
    return seen


def _exact(v):
    """A float input as the exact rational it is (sums of rationals do not round: see
    :func:`_maker`); other values unchanged."""
    return Fraction(v) if isinstance(v, float) and math.isfinite(v) else v


def _keep(seen: dict, counts: dict, node, env: dict, per_node: int, rng) -> None:
    """Remember a copy of ``env`` at ``node``: a reservoir sample of at most ``per_node`` states."""
    c = counts[node] = counts.get(node, 0) + 1
    bucket = seen.setdefault(node, [])
    if len(bucket) < per_node:
        bucket.append(dict(env))
    elif rng.random() < per_node / c:
        bucket[rng.randrange(per_node)] = dict(env)


def _step(moves, env: dict, rng):
    """One concrete step over ``moves`` = [(dst, stmt, compiled, bad)]: the first ``assume`` that
    holds, or the first assignment/sampling (``env`` updated in place); None when stuck. A sampling
    whose bad event happens raises :class:`_Excused` (the rest of the run is excused)."""
    for dst, st, fn, bad in moves:
        if isinstance(st, A.Assume):
            if fn(env) is True:
                return dst
            continue
        if isinstance(st, A.Assign):
            _store(env, st.targets[0], _checked(fn(env)))
        else:
            vals = _draw(st.dist, env, rng)
            if vals is None or len(vals) != len(st.targets):
                raise EvalError("unsupported distribution")
            for t, val in zip(st.targets, vals):
                _store(env, t, val)
            if bad is not None and bad(env) is True:
                raise _Excused()
        return dst
    return None


def refuted(c: A.Expr, states: List[dict]) -> bool:
    """Whether ``c`` is false in one of ``states`` (evaluation errors refute nothing)."""
    fn = compile_expr(c)
    for env in states:
        try:
            if fn(env) is False:
                return True
        except (EvalError, TypeError, KeyError, ValueError, ZeroDivisionError, OverflowError, IndexError):
            continue
    return False


def input_points(cfa, count: int = 40, seed: int = 5) -> List[dict]:
    """Random inputs satisfying ``requires``: small ints (array sizes), reals in (0, 1] and
    beyond, random arrays."""
    rng = random.Random(seed)
    out = []
    for _ in range(count * 50):
        env: Dict[str, object] = {}
        for p in cfa.params:
            t = p.type
            if t.name == "int":
                env[p.name] = rng.choice([0, 1, 2, 3, 4, 5])
            elif t.name == "real":
                env[p.name] = rng.choice([0.0, 0.05, 0.1, 0.3, 0.5, 1.0, 2.0, 3.5])
            elif t.name == "bool":
                env[p.name] = rng.random() < 0.5
            else:
                env[p.name] = _random_value(t, rng)
        try:
            if all(evaluate(r, env) is True for r in cfa.requires):
                out.append(env)
        except (EvalError, TypeError, KeyError, ValueError, ZeroDivisionError, OverflowError):
            continue
        if len(out) >= count:
            break
    return out


#: runs of a loop-free program's trace tree per input point (see :func:`collect_tree_states`)
TREE_RUNS = 12


def collect_tree_states(
    aut, cfa, points: List[dict], runs: int = TREE_RUNS, seed: int = 13, per_node: int = PER_NODE
) -> Dict[int, List[dict]]:
    """States observed at each node of a loop-free trace tree on bad-event-free runs.

    A run starts at the root with an input point (uninitialised locals random), follows the
    edge whose ``assume`` holds, draws every sampling and stops at the first bad event of the
    sampling's chosen axiom (or when no edge applies). A tree node is a whole path prefix, so a
    state seen at a node is one the node's label λ must hold in: a candidate false in it can be
    dropped without a solver call (it would not be valid). Deterministic for a given seed."""
    rng = random.Random(seed)
    seen: Dict[int, List[dict]] = {}
    counts: Dict[int, int] = {}
    outs: Dict[int, list] = {}
    for e in aut.edges:
        if e.back:
            continue
        st = e.stmt
        if isinstance(st, A.Assume):
            fn, bad = compile_expr(st.cond), None
        elif isinstance(st, A.Assign):
            fn, bad = compile_expr(st.value), None
        else:
            fn, bad = None, (compile_expr(e.axiom.bad) if e.axiom is not None else None)
        outs.setdefault(e.src, []).append((e.dst, st, fn, bad))

    for point in points:
        for _ in range(runs):
            env = {name: point[name] if name in point else _random_value(t, rng) for name, t in cfa.types.items()}
            nid = aut.root
            try:
                while True:
                    _keep(seen, counts, nid, env, per_node, rng)
                    nxt = _step(outs.get(nid, ()), env, rng)
                    if nxt is None:
                        break
                    nid = nxt
            except (_Excused, _TooBig):
                continue
            except (EvalError, TypeError, KeyError, ValueError, ZeroDivisionError, OverflowError, IndexError):
                continue
    return seen
