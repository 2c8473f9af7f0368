"""A ReLU network over a box: sound bounds of its class margins, and its exact affine pieces.

Bounds: the network's ReLUs become the atoms of :class:`tamp.causal.linear.LinearModel` and the
margins are bounded by its CROWN-style back-substitution (float arithmetic with a proven
rounding-error margin: the bounds always contain the exact values). Over a box the answer is:

* ``ALL`` — every margin's lower bound is > 0: the class is ``c`` everywhere in the box;
* ``NONE`` — some margin's upper bound is < 0: the class is never ``c`` in the box;
* ``EXACT`` — every ReLU has a fixed phase over the box (bounds of its pre-activation >= 0 or
  <= 0), so the network *is* an affine map there: the margins' exact rational forms over the
  inputs (cached per activation pattern) describe the class-c region as a polytope;
* ``UNDECIDED`` — none of these; the per-input sensitivities (sums of the back-substituted
  coefficients' magnitudes) say which input to split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple, cast

import numpy as np

from tamp.causal.linear import LinearModel, Relu, lower_forms, relax
from tamp.core.linear import Affine as CoreAffine
from tamp.models.errors import ModelError
from tamp.models.ir import Affine, Network
from tamp.models.ir import Relu as IRRelu

from .classifier import Classifier, Margin

ALL, NONE, EXACT, UNDECIDED = "all", "none", "exact", "undecided"

Form = Tuple[Dict[int, Fraction], Fraction]
ExactForm = Tuple[Dict[str, Fraction], Fraction]  # over feature names
Box = Dict[str, Tuple[Fraction, Fraction]]


def _add_into(acc: Dict[int, Fraction], form: Form, k: Fraction) -> Fraction:
    for v, c in form[0].items():
        x = acc.get(v, Fraction(0)) + k * c
        if x:
            acc[v] = x
        else:
            acc.pop(v, None)
    return k * form[1]


def _check_float(f: Form, path: str) -> None:
    """The float bound computation reads every coefficient as a binary64 number: it must be one
    exactly (true of float32/float64 weights; a decimal such as 0.1 is not)."""
    for x in list(f[0].values()) + [f[1]]:
        if Fraction(float(x)) != x:
            raise ModelError(
                f"the network has the coefficient {x}, which is not a binary floating-point number; "
                "tamp robust bounds networks with float weights (ONNX, Keras) only",
                path,
            )


SHORT_BITS = 24


def _short_lower(v: np.ndarray, c: float, feats: List[str], box: Box) -> ExactForm:
    """A lower bound of the affine function ``v·x + c`` over the box with short exact
    coefficients: every coefficient rounded to a multiple r·q of one power of two q (24 bits
    below the largest), and the constant lowered by the rounding's largest effect on the box,
    Σ |v_i - r_i·q|·max|x_i| (so the exact volume computations stay on small numbers).

    In binary64: v_i/q and r_i·q are exact (q is a power of two), and so is v_i - r_i·q (the
    two are within a factor 2, or r_i = 0); the slack is a sum of a few products of
    non-negative floats, rounded up by a relative 2^-40 (far above its rounding error)."""
    big = float(np.max(np.abs(v))) if len(v) else 0.0
    if big == 0.0:
        return {}, Fraction(c)
    e = math.frexp(big)[1] - SHORT_BITS
    qf = math.ldexp(1.0, e)
    co: Dict[str, Fraction] = {}
    slack = 0.0
    for i, f in enumerate(feats):
        x = float(v[i])
        if x == 0.0:
            continue
        r = round(x / qf)
        err = abs(x - r * qf)
        if err:
            lo, hi = box[f]
            slack += err * math.nextafter(max(abs(float(lo)), abs(float(hi))), math.inf)
        if r:
            co[f] = Fraction(r, 1 << -e) if e < 0 else Fraction(r << e)
    slack = slack * (1 + 2.0**-40) + 2.0**-1000
    q = Fraction(1, 1 << -e) if e < 0 else Fraction(1 << e)
    const = Fraction(c) - Fraction(slack)
    return co, math.floor(const / q) * q


@dataclass
class BoxAnswer:
    kind: str
    margins: Optional[List[Tuple[ExactForm, bool]]] = None  # EXACT: the margins over the features
    sensitivity: Optional[Dict[str, float]] = None  # UNDECIDED: where to split
    below: Optional[List[ExactForm]] = None  # UNDECIDED: margin_j(x) >= below_j(x) on the box
    above: Optional[List[ExactForm]] = None  # UNDECIDED: margin_j(x) <= above_j(x) on the box
    pre: Optional[Dict[int, Tuple[float, float]]] = None  # UNDECIDED: the ReLUs' pre-activation bounds


def _enclose(q: Fraction) -> Tuple[float, float]:
    """A float interval containing q: float() rounds correctly, so q lies within one ulp."""
    f = float(q)
    if Fraction(f) == q:
        return f, f
    return math.nextafter(f, -math.inf), math.nextafter(f, math.inf)


@dataclass
class NetBounds:
    """Bound and piece computations for one classifier network (picklable: plain data)."""

    clf: Classifier
    model: LinearModel = field(init=False)
    var_forms: Dict[str, Form] = field(init=False)
    _rows: Dict[int, Tuple[np.ndarray, np.ndarray, List[Margin], List[Form]]] = field(init=False)
    _pieces: Dict[Tuple[int, bytes], List[Tuple[ExactForm, bool]]] = field(init=False)

    def __post_init__(self) -> None:
        net: Network = self.clf.network
        feats = net.features
        forms: Dict[str, Form] = {f: ({i: Fraction(1)}, Fraction(0)) for i, f in enumerate(feats)}
        relus: List[Relu] = []
        level: Dict[int, int] = {}
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
                pre = form_of(e.arg)
                lv = 1 + max([level.get(v, 0) for v in pre[0]], default=0)
                level[nvars] = lv
                relus.append(Relu(nvars, CoreAffine(pre[0], pre[1]), len(relus), lv))
                forms[a.name] = ({nvars: Fraction(1)}, Fraction(0))
                nvars += 1
            else:  # a tree inside a network: refused by classifier() already
                raise AssertionError("not a network")
        self.var_forms = forms
        for r in relus:
            _check_float(r.pre, self.clf.path)
        inputs = {i: f for i, f in enumerate(feats)}
        # the causal engine's LinearModel needs no DAG for relax/backsub (only its builder does)
        self.model = LinearModel(cast(Any, None), nvars, inputs, {}, relus, {})
        self._rows = {}
        self._pieces = {}

    # ---------------------------------------------------------------------------------------
    def _margin_rows(self, c: int):
        if c not in self._rows:
            ms = self.clf.margins(c)
            fs: List[Form] = []
            for a, _ in ms:
                acc: Dict[int, Fraction] = {}
                const = a.const
                for v, k in a.terms:
                    const += _add_into(acc, self.var_forms[v], k)
                fs.append((acc, const))
                _check_float(fs[-1], self.clf.path)
            rows = np.zeros((len(fs), self.model.nvars))
            consts = np.zeros(len(fs))
            for r, (co, k) in enumerate(fs):
                for j, x in co.items():
                    rows[r, j] = float(x)
                consts[r] = float(k)
            self._rows[c] = (rows, consts, ms, fs)
        return self._rows[c]

    def analyze(
        self, box: Box, c: int, pieces: bool = False, pre: Optional[Dict[int, Tuple[float, float]]] = None
    ) -> BoxAnswer:
        """What the bounds say about "the class is c" over ``box`` (every feature's exact
        interval; a fixed feature has lo == hi). ``pieces``: answer EXACT whenever the phases
        are fixed (even where ALL or NONE holds). ``pre``: pre-activation bounds
        known on an enclosing box (they hold on this one too: intersected)."""
        m = self.model
        feats = self.clf.network.features
        leaf = {}
        for i, f in enumerate(feats):
            lo, hi = box[f]
            leaf[i] = (_enclose(lo)[0], _enclose(hi)[1])
        rx = relax(m, leaf, pre or {})
        assert rx is not None  # every feature is bounded
        rows, consts, ms, fs = self._margin_rows(c)
        both = np.vstack([rows, -rows])
        bc = np.concatenate([consts, -consts])
        # both·v + bc >= V·v + cc >= low on the box (rounding errors included)
        V, cc, low = lower_forms(m, rx, both, bc)
        k = len(rows)
        lower, upper = low[:k], -low[k:]
        if np.all(lower > 0) and not pieces:
            return BoxAnswer(ALL)
        if np.any(upper < 0) and not pieces:
            return BoxAnswer(NONE)
        fixed = (rx.pre_lo >= 0) | (rx.pre_hi <= 0)
        if np.all(fixed):
            key = (c, np.packbits(rx.pre_lo >= 0).tobytes())
            if key not in self._pieces:
                self._pieces[key] = self._exact_margins(rx.pre_lo >= 0, ms, fs)
            return BoxAnswer(EXACT, margins=self._pieces[key])
        d = len(feats)
        sens = np.abs(V[:, :d]).sum(axis=0)
        forms: List[Optional[ExactForm]] = []
        for r in range(2 * k):
            if not (math.isfinite(cc[r]) and np.all(np.isfinite(V[r, :d]))):
                forms.append(None)
                continue
            forms.append(_short_lower(V[r, :d], cc[r], feats, box))
        below = forms[:k]
        # -margin >= form  <=>  margin <= -form
        above = [None if f is None else ({v: -x for v, x in f[0].items()}, -f[1]) for f in forms[k:]]
        return BoxAnswer(
            UNDECIDED,
            sensitivity={f: float(sens[i]) for i, f in enumerate(feats)},
            pre={r: (float(rx.pre_lo[r]), float(rx.pre_hi[r])) for r in range(len(rx.pre_lo))},
            below=None if any(f is None for f in below) else below,  # type: ignore[arg-type]
            above=None if any(f is None for f in above) else above,  # type: ignore[arg-type]
        )

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

        for r in self.model.relus:
            if active[r.node]:
                out_forms[r.var] = subst(r.pre)
        feats = self.clf.network.features
        res = []
        for (_, strict), f in zip(ms, fs):
            co, k = subst(f)
            res.append((({feats[v]: x for v, x in co.items()}, k), strict))
        return res
