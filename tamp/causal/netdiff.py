"""Relational bounds on the difference of two copies of a network (differential verification).

The copies of a fairness claim share every non-sensitive input: copy A and copy B compute the
same ReLUs (same weights) on inputs that differ only in the sensitive feature. Bounding each
copy separately loses that correlation — on a box straddling the decision boundary both copies'
scores range widely, although their *difference* is small. As in ReluDiff / NeuroDiff, the
difference is propagated through the shared layers: for the k-th ReLU of copy A and its partner
in copy B, with ``P = pre_A - pre_B`` and ``Δ = relu(pre_A) - relu(pre_B)``,

* ``P`` at the first level is the weighted difference of the inputs the copies do not share (the
  sensitive feature: a constant in a categorical cell, an interval over the box for a
  continuous feature split at a value), deeper it is ``W·Δ`` of the level below;
* relu is monotone and 1-Lipschitz, so ``Δ`` lies between 0 and ``P``; both active: ``Δ = P``,
  both inactive: ``Δ = 0``; always ``relu(l_A) - relu(u_B) <= Δ <= relu(u_A) - relu(l_B)`` from the
  copies' own pre-activation bounds.

A decision form of the claim whose ReLU part is copy A's minus the same on copy B (the implied
sum of a case pair "A says 1, B says 0") is then bounded by ``w·Δ`` plus its other terms, in
interval arithmetic per box. The matching of the copies' ReLUs and the forms' structure are
checked in exact rationals; the float arithmetic carries an outward margin (the same error
analysis as :mod:`tamp.causal.bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Set, Tuple

import numpy as np

from .bounds import TINY, BatchRelaxation, U
from .netclaim import NetClaim


@dataclass
class CopyDiff:
    """The matched ReLUs of two copies and the decision forms that are their differences."""

    a: np.ndarray  # (P,) ReLU indices of copy A
    b: np.ndarray  # (P,) their partners in copy B
    levels: List[np.ndarray]  # positions (into a / b) per level, bottom up
    weights: List[np.ndarray]  # per level: (k, P) weights on the lower positions' differences
    leaf_diff: List[np.ndarray]  # per level: (k, leaves) A's minus B's coefficients on the real inputs
    forms: np.ndarray  # (F,) indices of the relational forms among the claim's forms
    form_w: np.ndarray  # (F, P) their weights on the differences
    form_leaf: np.ndarray  # (F, leaves) their coefficients on the real inputs


def _relu_deps(claim: NetClaim, roots: Set[int]) -> Set[int]:
    """The ReLU indices the model variables ``roots`` read, transitively."""
    seen: Set[int] = set()
    todo = [claim.relu_index[v] for v in roots if v in claim.relu_index]
    while todo:
        r = todo.pop()
        if r in seen:
            continue
        seen.add(r)
        todo.extend(claim.relu_index[v] for v in claim.model.relus[r].pre[0] if v in claim.relu_index)
    return seen


def _copy_relus(claim: NetClaim, copy: int) -> List[int]:
    vs = {v for _, lits in claim.cases[copy] for f, _ in lits for v in claim.forms[f][0]}
    return sorted(_relu_deps(claim, vs))


def copy_diff(claim: NetClaim, pair: int) -> Optional[CopyDiff]:
    """The relational structure of the claim's ``pair`` of copies, or None when the copies do not
    compute the same ReLUs (in the same order, with exactly the same weights between them)."""
    i, j = claim.pairs[pair]
    ra, rb = _copy_relus(claim, i), _copy_relus(claim, j)
    if not ra or len(ra) != len(rb) or set(ra) & set(rb):
        return None
    relus = claim.model.relus
    partner = {relus[x].var: relus[y].var for x, y in zip(ra, rb)}
    pos_of = {relus[x].var: p for p, x in enumerate(ra)}
    nleaf = len(claim.real)
    P = len(ra)
    g = claim.graph
    level_of = {}
    for lv, idx in enumerate(g.levels):
        for r in idx:
            level_of[int(r)] = lv
    W = np.zeros((P, P))
    D = np.zeros((P, nleaf))
    for p, (x, y) in enumerate(zip(ra, rb)):
        if level_of[x] != level_of[y]:
            return None
        fa, fb = relus[x].pre[0], relus[y].pre[0]
        for v, c in fa.items():
            if v in claim.relu_index:
                if v not in pos_of or fb.get(partner[v], Fraction(0)) != c:
                    return None
                W[p, pos_of[v]] = float(c)
        for v in fb:
            if v in claim.relu_index and (v not in partner.values() or not any(partner[u] == v for u in fa)):
                return None
        for v, t in claim.real_vars.items():
            d = fa.get(v, Fraction(0)) - fb.get(v, Fraction(0))
            D[p, t] = float(d)
    nlv = len(g.levels)
    levels = [np.array([p for p in range(P) if level_of[ra[p]] == lv], dtype=int) for lv in range(nlv)]
    levels = [lv for lv in levels if len(lv)]
    fidx, fw, fl = [], [], []
    b_pos = {relus[y].var: p for p, y in enumerate(rb)}
    for f, (co, _) in enumerate(claim.forms):
        w = np.zeros(P)
        ok, any_a = True, False
        for v, c in co.items():
            if v in pos_of:
                if co.get(partner[v], Fraction(0)) != -c:
                    ok = False
                    break
                w[pos_of[v]] = float(c)
                any_a = True
            elif v in b_pos:
                continue  # checked from its partner
            elif v in claim.relu_index:
                ok = False  # a ReLU of neither copy
                break
        if ok and any_a and all(v in pos_of or v in b_pos or v not in claim.relu_index for v in co):
            if all(co.get(u, Fraction(0)) == -co.get(partner[u], Fraction(0)) for u in pos_of):
                fidx.append(f)
                fw.append(w)
                fl.append(
                    [float(co.get(v, Fraction(0))) for v in sorted(claim.real_vars, key=lambda u: claim.real_vars[u])]
                )
    if not fidx:
        return None
    return CopyDiff(
        np.array(ra, dtype=int),
        np.array(rb, dtype=int),
        levels,
        [W[lv] for lv in levels],
        [D[lv] for lv in levels],
        np.array(fidx, dtype=int),
        np.array(fw),
        np.array(fl).reshape(len(fidx), nleaf),
    )


def _interval_dot(M: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Bounds of M·v for v in [lo, hi] (rows of lo/hi: boxes), infinite ends kept infinite."""
    Mp, Mn = np.maximum(M, 0.0).T, np.minimum(M, 0.0).T
    with np.errstate(invalid="ignore"):
        a = np.nan_to_num(lo @ Mp, nan=-np.inf) + np.nan_to_num(hi @ Mn, nan=-np.inf)
        b = np.nan_to_num(hi @ Mp, nan=np.inf) + np.nan_to_num(lo @ Mn, nan=np.inf)
    return np.nan_to_num(a, nan=-np.inf), np.nan_to_num(b, nan=np.inf)


def diff_bounds(
    claim: NetClaim, cd: CopyDiff, rx: BatchRelaxation, cells: np.ndarray, consts: np.ndarray
) -> Tuple[np.ndarray, np.ndarray]:
    """Per box, bounds (B, F) of the relational forms ``cd.forms`` (constants ``consts``, (B, all
    forms)) from the copies' difference propagated through the shared layers (module docstring).
    ``rx``: the batch's relaxation (its leaf bounds and both copies' pre-activation bounds)."""
    B = rx.lo.shape[0]
    P = len(cd.a)
    nleaf = len(claim.real)
    xlo, xhi = rx.lo[:, :nleaf], rx.hi[:, :nleaf]
    xmag = np.maximum(np.abs(xlo), np.abs(xhi))
    dlo, dhi = np.zeros((B, P)), np.zeros((B, P))
    pc = claim.pre_c[cells]
    k_ops = 2 * (P + nleaf + 8)
    for pos, Wl, Dl in zip(cd.levels, cd.weights, cd.leaf_diff):
        a, b = cd.a[pos], cd.b[pos]
        cdiff = pc[:, a] - pc[:, b]
        llo, lhi = _interval_dot(Dl, xlo, xhi)
        wlo, whi = _interval_dot(Wl, dlo, dhi)
        dmag = np.maximum(np.abs(dlo), np.abs(dhi))
        with np.errstate(invalid="ignore"):
            shadow = np.abs(pc[:, a]) + np.abs(pc[:, b]) + xmag @ np.abs(Dl).T + dmag @ np.abs(Wl).T
        margin = 4 * k_ops * U * np.nan_to_num(shadow, nan=np.inf) + TINY
        plo = cdiff + llo + wlo - margin
        phi = cdiff + lhi + whi + margin
        la, ua = rx.pre_lo[:, a], rx.pre_hi[:, a]
        lb, ub = rx.pre_lo[:, b], rx.pre_hi[:, b]
        with np.errstate(invalid="ignore"):
            plo, phi = np.maximum(plo, la - ub), np.minimum(phi, ua - lb)
            # Δ between 0 and P; equal to P when both are active, 0 when both are inactive
            hlo, hhi = np.minimum(plo, 0.0), np.maximum(phi, 0.0)
            both_on = (la >= 0) & (lb >= 0)
            both_off = (ua <= 0) & (ub <= 0)
            hlo = np.where(both_on, plo, np.where(both_off, 0.0, hlo))
            hhi = np.where(both_on, phi, np.where(both_off, 0.0, hhi))
            hlo = np.maximum(hlo, np.maximum(la, 0.0) - np.maximum(ub, 0.0))
            hhi = np.minimum(hhi, np.maximum(ua, 0.0) - np.maximum(lb, 0.0))
        dlo[:, pos], dhi[:, pos] = np.nan_to_num(hlo, nan=-np.inf), np.nan_to_num(hhi, nan=np.inf)
    c = consts[:, cd.forms]
    llo, lhi = _interval_dot(cd.form_leaf, xlo, xhi)
    wlo, whi = _interval_dot(cd.form_w, dlo, dhi)
    dmag = np.maximum(np.abs(dlo), np.abs(dhi))
    with np.errstate(invalid="ignore"):
        shadow = np.abs(c) + xmag @ np.abs(cd.form_leaf).T + dmag @ np.abs(cd.form_w).T
    margin = 4 * k_ops * U * np.nan_to_num(shadow, nan=np.inf) + TINY
    return c + llo + wlo - margin, c + lhi + whi + margin


def all_copy_diffs(claim: NetClaim) -> List[CopyDiff]:
    """The relational structure of every pair of copies that has one."""
    out = []
    for pi in range(len(claim.pairs)):
        cd = copy_diff(claim, pi)
        if cd is not None:
            out.append(cd)
    return out


def tighten(
    claim: NetClaim,
    diffs: List[CopyDiff],
    rx: BatchRelaxation,
    cells: np.ndarray,
    consts: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> Dict[int, Tuple[np.ndarray, np.ndarray]]:
    """Intersect ``lower`` / ``upper`` (B, forms; in place) with the relational bounds; returns
    the relational bounds per form index (for the share bounds)."""
    out: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}
    for cd in diffs:
        lo, hi = diff_bounds(claim, cd, rx, cells, consts)
        for t, f in enumerate(cd.forms):
            f = int(f)
            lower[:, f] = np.maximum(lower[:, f], lo[:, t])
            upper[:, f] = np.minimum(upper[:, f], hi[:, t])
            out[f] = (lower[:, f].copy(), upper[:, f].copy())
    return out
