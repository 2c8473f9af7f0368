"""Deciding one box of the input region: interval bounds first, then SMT on the self-composition.

An :class:`Analyzer` holds, for each value v of the sensitive input, the
program's output term and validity term (``requires`` and ``assume`` with the
sensitive input set to v) over the shared non-sensitive inputs — the
self-composition of the program with itself. A point x is *biased* when some
pair of values (a, b) are both valid at x and give different outputs.

:meth:`Analyzer.decide` settles a box as ``certified`` (no biased point),
``biased`` (every point biased), ``mixed`` (both kinds, witness known),
``unknown`` (solver gave up, or too small to split), ``measured`` (a mixed box whose biased
share was computed exactly), or asks to split it.

Order of the checks for a box: interval propagation sharpened by symbolic linear bounds
(:mod:`tamp.causal.tight`: ReLU phases, decided comparisons) → the relational check on the
copies' difference (:mod:`tamp.causal.relational`) → exact evaluation at sample points (a biased
and a fair point make the box mixed) → with few undecided ReLUs, two SMT questions; mixed boxes
are measured exactly (:mod:`tamp.causal.exactmass`) when few ReLUs are unstable, else split along
the dimension the undecided decision functions depend on most.
"""

from __future__ import annotations

import heapq
import random
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

import numpy as np
import z3

from lang import ast as A
from lang.walk import free_vars
from tamp.core import z3expr as Z

from . import boxes as B
from . import terms as T
from .boxmass import share_bounds
from .dag import Dag, compile_dag, evaluate, evaluate_float, saturating_float
from .division import check_divisions
from .exactmass import exact_biased_share
from .phasesplit import PhaseSearch
from .propagate import differ, propagate
from .region import Region, build_region
from .relational import box_cannot_be_biased
from .smt import model_value, phase_facts, translate_nodes, z3_const, z3_var
from .symexec import Context, execute, expr_term, input_env
from .threshold import bias_cases
from .tight import SymbolicBounds

CERTIFIED, BIASED, MIXED, UNKNOWN, EMPTY = "certified", "biased", "mixed", "unknown", "empty"
MEASURED = "measured"


@dataclass
class Options:
    """Tuning of the certifier (see docs/causal.md)."""

    max_unstable: int = 8  # U: at most this many undecided ReLUs/branches before calling SMT
    min_mass: float = 2.0**-16  # L: boxes with a smaller (uniform) share are not split further
    smt_timeout: float = 10.0  # seconds per SMT query; a timeout counts as unknown
    refine: bool = True  # split mixed boxes to tighten the bounds on the biased mass
    timeout: Optional[float] = 600.0  # seconds for the whole analysis
    jobs: int = 0  # workers (tamp.executor: 0 = automatic, 1 = this process)
    scheduler: Optional[str] = None  # an existing Dask cluster's scheduler address
    slice_s: float = 0.5  # time budget of the phase branching's LP search (per box: max(this, 1))
    slice_boxes: int = 32  # boxes a job decides depth-first before it hands back its frontier
    round_jobs: int = 16  # jobs per round; results are combined in a fixed order after each
    candidates: int = 6  # dimensions scored by interval propagation when choosing a split
    population: Optional[str] = None  # a `.prob` file whose program samples the inputs
    linear: bool = True  # symbolic linear bounds (DeepPoly-style) and the relational check
    exact_unstable: int = 3  # measure a mixed box exactly with at most this many unstable ReLUs
    exact_dims: int = 8  # ... and general polytopes in at most this many dimensions
    phase_lps: int = 32  # LP calls per box and question when branching on ReLU phases (0 = off)
    refine_lps: int = 0  # ... while refining the biased mass (boxes are many and small there)
    refine_batch: int = 1  # mass refinement: halvings per worker job (best-first inside it)
    split_trials: int = 1  # mass refinement: halvings tried per box (the least remaining gap wins)
    refine_min_mass: float = 2.0**-40  # mass refinement: boxes with a smaller share are not split
    mass_gap: float = 0.001  # refinement stops once upper - lower biased mass is at most this
    trees: bool = True  # axis-aligned programs (decision trees, forests): the exact tree engine (treefair)
    network: bool = True  # networks over categorical cells × real boxes: the network engine (netfair)
    net_exact_unstable: int = 2  # network engine: measure a mixed box exactly with at most this many unstable ReLUs
    net_batch: int = 512  # network engine: boxes bounded together
    net_max_depth: int = 40  # network engine: halvings of a cell's real box before a box is left undecided
    net_probe_boxes: Optional[int] = 4096  # network engine: hand over to the general one if no bias in this many boxes
    net_share_unstable: Optional[int] = (
        None  # network engine: bound mixed boxes' biased shares with at most this many unstable ReLUs (None: all)
    )

    @classmethod
    def from_any(cls, o) -> "Options":
        if o is None:
            return cls()
        if isinstance(o, cls):
            return o
        known = {k: v for k, v in dict(o).items() if k in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in known.items() if v is not None})


@dataclass
class Decision:
    status: Optional[str]  # a leaf status, or None = split into ``children``
    children: List[B.Box] = field(default_factory=list)
    witness: Optional[dict] = None
    smt_calls: int = 0
    share: Optional[Fraction] = None  # MEASURED: the exact biased share of the box


def _value(v: object) -> T.Value:
    """A sensitive value or point coordinate: a bool, an int or a Fraction."""
    if not isinstance(v, (bool, int, Fraction)):
        raise TypeError(f"not an input value: {v!r}")
    return v


def _coord(v: object) -> float:
    """A point coordinate as a float (OverflowError beyond binary64)."""
    return float(_value(v))


def _neq(a, b):
    return Z.BINARY["!="](a, b)


def _and3(*xs):
    return False if any(x is False for x in xs) else True if all(x is True for x in xs) else None


def _or3(xs):
    return True if any(x is True for x in xs) else False if all(x is False for x in xs) else None


class Analyzer:
    """The self-composed program for one ``independent(e, s)`` claim."""

    def __init__(self, prog: A.Program, ind: A.Independent, options: Options, ctx: Context):
        self.prog, self.ind, self.options, self.ctx = prog, ind, options, ctx
        self.region: Region = build_region(prog, ind, ctx)
        self.dims = self.region.dims
        outs, valids = [], []
        for v in self.region.values:
            fixed: Dict[str, T.Term] = {ind.var: T.const(_value(v), self._sens_sort())}
            fin = execute(prog, fixed, ctx)
            init = input_env(prog, fixed, ctx)
            req = [expr_term(r, init, ctx) for r in prog.requires]
            for name in set(free_vars(ind.expr)):
                if name not in fin.env:
                    raise ctx.error(f"'{name}' is not assigned on every path of program '{prog.name}'", ind.expr)
            check_divisions(
                fin, req, {p.name: p.type.name for p in prog.params if p.name != ind.var}, {ind.var: v}, ctx
            )
            outs.append(expr_term(ind.expr, fin.env, ctx))
            valids.append(T.op("and", *req, fin.assumption()))
        self.outs, self.valids = outs, valids
        k = len(outs)
        self.pairs = [
            (i, j)
            for i in range(k)
            for j in range(i + 1, k)
            if not (T.same(outs[i], outs[j]) or valids[i] is T.FALSE or valids[j] is T.FALSE)
        ]
        self.dag: Dag = compile_dag(outs + valids)
        used = set(self.dag.inputs())
        self.relevant = [i for i, d in enumerate(self.dims) if d.name in used]
        self.z3vars = {d.name: z3_var(d.name, d.sort) for d in self.dims}
        self.z3nodes = translate_nodes(self.dag, self.z3vars)
        zo = [self.z3nodes[r] for r in self.dag.roots[:k]]
        zv = [self.z3nodes[r] for r in self.dag.roots[k:]]
        self.z3biased = z3.Or([z3.And(zv[i], zv[j], _neq(zo[i], zo[j])) for i, j in self.pairs])
        self.sym = None
        if options.linear and self.pairs:
            try:
                sym = SymbolicBounds(self.dag, k, self.pairs)
            except OverflowError:  # a coefficient beyond binary64 (e.g. 1e400): interval and SMT levels only
                sym = None
            self.sym = sym if sym is not None and sym.useful else None
        self.exact_ok = options.population is None and len(self.pairs) == 1
        self.phase = None
        if self.sym is not None and options.phase_lps > 0 and self.sym.pairs == self.pairs:
            self.phase = PhaseSearch(self.sym)

    def _sens_sort(self) -> str:
        p = self.prog.param(self.ind.var)
        if p is None:  # (build_region checked that it is a parameter)
            raise self.ctx.error(f"'{self.ind.var}' is not an input of program '{self.prog.name}'", self.ind)
        return p.type.name

    # ------------------------------------------------------------------ interval level
    def ibp(self, box: B.Box):
        """(tri-state "biased everywhere / nowhere", bounds) by interval propagation over ``box``."""
        biased, b, _ = self.bound(box, symbolic=False)
        return biased, b

    def bound(self, box: B.Box, symbolic: bool = True):
        """(tri-state "biased everywhere / nowhere", bounds, symbolic facts or None) over ``box``:
        interval propagation, sharpened by symbolic linear bounds when available."""
        fbox = B.float_box(self.dims, box)
        facts = self.sym.analyse(fbox) if symbolic and self.sym is not None else None
        b = facts.bounds if facts is not None and facts.bounds is not None else propagate(self.dag, fbox)
        k = len(self.outs)
        vals = [b.root(self.dag, i) for i in range(2 * k)]
        biased = _or3([_and3(vals[k + i], vals[k + j], differ(vals[i], vals[j])) for i, j in self.pairs])
        return biased, b, facts

    # ------------------------------------------------------------------ exact level
    def point_outputs(self, point: Dict[str, object]):
        """Exact (outputs, validity) per sensitive value at ``point``."""
        vals = evaluate(self.dag, point)
        k = len(self.outs)
        return vals[:k], vals[k:]

    def biased_at(self, point: Dict[str, object]) -> Optional[Tuple[int, int]]:
        """The first pair of sensitive values that witnesses bias at ``point`` (checked exactly), or None."""
        try:
            outs, valid = self.point_outputs(point)
        except ZeroDivisionError:
            return None
        for i, j in self.pairs:
            if valid[i] and valid[j] and outs[i] != outs[j]:
                return (i, j)
        return None

    def witness(self, point: Dict[str, object]) -> Optional[dict]:
        """A checked witness record for ``point``, or None if the point is not biased."""
        pair = self.biased_at(point)
        if pair is None:
            return None
        outs, _ = self.point_outputs(point)
        s = self.region.sensitive
        return {"inputs": dict(point), "pair": [{s: self.region.values[i], "out": outs[i]} for i in pair]}

    # ------------------------------------------------------------------ SMT level
    def _box_constraints(self, box: B.Box):
        cs = []
        for d, (lo, hi) in zip(self.dims, box):
            x = self.z3vars[d.name]
            if d.sort == "bool":
                if lo == hi:
                    cs.append(x == z3.BoolVal(bool(lo)))
                continue
            if lo is not None:
                cs.append(x >= z3_const(lo, d.sort))
            if hi is not None:
                cs.append(x <= z3_const(hi, d.sort))
        return cs

    def _point(self, model) -> Optional[Dict[str, object]]:
        pt = {}
        for d in self.dims:
            v = model_value(model, self.z3vars[d.name], d.sort)
            if v is None:
                return None
            pt[d.name] = v
        return pt

    def smt(self, box: B.Box, phases, want_biased: bool):
        """Ask z3 for a point of ``box`` that is biased (``want_biased``) or not; returns (answer, point)."""
        f = self.z3biased if want_biased else z3.Not(self.z3biased)
        s = z3.Solver()  # a fresh solver: z3 preprocesses non-incremental problems far better
        s.set("timeout", int(self.options.smt_timeout * 1000))
        s.add(*self._box_constraints(box), *phase_facts(self.dag, self.z3nodes, phases), f)
        r = s.check()
        if r == z3.sat:
            return "sat", self._point(s.model())
        return ("unsat" if r == z3.unsat else "unknown"), None

    # ------------------------------------------------------------------ one box
    def splittable(self, box: B.Box) -> List[int]:
        return [k for k in self.relevant if B.can_split(self.dims[k], *box[k])]

    def choose_split(self, box: B.Box, cands: List[int], facts=None) -> int:
        """With symbolic facts: the dimension along which the undecided decision functions' linear
        bounds move most across the box. Otherwise the dimension whose halving settles most (then
        leaves the fewest unstable nodes) among the ``candidates`` relatively widest ones."""
        if facts is not None and self.sym is not None:  # (facts come from self.sym)
            widths = {self.dims[k].name: saturating_float(B.width(box[k])) for k in cands}
            score = self.sym.split_scores(facts, widths)
            best = max(
                cands, key=lambda k: (score.get(self.dims[k].name, 0.0), B.relative_width(self.dims[k], *box[k]))
            )
            if score.get(self.dims[best].name, 0.0) > 0:
                return best
        widest = sorted(cands, key=lambda k: -B.relative_width(self.dims[k], *box[k]))[: self.options.candidates]
        if len(widest) == 1:
            return widest[0]
        best, best_score = widest[0], None
        for k in widest:
            settled = [0, 0]
            for half in B.split(self.dims[k], box, k):
                biased, b = self.ibp(half)
                settled[0] += biased is not None  # halves settled: more is better
                settled[1] -= b.unstable
            if best_score is None or settled > best_score:
                best, best_score = k, settled
        return best

    def separating_dim(self, box: B.Box, cands: List[int], biased_pt: dict, fair_pt: dict) -> Optional[int]:
        """A dimension along which the bias boundary runs through the box: moving the biased point's
        coordinate to the fair point's value alone removes the bias (or moving the fair point's
        coordinate adds it). The relatively widest such dimension, or None."""
        found = []
        for k in cands:
            name = self.dims[k].name
            if biased_pt[name] == fair_pt[name]:
                continue
            p = dict(biased_pt, **{name: fair_pt[name]})
            q = dict(fair_pt, **{name: biased_pt[name]})
            if self.biased_at(p) is None or self.biased_at(q) is not None:
                found.append(k)
        if not found:
            return None
        return max(found, key=lambda k: B.relative_width(self.dims[k], *box[k]))

    def measure_exactly(self, box: B.Box, facts) -> Optional[Fraction]:
        """The exact biased share of ``box`` (uniform prior, one pair of copies), or None."""
        if facts is None or self.sym is None or not self.exact_ok or self.options.exact_unstable < 0:
            return None
        rx = facts.rx
        if int(((rx.pre_lo < 0) & (rx.pre_hi > 0)).sum()) > self.options.exact_unstable:
            return None  # (every ReLU counts, relevant or not: a cheap filter)
        k = len(self.outs)
        pair = self.pairs[0]
        valid = (self.dag.roots[k + pair[0]], self.dag.roots[k + pair[1]])
        return exact_biased_share(
            self.sym,
            facts,
            self.dims,
            box,
            pair,
            valid,
            self.options.exact_unstable,
            self.options.exact_dims,
            deadline=time.monotonic() + max(self.options.slice_s, 1.0),
        )

    def decide(self, box: B.Box) -> Decision:
        """Settle ``box`` or split it."""
        if B.is_empty(box):
            return Decision(EMPTY)
        if not self.pairs:
            return Decision(CERTIFIED)
        biased, bounds, facts = self.bound(box)
        self.facts = facts
        if biased is False:
            return Decision(CERTIFIED)
        if biased is True:
            w = self.witness(B.center(self.dims, box))
            if w is not None:
                return Decision(BIASED, witness=w)
        biased_pt, fair_pt = self.probe(box)
        w = self.witness(biased_pt) if biased_pt is not None else None
        if w is None and facts is not None and self.sym is not None and self.sym.pairs:
            if box_cannot_be_biased(self.sym, facts, self.pairs):
                return Decision(CERTIFIED)
        cands = self.splittable(box)
        small = not cands or B.uniform_mass(self.dims, box) < self.options.min_mass
        if w is not None and fair_pt is not None:  # both kinds seen: mixed, no solver needed
            return self._mixed(box, cands, small, w, fair_pt, 0)
        if self.phase is not None and facts is not None and self._valid_on(bounds):  # no facts: no phases
            if self.refining and self.options.refine_lps <= 0:
                return Decision(None, witness=w)  # classify(): the mass bounds decide what happens next
            d = self.decide_by_phases(box, facts, w)
            if d is not None:
                return d
            if not small:
                k = self.choose_split(box, cands, facts)
                return Decision(None, B.split(self.dims[k], box, k), witness=w)
        if bounds.unstable > self.options.max_unstable and not small:
            k = self.choose_split(box, cands, facts)
            return Decision(None, B.split(self.dims[k], box, k), witness=w)
        calls = 0
        if w is None:
            ans, point = self.smt(box, bounds.phases, True)
            calls += 1
            if ans == "unsat":
                return Decision(CERTIFIED, smt_calls=calls)
            w = self.witness(point) if ans == "sat" and point is not None else None
            if w is None:  # unknown, or an unverifiable model: never counts as anything
                return self._unknown(box, cands, small, calls)
            if fair_pt is not None:
                return self._mixed(box, cands, small, w, fair_pt, calls)
        ans2, fair = self.smt(box, bounds.phases, False)
        calls += 1
        if ans2 == "unsat":
            return Decision(BIASED, witness=w, smt_calls=calls)
        return self._mixed(box, cands, small, w, fair, calls)

    def _valid_on(self, bounds) -> bool:
        """Every copy's validity (``requires``) holds on the whole box."""
        k = len(self.outs)
        return all(bounds.root(self.dag, k + i) is True for i in range(k))

    def _lp_point(self, box: B.Box, values: Dict[str, Fraction]) -> Optional[Dict[str, object]]:
        """A point of ``box`` from an LP solution (non-numeric or non-integral values: None)."""
        pt = B.center(self.dims, box)
        for d in self.dims:
            if d.name in values:
                v = values[d.name]
                if d.sort == "int":
                    if v.denominator != 1:
                        return None
                    pt[d.name] = int(v)
                elif d.sort != "real":
                    return None
                else:
                    pt[d.name] = v
        return pt

    def decide_by_phases(self, box: B.Box, facts, w: Optional[dict]) -> Optional[Decision]:
        """Settle ``box`` by branching on ReLU phases (:mod:`tamp.causal.phasesplit`): without a
        known biased point, "is some point biased?" (none: certified); with one, "is some point
        not biased?" (none: entirely biased). None when undecided within the LP budget."""
        sym, phase = self.sym, self.phase
        if sym is None or phase is None:  # (decide() calls this only with both)
            return None
        exact = {d.name: box[k] for k, d in enumerate(self.dims)}
        opts = self.options
        deadline = time.monotonic() + max(opts.slice_s, 1.0) * 4
        budget = opts.refine_lps if self.refining else opts.phase_lps
        if w is None:
            cases = [(i, j, pi, pj) for i, j in self.pairs for pi, pj in bias_cases(sym.threshold(i), sym.threshold(j))]

            def accept(values):
                pt = self._lp_point(box, values)
                return pt is not None and self.biased_at(pt) is not None

            ans = phase.search(exact, facts, cases, accept, budget, int(opts.smt_timeout * 1000), deadline)
            self.lp_calls += ans.lps
            if ans.status == "none":
                return Decision(CERTIFIED)
            found = self._lp_point(box, ans.point) if ans.status == "found" and ans.point is not None else None
            if found is None:  # (a found point passed accept(): it is a point of the box)
                return None
            w = self.witness(found)
        cands = self.splittable(box)
        small = not cands or B.uniform_mass(self.dims, box) < opts.min_mass
        if len(self.pairs) != 1:
            return self._mixed(box, cands, small, w, None, 0)
        i, j = self.pairs[0]
        bias = bias_cases(sym.threshold(i), sym.threshold(j))
        cases = [(i, j, pi, pj) for pi in (True, False) for pj in (True, False) if (pi, pj) not in bias]

        def accept_fair(values):
            pt = self._lp_point(box, values)
            return pt is not None and self.biased_at(pt) is None

        ans = phase.search(exact, facts, cases, accept_fair, budget, int(opts.smt_timeout * 1000), deadline)
        self.lp_calls += ans.lps
        if ans.status == "none":
            return Decision(BIASED, witness=w)
        if ans.status == "found" and ans.point is not None:
            return self._mixed(box, cands, small, w, self._lp_point(box, ans.point), 0)
        if small:
            return Decision(MIXED, witness=w)
        k = self.choose_split(box, cands, facts)
        return Decision(None, B.split(self.dims[k], box, k), witness=w)

    lp_calls = 0

    def _unknown(self, box, cands, small, calls) -> Decision:
        if small:
            return Decision(UNKNOWN, smt_calls=calls)
        k = self.choose_split(box, cands, self.facts)
        return Decision(None, B.split(self.dims[k], box, k), smt_calls=calls)

    def _mixed(self, box, cands, small, w, fair_pt, calls) -> Decision:
        """A box with a (checked) biased point ``w`` and possibly a fair point: measure its biased
        share exactly, split it to separate them, or keep it as a mixed leaf when it is too small
        (or refinement is off)."""
        if not self.refine_now:
            return Decision(MIXED, witness=w, smt_calls=calls)
        share = self.measure_exactly(box, self.facts)
        if share is not None:
            return Decision(MEASURED, witness=w, smt_calls=calls, share=share)
        if small:
            return Decision(MIXED, witness=w, smt_calls=calls)
        k = None
        if self.facts is None and fair_pt is not None:
            k = self.separating_dim(box, cands, w["inputs"], fair_pt)
        if k is None:
            k = self.choose_split(box, cands, self.facts)
        return Decision(None, B.split(self.dims[k], box, k), witness=w, smt_calls=calls)

    def probe(self, box: B.Box, n: int = 24):
        """Screen the centre and ``n`` pseudo-random rational points of ``box`` in floating point:
        returns (a biased point or None, a point that is probably not biased or None). The biased
        point is confirmed by exact evaluation; the other one only steers splitting (a box called
        mixed only contributes to the upper bound of the biased mass)."""
        rng = random.Random(hash(box))
        pts = [B.center(self.dims, box)] + [B.random_point(self.dims, box, rng) for _ in range(n)]
        try:
            env = {d.name: np.array([_coord(p[d.name]) for p in pts]) for d in self.dims}
        except OverflowError:  # a coordinate beyond binary64 (e.g. 1e400): screening only, saturate
            env = {d.name: np.array([saturating_float(p[d.name]) for p in pts]) for d in self.dims}
        try:
            vals = evaluate_float(self.dag, env)
        except (ValueError, TypeError):
            return self._probe_exact(pts)
        k = len(self.outs)
        flag = np.zeros(len(pts), dtype=bool)
        for i, j in self.pairs:
            flag |= vals[k + i].astype(bool) & vals[k + j].astype(bool) & (vals[i] != vals[j])
        biased_pt = fair_pt = None
        for t in np.flatnonzero(flag)[:3]:
            if self.biased_at(pts[t]) is not None:
                biased_pt = pts[t]
                break
        fair = np.flatnonzero(~flag)
        if len(fair):
            fair_pt = pts[fair[0]]
        return biased_pt, fair_pt

    def _probe_exact(self, pts):
        biased_pt = fair_pt = None
        for pt in pts:
            if self.biased_at(pt) is not None:
                biased_pt = biased_pt or pt
            else:
                fair_pt = fair_pt or pt
            if biased_pt is not None and fair_pt is not None:
                break
        return biased_pt, fair_pt

    refine_now = True
    refining = False
    facts = None

    def share_bounds(self, box: B.Box, facts) -> Tuple[Fraction, Fraction]:
        """Bounds on the biased share of ``box`` from the linear bounds (:mod:`tamp.causal.boxmass`);
        (0, 1) when they do not apply (population measure, several pairs, non-real inputs)."""
        if facts is None or self.sym is None or not self.exact_ok or not self._valid_on(facts.bounds):
            return Fraction(0), Fraction(1)
        rbox = {}
        for d, (lo, hi) in zip(self.dims, box):
            if d.name in self.sym.model.inputs.values():
                if d.sort != "real" or lo is None or hi is None or not hi > lo:
                    return Fraction(0), Fraction(1)
            if d.sort == "real" and lo is not None and hi is not None and hi > lo:
                rbox[d.name] = (lo, hi)
        r = share_bounds(self.sym, facts, rbox, self.pairs[0], self.options.exact_dims)
        return r if r is not None else (Fraction(0), Fraction(1))

    def classify(self, box: B.Box):
        """Decide ``box`` without splitting it: (status, lower share, upper share, witness, SMT+LP
        calls). Status CERTIFIED / BIASED / EMPTY (shares exact), MEASURED (exact share), or MIXED
        with the bounds of :meth:`share_bounds` (the box need not contain a witness: it lies in a
        box that does)."""
        self.refine_now, self.refining = False, True
        lps = self.lp_calls
        try:
            d = self.decide(box)
        finally:
            self.refining = False
        calls = d.smt_calls + self.lp_calls - lps
        if d.status in (CERTIFIED, EMPTY):
            return d.status, Fraction(0), Fraction(0), d.witness, calls
        if d.status == BIASED:
            return BIASED, Fraction(1), Fraction(1), d.witness, calls
        facts = self.facts
        lo, hi = self.share_bounds(box, facts)
        if hi > lo:
            share = self.measure_exactly(box, facts)
            if share is not None:
                return MEASURED, share, share, d.witness, calls
        return MIXED, lo, hi, d.witness, calls

    def refine_box(self, box: B.Box):
        """Halve ``box`` along the dimension that moves the undecided decision functions most and
        classify both halves: ([(half, status, lower, upper)], witness or None, calls, 2)."""
        cands = self.splittable(box)
        if not cands:
            return [], None, 0, 0
        if self.fast_mass_ok:
            return self._refine_fast(box, cands)
        _, _, facts = self.bound(box)
        k = self.choose_split(box, cands, facts)
        out, witness, calls = [], None, 0
        for half in B.split(self.dims[k], box, k):
            status, lo, hi, w, c = self.classify(half)
            out.append((half, status, lo, hi))
            witness = witness or w
            calls += c
        return out, witness, calls, 2

    def refine_subtree(self, box: B.Box, lower: Fraction, upper: Fraction, steps: int):
        """Up to ``steps`` rounds of :meth:`refine_box` within ``box``, best-first on the gap (a
        batch of work for one worker job): ([(leaf, status, lower, upper)], witness, calls, boxes).
        Leaves with a gap are handed back for the coordinator's queue."""
        dims = self.dims
        heap = [(-(upper - lower), 0, box, lower, upper)]
        leaves: List[Tuple[B.Box, Optional[str], Fraction, Fraction]] = []  # status None: keep the bounds
        witness, calls, n, seq = None, 0, 0, 1
        for _ in range(max(1, steps)):
            if not heap:
                break
            _, _, b, lo, hi = heapq.heappop(heap)
            small = B.uniform_mass(dims, b) < self.options.refine_min_mass
            children, w, c, k = ([], None, 0, 0) if small else self.refine_box(b)
            if not children:
                leaves.append((b, None, lo, hi))  # not splittable: the coordinator keeps its bounds
                continue
            witness, calls, n = witness or w, calls + c, n + k
            for h, status, l, u in children:
                if status in (MIXED,) and u > l:
                    heapq.heappush(heap, (-(u - l) * B.uniform_mass(dims, h), seq, h, l, u))
                    seq += 1
                else:
                    leaves.append((h, status, l, u))
        leaves += [(b, MIXED, lo, hi) for _, _, b, lo, hi in heap]
        return leaves, witness, calls, n

    @property
    def fast_mass_ok(self) -> bool:
        """Mass refinement from the symbolic forms alone: uniform prior, one pair of threshold
        copies, real inputs, no opaque atoms, ``requires`` true on the whole region."""
        ok = getattr(self, "_fast_ok", None)
        if ok is None:
            ok = (
                self.exact_ok
                and self.sym is not None
                and self.sym.pairs == self.pairs
                and not self.sym.opaque_used
                and all(d.sort == "real" for d in self.dims if d.name in self.sym.model.inputs.values())
            )
            if ok:
                _, b, _ = self.bound(B.root_box(self.dims), symbolic=False)
                ok = self._valid_on(b)  # validity on the root box holds on every sub-box
            self._fast_ok = ok
        return ok

    def _shares_fast(self, box: B.Box, outer=None):
        sym = self.sym
        facts = sym.analyse_linear(B.float_box(self.dims, box), outer) if sym is not None else None
        if sym is None or facts is None:  # (fast_mass_ok: there are symbolic bounds)
            return None, Fraction(0), Fraction(1)
        rbox = {
            d.name: (lo, hi)
            for d, (lo, hi) in zip(self.dims, box)
            if d.sort == "real" and lo is not None and hi is not None
        }  # (an unbounded side leaves its input out: share_bounds then gives no bounds)
        r = share_bounds(sym, facts, rbox, self.pairs[0], self.options.exact_dims)
        return (facts, *r) if r is not None else (facts, Fraction(0), Fraction(1))

    def _refine_fast(self, box: B.Box, cands: List[int]):
        facts, _, _ = self._shares_fast(box)
        k = None
        score: Dict[str, float] = {}
        if facts is not None and self.sym is not None:
            widths = {self.dims[j].name: saturating_float(B.width(box[j])) for j in cands}
            score = self.sym.linear_split_scores(facts, widths)
            k = max(cands, key=lambda j: (score.get(self.dims[j].name, 0.0), B.relative_width(self.dims[j], *box[j])))
        if k is None:
            k = max(cands, key=lambda j: B.relative_width(self.dims[j], *box[j]))
        tried = {}
        if self.options.split_trials > 1 and facts is not None:
            # smart splitting: of the best-scored dimensions, the one whose halves leave the least gap
            ranked = sorted(
                cands,
                key=lambda j: (
                    -(score.get(self.dims[j].name, 0.0) + 1e-12 * float(B.relative_width(self.dims[j], *box[j])))
                ),
            )[: self.options.split_trials]
            best = None
            for j in ranked:
                halves = [(h, *self._shares_fast(h, facts)) for h in B.split(self.dims[j], box, j)]
                g = sum((hi - lo) * B.uniform_mass(self.dims, h) for h, _, lo, hi in halves)
                tried[j] = halves
                if best is None or g < best[0]:
                    best = (g, j)
            if best is not None:
                k = best[1]
        out = []
        for half, hf, lo, hi in tried.get(k) or [
            (h, *self._shares_fast(h, facts)) for h in B.split(self.dims[k], box, k)
        ]:
            if hi > lo and hf is not None and self.options.exact_unstable >= 0:
                rx = hf.rx
                if int(((rx.pre_lo < 0) & (rx.pre_hi > 0)).sum()) <= self.options.exact_unstable:
                    _, _, full = self.bound(half)
                    share = self.measure_exactly(half, full)
                    if share is not None:
                        lo = hi = share
            out.append((half, MEASURED if lo == hi else MIXED, lo, hi))
        return out, None, 0, 2

    def explore(self, box: B.Box, budget_s: float, refine: bool = True, max_boxes: Optional[int] = None):
        """Depth-first over ``box`` for up to ``budget_s`` seconds and at most ``max_boxes`` boxes
        (a fixed number of boxes makes the frontier handed back independent of timing).

        Returns (leaves [(box, status, share)], frontier boxes left over, a witness or None, SMT calls,
        boxes decided); ``share`` is the exact biased share of a ``measured`` leaf, else None."""
        self.refine_now = refine and self.options.refine
        deadline = time.monotonic() + budget_s
        stack, leaves, witness, calls, n = [box], [], None, 0, 0
        while stack and time.monotonic() < deadline and (max_boxes is None or n < max_boxes):
            b = stack.pop()
            lps = self.lp_calls
            d = self.decide(b)
            n += 1
            calls += d.smt_calls + self.lp_calls - lps
            if d.witness is not None and witness is None:
                witness = d.witness
            if d.status is None:
                stack.extend(d.children)
            else:
                leaves.append((b, d.status, d.share))
        return leaves, stack, witness, calls, n
