"""Symbolic linear bounds (DeepPoly/CROWN-style back-substitution) over a :class:`~tamp.causal.dag.Dag`.

Set-up (exact, once per program): every numeric node becomes an exact affine form over
*variables* — the numeric inputs, ReLU atoms and opaque atoms:

* ``max(a, b) = a + relu(b - a)``, ``min(a, b) = a - relu(a - b)``, ``abs(a) = 2 relu(a) - a``
  introduce a ReLU atom whose *pre-activation* is an affine form over earlier variables;
* ``+ - neg``, products and quotients by constants stay affine;
* anything else numeric (``ite`` on numbers, ``div``, ``mod``, products of variables) is an
  opaque atom, bounded only by the interval of interval propagation.

Per box (floating point, numpy): ReLU atoms are processed level by level (a level only reads
lower ones); the pre-activations of a level are back-substituted through the lower levels'
relaxations down to inputs and opaque atoms, then concretised over the box. Relaxations:
inactive (``u <= 0``) → 0, active (``l >= 0``) → identity, unstable → lower ``α·x`` (α ∈ {0, 1})
and upper ``β(x - l)`` with ``β = u/(u-l)``. Any α ∈ [0, 1] is a valid lower bound; the upper
line is checked to lie above ``relu`` at both ends of [l, u] (with its rounding error added), so
it is valid on the whole interval (relu is convex).

Soundness of the floating-point back-substitution: the same computation is run on absolute
values (the *shadow*); by the standard error analysis of sums and products in binary64 (any
summation order, FMA or not), the computed bound differs from the exactly computed bound of
the same relaxation by at most γ_K·shadow, where K bounds the number of operations along any
path (levels × (width + constants)). Every concrete bound is widened by a generous multiple of
that, plus an absolute term for underflow; box bounds are outward-rounded enclosures. So the
intervals and linear forms handed out always contain the exact values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

import numpy as np

from tamp.core.linear import Affine, affine_add, affine_scale

from .dag import Dag

U = 2.0**-53  # unit roundoff of binary64
TINY = 2.0**-900  # absolute slack for underflow (far above any subnormal error sum)
COMPARE = ("<", "<=", ">", ">=", "==", "!=")

Form = Affine[int]  # (variable index -> coefficient, constant)


@dataclass
class Relu:
    """A ReLU atom: variable ``var`` = relu(``pre``); ``node`` is the DAG node it came from."""

    var: int
    pre: Form
    node: int
    level: int


@dataclass
class LinearModel:
    """The affine structure of a DAG (exact) and its float matrices for back-substitution."""

    dag: Dag
    nvars: int
    inputs: Dict[int, str]  # variable index -> input name
    opaque: Dict[int, int]  # variable index -> DAG node
    relus: List[Relu]
    forms: Dict[int, Form]  # DAG node -> affine form (numeric nodes only)
    relu_of_node: Dict[int, Relu] = field(default_factory=dict)
    levels: List[List[int]] = field(default_factory=list)  # per level: indices into relus

    def __post_init__(self):
        n = self.nvars
        self.pre_m = np.zeros((len(self.relus), n))
        self.pre_c = np.zeros(len(self.relus))
        for r_i, r in enumerate(self.relus):
            for v, c in r.pre[0].items():
                self.pre_m[r_i, v] = float(c)
            self.pre_c[r_i] = float(r.pre[1])
        self.abs_pre_m, self.abs_pre_c = np.abs(self.pre_m), np.abs(self.pre_c)
        self.relu_cols = np.array([r.var for r in self.relus], dtype=int)
        self.leaf_cols = np.array(sorted(list(self.inputs) + list(self.opaque)), dtype=int)
        nl = max([r.level for r in self.relus], default=0)
        self.levels = [[i for i, r in enumerate(self.relus) if r.level == lv] for lv in range(1, nl + 1)]
        # operations along any path: per level a dot product of length <= nvars, a scaling and
        # two additions; plus the concretisation; doubled for safety
        self.k_ops = 2 * (len(self.levels) + 2) * (n + 8)

    def row(self, form: Form) -> Tuple[np.ndarray, float]:
        v = np.zeros(self.nvars)
        for i, c in form[0].items():
            v[i] = float(c)
        return v, float(form[1])


def build_model(dag: Dag) -> LinearModel:
    """Exact affine forms of the numeric nodes of ``dag`` (see the module docstring)."""
    forms: Dict[int, Form] = {}
    inputs: Dict[int, str] = {}
    opaque: Dict[int, int] = {}
    relus: List[Relu] = []
    var_level: Dict[int, int] = {}
    input_var: Dict[str, int] = {}
    count = [0]

    def new_var() -> int:
        count[0] += 1
        return count[0] - 1

    def relu(pre: Form, node: int) -> int:
        lv = 1 + max([var_level.get(v, 0) for v in pre[0]], default=0)
        v = new_var()
        var_level[v] = lv
        relus.append(Relu(v, pre, node, lv))
        return v

    def var_form(v: int) -> Form:
        return Affine({v: Fraction(1)}, Fraction(0))

    for i, n in enumerate(dag.nodes):
        if n.sort == "bool":
            continue
        k = n.kind
        got = [forms.get(j) for j in n.args]
        a = [x for x in got if x is not None]
        affine = len(a) == len(got)  # every argument has an affine form
        if k == "const":
            forms[i] = Affine({}, Fraction(n.number))
        elif k == "input":
            if n.name not in input_var:
                input_var[n.name] = new_var()
                inputs[input_var[n.name]] = n.name
            forms[i] = var_form(input_var[n.name])
        elif k in ("+", "-") and affine:
            forms[i] = affine_add(a[0], a[1], Fraction(1 if k == "+" else -1))
        elif k == "neg" and affine:
            forms[i] = affine_scale(a[0], Fraction(-1))
        elif k == "*" and affine and (not a[0][0] or not a[1][0]):
            c, f = (a[0], a[1]) if not a[0][0] else (a[1], a[0])
            forms[i] = affine_scale(f, c[1])
        elif k == "/" and affine and not a[1][0] and a[1][1] != 0:
            forms[i] = affine_scale(a[0], 1 / a[1][1])
        elif k == "max" and affine:
            forms[i] = affine_add(a[0], var_form(relu(affine_add(a[1], a[0], Fraction(-1)), i)))
        elif k == "min" and affine:
            forms[i] = affine_add(a[0], var_form(relu(affine_add(a[0], a[1], Fraction(-1)), i)), Fraction(-1))
        elif k == "abs" and affine:
            forms[i] = affine_add(affine_scale(var_form(relu(a[0], i)), Fraction(2)), a[0], Fraction(-1))
        else:
            v = new_var()
            opaque[v] = i
            var_level[v] = 0
            forms[i] = var_form(v)
    model = LinearModel(dag, count[0], inputs, opaque, relus, forms)
    model.relu_of_node = {r.node: r for r in relus}
    return model


def comparison_form(model: LinearModel, node: int) -> Optional[Form]:
    """``lhs - rhs`` of a numeric comparison node, or None."""
    n = model.dag.nodes[node]
    if n.kind not in COMPARE or len(n.args) != 2:
        return None
    a, b = (model.forms.get(j) for j in n.args)
    if a is None or b is None:
        return None
    return affine_add(a, b, Fraction(-1))


@dataclass
class Relaxation:
    """Per-box state: concrete pre-activation bounds and relaxation parameters of every ReLU atom."""

    lo: np.ndarray  # per leaf variable (inputs and opaque atoms; other entries unused)
    hi: np.ndarray
    pre_lo: np.ndarray  # per relu
    pre_hi: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray


def _upper_line(l: float, u: float) -> Tuple[float, float]:
    """(β, γ) with β·x + γ >= relu(x) for every x in [l, u] (l < 0 < u), rounding included."""
    beta = u / (u - l)
    t1 = -beta * l
    t2 = u - beta * u
    gamma = max(t1, t2) + 8 * U * (abs(beta * l) + abs(u) + abs(beta * u)) + TINY
    return beta, gamma


def backsub(model: LinearModel, rx: Relaxation, rows: np.ndarray, consts: np.ndarray, upto: int):
    """Lower bounds of the affine functions ``rows·v + consts`` (one per row) as affine functions of
    the leaf variables, substituting the relaxations of ReLU levels ``< upto`` (1-based levels).

    Returns (coefficients, constants, shadow) with the shadow bounding the magnitudes involved."""
    V, c = rows.copy(), consts.copy()
    S, cs = np.abs(rows), np.abs(consts)
    big = np.maximum(rx.alpha, rx.beta)
    for lv in range(upto - 1, 0, -1):
        idx = model.levels[lv - 1]
        if not idx:
            continue
        cols = model.relu_cols[idx]
        C = V[:, cols]
        Cp, Cn = np.maximum(C, 0.0), np.minimum(C, 0.0)
        coef = Cp * rx.alpha[idx] + Cn * rx.beta[idx]
        V[:, cols] = 0.0
        V += coef @ model.pre_m[idx]
        c = c + coef @ model.pre_c[idx] + Cn @ rx.gamma[idx]
        Sraw = S[:, cols].copy()
        Sc = Sraw * big[idx]
        S[:, cols] = 0.0
        S += Sc @ model.abs_pre_m[idx]
        cs = cs + Sc @ model.abs_pre_c[idx] + Sraw @ np.abs(rx.gamma[idx])
    return V, c, (S, cs)


def concretize_lower(model: LinearModel, rx: Relaxation, V, c, shadow) -> np.ndarray:
    """Sound lower bounds over the box of the affine functions ``V·v + c`` of leaf variables."""
    cols = model.leaf_cols
    Vl = V[:, cols]
    lo, hi = rx.lo[cols], rx.hi[cols]
    with np.errstate(invalid="ignore"):
        val = c + np.where(Vl > 0, Vl * lo, Vl * hi).sum(axis=1)
    S, cs = shadow
    mag = np.maximum(np.abs(lo), np.abs(hi))
    sh = cs + S[:, cols] @ mag
    margin = 4 * model.k_ops * U * sh + TINY * model.k_ops
    out = val - margin
    out[np.isnan(out)] = -math.inf
    return out


def linear_bounds(model: LinearModel, rx: Relaxation, rows: np.ndarray, consts: np.ndarray, upto: int):
    """(lower, upper) concrete bounds of ``rows·v + consts`` with ReLU levels ``< upto`` relaxed."""
    both = np.vstack([rows, -rows])
    bc = np.concatenate([consts, -consts])
    V, c, sh = backsub(model, rx, both, bc, upto)
    low = concretize_lower(model, rx, V, c, sh)
    n = rows.shape[0]
    return low[:n], -low[n:]


def relax(
    model: LinearModel, leaf_bounds: Dict[int, Tuple[float, float]], pre_ibp: Dict[int, Tuple[float, float]]
) -> Optional[Relaxation]:
    """Bounds and relaxations of every ReLU atom over a box.

    ``leaf_bounds``: variable index -> float (lo, hi) for inputs and opaque atoms (sound
    enclosures); ``pre_ibp``: relu index -> an interval of its pre-activation known by other
    means (intersected). None when a leaf is unbounded."""
    n = model.nvars
    lo, hi = np.zeros(n), np.zeros(n)
    for v, (a, b) in leaf_bounds.items():
        if not (math.isfinite(a) and math.isfinite(b)):
            return None
        lo[v], hi[v] = a, b
    m = len(model.relus)
    rx = Relaxation(lo, hi, np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m))
    for lv, idx in enumerate(model.levels, start=1):
        if not idx:
            continue
        l, u = linear_bounds(model, rx, model.pre_m[idx], model.pre_c[idx], lv)
        for t, r_i in enumerate(idx):
            a, b = l[t], u[t]
            if r_i in pre_ibp:
                a, b = max(a, pre_ibp[r_i][0]), min(b, pre_ibp[r_i][1])
            rx.pre_lo[r_i], rx.pre_hi[r_i] = a, b
            if b <= 0:
                rx.alpha[r_i] = rx.beta[r_i] = rx.gamma[r_i] = 0.0
            elif a >= 0:
                rx.alpha[r_i] = rx.beta[r_i] = 1.0
                rx.gamma[r_i] = 0.0
            else:
                rx.beta[r_i], rx.gamma[r_i] = _upper_line(a, b)
                rx.alpha[r_i] = 1.0 if b >= -a else 0.0
    return rx


def lower_forms(model: LinearModel, rx: Relaxation, rows: np.ndarray, consts: np.ndarray):
    """Sound linear lower bounds of ``rows·v + consts`` over the box in terms of the leaf variables.

    Returns (coefficients V, constants c, concrete lower bounds) such that for every point v of
    the box, ``rows·v + consts >= V·v + c >= lower``: the float error margin of the
    back-substitution is already subtracted from ``c`` (and that of the concretisation from
    ``lower``)."""
    V, c, sh = backsub(model, rx, rows, consts, len(model.levels) + 1)
    S, cs = sh
    cols = model.leaf_cols
    mag = np.maximum(np.abs(rx.lo[cols]), np.abs(rx.hi[cols]))
    margin = 4 * model.k_ops * U * (cs + S[:, cols] @ mag) + TINY * model.k_ops
    low = concretize_lower(model, rx, V, c - margin, (S, cs + margin))
    return V, c - margin, low
