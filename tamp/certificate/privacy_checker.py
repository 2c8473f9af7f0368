"""Re-checking a privacy certificate: the product of two runs rebuilt, every obligation regenerated.

A proved ``private E on o…`` claim is certified by its *alignment* (per sampling statement: the
shift ``η`` pairing the first run's draw ``x`` with the second run's ``x + η``), the *loop
invariants* (relational formulas over both runs), and the cost terms. This module shares
nothing with the privacy engine's search (tamp.privacy): from the program (lang), the z3
encoding (tamp.core.z3expr) and the certificate's alignment and invariants only, it executes the
two runs symbolically itself, regenerates every obligation, and asks z3 for each (``unsat`` of
the negation; ``unknown`` or ``sat`` rejects):

* per Laplace-like draw ``x ~ lap(m, s)`` (``dlap``, ``exp``, ``dexp``; its shift by kind: ``values``
  0, ``noise`` d = m' - m, ``shift`` d + c, ``above`` / ``above_value`` d + c / c where the ``if``
  right after the draw holds, else d, ``at_k`` d + c on the output's iteration, ``live`` d + c where
  the innermost loop's guard holds before the draw, else d): the scales agree and are
  positive; a piecewise shift is one-to-one; a discrete draw moves by whole steps; a one-sided
  draw stays in its support (η >= m' - m); its cost ``|η - (m' - m)| / s`` (one-sided
  ``(η - (m' - m)) / s``) is added to the run's cost;
* per other draw: its parameters agree (the draws are equal, at no cost);
* per branch with a draw, loop or ``assume`` inside: both runs take it alike; per ``assume``: it
  holds in both runs or in neither (and reads inputs only);
* per loop: both runs range alike (``for``), each invariant holds at entry and is preserved by the
  body (consecution, the invariants and the guard assumed on a state whose written variables are
  unknown), both runs leave together, the counter grows by at least 1 (termination: a ``for``'s
  variable; a ``while``'s first guard conjunct ``i < e`` with ``e`` not written in the body);
* at exit: each output is the same in both runs (or, pointwise, ``o = k`` in the first run
  implies ``o = k`` in the second, for every ``k``), the cost is at most E, and δ >= 0.

*The shear* (kind ``shear``; tamp.privacy.product's module doc has the argument): for a program
whose only draw ``v ~ lap(m, s)`` sits directly in a top-level ``for`` loop (``m`` reading only
inputs and the counter, ``s`` only inputs — checked here on the program's syntax), proved
pointwise on an int output: the noises agree on every iteration but k; run 2's draw on k is a
free constant y; the checker's own ghosts G, G' (the draw's maximum over the iterations other
than k in run 1, run 2, updated from that iteration's draw only) and W (run 1's draw on k) are
read by the invariants as ``others_max(v)``, ``others_max(v')``, ``winner(v)``, and y as
``winner(v')``. At the exit it assumes ``y = W + shift`` with the certificate's ``shift``, which
must read only inputs, ``out_k()`` and ``others_max(v)`` / ``others_max(v')`` — functions of the
other draws, so given them the winner's noise is translated by a constant (one coordinate moves:
injective, Jacobian 1) — and ``W != G`` (a null set: v_k has a density and G does not depend on
it), adds the cost ``|shift - (m' - m)| / s`` at iteration k, and proves the point output and the
other outputs equal, and the cost at most E, on the runs whose output is k.

A proof by cases (``neighbours`` a disjunction ``R1 || R2 || …``) lists one such proof per
disjunct, in the program's order (checked against the program's own disjuncts); each is checked
as above with its disjunct assumed instead of the whole relation (the secret inputs are still those
the whole relation primes). E-DP quantifies over the related pairs, so it holds for R when it
holds for every Ri.

Why this proves E-differential privacy is the alignment argument (LightDP, Zhang & Kifer POPL
2017): each shift depends only on the state before the draw, so the pairing of all draws is an
injective, volume-preserving map f with density(x) <= exp(cost(x)) · density'(f(x)); outputs
equal and cost <= E on every run give P[out ∈ S | in] <= exp(E) · P[out ∈ S | in'].

Invariants are expressions of the language read with: ``x`` the first run's value, ``x'`` the
second's, ``cost()`` the cost so far, ``entry(e)`` the value of ``e`` when the loop was entered,
``witness(n)`` the n-th ``exists`` witness of ``neighbours``, ``out_k()`` the output value k of a
pointwise proof. A non-literal ``sum(j in a..b: body)`` is ``F(b) - F(a)`` (0 when b < a) for an
uninterpreted ``F`` per body, with ``F(t + 1) = F(t) + body(t)`` instantiated at every loop
counter: true of the real prefix sum for every t, so every proof over F holds of it.

A proof made with public inputs fixed (``tamp prove --input``) lists them in ``inputs``; the
checker then re-checks every obligation with ``requires name == value`` added for each (both runs:
the inputs are public, so the runs share them), exactly as the engine proved it. Such a proof says
nothing of other values, so it is accepted only for the claim at those values: each recorded
input must be public (never primed in ``neighbours``; fixing a secret one in both runs would prove
a weaker claim) and be given to ``check-proof --input`` with the same value. A proof without
``inputs`` is for every input satisfying ``requires``, which covers any fixed values.

A ``violated`` claim's certificate names two neighbouring inputs, an event and two probability
intervals; the checker re-checks that the inputs satisfy ``requires`` and ``neighbours``,
recomputes both probabilities with the probability engine (tamp.probability) and checks
``lower(P[event | in]) > upper(exp(E)) · upper(P[event | in']) + D`` on its own numbers (the
stated intervals must overlap the recomputed ones: two sound enclosures of one number do).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import z3

from lang import ast as A
from lang.errors import TampError
from lang.inputs import check_inputs, fix_inputs
from lang.inputs import show as show_value
from lang.parser import parse_expr
from lang.printer import print_expr
from lang.typecheck import ProgramTypes, check_program
from lang.walk import free_vars, written_vars
from tamp.core.interval import Interval
from tamp.core.z3expr import Z3Translation, rational, sort_of, to_int, to_real
from tamp.probability import probability
from tamp.probability.dists import exp_interval

from .format import MalformedCertificate, ProgramCheck, Rejected, known_keys
from .written_events import instrument

Term = Any
LAPLACE = ("lap", "dlap")
ONE_SIDED = ("exp", "dexp")
IDENTITY = ("bern", "unif", "uniform", "step", "density")
KINDS = ("values", "noise", "shift", "above", "above_value", "at_k", "live", "shear")
#: the shear's ghosts (see the module doc): the others' maximum per run, whether one was seen
#: (one flag for both runs), run 1's draw on iteration k
GHOST_G, GHOST_SEEN, GHOST_W = "others_max!", "others_seen!", "winner!"


# ---------------------------------------------------------------------------- the format


@dataclass
class Step:
    line: int
    col: int
    target: str
    dist: str
    kind: str
    c: int
    cost: str
    #: a shear's value shift (the invariant language; reads no draw of iteration k), else None
    shift: Optional[str] = None


@dataclass
class PrivCert:
    name: str
    verdict: str
    epsilon: str
    delta: Optional[str] = None
    pointwise: Optional[str] = None
    alignment: List[Step] = field(default_factory=list)
    loops: Dict[Tuple[int, int], List[str]] = field(default_factory=dict)
    counterexample: Optional[Dict[str, Any]] = None
    #: a proof by cases: one proof per disjunct of ``neighbours`` (each with ``case`` its text)
    cases: List["PrivCert"] = field(default_factory=list)
    case: Optional[str] = None
    #: the public inputs the proof fixes (name -> JSON value; empty: none)
    inputs: Dict[str, Any] = field(default_factory=dict)


def _str(d: Dict[str, Any], k: str, where: str, optional: bool = False) -> Any:
    v = d.get(k)
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise MalformedCertificate(f"{where}.{k}: expected a string")
    return v


def _int(d: Dict[str, Any], k: str, where: str) -> int:
    v = d.get(k)
    if isinstance(v, bool) or not isinstance(v, int):
        raise MalformedCertificate(f"{where}.{k}: expected an integer")
    return v


def decode_privacy(p: Any, where: str) -> PrivCert:
    """A :class:`PrivCert` from parsed JSON (shape only; nothing is trusted)."""
    known_keys(
        p,
        (
            "program",
            "verdict",
            "epsilon",
            "delta",
            "pointwise",
            "alignment",
            "loops",
            "obligations",
            "counterexample",
            "cases",
            "inputs",
        ),
        where,
    )
    verdict = _str(p, "verdict", where)
    if verdict not in ("proved", "violated"):
        raise MalformedCertificate(f'{where}.verdict: expected "proved" or "violated"')
    pc = PrivCert(_str(p, "program", where), verdict, _str(p, "epsilon", where))
    pc.delta = _str(p, "delta", where, optional=True)
    pc.pointwise = _str(p, "pointwise", where, optional=True)
    if "inputs" in p:
        fixed = p.get("inputs")
        if not isinstance(fixed, dict) or not fixed:
            raise MalformedCertificate(f"{where}.inputs: expected an object of input values")
        if verdict != "proved":
            raise MalformedCertificate(f"{where}.inputs: only a proof fixes inputs")
        pc.inputs = dict(fixed)
    if verdict == "violated":
        cx = p.get("counterexample")
        if not isinstance(cx, dict):
            raise MalformedCertificate(f"{where}.counterexample: expected an object")
        known_keys(
            cx, ("inputs", "neighbour", "event", "probability", "neighbour_probability"), f"{where}.counterexample"
        )
        pc.counterexample = cx
        return pc
    if "cases" in p:
        cases = p.get("cases")
        if not isinstance(cases, list) or len(cases) < 2:
            raise MalformedCertificate(f"{where}.cases: expected a list of at least two proofs")
        if any(k in p for k in ("alignment", "loops", "pointwise")):
            raise MalformedCertificate(f"{where}: a proof by cases has its alignments in its cases only")
        for i, c in enumerate(cases):
            w = f"{where}.cases[{i}]"
            known_keys(c, ("neighbours", "pointwise", "alignment", "loops"), w)
            sub = PrivCert(pc.name, verdict, pc.epsilon, pc.delta, _str(c, "pointwise", w, optional=True))
            sub.case = _str(c, "neighbours", w)
            _decode_proof(c, w, sub)
            pc.cases.append(sub)
        return pc
    _decode_proof(p, where, pc)
    return pc


def _decode_proof(p: Dict[str, Any], where: str, pc: PrivCert) -> None:
    """One proof's alignment and loop invariants into ``pc`` (shape only)."""
    steps = p.get("alignment")
    if not isinstance(steps, list):
        raise MalformedCertificate(f"{where}.alignment: expected a list")
    for i, s in enumerate(steps):
        w = f"{where}.alignment[{i}]"
        known_keys(s, ("line", "col", "target", "dist", "kind", "c", "cost", "shift"), w)
        kind = _str(s, "kind", w)
        if kind not in KINDS:
            raise MalformedCertificate(f"{w}.kind: expected one of {', '.join(KINDS)}")
        if ("shift" in s) != (kind == "shear"):
            raise MalformedCertificate(f"{w}.shift: exactly a shear step states its shift")
        pc.alignment.append(
            Step(
                _int(s, "line", w),
                _int(s, "col", w),
                _str(s, "target", w),
                _str(s, "dist", w),
                kind,
                _int(s, "c", w),
                _str(s, "cost", w),
                _str(s, "shift", w, optional=True),
            )
        )
    loops = p.get("loops")
    if not isinstance(loops, list):
        raise MalformedCertificate(f"{where}.loops: expected a list")
    for i, lp in enumerate(loops):
        w = f"{where}.loops[{i}]"
        known_keys(lp, ("line", "col", "invariants"), w)
        invs = lp.get("invariants")
        if not isinstance(invs, list) or not all(isinstance(x, str) for x in invs):
            raise MalformedCertificate(f"{w}.invariants: expected a list of strings")
        key = (_int(lp, "line", w), _int(lp, "col", w))
        if key in pc.loops:
            raise MalformedCertificate(f"{w}: a second entry for the loop at {key[0]}:{key[1]}")
        pc.loops[key] = list(invs)


def cost_text(kind: str, m: str, scale: str, dist: str) -> str:
    """The cost term of one draw, as the certificate states it (and the checker re-derives it)."""
    if dist in ONE_SIDED:
        return f"(shift - ({m}' - {m})) / ({scale})"
    if dist in LAPLACE:
        return f"|shift - ({m}' - {m})| / ({scale})"
    return "0"


# ---------------------------------------------------------------------------- the translation


class _Unsupported(Exception):
    pass


class _Tr(Z3Translation):
    """The z3 translation with opaque prefix sums and the invariant language's calls."""

    def __init__(self) -> None:
        super().__init__(_Unsupported, "the privacy checker")
        self.sums: Dict[Tuple[str, str, str], Tuple[Term, A.Sum, Dict[str, Term]]] = {}
        self.special: Optional[Dict[str, Any]] = None  # set while an invariant is read

    def opaque_sum(self, e: A.Sum, lo: Term, hi: Term) -> Term:
        # one F per body and per meaning of its free variables: z3's term ids (hash-consed, and
        # kept alive by the stored environment), never the terms' printed forms, which z3 elides
        free = tuple(sorted((v, self.env[v].get_id()) for v in set(free_vars(e.body)) - {e.var} if v in self.env))
        key = (e.var, print_expr(e.body), repr(free))
        if key not in self.sums:
            self.sums[key] = (z3.Function(f"prefix!{len(self.sums)}", z3.IntSort(), z3.RealSort()), e, dict(self.env))
        f = self.sums[key][0]
        return z3.If(hi >= lo, f(hi) - f(lo), z3.RealVal(0))

    def axioms(self, counters: Sequence[Term]) -> List[Term]:
        """``F(t + 1) = F(t) + body(t)`` for every sum's F at every counter t."""
        out = []
        for f, e, env in list(self.sums.values()):
            for t in counters:
                inner = dict(env)
                inner[e.var] = t
                out.append(f(t + 1) == f(t) + to_real(self.translate(e.body, inner)))
        return out

    def enter(self, node: A.Node) -> Any:
        if isinstance(node, A.Call) and self.special is not None and node.func == "entry":
            if len(node.args) != 1:
                raise _Unsupported("entry(e) takes one expression")
            sp = self.special
            self.special = dict(sp, cost=sp["entry_cost"], ghosts=sp.get("entry_ghosts"))
            try:
                return self.translate(node.args[0], sp["entry_env"])
            finally:
                self.special = sp
        return super().enter(node)

    def Call(self, e: A.Call, kids: Sequence[Term]) -> Term:
        sp = self.special
        if sp is not None:
            if e.func == "cost" and not e.args:
                return sp["cost"]
            if e.func == "out_k" and not e.args and sp["k"] is not None:
                return sp["k"]
            gh = sp.get("ghosts")
            if gh is not None and e.func in ("others_max", "winner") and len(e.args) == 1:
                a = e.args[0]
                if isinstance(a, A.Var) and a.name in (gh["v"], A.primed(gh["v"])):
                    run2 = a.name != gh["v"]
                    if e.func == "others_max":
                        return gh["g2"] if run2 else gh["g1"]
                    return gh["y"] if run2 else gh["w"]
            if gh is not None and e.func == "others_seen" and not e.args:
                return gh["seen"]
            if e.func == "witness" and len(e.args) == 1 and isinstance(e.args[0], A.Num):
                n = int(e.args[0].value)
                if 0 <= n < len(sp["witnesses"]):
                    return sp["witnesses"][n]
        return super().Call(e, kids)


# ---------------------------------------------------------------------------- the product


@dataclass
class _St:
    env1: Dict[str, Term]
    env2: Dict[str, Term]
    cost: Term
    pc: List[Term]

    def copy(self) -> "_St":
        return _St(dict(self.env1), dict(self.env2), self.cost, list(self.pc))


def _both(st: _St) -> Dict[str, Term]:
    """The invariant language's environment: ``x`` run 1, ``x'`` run 2."""
    env = dict(st.env1)
    env.update({A.primed(k): v for k, v in st.env2.items()})
    return env


def _disjuncts(e: A.Expr) -> List[A.Expr]:
    """The cases of a neighbour relation ``R1 || R2 || …`` (E-DP for R is E-DP for each Ri)."""
    if isinstance(e, A.Binary) and e.op == "||":
        return _disjuncts(e.left) + _disjuncts(e.right)
    return [e]


def _conjuncts(e: A.Expr) -> List[A.Expr]:
    if isinstance(e, A.Binary) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _flat(args: Sequence[A.Expr]) -> List[A.Expr]:
    out: List[A.Expr] = []
    for a in args:
        if isinstance(a, (A.SetLit, A.ListLit, A.TupleExpr)):
            out += _flat(a.items)
        elif isinstance(a, A.Binary) and a.op == "*" and isinstance(a.left, A.SetLit):
            out += _flat((a.left, a.right))
        else:
            out.append(a)
    return out


def _pos(n: Any) -> Tuple[int, int]:
    p = getattr(n, "pos", None)
    return (p.line, p.col) if p is not None else (0, 0)


class _Product:
    def __init__(
        self,
        prog: A.Program,
        types: ProgramTypes,
        pc: PrivCert,
        timeout_ms: int,
        deadline: Any,
        case: Optional[A.Expr] = None,
    ):
        self.prog, self.types, self.cert = prog, types, pc
        #: the disjunct of ``neighbours`` this proof assumes (``None``: the whole relation); the
        #: secret inputs are still those the whole relation primes
        self.case = case
        self.timeout_ms, self.deadline = timeout_ms, deadline
        self.tr = _Tr()
        self.n = 0
        self.count = 0
        self.base: List[Term] = []
        self.witnesses: List[Term] = []
        self.counters: List[Term] = []
        self.loop_vars: List[str] = []
        self.guards: List[A.Expr] = []  # the guards of the loops around the statement checked
        self.inputs1: Dict[str, Term] = {}
        self.k: Optional[Term] = None
        self.secret = {b for v in set(free_vars(prog.neighbours or A.BoolLit(True))) if (b := A.unprimed(v))}
        self.draws = {_pos(s): s for s in A.walk(prog.body) if isinstance(s, A.Sample)}
        self.align = {(s.line, s.col): s for s in pc.alignment}
        #: the shear (module doc): its step, its draw, run 2's draw on iteration k (the prophecy)
        self.shear = next((s for s in pc.alignment if s.kind == "shear"), None)
        self.shear_draw: Optional[A.Sample] = None
        self.shear_loop: Optional[A.For] = None
        self.y = z3.Real("winner'!shear")
        self.follow: Dict[int, A.Expr] = {}
        for blk in A.walk(prog.body):
            if isinstance(blk, A.Block):
                for s, nxt in zip(blk.stmts, blk.stmts[1:]):
                    if (
                        isinstance(s, A.Sample)
                        and len(s.targets) == 1
                        and isinstance(s.targets[0], A.Var)
                        and isinstance(nxt, A.If)
                        and s.targets[0].name in set(free_vars(nxt.cond))
                    ):
                        self.follow[id(s)] = nxt.cond

    def fresh(self, name: str, sort: Term) -> Term:
        self.n += 1
        return z3.Const(f"{name}!c{self.n}", sort)

    # ------------------------------------------------------------ obligations
    def valid(self, hyps: Sequence[Term], goal: Term, what: str, node: Any) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Rejected("time limit reached")
        s = z3.Solver()
        s.set("timeout", self.timeout_ms)
        s.add(*hyps)
        s.add(z3.Not(goal))
        r = s.check()
        self.count += 1
        if r != z3.unsat:
            line = _pos(node)[0]
            at = f"line {line}: " if line else ""
            why = "z3 found a counterexample" if r == z3.sat else "z3 answered unknown"
            raise Rejected(f"{at}cannot prove that {what} ({why})")

    def hyps(self, st: _St) -> List[Term]:
        return self.base + self.tr.axioms(self.counters) + st.pc

    def oblige(self, st: _St, goal: Term, what: str, node: Any) -> None:
        self.valid(self.hyps(st), goal, what, node)

    def t1(self, e: A.Expr, st: _St) -> Term:
        return self.tr.translate(e, st.env1)

    def t2(self, e: A.Expr, st: _St) -> Term:
        return self.tr.translate(e, st.env2)

    # ------------------------------------------------------------ start
    def start(self) -> _St:
        inputs2: Dict[str, Term] = {}
        for p in self.prog.params:
            self.inputs1[p.name] = z3.Const(p.name, sort_of(p.type))
            inputs2[p.name] = (
                z3.Const(A.primed(p.name), sort_of(p.type)) if p.name in self.secret else self.inputs1[p.name]
            )
        env_r = dict(self.inputs1)
        env_r.update({A.primed(k): v for k, v in inputs2.items()})
        self.inputs2 = inputs2
        for c in self.prog.requires:
            self.base.append(self.tr.translate(c, self.inputs1))
            self.base.append(self.tr.translate(c, inputs2))
        assert self.prog.neighbours is not None
        for c in _conjuncts(self.case if self.case is not None else self.prog.neighbours):
            if isinstance(c, A.Quant) and c.kind == "exists":  # ∃w. P(w) assumed: P(w) for a fresh w
                w = self.fresh(f"{c.var}!witness", z3.IntSort())
                self.witnesses.append(w)
                lo, hi = to_int(self.tr.translate(c.lo, env_r)), to_int(self.tr.translate(c.hi, env_r))
                inner = dict(env_r)
                inner[c.var] = w
                self.base += [lo <= w, w <= hi if c.inclusive else w < hi, self.tr.translate(c.body, inner)]
            else:
                self.base.append(self.tr.translate(c, env_r))
        env1, env2 = dict(self.inputs1), dict(inputs2)
        for name, t in self.types.locals.items():
            v = self.fresh(name + "!init", sort_of(t))  # the same unknown start in both runs
            env1[name] = env2[name] = v
        for n in A.walk(self.prog.body):
            if isinstance(n, A.For) and n.var not in env1:
                env1[n.var] = env2[n.var] = self.fresh(n.var + "!init", z3.IntSort())
        if self.shear is not None:  # the ghosts start before the (only) loop: none seen yet
            env1[GHOST_G] = env2[GHOST_G] = self.fresh("others_max!init", z3.RealSort())
            env1[GHOST_SEEN] = env2[GHOST_SEEN] = z3.BoolVal(False)
            env1[GHOST_W] = env2[GHOST_W] = self.fresh("winner!init", z3.RealSort())
        return _St(env1, env2, z3.RealVal(0), [])

    def ghosts(self, st: _St) -> Optional[Dict[str, Any]]:
        """The shear's ghosts in ``st`` for the invariant language (``others_max(v)``, ``others_max(v')``,
        ``others_seen()``, ``winner(v)``, ``winner(v')``), or None without a shear."""
        if self.shear is None or GHOST_G not in st.env1:
            return None
        return {
            "v": self.shear.target,
            "g1": st.env1[GHOST_G],
            "g2": st.env2[GHOST_G],
            "seen": st.env1[GHOST_SEEN],
            "w": st.env1[GHOST_W],
            "y": self.y,
        }

    # ------------------------------------------------------------ statements
    def block(self, b: A.Block, st: _St) -> _St:
        for s in b.stmts:
            st = self.stmt(s, st)
        return st

    def stmt(self, s: A.Stmt, st: _St) -> _St:
        if isinstance(s, A.Block):
            return self.block(s, st)
        if isinstance(s, (A.Skip, A.VarDecl)):
            return st
        if isinstance(s, A.Assign):
            if len(s.targets) == 1:
                self.write(s.targets[0], self.t1(s.value, st), self.t2(s.value, st), st)
                return st
            if not isinstance(s.value, A.TupleExpr):
                raise Rejected(f"line {_pos(s)[0]}: a tuple assignment needs a tuple on the right")
            vals = [(self.t1(v, st), self.t2(v, st)) for v in s.value.items]
            for t, (v1, v2) in zip(s.targets, vals):
                self.write(t, v1, v2, st)
            return st
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
                raise Rejected(f"line {_pos(s)[0]}: an assume over drawn values is outside the proof rules")
            c1, c2 = self.t1(s.cond, st), self.t2(s.cond, st)
            self.oblige(st, c1 == c2, "the assume holds in both runs or in neither", s)
            st.pc.append(c1)
            return st
        raise Rejected(f"line {_pos(s)[0]}: the statement {type(s).__name__} is outside the proof rules")

    @staticmethod
    def cast(v: Term, sort: Term) -> Term:
        return z3.ToReal(v) if sort == z3.RealSort() and v.sort() == z3.IntSort() else v

    def write(self, t: A.Expr, v1: Term, v2: Term, st: _St) -> None:
        name = A.target_name(t)
        if isinstance(t, A.Index):
            i1, i2 = to_int(self.t1(t.index, st)), to_int(self.t2(t.index, st))
            st.env1[name] = z3.Store(st.env1[name], i1, self.cast(v1, st.env1[name].range()))
            st.env2[name] = z3.Store(st.env2[name], i2, self.cast(v2, st.env2[name].range()))
        else:
            st.env1[name] = self.cast(v1, st.env1[name].sort())
            st.env2[name] = self.cast(v2, st.env2[name].sort())

    def sample(self, s: A.Sample, st: _St) -> _St:
        d = s.dist
        step = self.align.get(_pos(s))
        if step is None or len(s.targets) != 1:
            raise Rejected(f"line {_pos(s)[0]}: the certificate has no alignment for this draw")
        tgt = s.targets[0]
        name = A.target_name(tgt)
        sort = st.env1[name].range() if isinstance(tgt, A.Index) else st.env1[name].sort()
        if d.func in LAPLACE + ONE_SIDED and len(d.args) == 2:
            m, scale = d.args
            m1, m2 = to_real(self.t1(m, st)), to_real(self.t2(m, st))
            s1, s2 = to_real(self.t1(scale, st)), to_real(self.t2(scale, st))
            self.oblige(st, z3.And(s1 == s2, s1 > 0), f"the scale of {d.func} is positive and the same in both runs", d)
            if step.kind == "shear":
                return self.shear_sample(s, st, m1, m2)
            x = self.fresh(name + "!draw", z3.IntSort() if d.func in ("dlap", "dexp") else z3.RealSort())
            eta = self.shift(step, s, x, m2 - m1, st)
            if step.kind in ("above", "above_value"):  # x-dependent: a piecewise translation
                y = self.fresh("other!draw", x.sort())
                same = to_real(x) + eta == to_real(y) + self.shift(step, s, y, m2 - m1, st)
                self.oblige(st, z3.Implies(same, x == y), "the alignment of the draw is one-to-one", s)
            if x.sort() == z3.IntSort():
                self.oblige(st, z3.IsInt(eta), f"the shift of the {d.func} draw is an integer", d)
            if d.func in LAPLACE:
                cost = z3.If(eta - (m2 - m1) >= 0, eta - (m2 - m1), (m2 - m1) - eta) / s1
            else:
                self.oblige(st, eta >= m2 - m1, "the shifted draw stays in the support", d)
                cost = (eta - (m2 - m1)) / s1
                st.pc.append(to_real(x) >= m1)
            st.cost = st.cost + cost
            x2 = x + (z3.ToInt(eta) if x.sort() == z3.IntSort() else eta)
            self.write(tgt, x, x2, st)
            return st
        if d.func in IDENTITY:
            if step.kind != "values":
                raise Rejected(f"line {_pos(s)[0]}: a {d.func} draw can only be aligned with values agree")
            if d.func == "density":
                if (set(free_vars(d.args[2])) - {"_"}) - (set(self.types.params) - self.secret):
                    raise Rejected(f"line {_pos(s)[0]}: a density over secret inputs or locals is outside the rules")
                args: Sequence[A.Expr] = d.args[:2]
            else:
                args = _flat(d.args)
            for a in args:
                self.oblige(st, self.t1(a, st) == self.t2(a, st), f"the parameters of {d.func} agree in both runs", a)
            x = self.fresh(name + "!draw", sort)
            self.write(tgt, x, x, st)
            return st
        raise Rejected(f"line {_pos(s)[0]}: {d.func}(…) noise is outside the proof rules")

    def shear_sample(self, s: A.Sample, st: _St, m1: Term, m2: Term) -> _St:
        """The shear draw: on iterations other than k the noises agree (cost 0), on iteration k
        run 2 draws the prophecy y (paid at the exit); the ghosts read this iteration's draw only,
        and only when it is not iteration k."""
        if s is not self.shear_draw or self.k is None or not self.loop_vars:
            raise Rejected(f"line {_pos(s)[0]}: the shear needs a pointwise proof and the program's one draw")
        name = A.target_name(s.targets[0])
        at = to_int(st.env1[self.loop_vars[-1]]) == self.k
        x = self.fresh(name + "!draw", z3.RealSort())
        seen = st.env1[GHOST_SEEN]
        for env, v in ((st.env1, x), (st.env2, x + (m2 - m1))):
            g = env[GHOST_G]
            env[GHOST_G] = z3.If(at, g, z3.If(seen, z3.If(v > g, v, g), v))
            env[GHOST_W] = z3.If(at, x, env[GHOST_W])
            env[GHOST_SEEN] = z3.Or(seen, z3.Not(at))
        self.write(s.targets[0], x, z3.If(at, self.y, x + (m2 - m1)), st)
        return st

    def shift(self, step: Step, s: A.Sample, x: Term, d: Term, st: _St) -> Term:
        if step.kind == "values":
            return z3.RealVal(0)
        if step.kind == "noise":
            return d
        c = rational(step.c)
        if step.kind == "shift":
            return d + c
        if step.kind in ("above", "above_value"):
            test = self.follow.get(id(s))
            if test is None:
                raise Rejected(f"line {_pos(s)[0]}: no test follows the draw (alignment 'above')")
            env = dict(st.env1)
            name = A.target_name(s.targets[0])
            env[name] = self.cast(x, st.env1[name].sort())
            return z3.If(self.tr.translate(test, env), d + c if step.kind == "above" else c, d)
        if step.kind == "live":  # shifted while the innermost loop's guard holds (before the draw)
            if not self.guards:
                raise Rejected(f"line {_pos(s)[0]}: alignment 'live' needs a draw in a loop")
            return z3.If(self.t1(self.guards[-1], st), d + c, d)
        # at_k: shifted on the iteration whose counter is the output value k
        if self.k is None or self.k.sort() != z3.IntSort() or not self.loop_vars:
            raise Rejected(f"line {_pos(s)[0]}: alignment 'at_k' needs a pointwise proof and a draw in a for loop")
        return z3.If(to_int(st.env1[self.loop_vars[-1]]) == self.k, d + c, d)

    def if_(self, s: A.If, st: _St) -> _St:
        c1, c2 = self.t1(s.cond, st), self.t2(s.cond, st)
        if not A.contains(s, (A.Sample, A.While, A.For, A.Assume)):
            a = self.block(s.then, st.copy())
            b = self.block(s.other, st.copy()) if s.other is not None else st.copy()
            env1 = {k: (v if v.eq(b.env1[k]) else z3.If(c1, v, b.env1[k])) for k, v in a.env1.items()}
            env2 = {k: (v if v.eq(b.env2[k]) else z3.If(c2, v, b.env2[k])) for k, v in a.env2.items()}
            return _St(env1, env2, st.cost, list(st.pc))
        self.oblige(st, c1 == c2, "both runs take the same branch", s.cond)
        a = st.copy()
        a.pc.append(c1)
        a = self.block(s.then, a)
        b = st.copy()
        b.pc.append(z3.Not(c1))
        if s.other is not None:
            b = self.block(s.other, b)
        n = len(st.pc) + 1
        env1 = {k: (v if v.eq(b.env1[k]) else z3.If(c1, v, b.env1[k])) for k, v in a.env1.items()}
        env2 = {k: (v if v.eq(b.env2[k]) else z3.If(c1, v, b.env2[k])) for k, v in a.env2.items()}
        extra = z3.If(c1, z3.And(*a.pc[n:]), z3.And(*b.pc[n:]))
        return _St(env1, env2, z3.If(c1, a.cost, b.cost), list(st.pc) + [extra])

    def for_(self, s: A.For, st: _St) -> _St:
        lo1, hi1 = to_int(self.t1(s.lo, st)), to_int(self.t1(s.hi, st))
        lo2, hi2 = to_int(self.t2(s.lo, st)), to_int(self.t2(s.hi, st))
        self.oblige(st, z3.And(lo1 == lo2, hi1 == hi2), "both runs loop over the same range", s)
        st.env1[s.var], st.env2[s.var] = lo1, lo2
        i = A.Var(s.var)
        guard = A.Binary("<=" if s.inclusive else "<", i, s.hi)
        step = A.Assign((A.Var(s.var),), A.Binary("+", i, A.Num(Fraction(1), True)))
        body = A.Block(s.body.stmts + (step,), pos=s.body.pos)
        self.loop_vars.append(s.var)
        try:
            return self.loop(s, guard, body, st, s.var)
        finally:
            self.loop_vars.pop()

    def while_(self, s: A.While, st: _St) -> _St:
        written = written_vars(s.body)
        for c in _conjuncts(s.cond):
            if (
                isinstance(c, A.Binary)
                and c.op in ("<", "<=")
                and isinstance(c.left, A.Var)
                and not (set(free_vars(c.right)) & written)
                and st.env1[c.left.name].sort() == z3.IntSort()
            ):
                return self.loop(s, s.cond, s.body, st, c.left.name)
        raise Rejected(f"line {_pos(s)[0]}: a while loop needs a guard conjunct `i < e` (e not written) to end")

    def invariant(self, text: str, st: _St, entry: _St, where: Any) -> Term:
        try:
            e = parse_expr(text)
        except TampError as exc:
            raise Rejected(f"line {_pos(where)[0]}: the invariant {text!r} does not parse: {exc}") from None
        saved = self.tr.special
        self.tr.special = {
            "cost": st.cost,
            "entry_cost": entry.cost,
            "entry_env": _both(entry),
            "witnesses": self.witnesses,
            "k": self.k,
            "ghosts": self.ghosts(st),
            "entry_ghosts": self.ghosts(entry),
        }
        try:
            t = self.tr.translate(e, _both(st))
        except (_Unsupported, z3.Z3Exception) as exc:
            raise Rejected(f"line {_pos(where)[0]}: the invariant {text!r} cannot be read: {exc}") from None
        finally:
            self.tr.special = saved
        if not z3.is_bool(t):
            raise Rejected(f"line {_pos(where)[0]}: the invariant {text!r} is not a formula")
        return t

    def loop(self, s: Any, guard: A.Expr, body: A.Block, st: _St, var: str) -> _St:
        self.guards.append(guard)  # read by the alignment 'live' of a draw in the body
        try:
            return self._loop(s, guard, body, st, var)
        finally:
            self.guards.pop()

    def _loop(self, s: Any, guard: A.Expr, body: A.Block, st: _St, var: str) -> _St:
        texts = self.cert.loops.get(_pos(s))
        if texts is None:
            raise Rejected(f"line {_pos(s)[0]}: the certificate has no invariants for this loop")
        self.used_loops.add(_pos(s))
        for text in texts:  # initiation
            self.oblige(st, self.invariant(text, st, st, s), f"loop invariant {text} holds at entry", s)
        modified = sorted(written_vars(body) | {var})
        if self.shear_draw is not None and any(n is self.shear_draw for n in A.walk(body)):
            modified += [GHOST_G, GHOST_SEEN, GHOST_W]  # the ghosts move with the loop
        h = st.copy()
        h.cost = self.fresh("cost", z3.RealSort())
        for x in modified:
            h.env1[x] = self.fresh(x, st.env1[x].sort())
            h.env2[x] = self.fresh(x + "'", st.env2[x].sort())
        if GHOST_SEEN in modified:  # one flag for both runs
            h.env2[GHOST_SEEN] = h.env1[GHOST_SEEN]
        h.pc += [self.invariant(text, h, st, s) for text in texts]
        self.counters.append(to_int(h.env1[var]))
        g1, g2 = self.t1(guard, h), self.t2(guard, h)
        self.oblige(h, g1 == g2, "both runs leave the loop together", guard)
        inside = h.copy()
        inside.pc.append(g1)
        before = to_int(inside.env1[var])
        post = self.block(body, inside)
        self.oblige(post, to_int(post.env1[var]) >= before + 1, f"the loop counter {var} grows by at least 1", s)
        for text in texts:  # consecution
            self.oblige(post, self.invariant(text, post, st, s), f"loop invariant {text} is preserved", s)
        h.pc.append(z3.Not(g1))
        return h

    # ------------------------------------------------------------ the shear
    def shear_shift(self, text: str) -> A.Expr:
        """The certificate's value shift of the shear, after checking that it reads nothing of
        iteration k's draw: only inputs (primed or not), ``out_k()`` and the ghosts
        ``others_max(v)`` / ``others_max(v')`` (functions of the other iterations' draws); never a
        local of the program (whose value may depend on the winner's draw), nor ``winner(…)``."""
        try:
            e = parse_expr(text)
        except TampError as exc:
            raise Rejected(f"the shear's shift {text!r} does not parse: {exc}") from None
        assert self.shear is not None
        v = self.shear.target
        params = {p.name for p in self.prog.params}

        def check(n: A.Node) -> None:
            if isinstance(n, A.Call) and n.func == "others_max":
                if len(n.args) == 1 and isinstance(n.args[0], A.Var) and n.args[0].name in (v, A.primed(v)):
                    return
                raise Rejected(f"the shear's shift {text!r}: others_max takes the draw {v} or {v}'")
            if isinstance(n, A.Call) and n.func in ("winner", "others_seen", "cost", "entry", "witness"):
                raise Rejected(f"the shear's shift {text!r} may not read {n.func}(…)")
            if isinstance(n, A.Var) and n.name not in params and A.unprimed(n.name) not in params:
                raise Rejected(
                    f"the shear's shift {text!r} reads {n.name}, which is not an input (it may depend on the "
                    "draw of the output's iteration)"
                )
            for c in A.children(n):
                check(c)

        check(e)
        return e

    def shear_exit(self, st: _St, shift: A.Expr) -> Tuple[List[Term], Term]:
        """At the exit: the prophecy ``y = W + shift`` (W run 1's draw on iteration k), ``W != G``
        (a continuous draw equals a function of the other draws only on a null set), and the
        shear draw's cost ``|shift - (m' - m)| / s`` at iteration k."""
        assert self.shear_draw is not None and self.shear_loop is not None and self.k is not None
        m, sc = self.shear_draw.dist.args
        at1, at2 = dict(self.inputs1), dict(self.inputs2)
        at1[self.shear_loop.var] = at2[self.shear_loop.var] = self.k
        dk = to_real(self.tr.translate(m, at2)) - to_real(self.tr.translate(m, at1))
        scale = to_real(self.tr.translate(sc, at1))
        env = dict(self.inputs1)
        env.update({A.primed(k): v for k, v in self.inputs2.items()})
        v = self.shear.target if self.shear is not None else ""
        env[v] = env[A.primed(v)] = z3.RealVal(0)  # read only as others_max's argument (shear_shift)
        saved = self.tr.special
        self.tr.special = {"k": self.k, "ghosts": self.ghosts(st), "witnesses": []}
        try:
            tau = to_real(self.tr.translate(shift, env))
        except (_Unsupported, z3.Z3Exception) as exc:
            raise Rejected(f"the shear's shift cannot be read: {exc}") from None
        finally:
            self.tr.special = saved
        w, g1 = to_real(st.env1[GHOST_W]), to_real(st.env1[GHOST_G])
        gap = tau - dk
        return [self.y == w + tau, w != g1], z3.If(gap >= 0, gap, -gap) / scale

    # ------------------------------------------------------------ the claim
    def run(self) -> None:
        claim = self.prog.private
        assert claim is not None
        self.used_loops: Set[Tuple[int, int]] = set()
        point = self.cert.pointwise
        shift: Optional[A.Expr] = None
        if self.shear is not None:
            shape = _shear_shape(self.prog)
            if shape is None or _pos(shape[0]) != (self.shear.line, self.shear.col):
                raise Rejected(
                    f"line {self.shear.line}: the shear needs the program's only draw, `v ~ lap(m, s)` directly in a "
                    "top-level for loop, m reading only inputs and the counter, s only inputs"
                )
            self.shear_draw, self.shear_loop = shape
            if self.shear.c != 1:
                raise Rejected(f"line {self.shear.line}: a shear step has c = 1")
            if point is None or point not in claim.outputs or self.types.locals.get(point) != A.INT:
                raise Rejected("the shear needs a pointwise proof on an int output of the claim")
            shift = self.shear_shift(self.shear.shift or "")
            self.k = z3.Int("k!out")
        elif point is not None:
            outs = claim.outputs
            if list(outs) != [point] or self.types.locals.get(outs[0]) != A.INT:
                raise Rejected("a pointwise proof needs exactly one int output, the one named")
            self.k = z3.Int("k!out")
        st = self.start()
        st = self.block(self.prog.body, st)
        hyps = self.hyps(st)
        cost = st.cost
        if shift is not None and point is not None:
            extra, paid = self.shear_exit(st, shift)
            # only the runs whose output is k are paired (the claim is the sum over k)
            hyps, cost = hyps + extra + [st.env1[point] == self.k], cost + paid
        for name in claim.outputs:
            if name not in st.env1:
                raise Rejected(f"the output {name} is not a variable of the program")
            if self.k is not None and name == point:
                goal = z3.Implies(st.env1[name] == self.k, st.env2[name] == self.k)
                self.valid(hyps, goal, f"the output {name} is k in the second run when it is k in the first", claim)
            elif self.k is not None and point is not None:  # the shear's other outputs, where the output is k
                goal = z3.Implies(st.env1[point] == self.k, st.env1[name] == st.env2[name])
                self.valid(hyps, goal, f"the output {name} is the same in both runs when {point} is k", claim)
            else:
                self.valid(hyps, st.env1[name] == st.env2[name], f"the output {name} is the same in both runs", claim)
        if claim.delta is not None:
            self.valid(
                self.base, to_real(self.tr.translate(claim.delta, self.inputs1)) >= 0, "δ is not negative", claim
            )
        eps = to_real(self.tr.translate(parse_expr(self.cert.epsilon), self.inputs1))
        self.valid(hyps, cost <= eps, f"the privacy cost is at most {self.cert.epsilon}", claim)
        unused = sorted(set(self.cert.loops) - self.used_loops)
        if unused:
            raise Rejected(f"the certificate has invariants for no loop at {unused[0][0]}:{unused[0][1]}")


# ---------------------------------------------------------------------------- checking


def _shear_shape(prog: A.Program) -> Optional[Tuple[A.Sample, A.For]]:
    """The draw and loop of a shear when the program has the shape the rule needs (module doc):
    its only draw is ``v ~ lap(m, s)`` (v a plain variable) directly in the body of a ``for`` loop
    that is a top-level statement, the counter not written in the body, ``m`` reading only inputs
    and the counter, ``s`` only inputs, neither written anywhere."""
    draws = [n for n in A.walk(prog.body) if isinstance(n, A.Sample)]
    if len(draws) != 1:
        return None
    d = draws[0]
    params = {p.name for p in prog.params}
    for loop in prog.body.stmts:
        if isinstance(loop, A.For) and any(st is d for st in loop.body.stmts):
            reads = set(free_vars(d.dist.args[0])) | set(free_vars(d.dist.args[1])) if len(d.dist.args) == 2 else set()
            ok = (
                d.dist.func == "lap"
                and len(d.dist.args) == 2
                and len(d.targets) == 1
                and isinstance(d.targets[0], A.Var)
                and d.targets[0].name not in params
                and loop.var not in written_vars(loop.body)
                and set(free_vars(d.dist.args[0])) <= params | {loop.var}
                and set(free_vars(d.dist.args[1])) <= params
                and not reads & (written_vars(prog.body) - {loop.var})
            )
            return (d, loop) if ok else None
    return None


def _structure(pc: PrivCert, prog: A.Program) -> None:
    """The claim is the program's, and the alignment names every draw once with its own cost term."""
    claim = prog.private
    if claim is None or prog.neighbours is None:
        raise Rejected("the program has no `private` claim")
    if not isinstance(claim.epsilon, A.Hole) and pc.epsilon != print_expr(claim.epsilon):
        raise Rejected(f"the certificate proves ε = {pc.epsilon}, but the program claims {print_expr(claim.epsilon)}")
    mine = None if claim.delta is None else print_expr(claim.delta)
    if pc.delta != mine:
        raise Rejected(f"the certificate's δ {pc.delta} is not the program's {mine}")
    if pc.verdict == "violated":
        return
    for sub in pc.cases or [pc]:
        _draws_covered(sub, prog)


def _draws_covered(pc: PrivCert, prog: A.Program) -> None:
    """The alignment names every draw once with its own cost term."""
    draws = sorted((_pos(s), s) for s in A.walk(prog.body) if isinstance(s, A.Sample))
    have = sorted(((s.line, s.col), s) for s in pc.alignment)
    if [p for p, _ in draws] != [p for p, _ in have]:
        raise Rejected(
            f"the alignment covers the draws at {[f'{a}:{b}' for (a, b), _ in have]}, "
            f"the program has {[f'{a}:{b}' for (a, b), _ in draws]}"
        )
    for (p, s), (_, st) in zip(draws, have):
        d = s.dist
        if st.dist != print_expr(d):
            raise Rejected(f"line {p[0]}: the certificate aligns {st.dist}, the program draws {print_expr(d)}")
        if d.func in LAPLACE + ONE_SIDED and len(d.args) == 2:
            want = cost_text(st.kind, print_expr(d.args[0]), print_expr(d.args[1]), d.func)
        else:
            want = "0"
        if st.cost != want:
            raise Rejected(f"line {p[0]}: the draw's cost term is {want}, the certificate states {st.cost!r}")


def _json_input(v: Any, where: str) -> Any:
    """A recorded input value read back (``"p/q"`` text is an exact number)."""
    if isinstance(v, list):
        return [_json_input(x, where) for x in v]
    if isinstance(v, str):
        try:
            return Fraction(v)
        except (ValueError, ZeroDivisionError):
            raise Rejected(f"{where}: {v!r} is not a number") from None
    return v


def _fixed(pc: PrivCert, src: A.SourceFile, prog: A.Program, given: Optional[Dict[str, object]]) -> A.Program:
    """``prog`` with the proof's fixed inputs assumed (``requires name == value``), after checking
    that they are public and that the claim checked (``check-proof --input``) fixes them alike."""
    if not pc.inputs:
        return prog
    secret = {b for v in set(free_vars(prog.neighbours or A.BoolLit(True))) if (b := A.unprimed(v))}
    for name in pc.inputs:
        if prog.param(name) is None:
            raise Rejected(f"the proof fixes {name}, which is not an input of {prog.name}")
        if name in secret:
            raise Rejected(f"the proof fixes the secret input {name}, which must range over the neighbours")
    raw = {k: _json_input(v, f"inputs.{k}") for k, v in pc.inputs.items()}
    try:
        values = check_inputs(prog, raw, src.path, src.text or None)
    except TampError as exc:
        raise Rejected(f"the proof's fixed inputs: {exc}") from None
    given = given or {}
    shown = ", ".join(f"{k}={show_value(v)}" for k, v in values.items())
    for name, v in values.items():
        if name not in given or given[name] != v:
            raise Rejected(
                f"the proof holds only at the public inputs {shown}, but the claim checked "
                + (f"has {name}={show_value(given[name])}" if name in given else f"leaves {name} free")
                + f" (check it with --input {name}={show_value(v)})"
            )
    return fix_inputs(prog, values)


def check_privacy(
    pc: PrivCert,
    src: A.SourceFile,
    prog: A.Program,
    timeout_ms: int,
    deadline,
    inputs: Optional[Dict[str, object]] = None,
) -> ProgramCheck:
    """Re-check one privacy certificate (never raises :class:`Rejected`; reports it) for the claim
    at ``inputs`` (``check-proof --input``; ``None``: every input)."""
    t0 = time.monotonic()
    out = ProgramCheck(f"{pc.name} (privacy, {pc.verdict})", False)
    try:
        _structure(pc, prog)
        prog = _fixed(pc, src, prog, inputs)
        if pc.inputs:
            shown = ", ".join(f"{k}={show_value(_json_input(v, k))}" for k, v in sorted(pc.inputs.items()))
            out.notes.append(f"checked at the public inputs {shown} only (the proof fixes them)")
        types = check_program(prog, src.path, src.text or None)
        if pc.verdict == "violated":
            out.obligations = _check_counterexample(pc, prog, types, deadline)
        elif pc.cases:  # one proof per disjunct of `neighbours`, in the program's order
            assert prog.neighbours is not None
            rel = _disjuncts(prog.neighbours)
            if [c.case for c in pc.cases] != [print_expr(r) for r in rel]:
                raise Rejected(
                    f"the proof's cases {[c.case for c in pc.cases]} are not the disjuncts of neighbours "
                    f"{[print_expr(r) for r in rel]}"
                )
            out.obligations = 0
            for sub, r in zip(pc.cases, rel):
                prod = _Product(prog, types, sub, timeout_ms, deadline, case=r)
                prod.run()
                out.obligations += prod.count
        else:
            prod = _Product(prog, types, pc, timeout_ms, deadline)
            prod.run()
            out.obligations = prod.count
        out.ok = True
    except Rejected as exc:
        out.reason = str(exc)
    except (_Unsupported, TampError) as exc:
        out.reason = f"the claim cannot be encoded: {exc}"
    except z3.Z3Exception as exc:
        out.reason = f"a formula of the certificate cannot be built: {exc}"
    except RecursionError:
        out.reason = "an expression of the certificate is nested too deeply"
    out.seconds = time.monotonic() - t0
    return out


# ---------------------------------------------------------------------------- counterexamples


def _value(v: Any, t: A.Type, where: str) -> Any:
    if t.name == "array":
        if not isinstance(v, list):
            raise Rejected(f"{where}: expected a list")
        return [_value(x, t.elem[0], where) for x in v]
    if t.name == "bool":
        if not isinstance(v, bool):
            raise Rejected(f"{where}: expected true or false")
        return v
    try:
        f = Fraction(v) if not isinstance(v, bool) else None
    except (TypeError, ValueError, ZeroDivisionError):
        f = None
    if f is None or (t.name == "int" and f.denominator != 1):
        raise Rejected(f"{where}: expected a number of type {t.name}")
    return int(f) if t.name == "int" else f


def _term(v: Any, t: A.Type) -> Term:
    if t.name == "array":
        arr = z3.K(z3.IntSort(), _term(0 if t.elem[0].name != "bool" else False, t.elem[0]))
        for i, x in enumerate(v):
            arr = z3.Store(arr, i, _term(x, t.elem[0]))
        return arr
    if t.name == "bool":
        return z3.BoolVal(bool(v))
    return z3.IntVal(int(v)) if t.name == "int" else rational(Fraction(v))


def _true(e: Term) -> bool:
    s = z3.Solver()
    s.set("timeout", 5000)
    s.add(z3.Not(e))
    return bool(s.check() == z3.unsat)


def _constant(t: Term) -> Fraction:
    v = z3.simplify(t)
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_int_value(v):
        return Fraction(v.as_long())
    raise Rejected(f"{v} is not a number at the counterexample's inputs")


def _check_counterexample(pc: PrivCert, prog: A.Program, types: ProgramTypes, deadline) -> int:
    cx = pc.counterexample or {}
    claim = prog.private
    assert claim is not None and prog.neighbours is not None
    secret = {b for v in set(free_vars(prog.neighbours)) if (b := A.unprimed(v))}
    runs: List[Dict[str, Any]] = []
    for key in ("inputs", "neighbour"):
        vals = cx.get(key)
        if not isinstance(vals, dict) or set(vals) != {p.name for p in prog.params}:
            raise Rejected(f"counterexample.{key}: expected a value for every input of {prog.name}")
        runs.append({p.name: _value(vals[p.name], p.type, f"counterexample.{key}.{p.name}") for p in prog.params})
    run_a, run_b = runs
    for par in prog.params:
        if par.name not in secret and run_a[par.name] != run_b[par.name]:
            raise Rejected(f"counterexample: the public input {par.name} differs between the runs")
    tr = Z3Translation()
    env_a = {p.name: _term(run_a[p.name], p.type) for p in prog.params}
    env_b = {p.name: _term(run_b[p.name], p.type) for p in prog.params}
    env_r = dict(env_a)
    env_r.update({A.primed(p.name): env_b[p.name] for p in prog.params})
    for c in prog.requires:
        if not (_true(tr.translate(c, env_a)) and _true(tr.translate(c, env_b))):
            raise Rejected(f"counterexample: the inputs do not satisfy requires {print_expr(c)}")
    if not _true(tr.translate(prog.neighbours, env_r)):
        raise Rejected("counterexample: the two inputs are not neighbours")
    event = cx.get("event")
    if not isinstance(event, str):
        raise Rejected("counterexample.event: expected an expression")
    try:
        parsed = parse_expr(event)
        seen = set(free_vars(parsed))
    except TampError as exc:
        raise Rejected(f"counterexample.event: {exc}") from None
    if not seen <= set(claim.outputs):  # an event over anything else is no violation of this claim
        raise Rejected(f"counterexample.event reads {sorted(seen - set(claim.outputs))[0]}, not an output of the claim")
    eps = _constant(tr.translate(claim.epsilon, env_a))
    dlt = _constant(tr.translate(claim.delta, env_a)) if claim.delta is not None else Fraction(0)
    plain = dataclasses.replace(prog, requires=(), ensures=(), fails=None, neighbours=None, private=None)
    plain, engine_event = instrument(plain, types, parsed)  # written(a, k): the checker's own reading
    left = 30.0 if deadline is None else max(1.0, min(30.0, deadline - time.monotonic()))
    got = []
    for run, key in ((run_a, "probability"), (run_b, "neighbour_probability")):
        try:
            v = probability(plain, engine_event, inputs=run, timeout=left)
        except Exception as exc:  # noqa: BLE001 - whatever the engine cannot compute shows nothing
            raise Rejected(f"counterexample: the probability engine cannot compute P[{event}]: {exc}") from None
        iv = v if isinstance(v, Interval) else Interval.point(Fraction(v))
        stated = cx.get(key)
        if not isinstance(stated, dict) or set(stated) != {"lower", "upper"}:
            raise Rejected(f"counterexample.{key}: expected {{lower, upper}}")
        lo, hi = _value(stated["lower"], A.REAL, key), _value(stated["upper"], A.REAL, key)
        if lo > iv.hi or hi < iv.lo:  # two sound enclosures of one number overlap
            raise Rejected(
                f"counterexample.{key}: the certificate states [{lo}, {hi}], the probability engine computes "
                f"[{iv.lo}, {iv.hi}] for P[{event}]"
            )
        got.append(iv)
    pa, pb = got
    if not pa.lo > exp_interval(eps).hi * pb.hi + dlt:
        raise Rejected(f"counterexample: P[{event}] is not separated by more than exp(ε) between the inputs")
    return 4
