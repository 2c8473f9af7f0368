"""Linear bound propagation (CROWN / DeepPoly) for ReLU networks over many boxes at once.

A :class:`ReluGraph` is a feed-forward ReLU computation over numbered variables: *leaf*
variables (the inputs) and ReLU variables ``v_r = relu(pre_r)`` whose pre-activation
``pre_r = Σ w·v + c`` reads leaves and ReLUs of lower *levels*. It comes from a dense network
(:meth:`ReluGraph.from_layers`) or from the exact affine structure of a program
(:meth:`ReluGraph.from_model`, :class:`tamp.causal.linear.LinearModel`).

:func:`relax_batch` bounds every pre-activation over a batch of boxes (B boxes, numpy arrays
of shape (B, ...)), level by level: each level's pre-activations are back-substituted through
the lower levels' linear relaxations down to the leaves and concretised over each box —
inactive (``u <= 0``) → 0, active (``l >= 0``) → identity, unstable → lower ``α·x``
(α ∈ {0, 1}, the one with the smaller area) and upper ``β(x - l)``, ``β = u/(u - l)`` (its
rounding error added to the offset so the line stays above relu on [l, u]). Pre-activation
bounds known from an enclosing box (``pre``) are intersected: they hold on every sub-box.
:func:`bounds_batch` then bounds any affine functions of the variables (the network's outputs,
differences of outputs, ...) the same way, and can hand back the linear lower bounds as
coefficients on the leaves.

Soundness in floating point: the exact coefficients are rounded to binary64 (a relative error
of at most u = 2^-53 each, counted as one more operation), and the same back-substitution is run
on absolute values (the *shadow*). By the standard error analysis of sums of products in
binary64 (any order, FMA or not) the computed bound differs from the exactly computed one by at
most γ_K·shadow, K the operations along any path (levels × (width + constants)); every concrete
bound is widened by four times that plus an absolute term for underflow, so the bounds handed
out always enclose the exact values. Leaf bounds must themselves be outward-rounded enclosures
(:func:`tamp.core.interval.enclose_range`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

U = 2.0**-53  # unit roundoff of binary64
TINY = 2.0**-900  # absolute slack for underflow

Row = Tuple[Dict[int, Fraction], Fraction]  # an exact affine form: variable -> coefficient, constant


@dataclass
class ReluGraph:
    """Leaves and levelled ReLUs over ``nvars`` variables (see the module docstring)."""

    nvars: int
    leaf_cols: np.ndarray  # variable indices of the leaves
    relu_cols: np.ndarray  # per ReLU: its variable index
    pre_m: np.ndarray  # (m, nvars) pre-activation coefficients (binary64, rounded to nearest)
    pre_c: np.ndarray  # (m,) constants
    levels: List[np.ndarray]  # per level (1, 2, ...): the ReLU indices of that level

    def __post_init__(self) -> None:
        self.abs_pre_m = np.abs(self.pre_m)
        self.abs_pre_c = np.abs(self.pre_c)
        # per level: its pre-activations' coefficients on the leaves, and on each lower level
        self.leaf_block: Dict[int, np.ndarray] = {}
        self.abs_leaf_block: Dict[int, np.ndarray] = {}
        self.blocks: Dict[int, Dict[int, Tuple[np.ndarray, np.ndarray]]] = {}
        for lv, idx in enumerate(self.levels, start=1):
            P = self.pre_m[idx]
            self.leaf_block[lv] = P[:, self.leaf_cols]
            self.abs_leaf_block[lv] = np.abs(self.leaf_block[lv])
            self.blocks[lv] = {}
            for lower in range(1, lv):
                blk = P[:, self.relu_cols[self.levels[lower - 1]]]
                if np.any(blk):
                    self.blocks[lv][lower] = (blk, np.abs(blk))
        # operations along any path: per level a dot product of length <= nvars, a scaling, two
        # additions and the rounding of the coefficients; plus the concretisation; doubled
        self.k_ops = 2 * (len(self.levels) + 2) * (self.nvars + 8)

    @staticmethod
    def build(nvars: int, leaves: Sequence[int], relus: Sequence[Tuple[int, Row]]) -> "ReluGraph":
        """From exact forms: ``relus`` lists (variable, pre-activation form); a ReLU's level is one
        more than the highest level among the ReLUs its pre-activation reads (leaves: level 0)."""
        level: Dict[int, int] = {v: 0 for v in leaves}
        m = len(relus)
        pre_m, pre_c = np.zeros((m, nvars)), np.zeros(m)
        lv_of = []
        for r, (v, (co, c)) in enumerate(relus):
            lv = 1 + max([level[u] for u in co], default=0)
            level[v] = lv
            lv_of.append(lv)
            for u, k in co.items():
                pre_m[r, u] = float(k)
            pre_c[r] = float(c)
        nl = max(lv_of, default=0)
        levels = [np.array([r for r in range(m) if lv_of[r] == lv], dtype=int) for lv in range(1, nl + 1)]
        return ReluGraph(
            nvars, np.array(sorted(leaves), dtype=int), np.array([v for v, _ in relus], dtype=int), pre_m, pre_c, levels
        )

    @staticmethod
    def from_layers(
        weights: Sequence[Sequence[Sequence[Fraction]]], biases: Sequence[Sequence[Fraction]]
    ) -> Tuple["ReluGraph", List[Row]]:
        """A dense network: ``weights[l][j][i]`` from unit i of layer l (layer 0 = the inputs) to
        unit j of layer l+1, every layer but the last followed by ReLU. Returns the graph
        (inputs are variables 0..n-1) and the exact forms of the outputs (over the last ReLUs)."""
        n_in = len(weights[0][0])
        prev = list(range(n_in))
        nv = n_in
        relus: List[Tuple[int, Row]] = []
        for W, b in zip(weights[:-1], biases[:-1]):
            cur = []
            for row, c in zip(W, b):
                relus.append((nv, ({prev[i]: Fraction(w) for i, w in enumerate(row) if w}, Fraction(c))))
                cur.append(nv)
                nv += 1
            prev = cur
        outs = [
            ({prev[i]: Fraction(w) for i, w in enumerate(row) if w}, Fraction(c))
            for row, c in zip(weights[-1], biases[-1])
        ]
        return ReluGraph.build(nv, list(range(n_in)), relus), outs

    def rows(self, forms: Sequence[Row]) -> Tuple[np.ndarray, np.ndarray]:
        """The binary64 matrix and constants of exact affine forms."""
        M, c = np.zeros((len(forms), self.nvars)), np.zeros(len(forms))
        for t, (co, k) in enumerate(forms):
            for v, x in co.items():
                M[t, v] = float(x)
            c[t] = float(k)
        return M, c


@dataclass
class BatchRelaxation:
    """Per box (first axis) the leaf bounds and every ReLU's pre-activation bounds and relaxation."""

    lo: np.ndarray  # (B, nvars): leaf bounds (other entries unused)
    hi: np.ndarray
    pre_lo: np.ndarray  # (B, m)
    pre_hi: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray
    pre_c: Optional[np.ndarray] = None  # (B, m): per-box pre-activation constants (else the graph's)

    def unstable(self) -> np.ndarray:
        """(B, m): the ReLUs whose phase is not fixed on the box."""
        return (self.pre_lo < 0) & (self.pre_hi > 0)


def _upper_lines(l: np.ndarray, u: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(β, γ) with β·x + γ >= relu(x) on [l, u] (l < 0 < u), rounding included."""
    beta = u / (u - l)
    t1 = -beta * l
    t2 = u - beta * u
    gamma = np.maximum(t1, t2) + 8 * U * (np.abs(beta * l) + np.abs(u) + np.abs(beta * u)) + TINY
    return beta, gamma


def _backsub(g: ReluGraph, rx: BatchRelaxation, rows: np.ndarray, consts: np.ndarray, upto: int):
    """Lower bounds of ``rows·v + consts`` (R rows; constants (R,) or per box (B, R)) per box as
    affine functions of the leaves, substituting the relaxations of ReLU levels ``< upto``:
    (coefficients on the leaves (B,R,leaves), constants (B,R), shadow). Coefficients are kept
    per level block (a level's pre-activations read only lower levels), so each step costs the
    width of the levels it touches, not of the whole graph."""
    B = rx.lo.shape[0]
    R = rows.shape[0]
    leaf = np.broadcast_to(rows[:, g.leaf_cols], (B, R, len(g.leaf_cols))).copy()
    blocks = {}
    for lv in range(1, upto):
        cols = g.relu_cols[g.levels[lv - 1]]
        if len(cols) and np.any(rows[:, cols]):
            blocks[lv] = np.broadcast_to(rows[:, cols], (B, R, len(cols))).copy()
    c = np.broadcast_to(consts, (B, R)).copy()
    sleaf = np.abs(leaf)
    sblocks = {lv: np.abs(v) for lv, v in blocks.items()}
    cs = np.abs(c)
    pre_c = rx.pre_c if rx.pre_c is not None else np.broadcast_to(g.pre_c, (B, len(g.pre_c)))
    abs_pre_c = np.abs(pre_c)
    big = np.maximum(rx.alpha, rx.beta)
    for lv in range(upto - 1, 0, -1):
        if lv not in blocks:
            continue
        idx = g.levels[lv - 1]
        C = blocks.pop(lv)
        Sraw = sblocks.pop(lv)
        Cp, Cn = np.maximum(C, 0.0), np.minimum(C, 0.0)
        coef = Cp * rx.alpha[:, None, idx] + Cn * rx.beta[:, None, idx]
        c += np.einsum("brk,bk->br", coef, pre_c[:, idx]) + np.einsum("brk,bk->br", Cn, rx.gamma[:, idx])
        Sc = Sraw * big[:, None, idx]
        cs += np.einsum("brk,bk->br", Sc, abs_pre_c[:, idx]) + np.einsum("brk,bk->br", Sraw, np.abs(rx.gamma[:, idx]))
        leaf += coef @ g.leaf_block[lv]
        sleaf += Sc @ g.abs_leaf_block[lv]
        for lower, (P, absP) in g.blocks[lv].items():
            if lower in blocks:
                blocks[lower] += coef @ P
                sblocks[lower] += Sc @ absP
            else:
                blocks[lower] = coef @ P
                sblocks[lower] = Sc @ absP
    return leaf, c, (sleaf, cs)


def _margin(g: ReluGraph, rx: BatchRelaxation, shadow) -> np.ndarray:
    S, cs = shadow
    cols = g.leaf_cols
    mag = np.maximum(np.abs(rx.lo[:, cols]), np.abs(rx.hi[:, cols]))
    sh = cs + np.einsum("brk,bk->br", S, mag)
    return 4 * g.k_ops * U * sh + TINY * g.k_ops


def _concretize(g: ReluGraph, rx: BatchRelaxation, V, c, margin) -> np.ndarray:
    cols = g.leaf_cols
    lo, hi = rx.lo[:, None, cols], rx.hi[:, None, cols]
    with np.errstate(invalid="ignore"):
        val = c + np.where(V > 0, V * lo, V * hi).sum(axis=2)
    out = val - 2 * margin
    out[np.isnan(out)] = -math.inf
    return out


@dataclass
class BatchBounds:
    lower: np.ndarray  # (B, R)
    upper: np.ndarray  # (B, R)
    lower_coef: Optional[np.ndarray] = None  # (B, R, leaves): linear lower bounds' coefficients
    upper_coef: Optional[np.ndarray] = None  # (B, R, leaves): on the leaves (``leaf_cols`` order)
    lower_const: Optional[np.ndarray] = None  # (B, R): with ``affine``, constants such that on the
    upper_const: Optional[np.ndarray] = None  # box lower_coef·x + lower_const <= f(x) <= upper_coef·x + upper_const


def bounds_batch(
    g: ReluGraph,
    rx: BatchRelaxation,
    rows: np.ndarray,
    consts: np.ndarray,
    upto: Optional[int] = None,
    coef: bool = False,
    affine: bool = False,
) -> BatchBounds:
    """Sound lower and upper bounds per box of the affine functions ``rows·v + consts`` (ReLU
    levels below ``upto`` relaxed; default all). ``coef``: also the linear bounds on the leaves
    with their constants, sound over each box; ``affine`` (the same, kept for the callers that ask
    for it by that name). The constants are widened by twice the outward margin of the concrete
    bounds, so that for every leaf point x of the box, read exactly, ``lower_coef·x + lower_const
    <= f(x) <= upper_coef·x + upper_const`` holds for the exact f (the margin bounds the float
    error of the coefficients and constants over the box; the factor 2 also covers the rounding
    of the constants' own subtraction)."""
    upto = len(g.levels) + 1 if upto is None else upto
    R = rows.shape[0]
    both = np.vstack([rows, -rows])
    bc = np.concatenate([consts, -consts], axis=-1)
    V, c, sh = _backsub(g, rx, both, bc, upto)
    margin = _margin(g, rx, sh)
    low = _concretize(g, rx, V, c, margin)
    out = BatchBounds(low[:, :R], -low[:, R:])
    if coef or affine:
        # the float V, c differ from the exactly back-substituted bound by at most γ_K·shadow
        # (elementwise), and margin >= that over the box: V·x + (c - 2·margin) is below it
        out.lower_coef, out.upper_coef = V[:, :R], -V[:, R:]
        k = c - 2 * margin
        out.lower_const, out.upper_const = k[:, :R], -k[:, R:]
    return out


def relax_batch(
    g: ReluGraph,
    lo: np.ndarray,
    hi: np.ndarray,
    pre: Optional[Tuple[np.ndarray, np.ndarray]] = None,
    pre_c: Optional[np.ndarray] = None,
) -> BatchRelaxation:
    """Bounds and relaxations of every ReLU over each box. ``lo``, ``hi``: (B, nvars) with the
    leaves' outward-rounded bounds filled in (finite); ``pre``: (B, m) pre-activation bounds
    known from enclosing boxes, intersected; ``pre_c``: (B, m) per-box constants of the
    pre-activations (e.g. inputs that are constant in a box folded in, each the binary64
    rounding of the exact constant)."""
    B, m = lo.shape[0], len(g.relu_cols)
    z = lambda: np.zeros((B, m))  # noqa: E731
    rx = BatchRelaxation(lo, hi, z(), z(), z(), z(), z(), pre_c)
    for lv, idx in enumerate(g.levels, start=1):
        if not len(idx):
            continue
        b = bounds_batch(g, rx, g.pre_m[idx], g.pre_c[idx] if pre_c is None else pre_c[:, idx], lv)
        l, u = b.lower, b.upper
        if pre is not None:
            l, u = np.maximum(l, pre[0][:, idx]), np.minimum(u, pre[1][:, idx])
        rx.pre_lo[:, idx], rx.pre_hi[:, idx] = l, u
        act, dead = l >= 0, u <= 0
        unst = ~(act | dead)
        beta, gamma = _upper_lines(np.where(unst, l, -1.0), np.where(unst, u, 1.0))
        flat = unst & ~np.isfinite(l)  # no finite lower end: the constant upper bound u
        beta, gamma = np.where(flat, 0.0, beta), np.where(flat, u, gamma)
        rx.alpha[:, idx] = np.where(act, 1.0, np.where(unst & (u >= -l), 1.0, 0.0))
        rx.beta[:, idx] = np.where(act, 1.0, np.where(unst, beta, 0.0))
        rx.gamma[:, idx] = np.where(unst, gamma, 0.0)
    return rx
