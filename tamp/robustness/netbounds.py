"""A ReLU network over boxes: sound bounds of its class margins, and its exact affine pieces.

Bounds: the network's ReLUs become a :class:`tamp.causal.bounds.ReluGraph` and the margins are
bounded by its batched CROWN-style back-substitution (float arithmetic with a proven
rounding-error margin, weights rounded to binary64 inside that margin: the bounds always contain
the exact values, also for decimal weights such as a Libra network's ``0.1``). Many boxes are
bounded in one numpy pass (:meth:`NetBounds.analyze_batch`). Over a box the answer is:

* ``ALL`` — every margin's lower bound is > 0: the class is ``c`` everywhere in the box;
* ``NONE`` — some margin's upper bound is < 0: the class is never ``c`` in the box;
* ``EXACT`` — every ReLU has a fixed phase over the box (bounds of its pre-activation >= 0 or
  <= 0), so the network *is* an affine map there: the margins' exact rational forms over the
  inputs (cached per activation pattern) describe the class-c region as a polytope;
* ``UNDECIDED`` — none of these; the margins' linear lower and upper bounds (short exact forms)
  and a score per input saying which one to split (:func:`_split_scores`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tamp.causal.bounds import BatchRelaxation, ReluGraph, bounds_batch, relax_batch
from tamp.models.ir import Affine, Network
from tamp.models.ir import Relu as IRRelu

from .classifier import Classifier, Margin
from .share import DyadicForm

ALL, NONE, EXACT, UNDECIDED = "all", "none", "exact", "undecided"

Form = Tuple[Dict[int, Fraction], Fraction]
ExactForm = Tuple[Dict[str, Fraction], Fraction]  # over feature names
Box = Dict[str, Tuple[Fraction, Fraction]]
Pre = Tuple[np.ndarray, np.ndarray]  # per ReLU: bounds of its pre-activation on a box


def _add_into(acc: Dict[int, Fraction], form: Form, k: Fraction) -> Fraction:
    for v, c in form[0].items():
        x = acc.get(v, Fraction(0)) + k * c
        if x:
            acc[v] = x
        else:
            acc.pop(v, None)
    return k * form[1]


SHORT_BITS = 24


def _short_lower(V: np.ndarray, C: np.ndarray, feats: Sequence[str], mag: np.ndarray) -> List[DyadicForm]:
    """Lower bounds of the affine functions ``V[k]·x + C[k]`` (finite) over a box with short
    exact coefficients: each row's coefficients rounded to multiples r·q of one power of two q
    (24 bits below the row's largest), and the constant lowered by the rounding's largest effect
    on the box, Σ |v_i - r_i·q|·mag_i (``mag[k]``: bounds of |x_i| on row k's box), then down to a
    multiple of q (so the exact volume computations stay on small integers).

    In binary64: v_i/q and r_i·q are exact (q is a power of two), and so is v_i - r_i·q (the
    two are within a factor 2, or r_i = 0); the slack is a sum of a few products of
    non-negative floats, rounded up by a relative 2^-40 (far above its rounding error)."""
    big = np.max(np.abs(V), axis=1) if V.shape[1] else np.zeros(len(V))
    e: np.ndarray = np.asarray(np.where(big > 0, np.frexp(big)[1], np.frexp(np.abs(C))[1])) - SHORT_BITS
    q = np.ldexp(1.0, e)[:, None]
    R = np.round(V / q)
    slack = (np.abs(V - R * q) * mag).sum(axis=1) * (1 + 2.0**-40) + 2.0**-1000
    out = []
    for k in range(len(V)):
        co = {feats[i]: int(x) for i, x in enumerate(R[k]) if x}
        low = Fraction(float(C[k])) - Fraction(float(slack[k]))
        ek = int(e[k])
        if ek >= 0:
            m = low.numerator // (low.denominator << ek)
        else:
            m = (low.numerator << -ek) // low.denominator
        out.append(DyadicForm(co, m, ek))
    return out


@dataclass
class BoxAnswer:
    kind: str
    margins: Optional[List[Tuple[ExactForm, bool]]] = None  # EXACT: the margins over the features
    sensitivity: Optional[Dict[str, float]] = None  # UNDECIDED: where to split (larger: better)
    below: Optional[List[DyadicForm]] = None  # UNDECIDED: margin_j(x) >= below_j(x) on the box
    above: Optional[List[DyadicForm]] = None  # UNDECIDED: margin_j(x) <= above_j(x) on the box
    pre: Optional[Pre] = None  # UNDECIDED: the ReLUs' pre-activation bounds
    split: Optional[str] = None  # UNDECIDED: the varying feature of largest width × sensitivity


@dataclass
class NetBounds:
    """Bound and piece computations for one classifier network (picklable: plain data)."""

    clf: Classifier
    graph: ReluGraph = field(init=False)
    var_forms: Dict[str, Form] = field(init=False)
    relus: List[Tuple[int, Form]] = field(init=False)  # per ReLU: its variable and exact pre-activation
    _rows: Dict[int, Tuple[np.ndarray, np.ndarray, List[Margin], List[Form]]] = field(init=False)
    _pieces: Dict[Tuple[int, bytes], List[Tuple[ExactForm, bool]]] = field(init=False)

    def __post_init__(self) -> None:
        net: Network = self.clf.network
        feats = net.features
        forms: Dict[str, Form] = {f: ({i: Fraction(1)}, Fraction(0)) for i, f in enumerate(feats)}
        relus: List[Tuple[int, Form]] = []
        nvars = len(feats)

        def form_of(a: Affine) -> Form:
            acc: Dict[int, Fraction] = {}
            const = a.const
            for v, c in a.terms:
                const += _add_into(acc, forms[v], c)
            return acc, const

        for a in net.body:
            e = a.expr
            if isinstance(e, Affine):
                forms[a.name] = form_of(e)
            elif isinstance(e, IRRelu):
                relus.append((nvars, form_of(e.arg)))
                forms[a.name] = ({nvars: Fraction(1)}, Fraction(0))
                nvars += 1
            else:  # a tree inside a network: refused by classifier() already
                raise AssertionError("not a network")
        self.var_forms = forms
        self.relus = relus
        self.graph = ReluGraph.build(nvars, list(range(len(feats))), relus)
        self._rows = {}
        self._pieces = {}

    @property
    def n_relus(self) -> int:
        return len(self.relus)

    # ---------------------------------------------------------------------------------------
    def _margin_rows(self, c: int) -> Tuple[np.ndarray, np.ndarray, List[Margin], List[Form]]:
        if c not in self._rows:
            ms = self.clf.margins(c)
            fs: List[Form] = []
            for a, _ in ms:
                acc: Dict[int, Fraction] = {}
                const = a.const
                for v, k in a.terms:
                    const += _add_into(acc, self.var_forms[v], k)
                fs.append((acc, const))
            rows, consts = self.graph.rows(fs)
            self._rows[c] = (rows, consts, ms, fs)
        return self._rows[c]

    def relax(self, boxes: Sequence[Box], pre: Optional[Pre] = None) -> BatchRelaxation:
        """The ReLUs' bounds and relaxations over each box (``pre``: (B, m) bounds known on
        enclosing boxes)."""
        lo, hi, _ = self._leaves(boxes)
        return relax_batch(self.graph, lo, hi, pre)

    def _leaves(self, boxes: Sequence[Box]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(B, nvars) outward float bounds of the inputs (other columns 0), and (B, d) which
        inputs vary (lo < hi exactly)."""
        feats = self.clf.network.features
        B, n = len(boxes), self.graph.nvars
        lo, hi = np.zeros((B, n)), np.zeros((B, n))
        varying = np.zeros((B, len(feats)), dtype=bool)
        for t, box in enumerate(boxes):
            for i, f in enumerate(feats):  # outward by one ulp: float() rounds to nearest
                a, b = box[f]
                lo[t, i], hi[t, i] = math.nextafter(float(a), -math.inf), math.nextafter(float(b), math.inf)
                varying[t, i] = a != b
        return lo, hi, varying

    def analyze(self, box: Box, c: int, pieces: bool = False, pre: Optional[Pre] = None) -> BoxAnswer:
        """:meth:`analyze_batch` on one box (``pre``: per-ReLU bounds of an enclosing box)."""
        return self.analyze_batch([box], c, pieces, None if pre is None else (pre[0][None], pre[1][None]))[0]

    def analyze_batch(
        self, boxes: Sequence[Box], c: int, pieces: bool = False, pre: Optional[Pre] = None
    ) -> List[BoxAnswer]:
        """What the bounds say about "the class is c" over each box (every feature's exact
        interval; a fixed feature has lo == hi). ``pieces``: answer EXACT whenever the phases
        are fixed (even where ALL or NONE holds). ``pre``: (B, m) pre-activation bounds known
        on enclosing boxes (they hold on these too: intersected)."""
        if not boxes:
            return []
        feats = self.clf.network.features
        d = len(feats)
        lo, hi, varying = self._leaves(boxes)
        rx = relax_batch(self.graph, lo, hi, pre)
        rows, consts, ms, fs = self._margin_rows(c)
        bb = bounds_batch(self.graph, rx, rows, consts, coef=True)
        assert bb.lower_coef is not None and bb.upper_coef is not None
        assert bb.lower_const is not None and bb.upper_const is not None
        active = rx.pre_lo >= 0
        fixed = np.all(active | (rx.pre_hi <= 0), axis=1)
        sens = np.abs(bb.lower_coef).sum(axis=1) + np.abs(bb.upper_coef).sum(axis=1)
        mag = np.maximum(np.abs(lo[:, :d]), np.abs(hi[:, :d]))  # outward: bounds of |x_i|
        score = np.where(varying, (hi[:, :d] - lo[:, :d]) * (sens + 1e-12), -1.0)
        split = np.argmax(score, axis=1)
        nm = len(fs)
        B = len(boxes)
        # the short forms of every box's linear bounds at once (rows that are not finite: 0)
        lc, uc = bb.lower_const, bb.upper_const
        finite_lo = np.all(np.isfinite(lc) & np.all(np.isfinite(bb.lower_coef), axis=2), axis=1)
        finite_hi = np.all(np.isfinite(uc) & np.all(np.isfinite(bb.upper_coef), axis=2), axis=1)
        mt = np.repeat(mag, nm, axis=0)
        fl = finite_lo[:, None, None]
        fh = finite_hi[:, None, None]
        lows = _short_lower(
            np.where(fl, bb.lower_coef, 0.0).reshape(B * nm, d), np.where(fl[:, 0], lc, 0.0).reshape(-1), feats, mt
        )
        highs = _short_lower(
            np.where(fh, -bb.upper_coef, 0.0).reshape(B * nm, d), np.where(fh[:, 0], -uc, 0.0).reshape(-1), feats, mt
        )
        out: List[BoxAnswer] = []
        for t in range(len(boxes)):
            if not pieces and np.all(bb.lower[t] > 0):
                out.append(BoxAnswer(ALL))
            elif not pieces and np.any(bb.upper[t] < 0):
                out.append(BoxAnswer(NONE))
            elif fixed[t]:
                key = (c, np.packbits(active[t]).tobytes())
                if key not in self._pieces:
                    self._pieces[key] = self._exact_margins(active[t], ms, fs)
                out.append(BoxAnswer(EXACT, margins=self._pieces[key]))
            else:
                # margin <= uv·x + uc  <=>  -margin >= -uv·x - uc
                out.append(
                    BoxAnswer(
                        UNDECIDED,
                        sensitivity={f: float(sens[t, i]) for i, f in enumerate(feats)},
                        below=lows[t * nm : (t + 1) * nm] if finite_lo[t] else None,
                        above=[f.negated() for f in highs[t * nm : (t + 1) * nm]] if finite_hi[t] else None,
                        pre=(rx.pre_lo[t].copy(), rx.pre_hi[t].copy()),
                        split=feats[int(split[t])] if varying[t].any() else None,
                    )
                )
        return out

    def _exact_margins(self, active: np.ndarray, ms: List[Margin], fs: List[Form]) -> List[Tuple[ExactForm, bool]]:
        """The margins as exact affine forms of the inputs when the ReLUs' phases are ``active``."""
        nin = len(self.clf.network.features)
        out_forms: Dict[int, Form] = {}

        def subst(f: Form) -> Form:
            acc: Dict[int, Fraction] = {}
            const = f[1]
            for v, k in f[0].items():
                if v < nin:
                    x = acc.get(v, Fraction(0)) + k
                    if x:
                        acc[v] = x
                    else:
                        acc.pop(v, None)
                else:
                    g = out_forms.get(v)
                    if g is not None:
                        const += _add_into(acc, g, k)
            return acc, const

        for r, (var, pre) in enumerate(self.relus):
            if active[r]:
                out_forms[var] = subst(pre)
        feats = self.clf.network.features
        res = []
        for (_, strict), f in zip(ms, fs):
            co, k = subst(f)
            res.append((({feats[v]: x for v, x in co.items()}, k), strict))
        return res
