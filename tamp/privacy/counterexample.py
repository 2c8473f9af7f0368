"""Counterexamples to privacy claims: two neighbouring inputs and an output set that separate.

For a claim the engine could not prove, small concrete instances are tried, smallest first:
array lengths n = 1..5 (the public ints that bound the ``neighbours`` quantifiers and sums);
the other public inputs as ``--input`` fixes them, else small values satisfying ``requires``
(ε's inputs at 1, thresholds at 0, 1/2, 1, …); pairs of secret inputs (``in``, ``in'``) from 0/±1
patterns — the complement of a 0/1 pattern first, then patterns one position apart — that
satisfy ``requires`` both and ``neighbours`` (checked by z3 on the concrete values); and events
from the outputs' support: ``o > c``/``o < c``/``o == v``/``o``/``!o`` for a scalar, and for an
array the map of written indices — ``written(a, k) && !a[0] && … && a[k]`` (a sparse vector that
stopped at ``k``), full patterns, ``written(a, k) && a[k] > c``, conjunctions over every index,
and for a Boolean array with a companion real array the released value at the stop.

For each, the probability engine (:mod:`tamp.probability`) computes ``P[event | in]`` and
``P[event | in']`` exactly or as certified intervals, and the pair is reported only when the
intervals *show* the violation: ``lower(P[event | in]) > upper(exp(E)) · upper(P[event | in'])
+ D``. The engine has no ``written``: the program it is given is the original with, for each
output array ``a``, a shadow Boolean array set to true just before each write of ``a[i]`` (so it
is true exactly at the written indices: an array is only ever written element by element, the type
checker rejects ``a := …``), false at indices ``0..n-1`` at entry; at exit an unwritten
``a[k]`` gets a default value (after the program, so the program never reads it, and the engine
can read every element the event names); every element read of the event is guarded by
``written(a, k)``, so those defaults never decide it — the event means what LANGUAGE.md says. A pair the intervals cannot separate is
not reported, so a reported counterexample is a proof that the claim is false (as sound as the
probability engine's intervals).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from fractions import Fraction
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import z3  # type: ignore[import-untyped,unused-ignore]

from lang import ast as A
from lang.parser import parse_expr
from lang.typecheck import ProgramTypes
from lang.walk import free_vars
from tamp.core.interval import Interval
from tamp.core.z3expr import Z3Translation, rational
from tamp.probability import probabilities, probability
from tamp.probability.dists import exp_interval

Value = Any
Term = Any
Run = Dict[str, Value]
#: (the event as the report writes it, the same event as the probability engine reads it)
Event = Tuple[str, str]
SMALL_INT = (1, 2)
LENGTHS = (1, 2, 3, 4, 5)
SECRET_VALUES = (0, 1, -1, 2)
THRESHOLDS = (Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(1, 2))
ARRAY_THRESHOLDS = (Fraction(1), Fraction(0))
#: values tried for a real public input the budget does not read (thresholds)
PUBLIC_REALS = (Fraction(0), Fraction(1, 2), Fraction(1))
#: values tried for a real public input the budget reads (ε), the first one first everywhere
EPS_VALUES = (Fraction(1), Fraction(1, 2))
#: seconds one probability may take (in the first pass, where the likeliest events are tried)
PROB_TIMEOUT, FIRST_TIMEOUT = 4.0, 1.0
#: the width of a probability's interval at first, and the finest it is refined to
COARSE, FINEST = 1e-2, 1e-6


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


# ---------------------------------------------------------------------------- inputs


def _length_params(prog: A.Program) -> List[str]:
    """The int inputs that bound a quantifier or sum of ``neighbours``: the arrays' length."""
    assert prog.neighbours is not None
    ints = {p.name for p in prog.params if p.type == A.INT}
    out: List[str] = []
    for node in A.walk(prog.neighbours):
        if isinstance(node, (A.Quant, A.Sum)):
            out += [v for v in sorted(set(free_vars(node.hi))) if v in ints and v not in out]
    return out


def _publics(
    prog: A.Program, secret: Set[str], fixed: Dict[str, Value], n: int, lengths: Sequence[str]
) -> Iterator[Tuple[int, Run]]:
    """Values of the public inputs at array length ``n``: the fixed ones, small ones for the rest;
    each with its rank, how many inputs are not at their first value."""
    assert prog.private is not None
    eps_names = set(free_vars(prog.private.epsilon))
    names = [p for p in prog.params if p.name not in secret and p.name not in fixed]
    base = {k: v for k, v in fixed.items() if k not in secret}
    choices: List[Sequence[Any]] = []
    for p in names:
        if p.name in lengths:
            choices.append((n,))
        elif p.type.name == "int":
            choices.append(SMALL_INT)
        elif p.type.name == "real":
            choices.append(EPS_VALUES if p.name in eps_names else PUBLIC_REALS)
        elif p.type.name == "bool":
            choices.append((False, True))
        else:
            return
    for combo in itertools.product(*choices):
        rank = sum(1 for v, pool in zip(combo, choices) if v != pool[0])
        yield rank, {**base, **{p.name: v for p, v in zip(names, combo)}}


def _array_pairs(n: int, fixed: Optional[List[Value]], first: bool) -> Iterator[Tuple[List[int], List[int]]]:
    """Neighbouring 0/1 patterns of length ``n``: complements and one unit against all zero
    first, then one position apart (by ±1, so -1 and 2 appear), each unordered pair once (both
    directions are tested)."""
    pats = [list(p) for p in itertools.product((0, 1), repeat=n)]
    seen: Set[Tuple[Tuple[int, ...], Tuple[int, ...]]] = set()

    def fresh(a: List[int], b: List[int]) -> bool:
        key = (tuple(a), tuple(b)) if tuple(a) <= tuple(b) else (tuple(b), tuple(a))
        if key in seen or a == b:
            return False
        seen.add(key)
        return fixed is None or a == fixed or b == fixed

    for p in pats:
        q = [1 - x for x in p]
        if fresh(p, q):
            yield p, q
    for i in range(n):  # one answer moves by 1 from all zero (an L1 relation's extreme)
        p, q = [0] * n, [0] * n
        q[i] = 1
        if fresh(q, p):
            yield q, p
    if first:
        return
    for p in pats:
        for i in range(n):
            for d in (1, -1):
                q = list(p)
                q[i] += d
                if fresh(p, q):
                    yield p, q


def _pairs(
    secret_params: List[A.Param], fixed: Dict[str, Value], n: int, first: bool
) -> Iterator[Tuple[List[Value], List[Value]]]:
    """Pairs of values of the secret inputs (in the order of ``secret_params``); the first pass
    tries only an array's complements."""
    if len(secret_params) == 1 and secret_params[0].type.name == "array":
        p = secret_params[0]
        if p.name in fixed and len(fixed[p.name]) != n:
            return
        for a, b in _array_pairs(n, fixed.get(p.name), first):
            yield [a], [b]
        return
    pools: List[List[Value]] = []
    for p in secret_params:
        if p.type.name == "array":
            vals: Tuple[Any, ...] = (False, True) if p.type.elem[0].name == "bool" else (0, 1)
            pools.append([list(c) for c in itertools.product(vals, repeat=n)])
        elif p.type.name == "bool":
            pools.append([False, True])
        else:
            pools.append(list(SECRET_VALUES))
    if not first:
        return
    pools_a = [[fixed[p.name]] if p.name in fixed else pool for p, pool in zip(secret_params, pools)]
    seen: Set[str] = set()
    for combo in itertools.product(*pools_a):
        for combo2 in itertools.product(*pools):
            key = repr(sorted([repr(combo), repr(combo2)]))
            if combo == combo2 or key in seen:
                continue
            seen.add(key)
            yield list(combo), list(combo2)


# ---------------------------------------------------------------------------- events


def _shadow(name: str) -> str:
    return f"written__{name}"


def _events(prog: A.Program, types: ProgramTypes, n: int) -> Tuple[List[Event], int]:
    """Events over the outputs, the likeliest separators first (see the module doc), and how
    many of them the first pass tries (where a sparse vector stops, every index at once)."""
    assert prog.private is not None
    out: List[Event] = []
    primary = 0
    outs = prog.private.outputs
    arrays = [o for o in outs if (t := types.locals.get(o)) is not None and t.name == "array"]
    bool_arrays = [o for o in arrays if types.locals[o].elem[0] == A.BOOL]
    value_arrays = [o for o in arrays if o not in bool_arrays]

    def both(parts: List[Tuple[str, str]]) -> Event:
        return " && ".join(p for p, _ in parts), " && ".join(q for _, q in parts)

    def wr(a: str, k: int) -> Tuple[str, str]:
        return f"written({a}, {k})", f"{_shadow(a)}[{k}]"

    def elem(a: str, k: int, op: str, c: Any) -> Tuple[str, str]:
        text = f"{a}[{k}] {op} {_num(c)}" if op else f"{'!' if c is False else ''}{a}[{k}]"
        return text, text

    def guarded(a: str, conds: List[Tuple[int, str, Any]]) -> List[Tuple[str, str]]:
        out: List[Tuple[str, str]] = []
        for k, op, c in conds:  # every read guarded: the event never reads an unwritten element
            out += [wr(a, k), elem(a, k, op, c)]
        return out

    for b in bool_arrays:
        stops = [[(j, "", j == k) for j in range(k + 1)] for k in reversed(range(n))]
        fulls = [[(j, "", bool(x)) for j, x in enumerate(bits)] for bits in itertools.product((1, 0), repeat=n)]
        pats = stops + ([f for f in fulls if f not in stops] if n <= 4 else [])
        for pat in pats:
            if pat is pats[len(stops) - 1] or (not stops and pat is pats[0]):
                primary = len(out) + 1 + (len(value_arrays) * 2 * len(ARRAY_THRESHOLDS) if pat[-1][2] else 0)
            ev = guarded(b, pat)
            out.append(both(ev))
            if pat[-1][2] is True:  # stopped at k: the released values there
                k = pat[-1][0]
                for v in value_arrays:
                    for c in ARRAY_THRESHOLDS:
                        for op in (">", "<"):
                            out.append(both(ev + [wr(v, k), elem(v, k, op, c)]))
    if not bool_arrays:
        for v in value_arrays:
            for c in ARRAY_THRESHOLDS:
                for op in (">", "<"):
                    out.append(both(guarded(v, [(k, op, c) for k in range(n)])))
            if n <= 3:
                for ops in itertools.product((">", "<"), repeat=n):
                    if len(set(ops)) > 1:
                        out.append(both(guarded(v, [(k, op, 1 if op == ">" else 0) for k, op in enumerate(ops)])))
            primary = len(out)
            for k in range(n):
                for c in ARRAY_THRESHOLDS:
                    for op in (">", "<"):
                        out.append(both([wr(v, k), elem(v, k, op, c)]))
    for b in bool_arrays:
        for k in range(n):
            for flag in (True, False):
                out.append(both([wr(b, k), elem(b, k, "", flag)]))
    for o in outs:
        t = types.locals.get(o)
        if t == A.BOOL:
            out += [(o, o), (f"!{o}", f"!{o}")]
        elif t == A.INT:
            out += [(f"{o} == {v}", f"{o} == {v}") for v in range(max(n, 2))]
        elif t == A.REAL:
            for c in THRESHOLDS:
                out += [(f"{o} > {_num(c)}", f"{o} > {_num(c)}"), (f"{o} < {_num(c)}", f"{o} < {_num(c)}")]
    if not arrays:
        primary = len(out)
    return out, primary


def _num(c: Any) -> str:
    c = Fraction(c)
    return str(c.numerator) if c.denominator == 1 else f"{c.numerator} / {c.denominator}"


def _observable(prog: A.Program, types: ProgramTypes, n: int) -> A.Program:
    """``prog`` without its clauses, with a shadow array per output array that is true exactly
    at the indices the run wrote, and the unwritten elements at ``0..n-1`` given a default at
    exit (module doc)."""
    assert prog.private is not None
    arrays = {o: types.locals[o] for o in prog.private.outputs if (t := types.locals.get(o)) and t.name == "array"}

    def mark(s: A.Stmt) -> List[A.Stmt]:
        pre: List[A.Stmt] = []
        if isinstance(s, (A.Assign, A.Sample)):
            for t in s.targets:
                if isinstance(t, A.Index) and isinstance(t.base, A.Var) and t.base.name in arrays:
                    pre.append(A.Assign((A.Index(A.Var(_shadow(t.base.name)), t.index),), A.BoolLit(True)))
        return pre + [s]

    def block(b: A.Block) -> A.Block:
        stmts: List[A.Stmt] = []
        for s in b.stmts:
            if isinstance(s, A.Block):
                stmts.append(block(s))
            elif isinstance(s, A.If):
                stmts.append(dataclasses.replace(s, then=block(s.then), other=block(s.other) if s.other else None))
            elif isinstance(s, (A.While, A.For)):
                stmts.append(dataclasses.replace(s, body=block(s.body)))
            else:
                stmts += mark(s)
        return dataclasses.replace(b, stmts=tuple(stmts))

    init: List[A.Stmt] = []
    fill: List[A.Stmt] = []  # at exit, so the program itself never reads these values
    for name, t in arrays.items():
        zero: A.Expr = A.BoolLit(False) if t.elem[0] == A.BOOL else A.num(0, t.elem[0] == A.INT)
        for k in range(n):
            idx = A.num(k, True)
            init.append(A.Assign((A.Index(A.Var(_shadow(name)), idx),), A.BoolLit(False)))
            unwritten = A.Unary("!", A.Index(A.Var(_shadow(name)), idx))
            fill.append(A.If(unwritten, A.Block((A.Assign((A.Index(A.Var(name), idx),), zero),))))
    body = block(prog.body)
    body = dataclasses.replace(body, stmts=tuple(init) + body.stmts + tuple(fill))
    return dataclasses.replace(
        prog, body=body, requires=(), ensures=(), fails=None, neighbours=None, private=None, reliability=None
    )


# ---------------------------------------------------------------------------- search


class Search:
    """A resumable search: :meth:`run` goes on where the last call stopped (its cache kept)."""

    def __init__(self, prog: A.Program, types: ProgramTypes, fixed: Dict[str, Value]) -> None:
        self.clock = [0.0]
        self.steps = _steps(prog, types, fixed, self.clock)
        self.done = False

    def run(self, budget: float) -> Optional[Dict[str, Any]]:
        """A counterexample found within ``budget`` seconds more, or None."""
        if self.done:
            return None
        self.clock[0] = time.monotonic() + budget
        try:
            return next(self.steps)
        except StopIteration:
            self.done = True
            return None


def search(prog: A.Program, types: ProgramTypes, fixed: Dict[str, Value], budget: float) -> Optional[Dict[str, Any]]:
    """A counterexample as the ``--json`` contract writes it, or None."""
    return Search(prog, types, fixed).run(budget)


def _steps(
    prog: A.Program, types: ProgramTypes, fixed: Dict[str, Value], clock: List[float]
) -> Iterator[Optional[Dict[str, Any]]]:
    """Yields None when ``clock[0]`` (the deadline) has passed, to be resumed with more time, and
    the counterexample when one is found."""
    claim, rel = prog.private, prog.neighbours
    assert claim is not None and rel is not None
    if isinstance(claim.epsilon, A.Hole):
        return
    secret = {b for name in set(free_vars(rel)) if (b := A.unprimed(name))}
    secret_params = [p for p in prog.params if p.name in secret]
    lengths = _length_params(prog)
    has_arrays = any(p.type.name == "array" for p in prog.params)
    tr = Z3Translation()
    cache: Dict[Tuple[int, str, str], Tuple[float, Optional[Interval]]] = {}
    broken: Set[str] = set()  # events the engine cannot compute

    def prob(
        plain: A.Program, n: int, run: Run, ev: str, tol: float, slow: bool, batch: List[str]
    ) -> Optional[Interval]:
        """P[ev | run] to width ``tol`` (a coarse interval first: refined only where it may separate).
        The coarse ones come for every event of ``batch`` at once, from one symbolic execution."""
        tag = repr(sorted(run.items()))
        key = (n, tag, ev)
        limit = PROB_TIMEOUT if slow else FIRST_TIMEOUT
        if key not in cache and tol >= COARSE:
            todo = [e for e in dict.fromkeys([ev] + batch) if (n, tag, e) not in cache and e not in broken]
            left = max(clock[0] - time.monotonic(), 0.2)
            try:
                got = probabilities(
                    plain, [parse_expr(e) for e in todo], inputs=run, tolerance=tol, timeout=min(left, limit)
                )
                for e, x in zip(todo, got):
                    cache[(n, tag, e)] = (tol, _interval(x))
            except Exception:  # noqa: BLE001 - one event the engine cannot read: each on its own
                pass
        if key not in cache or cache[key][0] > tol:
            left = max(clock[0] - time.monotonic(), 0.2)
            try:
                iv = _interval(probability(plain, ev, inputs=run, tolerance=tol, timeout=min(left, limit)))
            except Exception:  # noqa: BLE001 - the engine cannot compute it: no evidence
                broken.add(ev)
                iv = None
            cache[key] = (tol, iv)
        return cache[key][1]

    sizes = [int(fixed[x]) for x in lengths if x in fixed][:1] or (list(LENGTHS) if has_arrays else [2])
    # the first pass by level n + rank (rank: how many public inputs are not at their first value,
    # thresholds 0, counts 1, ε 1), short lengths first within a level: the loss of most broken
    # mechanisms grows with the length, and a few need a second value (a block size of 2); the
    # second pass everything, by length
    ranks = {r for n in sizes for r, _ in _publics(prog, secret, fixed, n, lengths)}
    passes = sorted((n + r, n, r) for n in sizes for r in ranks)
    stages = [(True, n, r) for _, n, r in passes] + [(False, n, None) for n in sizes]
    for first, n, rank in stages:
        plain = _observable(prog, types, n)
        events, primary = _events(prog, types, n)
        if not events:
            return
        if first:
            events = events[:primary]
        for r, public in _publics(prog, secret, fixed, n, lengths):
            if rank is not None and r != rank:
                continue
            pub_env = {p.name: _term(public[p.name], p.type) for p in prog.params if p.name in public}
            try:
                e_val = _constant(tr.translate(claim.epsilon, pub_env))
                d_val = _constant(tr.translate(claim.delta, pub_env)) if claim.delta is not None else Fraction(0)
            except Exception:  # noqa: BLE001 - ε not a number at these inputs: try others
                continue
            if e_val is None or d_val is None:
                continue
            factor: Interval = exp_interval(e_val)
            for combo, combo2 in _pairs(secret_params, fixed, n, first):
                while time.monotonic() > clock[0] - 0.2:
                    yield None
                run_a = {**public, **{p.name: v for p, v in zip(secret_params, combo)}}
                run_b = {**public, **{p.name: v for p, v in zip(secret_params, combo2)}}
                env_a = {**pub_env, **{p.name: _term(run_a[p.name], p.type) for p in secret_params}}
                env_b = {**pub_env, **{p.name: _term(run_b[p.name], p.type) for p in secret_params}}
                if not all(_holds(c, env_a) and _holds(c, env_b) for c in prog.requires):
                    continue
                env_r = dict(env_a)
                env_r.update({A.primed(p.name): env_b[p.name] for p in secret_params})
                env_r2 = dict(env_b)
                env_r2.update({A.primed(p.name): env_a[p.name] for p in secret_params})
                forward, backward = _holds(rel, env_r), _holds(rel, env_r2)
                if not (forward or backward):
                    continue
                for shown, ev in events:
                    tol, width = COARSE, 2.0
                    while ev not in broken and tol >= FINEST:
                        while time.monotonic() > clock[0] - 0.2:
                            yield None
                        batch = [e for _, e in events]
                        p = prob(plain, n, run_a, ev, tol, not first, batch)
                        q = prob(plain, n, run_b, ev, tol, not first, batch) if p is not None else None
                        if p is None or q is None:
                            break
                        plausible = False
                        for ok, x, y, px, py in ((forward, run_a, run_b, p, q), (backward, run_b, run_a, q, p)):
                            if not ok or any(x[k] != v for k, v in fixed.items() if k in secret):
                                continue  # the reported input keeps what --input fixes
                            if px.lo > factor.hi * py.hi + d_val:
                                cx: Dict[str, Any] = {
                                    "inputs": _json_values(x, prog),
                                    "neighbour": _json_values(y, prog),
                                    "event": shown,
                                    "probability": _json_interval(px),
                                    "neighbour_probability": _json_interval(py),
                                }
                                if set(free_vars(claim.epsilon)) - set(fixed):
                                    cx["epsilon_value"] = str(e_val)
                                yield cx
                                return
                            plausible = plausible or px.hi > factor.lo * py.lo + d_val
                        now = float(max(p.width, q.width))
                        if not plausible or now > width / 2:  # the engine refines no further in time
                            break
                        tol, width = tol / 10, now


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
