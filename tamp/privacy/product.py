"""Differential privacy by randomness alignment on the product of two runs.

The idea (LightDP, Zhang & Kifer POPL 2017; the couplings of Albarghouthi & Hsu POPL 2018):
run the program twice in lockstep, once on an input ``in`` and once on a neighbour ``in'``
(``neighbours R``), and pair every draw of the first run with a draw of the second, shifted by
an *alignment* ``η`` that depends only on the state before the draw (never on the draw itself).
For a Laplace draw ``x ~ lap(m, s)`` (``m``, ``m'`` the two runs' means, the same ``s`` in both)
the pairing ``x' = x + η`` is a translation, so it is injective with Jacobian 1, and the density
ratio ``p(x) / p'(x + η)`` is at most ``exp(|η - (m' - m)| / s)`` (triangle inequality): the
draw's *privacy cost*. Composing the draws of a run gives an injective, volume-preserving map
``f`` from the first run's draws to the second's (each shift depends on earlier draws only, so
the map is triangular), under which ``density(x) <= exp(cost(x)) · density'(f(x))``. If on every
run the outputs of the two runs agree and ``cost <= E``, then for every output set S,
``P[out ∈ S | in] = ∫ [out(x) ∈ S] p(x) dx <= exp(E) ∫ [out'(f(x)) ∈ S] p'(f(x)) dx <= exp(E)
P[out ∈ S | in']``: the program is E-differentially private (δ = 0, so any D >= 0 is met too).

The proof is synthesised, not annotated: every sampling statement gets one of a few alignments
(``0``, the draws agree; ``m' - m``, the noises agree, at no cost), tried in turn; the two runs are
executed symbolically in z3 (branches merged with ``If``; both runs must take the same branch,
an obligation), and every loop gets a relational invariant found by Houdini from templates —
``v == v'`` per variable, the counter's range, and the cost so far bounded by ``k·u·(i - i0)``
or ``k·u·S(i)`` (``u`` the inverse scale of a draw in the body, ``S`` the prefix sum of a ``sum``
in R) — each checked (initiation and consecution), never trusted. Loops must terminate: a ``for``
does; a ``while`` needs a counter that grows by at least 1 and is bounded by the guard.

What is proved is a list of :class:`Obligation` (z3 formulas over the two runs' inputs and
draws): scales equal and positive, branches taken alike, outputs equal, invariants inductive,
cost at most E. Each is valid exactly when z3 answers ``unsat`` for its negation; ``unknown`` is a
failure. Anything outside this fragment (Gaussian noise, conditioning on draws, tuples drawn
from sets) ends the attempt with a reason, never with a proof.

*The shear* (report-noisy-max releasing a gap: Ding, Wang, Zhang & Kifer PVLDB 2019, Thm 2). A
per-draw shift cannot read later draws, but the winner's shift must be the change of the
runner-up, which may be drawn later. For a program of one shape (:func:`shear_draw`: its only
draw ``v ~ lap(m, s)`` is a top-level statement of a top-level ``for`` loop's body, ``m`` reads
inputs and the counter only, ``s`` inputs only), proved pointwise on an int output ``o`` (for each
value k: ``o = k`` in run 1 implies ``o = k`` and every other output equal in run 2, which gives
the claim for every output set by summing over k), the pairing is: on each iteration j != k the
noises agree (``v'_j = v_j + m'_j - m_j``, cost 0); on iteration k, ``v'_k = v_k + (G' - G)`` where
G (G') is the maximum of run 1's (run 2's) draws over the iterations other than k. G and G' are
*ghosts* the engine adds (never the program's variables): updated at the draw, on iterations
other than k only, from that iteration's draw alone — so they are functions of the other noises
η_{-k}, never of η_k. Fix η_{-k}: then τ = G' - G is a constant and η_k ↦ η_k + τ - (m'_k - m_k) is a
translation (injective, Jacobian 1) whose density ratio is at most exp(|τ - (m'_k - m_k)| / s);
the other coordinates are the identity on noise. The whole map is a shear (only coordinate k
moves, by a function of the others), so it is injective and volume-preserving, and Fubini gives
P[o = k, rest ∈ S | in] <= exp(E) P[o = k, rest ∈ S | in'] once, for every η with ``o = k`` in run
1, outside a null set, the outputs agree and the cost is at most E. The product proves that by
running run 2 with its draw on iteration k a constant ``y`` (the *prophecy*: every obligation in
the loop holds for every y, so for the one chosen), and at the exit assumes ``y = W + G' - G`` (W
the ghost of run 1's draw on iteration k) and ``W != G`` — {v_k = G(η_{-k})} is a null set, since
v_k has a density and is independent of η_{-k} (this removes the ties) — and adds the cost
``|G' - G - (m'_k - m_k)| / s``. The loop invariants relating the ghosts to the program's variables
come from templates (:meth:`Product.shear_candidates`) and are checked like every other.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import z3  # type: ignore[import-untyped,unused-ignore]

from lang import ast as A
from lang.printer import print_expr
from lang.typecheck import ProgramTypes
from lang.walk import free_vars
from tamp.core.z3expr import Z3Translation, rational, sort_of, to_int, to_real

Term = Any

#: distributions drawn by a translation with a Laplace-like cost |η - (m' - m)| / s
LAPLACE = ("lap", "dlap")
#: one-sided: x >= k, cost (η - (k' - k)) / s, needs η >= k' - k
ONE_SIDED = ("exp", "dexp")
#: the draws can only agree (identity alignment), at no cost, when the parameters agree
IDENTITY = ("bern", "unif", "uniform", "step", "density")

#: alignments tried per sampling statement, in order
VALUES_AGREE, NOISE_AGREES = "values agree", "noise agrees"


@dataclass(frozen=True)
class Align:
    """The alignment of one draw of ``lap(m, s)`` (``d`` = m' - m, the means' difference):
    ``values`` (x' = x), ``noise`` (x' = x + d), ``shift`` (x' = x + d + c), ``above``
    (x' = x + d + c when the condition of the ``if`` right after the draw holds in the first run,
    else x + d: the positive answer of a sparse vector), ``above_value`` (x' = x + c there, else
    x + d: a positive answer whose gap to a threshold shifted by c is released), ``at_k`` (x' = x + d + c on the iteration
    whose counter is the output value k, else x + d: report-noisy-max, proved for each output
    value k separately), ``live`` (x' = x + d + c when the guard of the innermost loop around
    the draw holds in the first run's state before the draw, else x + d: a threshold re-drawn
    after a positive answer is paid only when another answer can follow)."""

    kind: str
    c: int = 0

    def __str__(self) -> str:
        return {
            "values": VALUES_AGREE,
            "noise": NOISE_AGREES,
            "shift": f"noise shifted by {self.c}",
            "above": f"noise shifted by {self.c} where the next test holds",
            "above_value": f"value shifted by {self.c} where the next test holds",
            "at_k": f"noise shifted by {self.c} on the iteration that is the output",
            "live": f"noise shifted by {self.c} while the loop's guard holds",
            "shear": "the output iteration's value shifted by the change of the others' maximum (shear)",
        }[self.kind]

    def shift_text(self, m: str) -> str:
        d = f"{m}' - {m}"
        return {
            "values": "0",
            "noise": d,
            "shift": f"{d} + {self.c}",
            "above": f"next test ? {d} + {self.c} : {d}",
            "above_value": f"next test ? {self.c} : {d}",
            "at_k": f"counter == k ? {d} + {self.c} : {d}",
            "live": f"loop guard ? {d} + {self.c} : {d}",
            "shear": f"counter == k ? {shear_shift('v')} : {d}",
        }[self.kind]


VALUES = Align("values")

#: the shear's ghosts (the module doc, *the shear*):
#: the maximum of the draw's values over the iterations other than k, per run; whether one was
#: seen yet (the same in both runs); the first run's draw on iteration k
SHEAR_G, SHEAR_SEEN, SHEAR_W = "others_max!", "others_seen!", "winner!"


def shear_shift(v: str) -> str:
    """The shear's value shift (run 2's draw on iteration k minus run 1's) in the certificate's
    invariant language, ``v`` the draw's target."""
    return f"others_max({v}') - others_max({v})"


SOLVER_MS = 10000


class Unsupported(Exception):
    """The program is outside what the engine proves: the message says why (with a node)."""

    def __init__(self, msg: str, node: Any = None):
        super().__init__(msg)
        self.node = node


@dataclass
class Obligation:
    """One z3-checkable proof step: ``hyps`` imply ``goal`` (both z3 formulas)."""

    what: str
    pos: Optional[A.Pos]
    hyps: List[Term]
    goal: Term

    def text(self) -> str:
        at = f"line {self.pos.line}: " if self.pos is not None else ""
        return at + self.what


@dataclass
class AlignmentStep:
    """The alignment of one sampling statement and its cost (as texts, for ``-v`` and later
    certificates)."""

    pos: Optional[A.Pos]
    target: str
    dist: str
    choice: str
    shift: str
    cost: str
    #: the alignment as data (:class:`Align`'s kind and constant; ``values`` for other draws)
    kind: str = "values"
    c: int = 0


def valid(hyps: Sequence[Term], goal: Term, ms: int = SOLVER_MS) -> bool:
    """Whether ``hyps ⇒ goal`` is valid (z3 says unsat for its negation; unknown is no)."""
    s = z3.Solver()
    s.set("timeout", ms)
    s.add(*hyps)
    s.add(z3.Not(goal))
    return bool(s.check() == z3.unsat)


def valid_each(
    hyps: Sequence[Term], goals: Sequence[Term], ms: int = SOLVER_MS, until: Optional[List[float]] = None
) -> List[bool]:
    """Which goals ``hyps`` imply (Houdini's filter), with one solver: the hypotheses are
    asserted once; while the conjunction of the goals still standing is not proved, a model of
    the hypotheses that falsifies it drops every goal false in that model (a model of ``hyps``
    where g is false shows that g does not follow). When z3 answers ``unknown``, or a model drops
    nothing, the goals left are split in two halves, each filtered the same way, down to single
    goals (``unknown`` of one goal is no). A goal is kept only when a conjunction containing it
    is proved to follow from ``hyps`` (unsat), so exactly when :func:`valid` could prove it.
    ``until``: a clock (see :meth:`Product.tick`); no check runs past it, and one cut short by it
    raises :class:`Interrupted` instead of counting as ``unknown``."""
    if not goals:
        return []
    s = z3.Solver()
    s.add(*hyps)

    def check() -> Any:
        left = float("inf") if until is None else until[0] - time.monotonic()
        if left <= 0:
            raise Interrupted()
        s.set("timeout", int(min(ms, left * 1000 + 1)))
        r = s.check()
        if r == z3.unknown and until is not None and time.monotonic() >= until[0]:
            raise Interrupted()
        return r

    def keep(left: List[int]) -> List[int]:
        while left:
            s.push()
            s.add(z3.Not(z3.And(*[goals[i] for i in left])))
            try:
                r = check()
                m = s.model() if r == z3.sat else None
            finally:
                s.pop()
            if r == z3.unsat:
                return left
            drop = set()
            if m is not None:
                drop = {i for i in left if z3.is_false(m.eval(goals[i], model_completion=True))}
            if not drop:  # unknown, or a model that decides none of them: halves
                if len(left) == 1:
                    return []
                half = len(left) // 2
                return keep(left[:half]) + keep(left[half:])
            left = [i for i in left if i not in drop]
        return left

    kept = set(keep(list(range(len(goals)))))
    return [i in kept for i in range(len(goals))]


class _Translation(Z3Translation):
    """The z3 translation with every non-literal ``sum`` as an uninterpreted prefix-sum
    function ``S(hi)`` per (variable, body, lower end), whose recurrence the engine instantiates
    where a loop needs it."""

    def __init__(self) -> None:
        super().__init__(Unsupported, "the privacy engine")
        self.sums: Dict[Tuple[str, A.Expr, str], Tuple[Term, A.Sum, Term, Dict[str, Term]]] = {}

    def opaque_sum(self, e: A.Sum, lo: Term, hi: Term) -> Term:
        # one function per sum *and* per meaning of its free variables (q in run 1 is not q')
        free = tuple(sorted((v, str(self.env[v])) for v in set(free_vars(e.body)) - {e.var} if v in self.env))
        key = (e.var, e.body, str(lo) + repr(free))
        if key not in self.sums:
            f = z3.Function(f"sum!{len(self.sums)}", z3.IntSort(), z3.RealSort())
            self.sums[key] = (f, e, lo, dict(self.env))
        return self.sums[key][0](hi)

    def sum_axioms(self, at: Term) -> List[Term]:
        """``S(lo) = 0`` and ``S(at + 1) = S(at) + body(at)`` (for ``at >= lo``), per sum."""
        out = []
        for f, e, lo, env in list(self.sums.values()):
            inner = dict(env)
            inner[e.var] = at
            body = to_real(self.translate(e.body, inner))
            out.append(f(lo) == 0)
            out.append(z3.Implies(at >= lo, f(at + 1) == f(at) + body))
        return out


@dataclass
class _State:
    """Both runs' variables, the cost so far and the path condition."""

    env1: Dict[str, Term]
    env2: Dict[str, Term]
    cost: Term
    pc: List[Term]

    def copy(self) -> "_State":
        return _State(dict(self.env1), dict(self.env2), self.cost, list(self.pc))


@dataclass
class Attempt:
    """The outcome of one choice of alignments."""

    ok: bool
    failed: Optional[Obligation] = None
    obligations: List[Obligation] = field(default_factory=list)
    steps: List[AlignmentStep] = field(default_factory=list)
    cost: Optional[Term] = None
    final: Optional[_State] = None
    invariants: List[str] = field(default_factory=list)


class Product:
    """Symbolic execution of the two runs of one program under one choice of alignments."""

    def __init__(
        self,
        prog: A.Program,
        types: ProgramTypes,
        choices: Dict[int, Align],
        point: Optional[str] = None,
        case: Optional[A.Expr] = None,
    ):
        self.prog, self.types, self.choices = prog, types, choices
        #: one disjunct of ``neighbours`` (a case of the proof), assumed instead of the whole
        #: relation; which inputs are secret is still read from the whole relation
        self.case = case
        #: a clock: once ``time.monotonic()`` passes ``until[0]`` the attempt stops (:class:`Interrupted`)
        self.until: List[float] = [float("inf")]
        #: pointwise mode: the output proved value by value, k its symbolic value
        self.point = point
        self.k: Optional[Term] = z3.Const("k!out", sort_of(types.locals[point])) if point is not None else None
        self.follow = following_tests(prog)
        #: the draw aligned by the shear rule (at most one: :func:`shear_draw`), and run 2's value
        #: of it on iteration k, a constant fixed at the exit (the prophecy, see the module doc, *the shear*)
        self.shear: Optional[A.Sample] = next(
            (n for n in A.walk(prog.body) if isinstance(n, A.Sample) and choices.get(id(n), VALUES).kind == "shear"),
            None,
        )
        self.y = z3.Real("winner'!shear")
        #: (m, s) of the shear draw and its loop counter, read at the exit
        self.shear_at: Optional[Tuple[A.Expr, A.Expr, str]] = None
        self.loop_vars: List[str] = []
        self.guards: List[A.Expr] = []  # the guards of the loops around the statement executed
        self.tr = _Translation()
        self.fresh_count = 0
        self.obligations: List[Obligation] = []
        self.steps: List[AlignmentStep] = []
        self.invariants: List[str] = []
        self.collect = True  # obligations are kept (off while Houdini searches an invariant)
        self.base: List[Term] = []  # requires (both runs), neighbours, axioms
        self.inputs1: Dict[str, Term] = {}
        self.inputs2: Dict[str, Term] = {}
        self.counters: List[Term] = []
        self.exit_counters: List[Term] = []
        self.recorded: Set[int] = set()
        self.witnesses: List[Term] = []
        self.loop_bounds: List[Tuple[str, Term, str]] = []  # a while guard's `x < e` conjuncts
        #: per loop (its position): the invariants proved, as expressions of the certificate's
        #: invariant language (``x'`` run 2, ``cost()``, ``entry(e)``, ``witness(n)``, ``out_k()``)
        self.loop_invariants: Dict[Tuple[int, int], List[str]] = {}

    # ---------------------------------------------------------------- set-up
    def fresh(self, name: str, sort: Term) -> Term:
        self.fresh_count += 1
        return z3.Const(f"{name}!{self.fresh_count}", sort)

    def start(self) -> _State:
        secret = {b for n in set(free_vars(self.prog.neighbours or A.BoolLit(True))) if (b := A.unprimed(n))}
        for p in self.prog.params:
            t1 = z3.Const(p.name, sort_of(p.type))
            self.inputs1[p.name] = t1
            self.inputs2[p.name] = z3.Const(A.primed(p.name), sort_of(p.type)) if p.name in secret else t1
        env_r = dict(self.inputs1)
        env_r.update({A.primed(k): v for k, v in self.inputs2.items()})
        for c in self.prog.requires:
            self.base.append(self.tr.translate(c, self.inputs1))
            self.base.append(self.tr.translate(c, self.inputs2))
        rel = self.case if self.case is not None else self.prog.neighbours
        if rel is not None:
            for c in _conjuncts(rel):
                if isinstance(c, A.Quant) and c.kind == "exists":
                    # ∃w. P(w) as a hypothesis is P(w) for a fresh w (it stands for every w):
                    # the witness (the answer that moves) can then be named by invariants
                    w = self.fresh(f"{c.var}!witness", z3.IntSort())
                    self.witnesses.append(w)
                    lo, hi = to_int(self.tr.translate(c.lo, env_r)), to_int(self.tr.translate(c.hi, env_r))
                    inner = dict(env_r)
                    inner[c.var] = w
                    self.base.append(lo <= w)
                    self.base.append(w <= hi if c.inclusive else w < hi)
                    self.base.append(self.tr.translate(c.body, inner))
                else:
                    self.base.append(self.tr.translate(c, env_r))
        env1, env2 = dict(self.inputs1), dict(self.inputs2)
        for name, t in self.types.locals.items():
            v = self.fresh(name + "!init", sort_of(t))  # the same unknown start in both runs
            env1[name] = env2[name] = v
        for n in A.walk(self.prog.body):
            if isinstance(n, A.For) and n.var not in env1:
                env1[n.var] = env2[n.var] = self.fresh(n.var + "!init", z3.IntSort())
        if self.shear is not None:  # the ghosts start before the (only) loop: none seen yet
            env1[SHEAR_G] = env2[SHEAR_G] = self.fresh("others_max!init", z3.RealSort())
            env1[SHEAR_SEEN] = env2[SHEAR_SEEN] = z3.BoolVal(False)
            env1[SHEAR_W] = env2[SHEAR_W] = self.fresh("winner!init", z3.RealSort())
        return _State(env1, env2, z3.RealVal(0), [])

    def hyps(self, st: _State) -> List[Term]:
        return self.base + [a for c in self.counters for a in self.tr.sum_axioms(c)] + st.pc

    def valid(self, hyps: Sequence[Term], goal: Term) -> bool:
        """:func:`valid`, cut short by the clock (then :class:`Interrupted`, not a failure)."""
        left = self.until[0] - time.monotonic()
        if left <= 0:
            raise Interrupted()
        s = z3.Solver()
        s.set("timeout", int(min(SOLVER_MS, left * 1000 + 1)))
        s.add(*hyps)
        s.add(z3.Not(goal))
        r = s.check()
        if r == z3.unknown and time.monotonic() >= self.until[0]:
            raise Interrupted()
        return bool(r == z3.unsat)

    def tick(self) -> None:
        """Stop the attempt when its time is up (it is tried again later, from the start)."""
        if time.monotonic() > self.until[0]:
            raise Interrupted()

    def oblige(self, st: _State, goal: Term, what: str, node: Any) -> None:
        self.tick()
        ob = Obligation(what, getattr(node, "pos", None), self.hyps(st), goal)
        if self.collect:
            self.obligations.append(ob)
        if not self.valid(ob.hyps, ob.goal):
            raise _Failed(ob)

    def oblige_all(self, st: _State, goals: Sequence[Tuple[Term, str]], node: Any) -> None:
        """:meth:`oblige` for each goal, under the same hypotheses: one solver run for their
        conjunction (valid exactly when each goal is); only when it fails is each checked alone,
        to name the first that fails."""
        self.tick()
        hyps = self.hyps(st)
        obs = [Obligation(what, getattr(node, "pos", None), hyps, g) for g, what in goals]
        if self.collect:
            self.obligations += obs
        if obs and self.valid(hyps, z3.And(*[ob.goal for ob in obs])):
            return
        for ob in obs:
            if not self.valid(ob.hyps, ob.goal):
                raise _Failed(ob)

    def oblige_final(self, hyps: List[Term], goal: Term, what: str, node: Any) -> None:
        ob = Obligation(what, getattr(node, "pos", None), list(hyps), goal)
        self.obligations.append(ob)
        if not self.valid(ob.hyps, ob.goal):
            raise _Failed(ob)

    def tr1(self, e: A.Expr, st: _State) -> Term:
        return self.tr.translate(e, st.env1)

    def tr2(self, e: A.Expr, st: _State) -> Term:
        return self.tr.translate(e, st.env2)

    # ---------------------------------------------------------------- statements
    def block(self, b: A.Block, st: _State) -> _State:
        for s in b.stmts:
            st = self.stmt(s, st)
        return st

    def stmt(self, s: A.Stmt, st: _State) -> _State:
        if isinstance(s, A.Block):
            return self.block(s, st)
        if isinstance(s, (A.Skip, A.VarDecl)):
            return st
        if isinstance(s, A.Assign):
            return self.assign(s, st)
        if isinstance(s, A.Sample):
            return self.sample(s, st)
        if isinstance(s, A.If):
            return self.if_(s, st)
        if isinstance(s, A.For):
            return self.for_(s, st)
        if isinstance(s, A.While):
            return self.while_(s, st)
        if isinstance(s, A.Assume):
            if not set(free_vars(s.cond)) <= set(self.types.params):
                raise Unsupported("conditioning on drawn values (assume over locals) is not supported", s)
            c1, c2 = self.tr1(s.cond, st), self.tr2(s.cond, st)
            self.oblige(st, c1 == c2, "the assume holds in both runs or in neither", s)
            st.pc.append(c1)
            return st
        raise Unsupported(f"the statement {type(s).__name__} is not supported", s)

    def write(self, t: A.Expr, v1: Term, v2: Term, st: _State) -> None:
        name = A.target_name(t)
        if isinstance(t, A.Index):
            i1, i2 = to_int(self.tr1(t.index, st)), to_int(self.tr2(t.index, st))
            st.env1[name] = z3.Store(st.env1[name], i1, self._cast(v1, st.env1[name].range()))
            st.env2[name] = z3.Store(st.env2[name], i2, self._cast(v2, st.env2[name].range()))
        else:
            st.env1[name] = self._cast(v1, st.env1[name].sort())
            st.env2[name] = self._cast(v2, st.env2[name].sort())

    @staticmethod
    def _cast(v: Term, sort: Term) -> Term:
        if sort == z3.RealSort() and v.sort() == z3.IntSort():
            return z3.ToReal(v)
        return v

    def assign(self, s: A.Assign, st: _State) -> _State:
        if len(s.targets) == 1:
            self.write(s.targets[0], self.tr1(s.value, st), self.tr2(s.value, st), st)
            return st
        if not isinstance(s.value, A.TupleExpr):
            raise Unsupported("a tuple assignment needs a tuple (e1, e2) on the right", s)
        vals = [(self.tr1(v, st), self.tr2(v, st)) for v in s.value.items]
        for t, (v1, v2) in zip(s.targets, vals):
            self.write(t, v1, v2, st)
        return st

    def sample(self, s: A.Sample, st: _State) -> _State:
        d = s.dist
        if len(s.targets) != 1:
            raise Unsupported("drawing a tuple is not supported by the privacy engine", s)
        tgt = s.targets[0]
        sort = st.env1[A.target_name(tgt)].range() if isinstance(tgt, A.Index) else st.env1[A.target_name(tgt)].sort()
        if d.func in LAPLACE or d.func in ONE_SIDED:
            m, scale = d.args
            m1, m2 = to_real(self.tr1(m, st)), to_real(self.tr2(m, st))
            s1, s2 = to_real(self.tr1(scale, st)), to_real(self.tr2(scale, st))
            self.oblige(st, z3.And(s1 == s2, s1 > 0), f"the scale of {d.func} is positive and the same in both runs", d)
            al = self.choices.get(id(s), VALUES)
            if al.kind == "shear":
                return self.shear_sample(s, st, m1, m2)
            x = self.fresh(A.target_name(tgt) + "!draw", z3.IntSort() if d.func in ("dlap", "dexp") else z3.RealSort())
            eta = self.shift(al, s, x, m2 - m1, st)
            if al.kind in ("above", "above_value"):  # x ↦ x + η(x) must be one-to-one (it is a translation per piece)
                y = self.fresh("other!draw", x.sort())
                self.oblige(
                    st,
                    z3.Implies(to_real(x) + eta == to_real(y) + self.shift(al, s, y, m2 - m1, st), x == y),
                    "the alignment of the draw is one-to-one",
                    s,
                )
            if x.sort() == z3.IntSort():  # a discrete draw moves by whole steps only
                self.oblige(st, z3.IsInt(eta), f"the shift of the {d.func} draw is an integer", d)
            if d.func in LAPLACE:
                cost = z3.If(eta - (m2 - m1) >= 0, eta - (m2 - m1), (m2 - m1) - eta) / s1
            else:
                self.oblige(st, eta >= m2 - m1, "the shifted draw stays in the support", d)
                cost = (eta - (m2 - m1)) / s1
            if d.func in ONE_SIDED:
                st.pc.append(to_real(x) >= m1)
            x2 = x + (z3.ToInt(eta) if x.sort() == z3.IntSort() else eta)  # exact: IsInt(eta) is proved
            self.record(
                s,
                AlignmentStep(
                    s.pos,
                    _text(tgt),
                    print_expr(d),
                    str(al),
                    al.shift_text(print_expr(m)),
                    f"|shift - ({print_expr(m)}' - {print_expr(m)})| / ({print_expr(scale)})",
                    al.kind,
                    al.c,
                ),
            )
            st.cost = st.cost + cost
            self.write(tgt, x, x2, st)
            return st
        if d.func in IDENTITY:
            if d.func == "density":
                if (set(free_vars(d.args[2])) - {"_"}) - (set(self.types.params) - self._secret()):
                    raise Unsupported("a density over secret inputs or locals is not supported", d)
                args: Sequence[A.Expr] = d.args[:2]
            else:
                args = _plain(d.args)
            for a in args:
                self.oblige(st, self.tr1(a, st) == self.tr2(a, st), f"the parameters of {d.func} agree in both runs", a)
            x = self.fresh(A.target_name(tgt) + "!draw", sort)
            self.record(s, AlignmentStep(s.pos, _text(tgt), print_expr(d), VALUES_AGREE, "0", "0"))
            self.write(tgt, x, x, st)
            return st
        raise Unsupported(f"{d.func}(…) noise is not supported by the privacy engine (pure ε only)", d)

    def shear_sample(self, s: A.Sample, st: _State, m1: Term, m2: Term) -> _State:
        """The shear draw (see the module doc, *the shear*): on iterations other than k the noises agree (cost
        0); on iteration k run 2 draws the prophecy ``y``, paid at the exit; the ghosts follow."""
        d = s.dist
        if self.k is None or self.k.sort() != z3.IntSort() or not self.loop_vars or shear_draw(self.prog) is not s:
            raise Unsupported("the shear needs a pointwise proof and the program's one draw in a for loop", s)
        name = A.target_name(s.targets[0])
        var = self.loop_vars[-1]
        self.shear_at = (d.args[0], d.args[1], var)
        at = to_int(st.env1[var]) == self.k
        x = self.fresh(name + "!draw", z3.RealSort())
        x2 = z3.If(at, self.y, x + (m2 - m1))
        self.record(
            s,
            AlignmentStep(
                s.pos,
                name,
                print_expr(d),
                str(Align("shear", 1)),
                f"{var} == k ? {shear_shift(name)} : {print_expr(d.args[0])}' - {print_expr(d.args[0])}",
                f"|shift - ({print_expr(d.args[0])}' - {print_expr(d.args[0])})| / ({print_expr(d.args[1])})",
                "shear",
                1,
            ),
        )
        seen = st.env1[SHEAR_SEEN]
        for env, v in ((st.env1, x), (st.env2, x + (m2 - m1))):  # never the draw of iteration k
            g = env[SHEAR_G]
            env[SHEAR_G] = z3.If(at, g, z3.If(seen, z3.If(v > g, v, g), v))
            env[SHEAR_W] = z3.If(at, x, env[SHEAR_W])
            env[SHEAR_SEEN] = z3.Or(seen, z3.Not(at))
        self.write(s.targets[0], x, x2, st)
        return st

    def shear_exit(self, st: _State) -> Tuple[List[Term], Term]:
        """The exit's hypotheses of the shear (the prophecy ``y = W + G' - G``, and ``W != G``:
        a continuous draw equals a value fixed by the other draws only on a null set) and the
        shear draw's cost ``|G' - G - (m' - m)| / s`` with m, s at iteration k."""
        assert self.shear_at is not None and self.k is not None
        m, sc, var = self.shear_at
        g1, g2, w = to_real(st.env1[SHEAR_G]), to_real(st.env2[SHEAR_G]), to_real(st.env1[SHEAR_W])
        at1, at2 = dict(self.inputs1), dict(self.inputs2)
        at1[var] = at2[var] = self.k
        dk = to_real(self.tr.translate(m, at2)) - to_real(self.tr.translate(m, at1))
        scale = to_real(self.tr.translate(sc, at1))
        return [self.y == w + (g2 - g1), w != g1], _abs(g2 - g1 - dk) / scale

    def shift(self, al: Align, s: A.Sample, x: Term, d: Term, st: _State) -> Term:
        """η for the first run's draw ``x`` under alignment ``al`` (``d`` = m' - m)."""
        if al.kind == "values":
            return z3.RealVal(0)
        if al.kind == "noise":
            return d
        if al.kind == "shift":
            return d + al.c
        if al.kind in ("above", "above_value"):
            test = self.follow.get(id(s))
            if test is None:
                raise Unsupported("no test follows the draw", s)
            env = dict(st.env1)
            name = A.target_name(s.targets[0])
            env[name] = self._cast(x, st.env1[name].sort())
            on = d + al.c if al.kind == "above" else z3.RealVal(al.c)
            return z3.If(self.tr.translate(test, env), on, d)
        if al.kind == "live":
            if not self.guards:
                raise Unsupported("this alignment needs a draw in a loop", s)
            return z3.If(self.tr1(self.guards[-1], st), d + al.c, d)
        if al.kind == "at_k":
            if self.k is None or self.k.sort() != z3.IntSort() or not self.loop_vars:
                raise Unsupported("this alignment needs a draw in a for loop and one discrete output", s)
            return z3.If(to_int(st.env1[self.loop_vars[-1]]) == self.k, d + al.c, d)
        raise AssertionError(al.kind)  # pragma: no cover

    def record(self, s: A.Sample, step: AlignmentStep) -> None:
        """Keep the alignment of ``s`` once (a loop body is executed several times)."""
        if id(s) not in self.recorded:
            self.recorded.add(id(s))
            self.steps.append(step)

    def _secret(self) -> Set[str]:
        return {b for n in set(free_vars(self.prog.neighbours or A.BoolLit(True))) if (b := A.unprimed(n))}

    def if_(self, s: A.If, st: _State) -> _State:
        c1, c2 = self.tr1(s.cond, st), self.tr2(s.cond, st)
        if not A.contains(s, (A.Sample, A.While, A.For, A.Assume)):
            # no draw, loop or assume inside: each run may take its own branch (its state is
            # its own branch's, whatever the other run does)
            a = self.block(s.then, st.copy())
            b = self.block(s.other, st.copy()) if s.other is not None else st.copy()
            env1 = {k: (v if v.eq(b.env1[k]) else z3.If(c1, v, b.env1[k])) for k, v in a.env1.items()}
            env2 = {k: (v if v.eq(b.env2[k]) else z3.If(c2, v, b.env2[k])) for k, v in a.env2.items()}
            return _State(env1, env2, st.cost, list(st.pc))
        self.oblige(st, c1 == c2, "both runs take the same branch", s.cond)
        a = st.copy()
        a.pc.append(c1)
        a = self.block(s.then, a)
        b = st.copy()
        b.pc.append(z3.Not(c1))
        if s.other is not None:
            b = self.block(s.other, b)
        return self.merge(c1, a, b, st.pc)

    @staticmethod
    def merge(c: Term, a: _State, b: _State, pc: List[Term]) -> _State:
        env1 = {k: (v if v.eq(b.env1[k]) else z3.If(c, v, b.env1[k])) for k, v in a.env1.items()}
        env2 = {k: (v if v.eq(b.env2[k]) else z3.If(c, v, b.env2[k])) for k, v in a.env2.items()}
        extra = [z3.If(c, z3.And(*a.pc[len(pc) + 1 :]), z3.And(*b.pc[len(pc) + 1 :]))]
        return _State(env1, env2, z3.If(c, a.cost, b.cost), list(pc) + extra)

    # ---------------------------------------------------------------- loops
    def for_(self, s: A.For, st: _State) -> _State:
        lo1, hi1 = to_int(self.tr1(s.lo, st)), to_int(self.tr1(s.hi, st))
        lo2, hi2 = to_int(self.tr2(s.lo, st)), to_int(self.tr2(s.hi, st))
        self.oblige(st, z3.And(lo1 == lo2, hi1 == hi2), "both runs loop over the same range", s)
        i = A.Var(s.var)
        st.env1[s.var], st.env2[s.var] = lo1, lo2
        op = "<=" if s.inclusive else "<"
        guard = A.Binary(op, i, s.hi)
        step = A.Assign((A.Var(s.var),), A.Binary("+", i, A.Num(Fraction(1), True)))
        body = A.Block(s.body.stmts + (step,), pos=s.body.pos)
        top = z3.If(lo1 <= hi1, hi1 + 1 if s.inclusive else hi1, lo1)
        self.loop_vars.append(s.var)
        try:
            lo, hi = f"({print_expr(s.lo)})", f"({print_expr(s.hi)})"
            top_text = f"entry({lo} <= {hi} ? {hi}{' + 1' if s.inclusive else ''} : {lo})"
            return self.loop(s, guard, body, st, s.var, lo1, top, top_text)
        finally:
            self.loop_vars.pop()

    def while_(self, s: A.While, st: _State) -> _State:
        g = s.cond
        written = _assigned(s.body)
        bounds = [
            c
            for c in _conjuncts(g)
            if isinstance(c, A.Binary)
            and c.op in ("<", "<=")
            and isinstance(c.left, A.Var)
            and not (set(free_vars(c.right)) & written)
            and st.env1[c.left.name].sort() == z3.IntSort()
        ]
        if not bounds:
            raise Unsupported(
                "a while loop needs a conjunct `i < e` or `i <= e` in its guard, i an int counter and e not "
                "written in the loop (for termination)",
                s,
            )
        # the first such conjunct is the counter (the loop ends at the latest when it fails)
        c = bounds[0]
        assert isinstance(c, A.Binary) and isinstance(c.left, A.Var)
        var = c.left.name
        i0 = to_int(st.env1[var])
        hi = to_int(self.tr1(c.right, st))
        top = z3.If(i0 <= hi, hi + 1 if c.op == "<=" else hi, i0)
        self.loop_bounds = [
            (b.left.name, self.tr1(b.right, st), print_expr(b.right)) for b in bounds if isinstance(b.left, A.Var)
        ]
        h = f"({print_expr(c.right)})"
        top_text = f"entry({var} <= {h} ? {h}{' + 1' if c.op == '<=' else ''} : {var})"
        return self.loop(s, g, s.body, st, var, i0, top, top_text)

    def loop(
        self, s: Any, guard: A.Expr, body: A.Block, st: _State, var: str, i0: Term, top: Term, top_text: str
    ) -> _State:
        self.guards.append(guard)  # read by the alignment 'live' of a draw in the body
        try:
            return self._loop(s, guard, body, st, var, i0, top, top_text)
        finally:
            self.guards.pop()

    def _loop(
        self, s: Any, guard: A.Expr, body: A.Block, st: _State, var: str, i0: Term, top: Term, top_text: str
    ) -> _State:
        modified = sorted(_assigned(body) | {var})
        shear = self.shear is not None and any(n is self.shear for n in A.walk(body))
        moved = modified + ([SHEAR_G, SHEAR_SEEN, SHEAR_W] if shear else [])  # the ghosts move too
        cost0 = st.cost
        units = _units(body, st, self)
        # Candidate invariants as functions of a state.
        # Candidate invariants as functions of a state, each with its text in the certificate's
        # invariant language (see :attr:`loop_invariants`).
        cands: List[Tuple[str, Any, str]] = []
        for x in modified:
            cands.append((f"{x} == {x}'", lambda t, x=x: t.env1[x] == t.env2[x], f"{x} == {x}'"))
        cands.append((f"{var} >= start", lambda t: to_int(t.env1[var]) >= i0, f"{var} >= entry({var})"))
        cands += self.relational_candidates(st, modified, var, i0)
        if shear:
            cands += self.shear_candidates(st, modified, var, i0)
        # a loop that draws nothing, or pays nothing
        cands.append(("cost <= cost0", lambda t: t.cost <= cost0, "cost() <= entry(cost())"))
        for x, bound, btext in self.loop_bounds:  # `x < e` in the guard: x <= e after an increment
            if x in modified and x != var:
                cands.append(
                    (
                        f"{x} <= bound",
                        lambda t, x=x, b=bound: to_real(t.env1[x]) <= to_real(b),
                        f"{x} <= entry({btext})",
                    )
                )
                cands.append(
                    (
                        f"{x} <= bound + 1",
                        lambda t, x=x, b=bound: to_real(t.env1[x]) <= to_real(b) + 1,
                        f"{x} <= entry({btext}) + 1",
                    )
                )
        bounds = {x: (b, t) for x, b, t in self.loop_bounds if x in modified and x != var}
        self.loop_bounds = []
        cands.append((f"{var} <= end", lambda t: to_int(t.env1[var]) <= top, f"{var} <= {top_text}"))
        ks = (Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3), Fraction(4))
        # (the coefficients k let one draw per iteration cost up to 4 units: sensitivity 2, two draws …)
        c0 = "cost() <= entry(cost()) + "
        for uname, u, utext in units:
            for k in ks:
                kk = rational(k)
                kt = f"({k})*{utext}"
                cands.append(
                    (
                        f"cost <= cost0 + {k}*{uname}*({var} - start)",
                        lambda t, kk=kk, u=u: t.cost <= cost0 + kk * u * to_real(to_int(t.env1[var]) - i0),
                        f"{c0}{kt}*({var} - entry({var}))",
                    )
                )
                for b in modified:
                    if st.env1[b].sort() == z3.IntSort() and b != var:  # charged per increment of b
                        b0 = st.env1[b]
                        cands.append(
                            (
                                f"cost <= cost0 + {k}*{uname}*({b} - {b} at entry)",
                                lambda t, kk=kk, u=u, b=b, b0=b0: t.cost <= cost0 + kk * u * to_real(t.env1[b] - b0),
                                f"{c0}{kt}*({b} - entry({b}))",
                            )
                        )
                    if b in bounds:  # the last increment of b (when b reaches its bound) paid less
                        bd, btext = bounds[b]
                        b0 = st.env1[b]
                        cands.append(
                            (
                                f"cost <= cost0 + {k}*{uname}*({b} - {b} at entry) - ({b} >= bound ? {uname} : 0)",
                                lambda t, kk=kk, u=u, b=b, b0=b0, bd=bd: (
                                    t.cost
                                    <= cost0
                                    + kk * u * to_real(t.env1[b] - b0)
                                    - z3.If(to_real(t.env1[b]) >= to_real(bd), u, 0)
                                ),
                                f"{c0}{kt}*({b} - entry({b})) - ({b} >= entry({btext}) ? {utext} : 0)",
                            )
                        )
                    if st.env1[b].sort() == z3.BoolSort():
                        cands.append(
                            (
                                f"cost <= cost0 + ({b} ? {k}*{uname} : 0)",
                                lambda t, kk=kk, u=u, b=b: t.cost <= cost0 + z3.If(t.env1[b], kk * u, 0),
                                f"{c0}({b} ? {kt} : 0)",
                            )
                        )
                for wi, w in enumerate(self.witnesses):
                    cands.append(
                        (
                            f"cost <= cost0 + ({var} > w ? {k}*{uname} : 0), w the neighbours' witness",
                            lambda t, kk=kk, u=u, w=w: t.cost <= cost0 + z3.If(to_int(t.env1[var]) > w, kk * u, 0),
                            f"{c0}({var} > witness({wi}) ? {kt} : 0)",
                        )
                    )
                if self.k is not None and self.k.sort() == z3.IntSort():
                    kv = self.k
                    cands.append(
                        (
                            f"cost <= cost0 + ({var} > k ? {k}*{uname} : 0)",
                            lambda t, kk=kk, u=u, kv=kv: t.cost <= cost0 + z3.If(to_int(t.env1[var]) > kv, kk * u, 0),
                            f"{c0}({var} > out_k() ? {kt} : 0)",
                        )
                    )
                for f, e, _lo, _env in list(self.tr.sums.values()):
                    cands.append(
                        (
                            f"cost <= cost0 + {k}*{uname}*(S({var}) - S(start)) for {print_expr(e)}",
                            lambda t, kk=kk, u=u, f=f: t.cost <= cost0 + kk * u * (f(to_int(t.env1[var])) - f(i0)),
                            f"{c0}{kt}*{_prefix(e, var)}",
                        )
                    )
                    # two levels (smart sum): what a variable x carries between the runs (a
                    # block's partial sum, paid again when the block is released) counts too
                    for x in modified:
                        if x == var or st.env1[x].sort() not in (z3.IntSort(), z3.RealSort()):
                            continue
                        cands.append(
                            (
                                f"cost + {uname}*|{x}' - {x}| <= cost0 + {k}*{uname}*(S({var}) - S(start)) "
                                f"for {print_expr(e)}",
                                lambda t, kk=kk, u=u, f=f, x=x: (
                                    t.cost + u * _abs(to_real(t.env2[x]) - to_real(t.env1[x]))
                                    <= cost0 + kk * u * (f(to_int(t.env1[var])) - f(i0))
                                ),
                                f"cost() + {utext}*abs({x}' - {x}) <= entry(cost()) + {kt}*{_prefix(e, var)}",
                            )
                        )
        # Initiation.
        hyps = self.hyps(st)
        self.tick()
        cands = [nc for nc, ok in zip(cands, valid_each(hyps, [c(st) for _, c, _ in cands], 3000, self.until)) if ok]
        # Consecution (Houdini: drop what is not preserved until the rest is).
        saved = self.collect
        while True:
            h = self.havoc(st, moved)
            self.counters.append(to_int(h.env1[var]))
            inv = [c(h) for _, c, _ in cands]
            h.pc += inv
            g1, g2 = self.tr1(guard, h), self.tr2(guard, h)
            pre = h.copy()
            self.oblige(pre, g1 == g2, "both runs leave the loop together", guard)
            h.pc.append(g1)
            entry_var = to_int(h.env1[var])
            self.collect = False
            try:
                post = self.block(body, h)
            finally:
                self.collect = saved
                self.counters.pop()
            self.counters.append(entry_var)
            self.tick()
            oks = valid_each(self.hyps(post), [c(post) for _, c, _ in cands], 3000, self.until)
            keep = [nc for nc, ok in zip(cands, oks) if ok]
            self.counters.pop()
            if len(keep) == len(cands):
                break
            cands = keep
        # The final invariant: re-run the body collecting its obligations, and termination.
        h = self.havoc(st, moved)
        h.pc += [c(h) for _, c, _ in cands]
        self.counters.append(to_int(h.env1[var]))
        self.oblige(h, self.tr1(guard, h) == self.tr2(guard, h), "both runs leave the loop together", guard)
        body_st = h.copy()
        body_st.pc.append(self.tr1(guard, h))
        before = to_int(body_st.env1[var])
        post = self.block(body, body_st)
        self.oblige(post, to_int(post.env1[var]) >= before + 1, f"the loop counter {var} grows by at least 1", s)
        self.oblige_all(post, [(c(post), f"loop invariant {n} is preserved") for n, c, _ in cands], s)
        self.counters.pop()
        if self.collect:  # shown: the tightest cost bound of each template (the others follow from it)
            shown: Dict[str, str] = {}
            if s.pos is not None:
                self.loop_invariants.setdefault((s.pos.line, s.pos.col), [x for _, _, x in cands])
            for n, _, _ in cands:
                shown.setdefault(n.split("*", 1)[1] if n.startswith("cost") and "*" in n else n, n)
            self.invariants += [f"line {s.pos.line if s.pos else '?'}: {n}" for n in shown.values()]
        h.pc.append(z3.Not(self.tr1(guard, h)))
        self.counters.append(to_int(h.env1[var]))
        self.exit_counters.append(to_int(h.env1[var]))
        self.counters.pop()
        return h

    def relational_candidates(
        self, st: _State, modified: Sequence[str], var: str, i0: Term
    ) -> List[Tuple[str, Any, str]]:
        """Invariant templates relating the runs: ``x' - x`` bounded by small constants, integer
        locals below the counter, and in pointwise mode the same guarded by the counter's
        position against the output value k (before it: ``counter <= k``; after it, when the
        first run's output is k: ``counter > k && out == k``, with ``out' == k`` too)."""
        out: List[Tuple[str, Any, str]] = []
        guards: List[Tuple[str, Any, str]] = [("", lambda t: z3.BoolVal(True), "")]
        for x, bound, btext in self.loop_bounds:  # while another answer can follow (sparse vector's count < c)
            if x in modified and x != var:
                guards.append(
                    (
                        f"{x} < bound ==> ",
                        lambda t, x=x, b=bound: to_real(t.env1[x]) < to_real(b),
                        f"{x} < entry({btext}) ==> ",
                    )
                )
        for wi, w in enumerate(self.witnesses):  # before and after the answer that moves
            guards.append((f"{var} <= w ==> ", lambda t, w=w: to_int(t.env1[var]) <= w, f"{var} <= witness({wi}) ==> "))
            guards.append((f"{var} > w ==> ", lambda t, w=w: to_int(t.env1[var]) > w, f"{var} > witness({wi}) ==> "))
        if self.k is not None and self.point is not None and self.k.sort() == z3.IntSort():
            kv, o = self.k, self.point
            guards.append((f"{var} <= k ==> ", lambda t: to_int(t.env1[var]) <= kv, f"{var} <= out_k() ==> "))
            guards.append(
                (
                    f"{var} > k && {o} == k ==> ",
                    lambda t: z3.And(to_int(t.env1[var]) > kv, t.env1[o] == kv),
                    f"{var} > out_k() && {o} == out_k() ==> ",
                )
            )
            out.append(
                (
                    f"{var} > k && {o} == k ==> {o}' == k",
                    lambda t: z3.Implies(z3.And(to_int(t.env1[var]) > kv, t.env1[o] == kv), t.env2[o] == kv),
                    f"{var} > out_k() && {o} == out_k() ==> {o}' == out_k()",
                )
            )
        for x in modified:
            if x == var or st.env1[x].sort() not in (z3.IntSort(), z3.RealSort()):
                continue
            gap0 = to_real(st.env2[x]) - to_real(st.env1[x])
            for f, e, _lo, _env in list(self.tr.sums.values()):  # |x' - x| grows by at most S's step
                out.append(
                    (
                        f"{x}' - {x} <= gap at entry + S({var}) - S(start) for {print_expr(e)}",
                        lambda t, x=x, f=f, g0=gap0: (
                            to_real(t.env2[x]) - to_real(t.env1[x]) <= g0 + f(to_int(t.env1[var])) - f(i0)
                        ),
                        f"{x}' - {x} <= entry({x}' - {x}) + {_prefix(e, var)}",
                    )
                )
                out.append(
                    (
                        f"{x}' - {x} >= gap at entry - (S({var}) - S(start)) for {print_expr(e)}",
                        lambda t, x=x, f=f, g0=gap0: (
                            to_real(t.env2[x]) - to_real(t.env1[x]) >= g0 - (f(to_int(t.env1[var])) - f(i0))
                        ),
                        f"{x}' - {x} >= entry({x}' - {x}) - {_prefix(e, var)}",
                    )
                )
            if st.env1[x].sort() == z3.IntSort():
                out.append((f"{x} <= {var}", lambda t, x=x: t.env1[x] <= to_int(t.env1[var]), f"{x} <= {var}"))
                out.append((f"{x} >= start", lambda t, x=x: t.env1[x] >= i0, f"{x} >= entry({var})"))
                out.append(
                    (
                        f"{var} > start ==> {x} < {var}",
                        lambda t, x=x: z3.Implies(to_int(t.env1[var]) > i0, t.env1[x] < to_int(t.env1[var])),
                        f"{var} > entry({var}) ==> {x} < {var}",
                    )
                )
            for gname, g, gtext in guards:
                for c in (-1, 0, 1, 2) if gname else (-1, 1, 2):
                    for op in ("<=", ">="):
                        out.append(
                            (
                                f"{gname}{x}' - {x} {op} {c}",
                                lambda t, x=x, g=g, c=c, op=op: z3.Implies(
                                    g(t),
                                    (to_real(t.env2[x]) - to_real(t.env1[x]) <= c)
                                    if op == "<="
                                    else (to_real(t.env2[x]) - to_real(t.env1[x]) >= c),
                                ),
                                f"{gtext}{x}' - {x} {op} {c}",
                            )
                        )
        return out

    def havoc(self, st: _State, modified: Sequence[str]) -> _State:
        h = st.copy()
        h.cost = self.fresh("cost", z3.RealSort())
        for x in modified:
            h.env1[x] = self.fresh(x, st.env1[x].sort())
            h.env2[x] = self.fresh(x + "'", st.env2[x].sort())
        if SHEAR_SEEN in modified:  # one flag for both runs (the iterations are the same)
            h.env2[SHEAR_SEEN] = h.env1[SHEAR_SEEN]
        return h

    def shear_candidates(self, st: _State, modified: Sequence[str], var: str, i0: Term) -> List[Tuple[str, Any, str]]:
        """The shear's invariant templates (see the module doc, *the shear*): before iteration k a variable
        may be the others' maximum (run 1, run 2); after it, where the first run's output is k, a
        variable may be the winner's draw or the others' maximum (run 1), and where run 2's draw
        on k exceeds the others' maximum, a variable may be that draw or that maximum and the
        output k (run 2); the two maxima differ by at most 1 or 2; whether one was seen is
        fixed by the counter."""
        assert self.shear is not None and self.k is not None and self.point is not None
        v = A.target_name(self.shear.targets[0])
        o, kv, y = self.point, self.k, self.y
        g1 = lambda t: to_real(t.env1[SHEAR_G])  # noqa: E731 - small readers of a state
        g2 = lambda t: to_real(t.env2[SHEAR_G])  # noqa: E731
        seen = lambda t: t.env1[SHEAR_SEEN]  # noqa: E731
        w = lambda t: to_real(t.env1[SHEAR_W])  # noqa: E731
        i = lambda t: to_int(t.env1[var])  # noqa: E731
        G1, G2, S, W, Y = f"others_max({v})", f"others_max({v}')", "others_seen()", f"winner({v})", f"winner({v}')"
        out: List[Tuple[str, Any, str]] = [
            (f"seen ==> {var} > start", lambda t: z3.Implies(seen(t), i(t) > i0), f"{S} ==> {var} > entry({var})"),
            (
                f"seen == ({var} > start + 1 || {var} == start + 1 && k != start)",
                lambda t: seen(t) == z3.Or(i(t) > i0 + 1, z3.And(i(t) == i0 + 1, kv != i0)),
                f"{S} == ({var} > entry({var}) + 1 || {var} == entry({var}) + 1 && out_k() != entry({var}))",
            ),
            (
                f"!seen ==> {var} <= start + 1",
                lambda t: z3.Implies(z3.Not(seen(t)), i(t) <= i0 + 1),
                f"!{S} ==> {var} <= entry({var}) + 1",
            ),
            (
                f"!seen ==> {var} == start || {var} == k + 1",
                lambda t: z3.Implies(z3.Not(seen(t)), z3.Or(i(t) == i0, i(t) == kv + 1)),
                f"!{S} ==> {var} == entry({var}) || {var} == out_k() + 1",
            ),
            (
                f"{var} > k && {o} == k && seen ==> W >= G",
                lambda t: z3.Implies(z3.And(i(t) > kv, t.env1[o] == kv, seen(t)), w(t) >= g1(t)),
                f"{var} > out_k() && {o} == out_k() && {S} ==> {W} >= {G1}",
            ),
            (
                f"k >= start && {var} > k && (!seen || y > G') ==> {o}' == k",
                lambda t: z3.Implies(z3.And(kv >= i0, i(t) > kv, z3.Or(z3.Not(seen(t)), y > g2(t))), t.env2[o] == kv),
                f"out_k() >= entry({var}) && {var} > out_k() && (!{S} || {Y} > {G2}) ==> {o}' == out_k()",
            ),
        ]
        for c in (1, 2):
            out.append((f"G' - G <= {c}", lambda t, c=c: g2(t) - g1(t) <= c, f"{G2} - {G1} <= {c}"))
            out.append((f"G' - G >= -{c}", lambda t, c=c: g2(t) - g1(t) >= -c, f"{G2} - {G1} >= -{c}"))
        before = lambda t: z3.And(i(t) <= kv, seen(t))  # noqa: E731
        won1 = lambda t: z3.And(i(t) > kv, t.env1[o] == kv)  # noqa: E731
        won2 = lambda t: z3.And(kv >= i0, i(t) > kv, z3.Or(z3.Not(seen(t)), y > g2(t)))  # noqa: E731
        for x in modified:
            if x == var or st.env1[x].sort() != z3.RealSort():
                continue
            x1 = lambda t, x=x: to_real(t.env1[x])  # noqa: E731
            x2 = lambda t, x=x: to_real(t.env2[x])  # noqa: E731
            out += [
                (
                    f"{var} <= k && seen ==> {x} == G",
                    lambda t, x1=x1: z3.Implies(before(t), x1(t) == g1(t)),
                    f"{var} <= out_k() && {S} ==> {x} == {G1}",
                ),
                (
                    f"{var} <= k && seen ==> {x}' == G'",
                    lambda t, x2=x2: z3.Implies(before(t), x2(t) == g2(t)),
                    f"{var} <= out_k() && {S} ==> {x}' == {G2}",
                ),
                (
                    f"{var} > k && {o} == k ==> {x} == W",
                    lambda t, x1=x1: z3.Implies(won1(t), x1(t) == w(t)),
                    f"{var} > out_k() && {o} == out_k() ==> {x} == {W}",
                ),
                (
                    f"{var} > k && {o} == k && seen ==> {x} == G",
                    lambda t, x1=x1: z3.Implies(z3.And(won1(t), seen(t)), x1(t) == g1(t)),
                    f"{var} > out_k() && {o} == out_k() && {S} ==> {x} == {G1}",
                ),
                (
                    f"{var} > k && (!seen || y > G') ==> {x}' == y",
                    lambda t, x2=x2: z3.Implies(won2(t), x2(t) == y),
                    f"out_k() >= entry({var}) && {var} > out_k() && (!{S} || {Y} > {G2}) ==> {x}' == {Y}",
                ),
                (
                    f"{var} > k && seen && y > G' ==> {x}' == G'",
                    lambda t, x2=x2: z3.Implies(z3.And(kv >= i0, i(t) > kv, seen(t), y > g2(t)), x2(t) == g2(t)),
                    f"out_k() >= entry({var}) && {var} > out_k() && {S} && {Y} > {G2} ==> {x}' == {G2}",
                ),
            ]
        return out

    # ---------------------------------------------------------------- the whole program
    def run(self) -> _State:
        self.exit_counters = []
        st = self.start()
        return self.block(self.prog.body, st)

    def final_hyps(self, st: _State) -> List[Term]:
        return self.base + [a for c in self.exit_counters for a in self.tr.sum_axioms(c)] + st.pc


class Interrupted(Exception):
    """An attempt stopped because its time slice is over (no verdict: it is tried again)."""


class _Failed(Exception):
    def __init__(self, ob: Obligation):
        super().__init__(ob.what)
        self.ob = ob


def _abs(t: Term) -> Term:
    return z3.If(t >= 0, t, -t)


def disjuncts(e: A.Expr) -> List[A.Expr]:
    """The operands of a chain of ``||`` (the expression itself otherwise): the cases of a
    neighbour relation. A claim holds for a relation exactly when it holds for each disjunct
    (ε-DP quantifies over the related pairs), so each case may have its own alignment."""
    if isinstance(e, A.Binary) and e.op == "||":
        return disjuncts(e.left) + disjuncts(e.right)
    return [e]


def _conjuncts(e: A.Expr) -> List[A.Expr]:
    """The operands of a chain of ``&&`` (the expression itself otherwise)."""
    if isinstance(e, A.Binary) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _plain(args: Sequence[A.Expr]) -> List[A.Expr]:
    """The scalar expressions inside distribution arguments (sets, lists and tuples flattened)."""
    out: List[A.Expr] = []
    for a in args:
        if isinstance(a, (A.SetLit, A.ListLit, A.TupleExpr)):
            out += _plain(a.items)
        elif isinstance(a, A.Binary) and a.op == "*" and isinstance(a.left, A.SetLit):
            out += _plain((a.left, a.right))
        else:
            out.append(a)
    return out


def _text(t: A.Expr) -> str:
    return print_expr(t)


def _assigned(b: A.Node) -> Set[str]:
    out: Set[str] = set()
    for n in A.walk(b):
        if isinstance(n, (A.Assign, A.Sample)):
            out |= {A.target_name(t) for t in n.targets}
        elif isinstance(n, A.For):
            out.add(n.var)
    return out


def _prefix(e: A.Sum, var: str) -> str:
    """``S(var) - S(start)`` for the sum ``e`` as an expression: ``e``'s body summed from the
    counter's value at the loop's entry to its value now."""
    return f"sum({e.var} in entry({var})..{var}: {print_expr(e.body)})"


def _units(body: A.Block, st: _State, prod: Product) -> List[Tuple[str, Term, str]]:
    """The inverse scales 1/s of the draws in ``body`` whose scale does not change in the loop
    (over the state at the loop's entry), and their total."""
    changed = _assigned(body)
    out: List[Tuple[str, Term, str]] = []
    for n in A.walk(body):
        if isinstance(n, A.Sample) and n.dist.func in LAPLACE + ONE_SIDED and len(n.dist.args) == 2:
            sc = n.dist.args[1]
            if set(free_vars(sc)) & changed:
                continue
            out.append((f"1/({print_expr(sc)})", 1 / to_real(prod.tr1(sc, st)), f"entry(1 / ({print_expr(sc)}))"))
    if len(out) > 1:
        total = " + ".join(t for _, _, t in out)
        out.append(("total", sum((u for _, u, _ in out), z3.RealVal(0)), f"({total})"))
    return out


def shear_draw(prog: A.Program) -> Optional[A.Sample]:
    """The draw of the shear rule when the program has its shape (module doc): its only draw is
    ``v ~ lap(m, s)``, ``v`` a plain variable, a top-level statement of the body of a ``for`` loop
    that is a top-level statement of the program (so it is drawn once per iteration, in one loop
    run once), the loop's counter not assigned in the body, ``m`` reading only inputs and the
    counter, ``s`` only inputs. Syntactic, so the checker can decide it alike."""
    draws = [n for n in A.walk(prog.body) if isinstance(n, A.Sample)]
    if len(draws) != 1:
        return None
    d = draws[0]
    params = {p.name for p in prog.params}
    for loop in prog.body.stmts:
        if not isinstance(loop, A.For) or not any(st is d for st in loop.body.stmts):
            continue
        ok = (
            d.dist.func == "lap"
            and len(d.dist.args) == 2
            and len(d.targets) == 1
            and isinstance(d.targets[0], A.Var)
            and d.targets[0].name not in params
            and loop.var not in _assigned(loop.body)
            and set(free_vars(d.dist.args[0])) <= params | {loop.var}
            and set(free_vars(d.dist.args[1])) <= params
            and not (set(free_vars(d.dist.args[0])) | set(free_vars(d.dist.args[1])))
            & (_assigned(prog.body) - {loop.var})
        )
        return d if ok else None
    return None


def following_tests(prog: A.Program) -> Dict[int, A.Expr]:
    """For each draw ``x ~ …`` directly followed by ``if (c)`` with c reading x: c."""
    out: Dict[int, A.Expr] = {}
    for b in A.walk(prog.body):
        if isinstance(b, A.Block):
            for s, nxt in zip(b.stmts, b.stmts[1:]):
                if (
                    isinstance(s, A.Sample)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0], A.Var)
                    and isinstance(nxt, A.If)
                    and s.targets[0].name in set(free_vars(nxt.cond))
                ):
                    out[id(s)] = nxt.cond
    return out


def alignment_choices(prog: A.Program, pointwise: bool = False) -> Iterator[Dict[int, Align]]:
    """Choices of alignment for the Laplace-like draws of ``prog``: per draw, values agree, noises
    agree, noise shifted by 1 or 2, and (sparse vector) shifted only where the next test holds or
    (``pointwise``, report-noisy-max) only on the output's iteration.

    The options of a draw are ordered by the part it plays (the order is only a search heuristic:
    every choice is proved or rejected by the same obligations): a *query* (a draw that the next
    ``if`` tests) tries the shifts where its test holds first, a *threshold* (a draw read by a
    query's test) tries a shift by 1 first, a draw in a ``for`` loop of a pointwise proof the shift
    on the output's iteration first. Choices are enumerated by the sum of their options' ranks
    (all first options, then one second option, …), so a proof whose every draw takes its role's
    first option is the first attempt, whatever the number of draws."""
    follow = following_tests(prog)
    in_for: Set[int] = set()
    for n in A.walk(prog.body):
        if isinstance(n, A.For):
            in_for |= {id(m) for m in A.walk(n.body) if isinstance(m, A.Sample)}
    in_loop: Set[int] = set()
    for n in A.walk(prog.body):
        if isinstance(n, (A.For, A.While)):
            in_loop |= {id(m) for m in A.walk(n.body) if isinstance(m, A.Sample)}
    draws = [n for n in A.walk(prog.body) if isinstance(n, A.Sample) and n.dist.func in LAPLACE + ONE_SIDED]
    tested: Set[str] = set()  # variables read by a query's test (thresholds)
    for d in draws:
        if id(d) in follow:
            tested |= set(free_vars(follow[id(d)])) - {A.target_name(d.targets[0])}
    options: List[List[Align]] = []
    for d in draws:
        opts = [VALUES, Align("noise"), Align("shift", 1), Align("shift", 2)]
        if id(d) in follow:
            opts = [Align("above", 1), Align("above", 2), Align("above_value", 1)] + opts
        elif len(d.targets) == 1 and A.target_name(d.targets[0]) in tested:
            opts = [Align("shift", 1), VALUES, Align("noise"), Align("shift", 2)]
            if id(d) in in_loop:  # a threshold re-drawn in the loop
                opts.insert(1, Align("live", 1))
        if pointwise and id(d) in in_for:
            opts = [Align("at_k", 1), Align("at_k", 2)] + opts
        options.append(opts)
    ranks = sorted(itertools.product(*(range(len(o)) for o in options)), key=lambda r: (sum(r), max(r, default=0)))
    for r in ranks:
        yield {id(d): options[j][i] for j, (d, i) in enumerate(zip(draws, r))}
