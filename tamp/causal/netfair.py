"""Causal fairness of a network at scale: every cell × box decided, the biased mass exact.

Works on a :class:`~tamp.causal.netclaim.NetClaim`. Each categorical cell starts as one item
(the cell and the whole real box); items are decided in batches, largest first:

1. linear bounds (:mod:`tamp.causal.bounds`) of every ReLU and every literal form over all the
   batch's boxes at once, the pre-activation bounds of the enclosing box intersected;
2. a case pair is *impossible* on a box when one of its literals (or their sum) is false on the
   whole box, *sure* when all are true; a box is **certified** when no biased case pair is
   possible (for every pair of copies), **biased** when for some pair only biased ones are;
3. otherwise (**mixed**) with one pair of copies and few unstable ReLUs its biased share is
   measured exactly (:mod:`tamp.causal.netvolume`); else it is halved along the real input the
   undecided literals' linear bounds move most across, down to ``min_mass``.

All the certified numbers are exact rationals: boxes have exact ends, shares are exact volumes,
and the float bounds only ever decide with an outward error margin. A witness is an exactly
checked point (the centre of a biased box, or a sampled point of a measured one).
"""

from __future__ import annotations

import heapq
import random
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .bounds import bounds_batch, relax_batch
from .netclaim import NetClaim
from .netvolume import exact_share

CERTIFIED, BIASED, MEASURED, UNDECIDED = "certified", "biased", "measured", "undecided"

RBox = Tuple[Tuple[Fraction, Fraction], ...]
IBox = Tuple[Tuple[int, int], ...]  # per real dimension (i, d): the i-th of its 2^d equal parts


@dataclass
class Leaf:
    cell: int
    ibox: IBox
    status: str
    share: Optional[Fraction] = None  # MEASURED: the exact biased share


@dataclass
class Search:
    leaves: List[Leaf]
    left: List[Tuple[int, IBox]]  # not decided before the deadline
    witness: Optional[dict]
    boxes: int
    exact: int  # boxes measured exactly
    abandoned: bool = False  # stopped early: no bias in ``probe_boxes`` boxes


def exact_box(claim: NetClaim, ibox: IBox) -> RBox:
    """The exact real box of ``ibox``."""
    out = []
    for t, k in enumerate(claim.real):
        lo, hi = claim.bounds[k]
        i, d = ibox[t]
        w = (hi - lo) / (1 << d)
        out.append((lo + w * i, lo + w * (i + 1)))
    return tuple(out)


def box_share(ibox: IBox) -> Fraction:
    """The share of its cell's real box that ``ibox`` covers."""
    return Fraction(1, 1 << sum(d for _, d in ibox))


def search(
    claim: NetClaim,
    witness_at: Callable[[dict], Optional[dict]],
    deadline: Optional[float] = None,
    batch: int = 512,
    min_depth: int = 40,
    exact_unstable: int = 2,
    exact_dims: int = 8,
    probe_boxes: Optional[int] = None,
    gap: float = 0.0,
) -> Search:
    """Decide every cell × box (see the module docstring). ``witness_at(point)``: a checked
    witness record at a full input point, or None; boxes halved ``min_depth`` times in all are
    not split further (left undecided). ``probe_boxes``: give up (``abandoned``) when that many
    boxes were bounded without any bias measured while boxes remain — a fair network whose
    decision boundaries coincide exactly is certified by the general engine's phase branching.
    ``gap``: stop once the boxes still open (and those left undecided) cover at most this share
    of the whole input space; they become undecided leaves."""
    g = claim.graph
    n = g.nvars
    nr = len(claim.real)
    ncell = len(claim.cells)
    # float enclosures of the box ends: lo + w·t with t = i/2^d exact in binary64; the two
    # roundings of the float evaluation are covered by a relative margin (4u) and a tiny absolute one
    rlo = np.array([float(claim.bounds[k][0]) for k in claim.real])
    rw = np.array([float(claim.bounds[k][1] - claim.bounds[k][0]) for k in claim.real])
    mag = np.abs(rlo) + np.abs(rw)
    slack = 8 * 2.0**-53 * mag + 2.0**-1000
    m = len(claim.model.relus)
    inf = np.full(m, np.inf)
    heap: list = []
    seq = 0

    open_mass = 0.0  # share of the whole space in open boxes and undecided leaves (float: a stopping rule only)

    def push(cell, ibox, pre):
        nonlocal seq, open_mass
        depth = sum(d for _, d in ibox)
        heapq.heappush(heap, (depth, seq, cell, ibox, pre))
        open_mass += 2.0**-depth / ncell
        seq += 1

    root: IBox = tuple((0, 0) for _ in claim.real)
    for c in range(ncell):
        push(c, root, (-inf, inf))
    cps = claim.case_pairs
    npairs = len(claim.pairs)
    by_pair = [
        (
            [j for j, cp in enumerate(cps) if cp.pair == pi and cp.biased],
            [j for j, cp in enumerate(cps) if cp.pair == pi and not cp.biased],
        )
        for pi in range(npairs)
    ]
    leaves: List[Leaf] = []
    state: Dict[str, Any] = {"witness": None, "boxes": 0, "exact": 0, "tries": 0, "bias": False}
    rng = random.Random(0)

    def point(cell, ibox, frac=None):
        pt: Dict[str, Any] = {}
        for t, (lo, hi) in enumerate(exact_box(claim, ibox)):
            f = Fraction(1, 2) if frac is None else frac[t]
            pt[claim.dims[claim.real[t]].name] = lo + (hi - lo) * f
        for t, k in enumerate(claim.cat):
            pt[claim.dims[k].name] = claim.cells[cell][t]
        return pt

    def try_witness(cell, ibox, tries):
        if state["witness"] is not None or state["tries"] > 64:
            return
        state["tries"] += tries
        for i in range(tries):
            frac = None if i == 0 else [Fraction(rng.randrange(1, 1024), 1024) for _ in claim.real]
            w = witness_at(point(cell, ibox, frac))
            if w is not None:
                state["witness"] = w
                return

    abandoned = False
    if probe_boxes is not None:
        probe_boxes = max(probe_boxes, 32 * ncell)  # at least a few halvings of every cell
    while heap and (deadline is None or time.monotonic() < deadline):
        if open_mass <= gap:
            for _, _, cell, ibox, _ in heap:
                leaves.append(Leaf(cell, ibox, UNDECIDED))
            heap = []
            break
        if probe_boxes is not None and state["boxes"] >= probe_boxes and not state["bias"]:
            abandoned = True
            break
        items = [heapq.heappop(heap) for _ in range(min(batch, len(heap)))]
        B = len(items)
        open_mass -= sum(2.0 ** -it[0] for it in items) / ncell
        idx = np.array([[ib[k][0] for k in range(nr)] for _, _, _, ib, _ in items], dtype=float)
        dep = np.array([[ib[k][1] for k in range(nr)] for _, _, _, ib, _ in items], dtype=float)
        scale = np.exp2(-dep)
        lo, hi = np.zeros((B, n)), np.zeros((B, n))
        lo[:, :nr] = rlo + rw * (idx * scale) - slack
        hi[:, :nr] = rlo + rw * ((idx + 1) * scale) + slack
        cells = np.array([it[2] for it in items], dtype=int)
        plo = np.stack([it[4][0] for it in items])
        phi = np.stack([it[4][1] for it in items])
        rx = relax_batch(g, lo, hi, (plo, phi), claim.pre_c[cells])
        bb = bounds_batch(g, rx, claim.rows, claim.consts[cells], coef=True)
        L, U = bb.lower, bb.upper
        lit_false = {False: L > 0, True: L >= 0}
        possible = np.ones((B, len(cps)), dtype=bool)
        for j, cp in enumerate(cps):
            for f, s in cp.literals + cp.implied:
                possible[:, j] &= ~lit_false[s][:, f]
        unstable = rx.unstable().sum(axis=1)
        undecided_form = (L <= 0) & (U >= 0)
        state["boxes"] += B
        fair_all = np.ones(B, dtype=bool)
        biased_any = np.zeros(B, dtype=bool)
        for pb, pf in by_pair:
            has_b = possible[:, pb].any(axis=1)
            has_f = possible[:, pf].any(axis=1)
            fair_all &= ~has_b
            biased_any |= has_b & ~has_f
        widths = rw * scale
        for t, (depth, _, cell, ibox, _) in enumerate(items):
            if fair_all[t]:
                leaves.append(Leaf(cell, ibox, CERTIFIED))
                continue
            if biased_any[t]:
                state["bias"] = True
                leaves.append(Leaf(cell, ibox, BIASED))
                try_witness(cell, ibox, 1)
                continue
            if npairs == 1 and unstable[t] <= exact_unstable:
                pb_cps = [cps[j] for j in by_pair[0][0] if possible[t, j]]
                box = exact_box(claim, ibox)
                pts: Optional[List[Dict[str, Fraction]]] = [] if state["witness"] is None else None
                got = exact_share(
                    claim, cell, box, rx.pre_lo[t], rx.pre_hi[t], pb_cps, exact_unstable, exact_dims, deadline, pts
                )
                if got is not None:
                    state["exact"] += 1
                    leaves.append(Leaf(cell, ibox, MEASURED, got))
                    if got > 0:
                        state["bias"] = True
                        if pts:
                            full = dict(pts[0])
                            for u, k in enumerate(claim.cat):
                                full[claim.dims[k].name] = claim.cells[cell][u]
                            state["witness"] = witness_at(full)
                        try_witness(cell, ibox, 2)
                    continue
            if depth >= min_depth:
                open_mass += 2.0**-depth / ncell
                leaves.append(Leaf(cell, ibox, UNDECIDED))
                try_witness(cell, ibox, 2)
                continue
            k = _split_dim(bb, undecided_form[t], t, widths[t], scale[t])
            i, d = ibox[k]
            pre = (rx.pre_lo[t], rx.pre_hi[t])
            push(cell, ibox[:k] + ((2 * i, d + 1),) + ibox[k + 1 :], pre)
            push(cell, ibox[:k] + ((2 * i + 1, d + 1),) + ibox[k + 1 :], pre)
    left = [(cell, ibox) for _, _, cell, ibox, _ in heap]
    return Search(leaves, left, state["witness"], state["boxes"], state["exact"], abandoned)


def _split_dim(bb, undecided: np.ndarray, t: int, widths: np.ndarray, rel: np.ndarray) -> int:
    """The real dimension along which the undecided literal forms' linear bounds move most
    (|coefficient| × width), or the relatively widest one."""
    fs = np.flatnonzero(undecided)
    if len(fs):
        score = (np.abs(bb.lower_coef[t][fs]).sum(axis=0) + np.abs(bb.upper_coef[t][fs]).sum(axis=0)) * widths
        best = int(np.argmax(score))
        if score[best] > 0:
            return best
    return int(np.argmax(rel))


def hunt_witness(claim: NetClaim, res: Search, witness_at: Callable[[dict], Optional[dict]], tries: int = 400):
    """A checked witness from the measured boxes with the largest biased share, by sampling
    (None if none is hit): for when no box was biased as a whole."""
    rng = random.Random(1)
    cands = sorted(
        (
            leaf
            for leaf in res.leaves
            if leaf.status in (MEASURED, UNDECIDED) and (leaf.share is None or leaf.share > 0)
        ),
        key=lambda leaf: -(leaf.share or Fraction(0)),
    )[:40]
    if not cands:
        return None
    per = max(1, tries // len(cands))
    for leaf in cands:
        box = exact_box(claim, leaf.ibox)
        for _ in range(per):
            pt: Dict[str, Any] = {}
            for t, (lo, hi) in enumerate(box):
                pt[claim.dims[claim.real[t]].name] = lo + (hi - lo) * Fraction(rng.randrange(1, 1 << 16), 1 << 16)
            for t, k in enumerate(claim.cat):
                pt[claim.dims[k].name] = claim.cells[leaf.cell][t]
            w = witness_at(pt)
            if w is not None:
                return w
    return None
