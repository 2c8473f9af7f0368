"""The checker's own semantics of a probabilistic program, for one discrete *trace*.

A probability certificate names each discrete outcome sequence (a trace: the index of the
outcome taken at every discrete sampling, in execution order) and regions of the continuous
samples. :func:`replay` runs the program on one trace with every continuous sample a fresh z3
real variable, and returns the final state as z3 terms — independent of the probability
engine's symbolic executor.

Sample space. Each continuous sampling draws a fresh *base variable* named
``s<site>.<occurrence>`` (``site``: the sampling statement's index in a pre-order walk of the
program body; ``occurrence``: how often that statement has drawn before on this trace). A
location (or a ``uniform`` start) that depends on samples is a shift: the base variable has
the distribution at location 0 and the value is ``location + base``. Conditions on continuous
samples never fork: both branches run and their states merge with ``If`` (so ``abs``, ``min``,
``max`` and ``?:`` too); a run always takes one branch, and each base variable is drawn at one
program point with one distribution, so the product of the base variables' distributions is
the program's distribution given the trace. Counters merge by maximum, so names never clash.

Discrete outcomes (index → value, exact probability):

* ``bern(p)``: 0 → true (p), 1 → false (1 − p);
* ``unif(lo, hi)``: i → lo + i (1/(hi − lo + 1)); ``unif(SET)``: i → the i-th item (1/|SET|);
* ``step(BINS)``: i → bin i (w_i / Σ w), then a uniform base variable on the bin (or its point);
* ``dlap(m, s)``: 0 → m, 2k − 1 → m − k, 2k → m + k (q^k (1 − q)/(1 + q), q = e^(−1/s));
  ``dexp(m, s)``: k → m + k (q^k (1 − q)); certified intervals.

Branches that draw discrete values. An ``if`` whose blocks contain a discrete sampling
(syntactically: ``bern``, ``unif``, ``step``, ``dlap``, ``dexp`` anywhere inside) is *followed*
instead of merged when its condition depends on continuous samples: the trace names the branch
taken (``branches``: 1 = then, 0 = else, in execution order) and the replay runs that block only,
adding the condition (or its negation) to the trace's **guard**. Such a trace stands for the
event "these discrete outcomes and these branches", i.e. the guard's region of the sample space
with the outcomes' weight; the checker requires its cells to lie inside the guard, and the
traces of a term to form a complete decision tree (:mod:`.prob_cover`). Whether an ``if`` is
followed depends on the program text only, so two traces that agree up to a decision reach it
in the same state: the events of distinct traces are disjoint.

Every decision (a discrete outcome or a followed branch) is recorded in order with its place,
its probability (outcomes) or condition (branches), and the guard before it.

Outside the fragment (a discrete sampling under a *merged* condition, a loop condition or a
distribution parameter that depends on continuous samples) the replay raises
:class:`ReplayError`, and the certificate is rejected — never accepted on trust.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple, TypeGuard

import z3

from lang import ast as A
from lang import ops
from tamp.core import z3expr as Z
from tamp.core.interval import Interval
from tamp.core.z3expr import fraction, rational
from tamp.probability.dists import Dist, Expo, Gauss, Laplace, PolyDensity, exp_interval
from tamp.probability.polydensity import density_coeffs

MAX_STEPS = 1_000_000
ONE = Interval.point(1)


class ReplayError(Exception):
    """The trace cannot be replayed (wrong choices, or outside the supported fragment)."""


def sample_sites(prog: A.Program) -> Dict[int, int]:
    """id(sampling statement) -> its index in a pre-order walk of the body."""
    out: Dict[int, int] = {}
    for n in A.walk(prog.body):
        if isinstance(n, A.Sample) and id(n) not in out:
            out[id(n)] = len(out)
    return out


DISCRETE = ("bern", "unif", "step", "dlap", "dexp")


def followed_ifs(prog: A.Program) -> Dict[int, int]:
    """id(if statement) -> its index in a pre-order walk, for every ``if`` whose blocks contain a
    discrete sampling (those are followed, not merged, on a condition over continuous samples)."""
    out: Dict[int, int] = {}
    k = 0
    for n in A.walk(prog.body):
        if isinstance(n, A.If):
            inner = [s for b in (n.then, n.other) if b is not None for s in A.walk(b)]
            if any(isinstance(s, A.Sample) and s.dist.func in DISCRETE for s in inner):
                out[id(n)] = k
            k += 1
    return out


@dataclass
class Decision:
    """One decision of a trace: ``kind`` "outcome" (``value``: the index, ``prob``: its certified
    probability) or "branch" (``value``: 1 then / 0 else, ``cond``: the condition as a z3
    formula); ``place`` names the statement; ``guard``: the followed conditions before it."""

    kind: str
    place: str
    value: int
    prob: Optional[Interval] = None
    cond: object = None
    guard: Tuple = ()


def var_name(site: int, occurrence: int) -> str:
    return f"s{site}.{occurrence}"


q = rational  # an exact z3 constant


def _is_num(v: object) -> TypeGuard[int | Fraction]:
    return isinstance(v, (int, Fraction)) and not isinstance(v, bool)


def _is_sym(v) -> bool:
    return isinstance(v, z3.ExprRef)


@dataclass
class Trace:
    """The outcome of replaying one trace."""

    env: Dict[str, object]
    ok: object  # the conjunction of the `assume`s passed (bool or z3 Bool)
    weight: Interval  # probability of the discrete outcomes
    vars: Dict[str, Dist]  # base variables and their distributions
    symbols: Dict[str, z3.ArithRef] = field(default_factory=dict)
    branches: Tuple[int, ...] = ()  # the followed branches taken (1 then, 0 else)
    guard: Tuple = ()  # their conditions (z3), as taken: the trace's region
    decisions: List[Decision] = field(default_factory=list)

    def guard_formula(self) -> z3.BoolRef:
        return z3.And(*self.guard) if self.guard else z3.BoolVal(True)

    def support(self) -> List[z3.BoolRef]:
        """Open support constraints of the base variables (their complement has mass 0)."""
        out = []
        for name, d in self.vars.items():
            lo, hi = d.support()
            x = self.symbols[name]
            if lo is not None:
                out.append(x > q(lo))
            if hi is not None:
                out.append(x < q(hi))
        return out


class _State:
    def __init__(self, env, ok, counters):
        self.env = env
        self.ok = ok
        self.counters = counters

    def copy(self):
        return _State(dict(self.env), self.ok, dict(self.counters))


class Replayer:
    """Replays ``prog`` on one trace (see the module docstring)."""

    def __init__(self, prog: A.Program, inputs: Optional[Dict[str, object]] = None):
        self.prog = prog
        self.inputs = dict(inputs or {})
        self.sites = sample_sites(prog)
        self.followed = followed_ifs(prog)

    def run(self, choices: Sequence[int], branches: Sequence[int] = (), oracle=None) -> Trace:
        """Replay one trace. ``oracle(cond, replayer) -> 0 | 1`` (the writer's) chooses the
        followed branches instead of ``branches``."""
        self.choices = list(choices)
        self.pos = 0
        self.branches = list(branches)
        self.bpos = 0
        self.oracle = oracle
        self.taken: List[int] = []
        self.guard: List[z3.BoolRef] = []
        self.decisions: List[Decision] = []
        self.weight = ONE
        self.vars: Dict[str, Dist] = {}
        self.symbols: Dict[str, z3.ArithRef] = {}
        self.steps = 0
        self.pc: object = True
        env: Dict[str, object] = {}
        for p in self.prog.params:
            if p.name not in self.inputs:
                raise ReplayError(f"input '{p.name}' is not fixed (give --input {p.name}=VALUE)")
            env[p.name] = _value(self.inputs[p.name])
        st = _State(env, True, {})
        for r in self.prog.requires:
            if self.ev(r, st) is not True:
                raise ReplayError("the fixed inputs do not satisfy `requires`")
        self.block(self.prog.body, st)
        if self.pos != len(self.choices):
            raise ReplayError(f"the trace has {len(self.choices)} outcomes but the run uses {self.pos}")
        if oracle is None and self.bpos != len(self.branches):
            raise ReplayError(f"the trace has {len(self.branches)} branches but the run follows {self.bpos}")
        return Trace(
            st.env, st.ok, self.weight, self.vars, self.symbols, tuple(self.taken), tuple(self.guard), self.decisions
        )

    def support_so_far(self) -> List[z3.BoolRef]:
        """Open support constraints of the base variables drawn so far."""
        return Trace({}, True, ONE, self.vars, self.symbols).support()

    def follow(self, s: A.If, c, st: _State) -> None:
        """Run the branch of a followed ``if`` that the trace (or the oracle) names."""
        if self.pc is not True:
            raise ReplayError(f"line {_line(s)}: a branch that draws discrete values under a merged condition")
        if self.oracle is not None:
            d = self.oracle(c, self)
        else:
            if self.bpos >= len(self.branches):
                raise ReplayError(f"the trace ends before the branch at line {_line(s)}")
            d = self.branches[self.bpos]
            self.bpos += 1
        if d not in (0, 1) or isinstance(d, bool):
            raise ReplayError(f"branch {d!r} at line {_line(s)} is not 0 or 1")
        self.decisions.append(Decision("branch", f"if@{self.followed[id(s)]}", d, None, c, tuple(self.guard)))
        self.taken.append(d)
        self.guard.append(c if d == 1 else z3.Not(c))
        blk = s.then if d == 1 else s.other
        if blk is not None:
            self.block(blk, st)

    # ------------------------------------------------------------------ statements
    def block(self, blk: A.Block, st: _State) -> None:
        for s in blk.stmts:
            self.stmt(s, st)

    def stmt(self, s: A.Stmt, st: _State) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ReplayError("the run takes more than a million steps")
        if isinstance(s, A.Assign):
            self.assign(s.targets, self.ev(s.value, st), st)
        elif isinstance(s, A.Sample):
            self.assign(s.targets, self.sample(s, st), st)
        elif isinstance(s, A.If):
            c = self.ev(s.cond, st)
            if c is True or c is False:
                blk = s.then if c else s.other
                if blk is not None:
                    self.block(blk, st)
                return
            if not _is_sym(c):
                raise ReplayError(f"line {_line(s)}: the condition is not a Boolean")
            if id(s) in self.followed:
                self.follow(s, c, st)
                return
            then_st, else_st = st.copy(), st.copy()
            outer = self.pc
            self.pc = z3.And(outer, c) if outer is not True else c
            self.block(s.then, then_st)
            self.pc = z3.And(outer, z3.Not(c)) if outer is not True else z3.Not(c)
            if s.other is not None:
                self.block(s.other, else_st)
            self.pc = outer
            merged = _merge(c, then_st, else_st)
            st.env, st.ok, st.counters = merged.env, merged.ok, merged.counters
        elif isinstance(s, A.While):
            while True:
                c = self.ev(s.cond, st)
                if c is False:
                    return
                if c is not True:
                    raise ReplayError(f"line {_line(s)}: the loop condition depends on continuous samples")
                self.block(s.body, st)
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise ReplayError("the run takes more than a million steps")
        elif isinstance(s, A.For):
            lo, hi = self.ev(s.lo, st), self.ev(s.hi, st)
            if not (_is_num(lo) and _is_num(hi)):
                raise ReplayError(f"line {_line(s)}: the loop bounds must be fixed numbers")
            i, end = Fraction(lo), Fraction(hi) + (1 if s.inclusive else 0)
            while i < end:
                st.env[s.var] = i
                self.block(s.body, st)
                i += 1
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise ReplayError("the run takes more than a million steps")
        elif isinstance(s, A.Assume):
            c = self.ev(s.cond, st)
            st.ok = _and(st.ok, c)
        elif isinstance(s, (A.Skip, A.VarDecl)):
            return
        elif isinstance(s, A.Block):
            self.block(s, st)
        else:
            raise ReplayError(f"line {_line(s)}: statement not supported")

    # Deliberately the checker's own assignment semantics (same shape as the engine's
    # tamp/probability/paths.py Executor.assign): the replay shares no code with the engine's executor.
    def assign(self, targets, value, st: _State) -> None:
        if len(targets) == 1:
            self._store(targets[0], value, st)
            return
        if not isinstance(value, tuple) or len(value) != len(targets):
            raise ReplayError(f"cannot assign this value to {len(targets)} targets")
        for t, v in zip(targets, value):
            self._store(t, v, st)

    def _store(self, t, value, st: _State) -> None:
        if isinstance(t, A.Var):
            st.env[t.name] = value
            return
        if isinstance(t, A.Index) and isinstance(t.base, A.Var):
            i = self.ev(t.index, st)
            if not _is_num(i) or Fraction(i).denominator != 1:
                raise ReplayError(f"line {_line(t)}: an array index must be a fixed integer")
            arr = dict(st.env.get(t.base.name) or {})
            arr[int(i)] = value
            st.env[t.base.name] = arr
            return
        raise ReplayError(f"line {_line(t)}: unsupported assignment target")

    # ------------------------------------------------------------------ sampling
    def next_choice(self, n_outcomes: Optional[int], s: A.Sample) -> int:
        if self.pc is not True:
            raise ReplayError(f"line {_line(s)}: a discrete sampling under a condition on continuous samples")
        if self.pos >= len(self.choices):
            raise ReplayError(f"the trace ends before the discrete sampling at line {_line(s)}")
        k = self.choices[self.pos]
        self.pos += 1
        if not isinstance(k, int) or isinstance(k, bool) or k < 0 or (n_outcomes is not None and k >= n_outcomes):
            raise ReplayError(f"outcome {k!r} of the sampling at line {_line(s)} does not exist")
        self.decisions.append(Decision("outcome", f"sample@{self.sites[id(s)]}", k, None, None, tuple(self.guard)))
        return k

    def fresh(self, s: A.Sample, st: _State, dist: Dist):
        name = var_name(self.sites[id(s)], self.occurrence)
        if name in self.vars:  # cannot happen (counters only grow); guard the invariant anyway
            raise ReplayError(f"base variable {name} drawn twice")
        self.vars[name] = dist
        x = self.symbols[name] = z3.Real(name)
        return x

    def sample(self, s: A.Sample, st: _State):
        site = self.sites[id(s)]
        self.occurrence = st.counters.get(site, 0)  # every execution of the statement counts
        st.counters[site] = self.occurrence + 1
        d = s.dist
        name = d.func
        args = list(d.args)

        def num(e, what="this distribution parameter"):
            v = self.ev(e, st)
            if not _is_num(v):
                raise ReplayError(f"line {_line(s)}: {what} must not depend on continuous samples")
            return Fraction(v)

        if name == "bern":
            p = num(args[0])
            if not 0 <= p <= 1:
                raise ReplayError(f"line {_line(s)}: bern({p}) is not a distribution")
            k = self.next_choice(2, s)
            self._weigh(p if k == 0 else 1 - p)
            return k == 0
        if name == "unif" and len(args) == 1:
            if not isinstance(args[0], A.SetLit) or not args[0].items:
                raise ReplayError(f"line {_line(s)}: unif needs a non-empty set literal")
            items = args[0].items
            k = self.next_choice(len(items), s)
            self._weigh(Fraction(1, len(items)))
            return self.ev(items[k], st)
        if name == "unif":
            lo, hi = num(args[0]), num(args[1])
            if lo.denominator != 1 or hi.denominator != 1 or lo > hi:
                raise ReplayError(f"line {_line(s)}: unif(lo, hi) needs integers lo <= hi")
            n = int(hi - lo) + 1
            k = self.next_choice(n, s)
            self._weigh(Fraction(1, n))
            return lo + k
        if name in ("dlap", "dexp"):
            m, sc = num(args[0]), num(args[1])
            if m.denominator != 1 or sc <= 0:
                raise ReplayError(f"line {_line(s)}: {name} needs an integer location and a positive scale")
            k = self.next_choice(None, s)
            qv = exp_interval(-1 / sc)
            if name == "dlap":
                dist_k = (k + 1) // 2
                value = m if k == 0 else (m - dist_k if k % 2 == 1 else m + dist_k)
                inv = (ONE + qv).reciprocal()
                if inv is None:  # cannot happen: 1 + exp(-1/scale) > 1
                    raise ReplayError(f"line {_line(s)}: {name}: cannot enclose the normalising constant")
                norm = (ONE - qv) * inv
            else:
                dist_k, value, norm = k, m + k, ONE - qv
            w = norm
            for _ in range(dist_k):
                w = (w * qv).tidy(100)
            self._weigh(w.tidy(100))
            return value
        if name == "step":
            if not isinstance(args[0], A.ListLit) or not args[0].items:
                raise ReplayError(f"line {_line(s)}: step needs a list of (lo, hi, weight) bins")
            bins = []
            for b in args[0].items:
                v = self.ev(b, st)
                if not (isinstance(v, tuple) and len(v) == 3 and all(_is_num(x) for x in v)):
                    raise ReplayError(f"line {_line(s)}: each step bin must be (lo, hi, weight) numbers")
                bins.append(tuple(Fraction(x) for x in v))
            total = sum(w for _, _, w in bins)
            if total <= 0 or any(hi < lo or w < 0 for lo, hi, w in bins):
                raise ReplayError(f"line {_line(s)}: malformed step bins")
            k = self.next_choice(len(bins), s)
            lo, hi, weight = bins[k]
            self._weigh(weight / total)
            if lo == hi:
                return lo
            return self.fresh(s, st, PolyDensity.uniform(lo, hi))
        if name == "density":
            lo, hi = num(args[0]), num(args[1])
            if not lo < hi:
                raise ReplayError(f"line {_line(s)}: density(lo, hi, POLY) needs lo < hi")
            try:
                coeffs = density_coeffs(args[2], lo, hi, _ErrSink())
            except ReplayError:
                raise
            return self.fresh(s, st, PolyDensity(lo, hi, coeffs))
        if name == "uniform":
            a, b = self.ev(args[0], st), self.ev(args[1], st)
            if _is_num(a) and _is_num(b):
                if not Fraction(a) < Fraction(b):
                    raise ReplayError(f"line {_line(s)}: uniform(a, b) needs a < b")
                return self.fresh(s, st, PolyDensity.uniform(Fraction(a), Fraction(b)))
            width = _const_of(_arith(b) - _arith(a))
            if width is None or width <= 0:
                raise ReplayError(f"line {_line(s)}: the width of uniform(a, b) must be a fixed positive number")
            return _arith(a) + self.fresh(s, st, PolyDensity.uniform(Fraction(0), width))
        if name in ("gauss", "lap", "exp"):
            loc = self.ev(args[0], st)
            sc = num(args[1], "the variance" if name == "gauss" else "the scale")
            if sc <= 0:
                raise ReplayError(
                    f"line {_line(s)}: {name} needs a positive {'variance' if name == 'gauss' else 'scale'}"
                )
            cls = {"gauss": Gauss, "lap": Laplace, "exp": Expo}[name]
            if _is_num(loc):
                return self.fresh(s, st, cls(Fraction(loc), sc))
            if not (_is_sym(loc) and z3.is_arith(loc)):
                raise ReplayError(f"line {_line(s)}: the location of {name} must be a number")
            return loc + self.fresh(s, st, cls(Fraction(0), sc))
        raise ReplayError(f"line {_line(s)}: distribution '{name}' is not supported")

    def _weigh(self, w) -> None:
        iv = w if isinstance(w, Interval) else Interval.point(w)
        self.decisions[-1].prob = iv
        self.weight = self.weight * iv
        if not self.weight.is_exact:
            self.weight = self.weight.tidy(100)

    # ------------------------------------------------------------------ expressions
    def ev(self, e: A.Expr, st: _State):
        if isinstance(e, A.Num):
            return Fraction(e.value)
        if isinstance(e, A.BoolLit):
            return e.value
        if isinstance(e, A.Var):
            if e.name not in st.env:
                raise ReplayError(f"line {_line(e)}: '{e.name}' is read before it is assigned on every branch")
            return st.env[e.name]
        if isinstance(e, A.Index):
            arr, i = self.ev(e.base, st), self.ev(e.index, st)
            if not _is_num(i) or Fraction(i).denominator != 1:
                raise ReplayError(f"line {_line(e)}: an array index must be a fixed integer")
            if not isinstance(arr, dict) or int(i) not in arr:
                raise ReplayError(f"line {_line(e)}: array element {int(i)} is not defined")
            return arr[int(i)]
        if isinstance(e, A.Unary):
            v = self.ev(e.operand, st)
            if e.op == "-" and (_is_num(v) or (_is_sym(v) and z3.is_arith(v))):
                return -v
            if e.op == "!" and (isinstance(v, bool) or (_is_sym(v) and z3.is_bool(v))):
                return (not v) if isinstance(v, bool) else z3.Not(v)
            raise ReplayError(f"line {_line(e)}: '{e.op}' does not apply here")
        if isinstance(e, A.Binary):
            return self.binary(e, self.ev(e.left, st), self.ev(e.right, st))
        if isinstance(e, A.Cond):
            c = self.ev(e.cond, st)
            if c is True or c is False:
                return self.ev(e.then if c else e.other, st)
            return _ite(c, self.ev(e.then, st), self.ev(e.other, st))
        if isinstance(e, A.TupleExpr):
            return tuple(self.ev(x, st) for x in e.items)
        if isinstance(e, A.Call):
            return self.call(e, st)
        raise ReplayError(f"line {_line(e)}: expression not supported")

    def binary(self, e: A.Binary, a, b):
        op = e.op
        if op in ("&&", "||", "==>", "<==>"):
            if not (_boolish(a) and _boolish(b)):
                raise ReplayError(f"line {_line(e)}: '{op}' needs Boolean operands")
            if op == "&&":
                return _and(a, b)
            if op == "||":
                return _not(_and(_not(a), _not(b)))
            if op == "==>":
                return _not(_and(a, _not(b)))
            return _iff(a, b)
        if op in ("==", "!=") and isinstance(a, tuple) and isinstance(b, tuple):
            r: object = len(a) == len(b)
            for x, y in zip(a, b):
                r = _and(r, self.binary(A.Binary("==", A.BoolLit(True), A.BoolLit(True)), x, y))
            return r if op == "==" else _not(r)
        if op in ("==", "!=") and _boolish(a) and _boolish(b):
            r = _iff(a, b)
            return r if op == "==" else _not(r)
        if not (_numish(a) and _numish(b)):
            raise ReplayError(f"line {_line(e)}: '{op}' needs numeric operands")
        # exact arithmetic on constants: the language's operators (lang.ops)
        if _is_num(a) and _is_num(b):
            meaning = ops.BINARY.get(op)
            if meaning is None or meaning.kind == "logic":
                raise ReplayError(f"line {_line(e)}: operator '{op}' is not supported")
            try:
                v = meaning.exact(Fraction(a), Fraction(b))
            except ops.DomainError as err:
                raise ReplayError(f"line {_line(e)}: {err} in '{op}'") from None
            return v if isinstance(v, bool) else Fraction(v)
        x, y = _arith(a), _arith(b)
        if op == "*" and not (_is_num(a) or _is_num(b)):
            raise ReplayError(f"line {_line(e)}: a product of two sampled quantities is not supported")
        if op == "/" and (not _is_num(b) or b == 0):
            raise ReplayError(f"line {_line(e)}: division only by a fixed non-zero number")
        if op in ("+", "-", "*", "/") or op in ops.COMPARISONS:
            return Z.BINARY[op](x, y)
        raise ReplayError(f"line {_line(e)}: operator '{op}' is not supported on sampled values")

    def call(self, e: A.Call, st: _State):
        f = e.func
        vals = [self.ev(a, st) for a in e.args]
        if f in ("fst", "snd"):
            if len(vals) != 1 or not isinstance(vals[0], tuple):
                raise ReplayError(f"line {_line(e)}: {f} needs a pair")
            return vals[0][0] if f == "fst" else vals[0][1]
        if f in ("abs", "min", "max"):
            if len(vals) != (1 if f == "abs" else 2) or not all(_numish(v) for v in vals):
                raise ReplayError(f"line {_line(e)}: {f} needs numbers")
            if all(_is_num(v) for v in vals):
                return ops.FUNCTIONS[f][1](*[Fraction(v) for v in vals])
            return Z.FUNCTIONS[f](*[_arith(v) for v in vals])
        if f in ("log", "exp", "sqrt"):
            if len(vals) != 1 or not _is_num(vals[0]):
                raise ReplayError(f"line {_line(e)}: {f} of a sampled value is not supported")
            r = ops.exact_fn(f, Fraction(vals[0]))
            if r is None:
                raise ReplayError(f"line {_line(e)}: {f}({vals[0]}) is not an exact rational")
            return r
        raise ReplayError(f"line {_line(e)}: '{f}' is not supported")


class _ErrSink:
    """Stands in for the executor in ``density_coeffs``: its errors become :class:`ReplayError`."""

    def err(self, msg, node):
        return ReplayError(f"line {_line(node)}: {msg}")


# ---------------------------------------------------------------------------- helpers


def _line(node) -> str:
    pos = getattr(node, "pos", None)
    return f"{pos.line}:{pos.col}" if pos is not None else "?"


def _value(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, Fraction)):
        return Fraction(v)
    if isinstance(v, float):
        return Fraction(v)
    if isinstance(v, list):
        return {i: _value(x) for i, x in enumerate(v)}
    if isinstance(v, tuple):
        return tuple(_value(x) for x in v)
    raise ReplayError(f"unsupported input value {v!r}")


def _boolish(v) -> bool:
    return isinstance(v, bool) or (_is_sym(v) and z3.is_bool(v))


def _numish(v) -> bool:
    return _is_num(v) or (_is_sym(v) and z3.is_arith(v))


def _arith(v):
    return q(v) if _is_num(v) else v


def _const_of(t) -> Optional[Fraction]:
    return fraction(z3.simplify(t))


# z3-level simplifying connectives; deliberately separate from tamp/probability/symbolic.py's own formula
# type (same shape): the checker builds z3 terms only.
def _and(a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return z3.And(a, b)


def _not(a):
    return (not a) if isinstance(a, bool) else z3.Not(a)


def _iff(a, b):
    if isinstance(a, bool) and isinstance(b, bool):
        return a == b
    return _as_z3(a) == _as_z3(b)


def _as_z3(v):
    if isinstance(v, bool):
        return z3.BoolVal(v)
    if _is_num(v):
        return q(v)
    return v


def _ite(c, a, b):
    """The value ``c ? a : b`` (structured values merge componentwise)."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple(_ite(c, x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _ite(c, a[k], b[k]) for k in a if k in b}
    if _same(a, b):
        return a
    if (_boolish(a) and _boolish(b)) or (_numish(a) and _numish(b)):
        return z3.If(c, _as_z3(a), _as_z3(b))
    raise ReplayError("values of different kinds meet after a branch on continuous samples")


def _same(a, b) -> bool:
    if _is_sym(a) or _is_sym(b):
        return _is_sym(a) and _is_sym(b) and a.eq(b)
    return type(a) is type(b) and a == b


def _merge(c, t: _State, f: _State) -> _State:
    env = {}
    for k in t.env:
        if k in f.env:
            try:
                env[k] = _ite(c, t.env[k], f.env[k])
            except ReplayError:
                continue  # unreadable after the branch: a later read is an error
    ok = t.ok if _same(t.ok, f.ok) else z3.If(c, _as_z3(t.ok), _as_z3(f.ok))
    counters = dict(t.counters)
    for k, v in f.counters.items():
        counters[k] = max(counters.get(k, 0), v)
    return _State(env, ok, counters)


def evaluate(replayer: Replayer, e: A.Expr, trace: Trace):
    """The value of ``e`` in the final state of a replayed trace (no sampling)."""
    replayer.pc = True
    return replayer.ev(e, _State(trace.env, trace.ok, {}))


def as_formula(v) -> z3.BoolRef:
    """A Boolean value (Python or z3) as a z3 formula; anything else is a :class:`ReplayError`."""
    if isinstance(v, bool):
        return z3.BoolVal(v)
    if _is_sym(v) and z3.is_bool(v):
        return v
    raise ReplayError("the event or condition of P(...) is not a Boolean")
