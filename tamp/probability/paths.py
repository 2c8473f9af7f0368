"""Symbolic execution of a loop-free (or constantly bounded) program into weighted paths.

Every path carries

* ``env`` — the program variables: exact numbers, Booleans, :class:`Affine`
  expressions over *base variables* (the sampled reals), Boolean formulas over
  linear literals, pairs and arrays;
* ``weight`` — the probability of the path's discrete choices (an
  :class:`Interval`: exact, or certified for ``dlap``/``dexp``);
* ``bounds`` — interval bounds on base variables, and ``cons`` — linear
  constraints ``aff <= 0`` over two or more base variables.

Discrete samples (``bern``, ``unif``, the bin of ``step``, ``dlap``, ``dexp``) fork
the path, weighted exactly; continuous ones create a base variable with a
:class:`~tamp.probability.dists.Dist`.  Branches on a condition over sampled reals fork
into disjoint convex cells (:func:`tamp.probability.symbolic.cases`); a cell whose
interior is empty (decided by the bounds, else by an exact z3 check over the
rationals; ``unknown`` keeps the cell) is dropped, which is sound because its
probability is 0.

Base variables are named by (statement, occurrence on the path, distribution),
so paths that differ only in discrete choices share them, and the mass of
identical continuous cells is computed once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple, TypeGuard

import z3

from lang import ast as A
from lang import ops
from lang.errors import TampError, UnsupportedError, error_at
from tamp.cfa.dependence import precondition_positions
from tamp.core.interval import Interval
from tamp.core.linear import Bound
from tamp.core.z3expr import rational

from .dists import Dist, Expo, Gauss, Laplace, PolyDensity, exp_interval
from .polydensity import density_coeffs
from .symbolic import Affine, And, Formula, Lit, Not, Or, as_affine, cases, compare, f_and, f_iff, f_not, f_or, simplify

MAX_ITERATIONS = 100_000
MAX_PATHS = 200_000
TAIL_EPS = Fraction(1, 2**40)
#: At most this many values on each side of a dlap/dexp are enumerated; the mass beyond them is
#: ``Executor.lost`` (added to the upper bound of every probability).
MAX_TAIL_VALUES = 5000
ONE = Interval.point(1)


@dataclass
class Path:
    """One execution path: its variables, weight and constraints on the base variables."""

    env: Dict[str, object]
    weight: Interval = ONE
    bounds: Dict[int, Bound] = field(default_factory=dict)
    cons: Tuple[Affine, ...] = ()
    occ: Dict[int, int] = field(default_factory=dict)
    choices: Tuple[int, ...] = ()  # the discrete outcomes taken, as indices (see tamp.certificate.replay)

    def fork(self) -> "Path":
        return Path(dict(self.env), self.weight, dict(self.bounds), self.cons, dict(self.occ), self.choices)


class Registry:
    """The base variables: their distributions, interned by naming key."""

    def __init__(self):
        self.dists: List[Dist] = []
        self._ids: Dict[tuple, int] = {}

    def var(self, key: tuple, dist: Dist) -> int:
        k = key + (dist,)
        v = self._ids.get(k)
        if v is None:
            v = self._ids[k] = len(self.dists)
            self.dists.append(dist)
        return v

    def support(self, v: int) -> Bound:
        return self.dists[v].support()


def _tighter(a: Optional[Fraction], b: Optional[Fraction], pick) -> Optional[Fraction]:
    """The tighter of two bounds of one side (``pick``: min for upper, max for lower bounds);
    None is no bound."""
    if a is None:
        return b
    if b is None:
        return a
    return pick(a, b)


class Executor:
    """Runs one program symbolically; ``run()`` returns the final paths."""

    def __init__(
        self,
        prog: A.Program,
        inputs: Optional[Dict[str, object]] = None,
        path: str = "<string>",
        source: Optional[str] = None,
        deadline: Optional[float] = None,
    ):
        self.prog = prog
        self.inputs = dict(inputs or {})
        self.file = path
        self.source = source
        self.deadline = deadline
        self.reg = Registry()
        self.lost = Fraction(0)  # probability mass dropped by truncating dlap/dexp (an upper bound)
        self.solver_calls = 0
        self.has_assume = False
        self._z3 = None
        self.preconditions = precondition_positions(prog)  # assumes on inputs only (not conditioning)

    # ------------------------------------------------------------------ errors
    def err(self, msg: str, node) -> TampError:
        return error_at(UnsupportedError, msg, getattr(node, "pos", None), self.file, self.source)

    # ------------------------------------------------------------------ entry
    def initial(self) -> Path:
        env: Dict[str, object] = {}
        for p in self.prog.params:
            if p.name not in self.inputs:
                raise error_at(
                    UnsupportedError,
                    f"a probability specification needs every input fixed: give --input {p.name}=VALUE",
                    p.pos,
                    self.file,
                    self.source,
                )
            env[p.name] = _input_value(self.inputs[p.name])
        for name in self.inputs:
            if self.prog.param(name) is None:
                raise TampError(f"--input {name}: program '{self.prog.name}' has no parameter '{name}'", self.file)
        path = Path(env)
        for r in self.prog.requires:
            for _p2, v in self.ev(r, path):
                if v is not True:
                    raise error_at(
                        TampError,
                        "the fixed inputs do not satisfy this 'requires' clause",
                        r.pos,
                        self.file,
                        self.source,
                    )
        return path

    def run(self) -> List[Path]:
        paths = self.block(self.prog.body, [self.initial()])
        return paths

    # ------------------------------------------------------------------ statements
    def block(self, blk: A.Block, paths: List[Path]) -> List[Path]:
        for s in blk.stmts:
            if not paths:
                break
            paths = self.stmt(s, paths)
            if len(paths) > MAX_PATHS:
                raise self.err(f"more than {MAX_PATHS} paths: the program is too large to enumerate", s)
        return paths

    def stmt(self, s: A.Stmt, paths: List[Path]) -> List[Path]:
        self._check_time()
        if isinstance(s, A.Assign):
            out = []
            for p in paths:
                for q, v in self.ev(s.value, p):
                    self.assign(s.targets, v, q, s)
                    out.append(q)
            return out
        if isinstance(s, A.Sample):
            out = []
            for p in paths:
                out.extend(self.sample(s, p))
            return out
        if isinstance(s, A.If):
            then_in, else_in = [], []
            for p in paths:
                for q, c in self.ev_cond(s.cond, p):
                    then_in.extend(self.assume(q, c))
                    else_in.extend(self.assume(q, f_not(c)))
            out = self.block(s.then, then_in) if then_in else []
            if s.other is not None:
                out += self.block(s.other, else_in) if else_in else []
            else:
                out += else_in
            return out
        if isinstance(s, A.While):
            return self.loop(s, paths)
        if isinstance(s, A.For):
            return self.for_loop(s, paths)
        if isinstance(s, A.Assume):
            precondition = s.pos is not None and (s.pos.line, s.pos.col) in self.preconditions
            self.has_assume = self.has_assume or not precondition
            out = []
            for p in paths:
                for q, c in self.ev_cond(s.cond, p):
                    if precondition and c is not True:
                        raise error_at(
                            TampError,
                            "the fixed inputs do not satisfy this precondition `assume` "
                            "(its condition depends on inputs only, so it restricts the inputs "
                            "like `requires`)",
                            s.pos,
                            self.file,
                            self.source,
                        )
                    out.extend(self.assume(q, c))
            return out
        if isinstance(s, A.Skip):
            return paths
        if isinstance(s, A.VarDecl):
            return paths
        if isinstance(s, A.Block):
            return self.block(s, paths)
        raise self.err("statement not supported by the probability engine", s)

    def loop(self, s: A.While, paths: List[Path]) -> List[Path]:
        done: List[Path] = []
        active = paths
        for _ in range(MAX_ITERATIONS):
            go = []
            for p in active:
                for q, c in self.ev(s.cond, p):
                    if c is True:
                        go.append(q)
                    elif c is False:
                        done.append(q)
                    else:
                        raise self.err(
                            "the probability engine needs loops with constant bounds: this loop "
                            "condition depends on sampled values",
                            s.cond,
                        )
            if not go:
                return done
            active = self.block(s.body, go)
        raise self.err(f"loop did not finish within {MAX_ITERATIONS} iterations", s)

    def for_loop(self, s: A.For, paths: List[Path]) -> List[Path]:
        out = []
        for p in paths:
            for q, lo in self.ev(s.lo, p):
                for q2, hi in self.ev(s.hi, q):
                    if not (_is_num(lo) and _is_num(hi)):
                        raise self.err("the probability engine needs loops with constant bounds", s)
                    cur = [q2]
                    i = lo
                    end = hi + 1 if s.inclusive else hi
                    n = 0
                    while i < end:
                        n += 1
                        if n > MAX_ITERATIONS:
                            raise self.err(f"loop runs more than {MAX_ITERATIONS} iterations", s)
                        for c in cur:
                            c.env[s.var] = Fraction(i)
                        cur = self.block(s.body, cur)
                        i += 1
                    out.extend(cur)
        return out

    def assign(self, targets, value, p: Path, node) -> None:
        if len(targets) == 1:
            self._store(targets[0], value, p)
            return
        if not isinstance(value, tuple) or len(value) != len(targets):
            raise self.err(f"cannot assign this value to {len(targets)} targets", node)
        for t, v in zip(targets, value):
            self._store(t, v, p)

    def _store(self, t, value, p: Path) -> None:
        if isinstance(t, A.Var):
            p.env[t.name] = value
            return
        if isinstance(t, A.Index) and isinstance(t.base, A.Var):
            idx_vals = self.ev(t.index, p)
            idx_val = idx_vals[0][1] if len(idx_vals) == 1 else None
            if not _is_num(idx_val):
                raise self.err("array index must be a fixed integer here", t.index)
            idx = int(idx_val)
            old = p.env.get(t.base.name)
            arr: Dict[int, object] = dict(old) if isinstance(old, dict) else {}
            arr[idx] = value
            p.env[t.base.name] = arr
            return
        raise self.err("unsupported assignment target", t)

    # ------------------------------------------------------------------ conditions
    def assume(self, p: Path, c: Formula) -> List[Path]:
        """The sub-paths of ``p`` on which ``c`` holds: one per disjoint convex cell, empty ones dropped."""
        if c is True:
            return [p]
        if c is False:
            return []
        out = []
        for conj in cases(c, True):
            q = p.fork()
            if all(self.add_lit(q, lit) for lit in conj):
                out.append(q)
        return out

    def add_lit(self, p: Path, lit: Lit) -> bool:
        """Add one literal to the path; False when the cell became (almost surely) empty."""
        aff, op = lit.aff, lit.op
        if aff.is_const:
            c = aff.const
            return {"<": c < 0, "<=": c <= 0, "==": c == 0, "!=": c != 0}[op]
        if op == "==":
            return False  # a hyperplane: probability 0 (every base variable is continuous)
        if op == "!=":
            return True  # holds almost surely
        lo, hi = self.range_of(aff, p)
        if hi is not None and hi <= 0:
            return True
        if lo is not None and lo >= 0:
            return False
        if len(aff.terms) == 1:
            ((v, c),) = aff.terms
            b = -aff.const / c
            blo, bhi = p.bounds.get(v, self.reg.support(v))
            if c > 0:
                bhi = _tighter(bhi, b, min)
            else:
                blo = _tighter(blo, b, max)
            if blo is not None and bhi is not None and blo >= bhi:
                return False
            p.bounds[v] = (blo, bhi)
            if any(v in dict(k.terms) for k in p.cons):
                return self.feasible(p)
            return True
        p.cons = p.cons + (aff,)
        return self.feasible(p)

    def range_of(self, aff: Affine, p: Path):
        """Exact [lo, hi] of ``aff`` over the path's box (None = unbounded)."""
        lo: Optional[Fraction] = aff.const
        hi: Optional[Fraction] = aff.const
        for v, c in aff.terms:
            blo, bhi = p.bounds.get(v, self.reg.support(v))
            a, b = (blo, bhi) if c > 0 else (bhi, blo)
            lo = None if lo is None or a is None else lo + c * a
            hi = None if hi is None or b is None else hi + c * b
        return lo, hi

    def feasible(self, p: Path) -> bool:
        """Whether the open cell {strict constraints} is non-empty (z3 over the rationals;
        ``unknown`` counts as feasible, so only provably empty cells are dropped)."""
        self.solver_calls += 1
        s = z3.Solver()
        s.set("timeout", 2000)
        xs = {}

        def x(v):
            if v not in xs:
                xs[v] = z3.Real(f"x{v}")
                blo, bhi = p.bounds.get(v, self.reg.support(v))
                if blo is not None:
                    s.add(xs[v] > rational(blo))
                if bhi is not None:
                    s.add(xs[v] < rational(bhi))
            return xs[v]

        for aff in p.cons:
            s.add(z3.Sum([rational(c) * x(v) for v, c in aff.terms]) + rational(aff.const) < 0)
        return s.check() != z3.unsat

    # ------------------------------------------------------------------ sampling
    def sample(self, s: A.Sample, p: Path) -> List[Path]:
        d = s.dist
        out = []
        key = id(s)
        n = p.occ.get(key, 0)
        p.occ[key] = n + 1
        evaluated = d.args[:2] if d.func == "density" else d.args  # density's POLY is symbolic in '_'
        for q, args in self.ev_args(evaluated, p, d):
            if d.func == "density":
                args = args + [None] * (3 - len(args))
            for r, value in self.draw(d, args, q, (key, n)):
                self.assign(s.targets, value, r, s)
                out.append(r)
        return out

    def ev_args(self, args, p: Path, node):
        """Evaluate distribution arguments (sets and lists kept structurally)."""
        results: List[Tuple[Path, List[object]]] = [(p, [])]
        for a in args:
            nxt = []
            for q, vals in results:
                if isinstance(a, (A.SetLit, A.ListLit)) or (
                    isinstance(a, A.Binary) and a.op == "*" and isinstance(a.left, A.SetLit)
                ):
                    nxt.append((q, vals + [self.const_structure(a, q)]))
                else:
                    for r, v in self.ev(a, q):
                        nxt.append((r, vals + [v]))
            results = nxt
        return results

    def const_structure(self, e, p: Path):
        """A set or list argument as a Python list of concrete values."""
        if isinstance(e, A.SetLit):
            return [self.const_value(x, p) for x in e.items]
        if isinstance(e, A.ListLit):
            return [self.const_value(x, p) for x in e.items]
        if isinstance(e, A.Binary) and e.op == "*":
            left, right = self.const_structure(e.left, p), self.const_structure(e.right, p)
            return [(a, b) for a in left for b in right]
        return self.const_value(e, p)

    def const_value(self, e, p: Path):
        if isinstance(e, A.TupleExpr):
            return tuple(self.const_value(x, p) for x in e.items)
        vals = self.ev(e, p)
        if len(vals) != 1 or isinstance(vals[0][1], (Affine, Lit, And, Or, Not)):
            raise self.err("this distribution argument must be a constant", e)
        return vals[0][1]

    def _const_num(self, v, node, what="this distribution parameter") -> Fraction:
        if not _is_num(v):
            raise self.err(f"{what} must not depend on sampled values", node)
        return Fraction(v)

    def draw(self, d: A.Call, args, p: Path, key) -> List[Tuple[Path, object]]:
        """The (sub-path, value) pairs of one sampling."""
        name = d.func
        need = {
            "bern": 1,
            "unif": (1, 2),
            "lap": 2,
            "exp": 2,
            "dlap": 2,
            "dexp": 2,
            "gauss": 2,
            "uniform": 2,
            "step": 1,
            "density": 3,
        }
        if name not in need:
            raise self.err(f"unknown distribution '{name}'", d)
        n = need[name]
        if (len(args) not in n) if isinstance(n, tuple) else len(args) != n:
            raise self.err(
                f"'{name}' takes {n if not isinstance(n, tuple) else ' or '.join(map(str, n))} argument(s)", d
            )
        A_ = d.args
        if name == "bern":
            pr = self._const_num(args[0], A_[0])
            if not 0 <= pr <= 1:
                raise self.err(f"bern({pr}): the probability must be in [0, 1]", A_[0])
            return self._choices(p, [(True, pr), (False, 1 - pr)])
        if name == "unif":
            if len(args) == 1:
                items = args[0] if isinstance(args[0], list) else None
                if not items:
                    raise self.err("unif needs a non-empty finite set", A_[0])
                w = Fraction(1, len(items))
                return self._choices(p, [(_input_value(x), w) for x in items])
            lo, hi = (self._const_num(a, n_) for a, n_ in zip(args, A_))
            if lo.denominator != 1 or hi.denominator != 1 or lo > hi:
                raise self.err("unif(lo, hi) needs integers lo <= hi", d)
            k = int(hi - lo) + 1
            if k > MAX_PATHS:
                raise self.err("unif range too large to enumerate", d)
            return self._choices(p, [(Fraction(int(lo) + i), Fraction(1, k)) for i in range(k)])
        if name in ("dlap", "dexp"):
            return self._geometric(name, args, p, d)
        if name == "step":
            return self._step(args[0], p, d, key)
        if name == "density":
            lo, hi = (self._const_num(a, n_) for a, n_ in zip(args[:2], A_[:2]))
            if not lo < hi:
                raise self.err("density(lo, hi, POLY) needs lo < hi", d)
            coeffs = density_coeffs(A_[2], lo, hi, self)
            v = self.reg.var(key, PolyDensity(lo, hi, coeffs))
            return [(p, Affine.var(v))]
        if name == "uniform":
            a, b = args
            width = as_affine(b).add(as_affine(a).neg())
            if not width.is_const:
                raise self.err("uniform(a, b): the width b - a must not depend on sampled values", d)
            if width.const <= 0:
                raise self.err("uniform(a, b) needs a < b", d)
            if _is_num(a):
                v = self.reg.var(key, PolyDensity.uniform(Fraction(a), Fraction(b)))
                return [(p, Affine.var(v))]
            v = self.reg.var(key, PolyDensity.uniform(Fraction(0), width.const))
            return [(p, as_affine(a).add(Affine.var(v)))]
        # location-scale families: gauss(m, var), lap(m, s), exp(k, s)
        loc, sc = args
        sc = self._const_num(sc, A_[1], "the variance" if name == "gauss" else "the scale")
        if sc <= 0:
            raise self.err(f"{name}: the {'variance' if name == 'gauss' else 'scale'} must be positive", A_[1])
        if _is_num(loc):
            base, shift = Fraction(loc), None
        elif isinstance(loc, Affine):
            base, shift = Fraction(0), loc
        else:
            raise self.err(f"{name}: the location must be a number", A_[0])
        dist = {"gauss": Gauss, "lap": Laplace, "exp": Expo}[name](base, sc)
        v = self.reg.var(key, dist)
        val = Affine.var(v) if shift is None else shift.add(Affine.var(v))
        return [(p, val)]

    def _choices(self, p: Path, items) -> List[Tuple[Path, object]]:
        out = []
        for index, (val, w) in enumerate(items):
            if w == 0:
                continue
            q = p.fork()
            q.choices = q.choices + (index,)
            q.weight = q.weight * (w if isinstance(w, Interval) else Interval.point(w))
            if not q.weight.is_exact:
                q.weight = q.weight.tidy(100)
            out.append((q, val))
        return out

    def _step(self, bins, p: Path, d, key) -> List[Tuple[Path, object]]:
        if not isinstance(bins, list) or not bins:
            raise self.err("step needs a list of (lo, hi, weight) bins", d)
        parsed = []
        for b in bins:
            if not (isinstance(b, tuple) and len(b) == 3 and all(_is_num(x) for x in b)):
                raise self.err("each step bin must be (lo, hi, weight) with constant numbers", d)
            lo, hi, w = (Fraction(x) for x in b)
            if hi < lo or w < 0:
                raise self.err("a step bin needs lo <= hi and weight >= 0", d)
            parsed.append((lo, hi, w))
        total = sum(w for _, _, w in parsed)
        if total <= 0:
            raise self.err("step: the weights must not all be zero", d)
        out: List[Tuple[Path, object]] = []
        for i, (lo, hi, w) in enumerate(parsed):
            if w == 0:
                continue
            q = p.fork()
            q.choices = q.choices + (i,)
            q.weight = q.weight * Interval.point(w / total)
            if lo == hi:
                out.append((q, lo))
            else:
                v = self.reg.var(key + (i,), PolyDensity.uniform(lo, hi))
                out.append((q, Affine.var(v)))
        return out

    def _geometric(self, name, args, p: Path, d) -> List[Tuple[Path, object]]:
        m = self._const_num(args[0], d.args[0])
        s = self._const_num(args[1], d.args[1])
        if m.denominator != 1:
            raise self.err(f"{name}: the location must be an integer", d.args[0])
        if s <= 0:
            raise self.err(f"{name}: the scale must be positive", d.args[1])
        q = exp_interval(-1 / s)  # q = e^(-1/s), certified
        two_sided = name == "dlap"
        # P(m ± k) = q^k (1-q)/(1+q) (dlap) or q^k (1-q) (dexp); tail beyond K: 2q^(K+1)/(1+q) or q^(K+1)
        inv = (Interval.point(1) + q).reciprocal()
        if inv is None:  # cannot happen: 1 + e^(-1/s) > 1
            raise self.err(f"{name}: cannot enclose the normalising constant", d)
        norm = (Interval.point(1) - q) * inv if two_sided else Interval.point(1) - q
        k, qk = 0, Interval.point(1)
        items = []
        while True:
            w = (qk * norm).tidy(100)
            if two_sided and k > 0:
                items.append((Fraction(int(m) - k), w))
                items.append((Fraction(int(m) + k), w))
            else:
                items.append((Fraction(int(m) + k), w))
            qk = (qk * q).tidy(100)
            tail = (qk * (2 * inv if two_sided else Interval.point(1))).hi
            k += 1
            if tail <= TAIL_EPS or k > MAX_TAIL_VALUES:
                break
        self.lost += p.weight.hi * tail
        return self._choices(p, items)

    def _check_time(self):
        if self.deadline is not None:
            if time.monotonic() > self.deadline:
                raise TimeoutError("path enumeration ran out of time")

    # ------------------------------------------------------------------ expressions
    def ev(self, e: A.Expr, p: Path) -> List[Tuple[Path, object]]:
        """Evaluate ``e`` on path ``p``: (sub-path, value) pairs (several when ``max``/``abs``/``?:``
        split the path)."""
        if isinstance(e, A.Num):
            return [(p, e.value)]
        if isinstance(e, A.BoolLit):
            return [(p, e.value)]
        if isinstance(e, A.Var):
            if e.name not in p.env:
                raise self.err(f"'{e.name}' is read before it is assigned", e)
            return [(p, p.env[e.name])]
        if isinstance(e, A.Index):
            out = []
            for q, arr in self.ev(e.base, p):
                for r, i in self.ev(e.index, q):
                    if not _is_num(i) or Fraction(i).denominator != 1:
                        raise self.err("array index must be a fixed integer", e.index)
                    if not isinstance(arr, dict) or int(i) not in arr:
                        raise self.err(f"array element {int(i)} is not defined here", e)
                    out.append((r, arr[int(i)]))
            return out
        if isinstance(e, A.Unary):
            return [(q, self.unary(e, v)) for q, v in self.ev(e.operand, p)]
        if isinstance(e, A.Binary):
            if e.op in ("&&", "||", "==>", "<==>"):
                return self.binary_all(e, p)
            return self.binary_all(e, p)
        if isinstance(e, A.Cond):
            out = []
            for q, c in self.ev_cond(e.cond, p):
                for r in self.assume(q, c):
                    out.extend(self.ev(e.then, r))
                for r in self.assume(q, f_not(c)):
                    out.extend(self.ev(e.other, r))
            return out
        if isinstance(e, A.Call):
            return self.call(e, p)
        if isinstance(e, A.TupleExpr):
            results: List[Tuple[Path, Tuple[object, ...]]] = [(p, ())]
            for it in e.items:
                results = [(r, vals + (v,)) for q, vals in results for r, v in self.ev(it, q)]
            return [(q, vals) for q, vals in results]  # (a list of pairs is invariant in its value type)
        raise self.err("expression not supported by the probability engine", e)

    def ev_cond(self, e: A.Expr, p: Path) -> List[Tuple[Path, Formula]]:
        """Evaluate the condition ``e`` on path ``p``: (sub-path, formula) pairs."""
        out: List[Tuple[Path, Formula]] = []
        for q, c in self.ev(e, p):
            if not _is_bool(c):
                raise self.err("a condition must be Boolean", e)
            out.append((q, c))
        return out

    def unary(self, e: A.Unary, v):
        if e.op == "-":
            if _is_num(v):
                return -Fraction(v)
            if isinstance(v, Affine):
                return v.neg()
        if e.op == "!":
            if _is_bool(v):
                return f_not(v)
        raise self.err(f"operator '{e.op}' does not apply to this value", e)

    def binary_all(self, e: A.Binary, p: Path):
        out = []
        for q, a in self.ev(e.left, p):
            for r, b in self.ev(e.right, q):
                out.append((r, self.binary(e, a, b)))
        return out

    def binary(self, e: A.Binary, a, b):
        op = e.op
        if op in ("+.", "-.", "*."):
            raise self.err("unreliable operators are not supported by the probability engine", e)
        if op in ("&&", "||", "==>", "<==>"):
            if not (_is_bool(a) and _is_bool(b)):
                raise self.err(f"'{op}' needs Boolean operands", e)
            return {"&&": f_and(a, b), "||": f_or(a, b), "==>": f_or(f_not(a), b), "<==>": f_iff(a, b)}[op]
        if op in ("==", "!=") and _is_bool(a) and _is_bool(b):
            r = f_iff(a, b)
            return r if op == "==" else f_not(r)
        if op in ("==", "!=") and isinstance(a, tuple) and isinstance(b, tuple):
            eq: Formula = len(a) == len(b)
            for x, y in zip(a, b):
                eq = f_and(eq, self.binary(A.Binary("==", A.Num(Fraction(0)), A.Num(Fraction(0)), pos=e.pos), x, y))
            return eq if op == "==" else f_not(eq)
        if not (_is_numlike(a) and _is_numlike(b)):
            raise self.err(f"'{op}' needs numeric operands here", e)
        if op in ("<", "<=", ">", ">=", "==", "!="):
            return compare(op, a, b)
        if op == "+":
            return simplify(as_affine(a).add(as_affine(b)))
        if op == "-":
            return simplify(as_affine(a).add(as_affine(b).neg()))
        if op == "*":
            if _is_num(a):
                return simplify(as_affine(b).scale(Fraction(a)))
            if _is_num(b):
                return simplify(as_affine(a).scale(Fraction(b)))
            raise self.err(
                "a product of two sampled quantities is not linear: the probability engine "
                "handles affine dependence on sampled values only",
                e,
            )
        if op == "/":
            if not _is_num(b):
                raise self.err("division by a sampled quantity is not linear (not supported)", e)
            if b == 0:
                raise self.err("division by zero", e)
            return simplify(as_affine(a).scale(1 / Fraction(b)))
        if op in ("div", "mod"):
            if not (_is_num(a) and _is_num(b)):
                raise self.err(f"'{op}' of a sampled real is not supported", e)
            try:
                return Fraction(ops.BINARY[op].exact(Fraction(a), Fraction(b)))
            except ops.DivisionByZero:
                raise self.err("division by zero", e) from None
            except ops.DomainError:
                raise self.err(f"'{op}' needs integers", e) from None
        raise self.err(f"operator '{op}' is not supported by the probability engine", e)

    def call(self, e: A.Call, p: Path):
        f = e.func
        if f in ("fst", "snd"):
            out = []
            for q, v in self.ev(e.args[0], p):
                if not isinstance(v, tuple):
                    raise self.err(f"{f} needs a pair", e)
                out.append((q, v[0] if f == "fst" else v[1]))
            return out
        if f in ("abs", "min", "max"):
            if len(e.args) != (1 if f == "abs" else 2):
                raise self.err(f"{f} takes {1 if f == 'abs' else 2} argument(s)", e)
            out = []
            results: List[Tuple[Path, List[object]]] = [(p, [])]
            for a in e.args:
                results = [(r, vals + [v]) for q, vals in results for r, v in self.ev(a, q)]
            for q, vals in results:
                if not all(_is_numlike(v) for v in vals):
                    raise self.err(f"{f} needs numbers", e)
                if f == "abs":
                    x, y = vals[0], simplify(as_affine(vals[0]).neg())
                    cond = compare(">=", vals[0], 0)
                else:
                    x, y = vals
                    cond = compare(">=", x, y) if f == "max" else compare("<=", x, y)
                for r in self.assume(q, cond):
                    out.append((r, x))
                for r in self.assume(q, f_not(cond)):
                    out.append((r, y))
            return out
        if f in ("log", "exp", "sqrt"):
            out = []
            for q, v in self.ev(e.args[0], p):
                if not _is_num(v):
                    raise self.err(f"{f} of a sampled value is not linear (not supported)", e)
                val = ops.exact_fn(f, Fraction(v))
                if val is None:
                    raise self.err(f"{f}({v}) is irrational: the probability engine needs exact constants", e)
                out.append((q, val))
            return out
        raise self.err(f"'{f}' is not supported in programs analysed by the probability engine", e)


def _is_num(v: object) -> TypeGuard[int | Fraction]:
    return isinstance(v, (int, Fraction)) and not isinstance(v, bool)


def _is_numlike(v: object) -> TypeGuard[int | Fraction | Affine]:
    return _is_num(v) or isinstance(v, Affine)


def _is_bool(v: object) -> TypeGuard[Formula]:
    return isinstance(v, (bool, Lit, And, Or, Not))


def _input_value(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, Fraction)):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(v)
    if isinstance(v, (list, tuple)) and not isinstance(v, tuple):
        return {i: _input_value(x) for i, x in enumerate(v)}
    if isinstance(v, tuple):
        return tuple(_input_value(x) for x in v)
    return v
