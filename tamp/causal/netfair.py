"""Causal fairness of a network at scale: every cell × box decided, the biased mass exact.

Works on a :class:`~tamp.causal.netclaim.NetClaim`. Each categorical cell starts as one item
(the cell and the whole real box); items are decided in batches, largest first:

1. linear bounds (:mod:`tamp.causal.bounds`) of every ReLU and every literal form over all the
   batch's boxes at once, the pre-activation bounds of the enclosing box intersected;
2. a case pair is *impossible* on a box when one of its literals (or their sum) is false on the
   whole box, *sure* when all are true; a box is **certified** when no biased case pair is
   possible (for every pair of copies), **biased** when for some pair only biased ones are;
3. otherwise (**mixed**) the box's biased share is bounded from its linear bounds
   (:mod:`tamp.causal.netshare`, sharpened by the relational bound on the copies' difference,
   :mod:`tamp.causal.netdiff`); the boxes with the largest uncertain mass (mass × (upper -
   lower share)) are refined first: measured exactly (:mod:`tamp.causal.netvolume`) when one
   pair of copies and few unstable ReLUs, else halved along the real input the undecided
   literals' linear bounds move most across — until the uncertain mass is at most ``gap``; the
   boxes still uncertain then are BOUNDED leaves (their share interval is certified).

All the certified numbers are exact rationals: boxes have exact ends, shares are exact volumes,
and the float bounds only ever decide with an outward error margin. A witness is an exactly
checked point (the centre of a biased box, or a sampled point of a measured one).
"""

from __future__ import annotations

import heapq
import math
import random
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from gmpy2 import mpq

from .bounds import bounds_batch, relax_batch
from .netclaim import CasePair, NetClaim
from .netdiff import all_copy_diffs, tighten
from .netshare import share_bounds_batch
from .netvolume import exact_share

CERTIFIED, BIASED, MEASURED, UNDECIDED = "certified", "biased", "measured", "undecided"
BOUNDED = "bounded"  # a mixed box whose biased share lies in [share, upper]

RBox = Tuple[Tuple[Fraction, Fraction], ...]
IBox = Tuple[Tuple[int, int], ...]  # per real dimension (i, d): the i-th of its 2^d equal parts


@dataclass
class Leaf:
    cell: int
    ibox: IBox
    status: str
    share: Optional[Fraction] = None  # MEASURED: the exact biased share; BOUNDED: a lower bound
    upper: Optional[Fraction] = None  # BOUNDED: an upper bound on the biased share


@dataclass(eq=False)
class Pending:
    """A mixed box whose biased share is bounded but not yet decided."""

    cell: int
    ibox: IBox
    pre: Tuple[np.ndarray, np.ndarray]  # its ReLUs' pre-activation bounds
    pairs: List[CasePair]  # the biased case pairs possible on it
    unstable: int
    split: int  # the real dimension to halve it along
    lower: Fraction = Fraction(0)
    upper: Fraction = Fraction(1)


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
    relational: bool = True,
    share_bounds: bool = True,
    share_unstable: Optional[int] = None,
    final_exact: int = 64,
) -> Search:
    """Decide every cell × box (see the module docstring). ``witness_at(point)``: a checked
    witness record at a full input point, or None; boxes halved ``min_depth`` times in all are
    not split further. ``probe_boxes``: give up (``abandoned``) when that many boxes were bounded
    without any bias measured while boxes remain — a fair network whose decision boundaries
    coincide exactly is certified by the general engine's phase branching. ``gap``: stop once
    the open boxes' and the bounded boxes' uncertain biased mass (upper - lower, a share of the
    whole input space) is at most this; the bounded boxes become BOUNDED leaves.
    ``relational``: bound the copies' difference through the shared layers
    (:mod:`tamp.causal.netdiff`); ``share_bounds``: bound a mixed box's biased share from its
    linear bounds (:mod:`tamp.causal.netshare`) — only when at most ``share_unstable`` ReLUs are
    unstable on it, if given (coarser boxes then count as wholly uncertain), and refine the boxes with the
    largest uncertain mass first (else mixed boxes are halved breadth-first); at the end the
    ``final_exact`` most uncertain bounded boxes are measured exactly where that is cheap."""
    g = claim.graph
    n = g.nvars
    nr = len(claim.real)
    ncell = len(claim.cells)
    names = [claim.dims[k].name for k in claim.real]
    # float enclosures of the box ends: lo + w·t with t = i/2^d exact in binary64; the two
    # roundings of the float evaluation are covered by a relative margin (4u) and a tiny absolute one
    rlo = np.array([float(claim.bounds[k][0]) for k in claim.real])
    rw = np.array([float(claim.bounds[k][1] - claim.bounds[k][0]) for k in claim.real])
    mag = np.abs(rlo) + np.abs(rw)
    slack = 8 * 2.0**-53 * mag + 2.0**-1000
    m = len(claim.model.relus)
    inf = np.full(m, np.inf)
    diffs = all_copy_diffs(claim) if relational else []
    share_bounds = share_bounds and nr <= exact_dims
    todo: list = []  # boxes not bounded yet: (depth, seq, cell, ibox, pre)
    front: list = []  # bounded mixed boxes: (-uncertain mass, seq, Pending)
    seq = 0
    # uncertain biased mass (share of the whole space; float: a stopping rule only): the open
    # boxes' whole mass, the bounded boxes' upper - lower
    open_gap = 0.0

    qlo = [mpq(claim.bounds[k][0]) for k in claim.real]
    qw = [mpq(claim.bounds[k][1] - claim.bounds[k][0]) for k in claim.real]

    def qbox(ibox: IBox) -> List[Tuple[Any, Any]]:
        # exact_box in gmpy2 rationals (the share bounds' arithmetic)
        out = []
        for t, (i, d) in enumerate(ibox):
            w = qw[t] / (1 << d)
            out.append((qlo[t] + w * i, qlo[t] + w * (i + 1)))
        return out

    def mass(depth: int) -> float:
        return 2.0**-depth / ncell

    def push(cell, ibox, pre):
        nonlocal seq, open_gap
        depth = sum(d for _, d in ibox)
        heapq.heappush(todo, (depth, seq, cell, ibox, pre))
        open_gap += mass(depth)
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

    def full_point(cell, pt):
        full = dict(pt)
        for u, k in enumerate(claim.cat):
            full[claim.dims[k].name] = claim.cells[cell][u]
        return full

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

    def timed_out() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    def measure(p: Pending) -> bool:
        """Measure a bounded box's biased share exactly (True: a MEASURED leaf)."""
        pts: Optional[List[Dict[str, Fraction]]] = [] if state["witness"] is None else None
        box = exact_box(claim, p.ibox)
        got = exact_share(claim, p.cell, box, p.pre[0], p.pre[1], p.pairs, exact_unstable, exact_dims, deadline, pts)
        if got is None:
            return False
        state["exact"] += 1
        leaves.append(Leaf(p.cell, p.ibox, MEASURED, got))
        if got > 0:
            state["bias"] = True
            if pts:
                state["witness"] = state["witness"] or witness_at(full_point(p.cell, pts[0]))
            try_witness(p.cell, p.ibox, 2)
        return True

    def refine(p: Pending, depth: int) -> None:
        """A bounded box's uncertain mass is among the largest: measure it exactly or halve it."""
        nonlocal open_gap
        g_mass = mass(depth) * float(p.upper - p.lower)
        if npairs == 1 and p.unstable <= exact_unstable and measure(p):
            open_gap -= g_mass
            return
        if depth >= min_depth:
            finals.append(p)  # stays bounded: its uncertain mass remains counted
            return
        open_gap -= g_mass
        i, d = p.ibox[p.split]
        k = p.split
        push(p.cell, p.ibox[:k] + ((2 * i, d + 1),) + p.ibox[k + 1 :], p.pre)
        push(p.cell, p.ibox[:k] + ((2 * i + 1, d + 1),) + p.ibox[k + 1 :], p.pre)

    finals: List[Pending] = []
    abandoned = False
    if probe_boxes is not None:
        probe_boxes = max(probe_boxes, 32 * ncell)  # at least a few halvings of every cell
    while not timed_out():
        if probe_boxes is not None and state["boxes"] >= probe_boxes and not state["bias"] and (todo or front):
            abandoned = True
            break
        if not todo:
            # no bias seen yet: a fair network needs every box certified (its verdict), so
            # the uncertain mass being small is no reason to stop
            if not front or (open_gap <= gap and (state["bias"] or state["witness"] is not None)):
                break
            # refine the boxes with the largest uncertain mass, about enough to close the gap
            need, got_gap = open_gap - gap, 0.0
            if need <= 0:  # (no bias seen yet) refine a batch's worth
                need = math.inf
            while front and len(todo) < batch and got_gap < 2 * need and not timed_out():
                neg, _, p = heapq.heappop(front)
                got_gap += -neg
                refine(p, sum(d for _, d in p.ibox))
            continue
        if not share_bounds and open_gap <= gap:
            for _, _, cell, ibox, _ in todo:
                leaves.append(Leaf(cell, ibox, UNDECIDED))
            todo = []
            break
        items = [heapq.heappop(todo) for _ in range(min(batch, len(todo)))]
        B = len(items)
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
        consts = claim.consts[cells]
        bb = bounds_batch(g, rx, claim.rows, consts, coef=True, affine=share_bounds)
        L, U = bb.lower, bb.upper
        rel = tighten(claim, diffs, rx, cells, consts, L, U) if diffs else {}
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
        # the mixed boxes fine enough for share bounds, bounded together
        fine = ~fair_all & ~biased_any if share_bounds else np.zeros(B, dtype=bool)
        if share_unstable is not None:
            fine &= unstable <= share_unstable
        shares: Dict[int, Tuple[Fraction, Fraction, Optional[dict]]] = {}
        sel = np.flatnonzero(fine)
        if len(sel):
            bcols = np.array([j for pb, _ in by_pair for j in pb], dtype=int)
            got = share_bounds_batch(
                names,
                [qbox(items[t][3]) for t in sel.tolist()],
                _Rows(bb, sel),
                [cps[j] for j in bcols.tolist()],
                possible[np.ix_(sel, bcols)],
                {f: v[0][sel] for f, v in rel.items()},
                state["witness"] is None and state["tries"] <= 64,
            )
            shares = dict(zip(sel.tolist(), got))
        for t, (depth, _, cell, ibox, _pre) in enumerate(items):
            if timed_out():  # the rest of the batch stays open (honoured within one box)
                for it in items[t:]:
                    heapq.heappush(todo, it)
                break
            open_gap -= mass(depth)
            if fair_all[t]:
                leaves.append(Leaf(cell, ibox, CERTIFIED))
                continue
            if biased_any[t]:
                state["bias"] = True
                leaves.append(Leaf(cell, ibox, BIASED))
                try_witness(cell, ibox, 1)
                continue
            pb_cps = [cps[j] for pb, _ in by_pair for j in pb if possible[t, j]]
            k = _split_dim(bb, undecided_form[t], t, widths[t], scale[t])
            p = Pending(cell, ibox, (rx.pre_lo[t], rx.pre_hi[t]), pb_cps, int(unstable[t]), k)
            if t not in shares:
                # no share bounds (off, or too coarse for them to be tight): uncertain as a whole
                open_gap += mass(depth)
                if share_bounds:
                    heapq.heappush(front, (-mass(depth), seq, p))
                    seq += 1
                    continue
                refine(p, depth)
                if p in finals:
                    finals.remove(p)
                    leaves.append(Leaf(cell, ibox, UNDECIDED))
                continue
            low, up, pt = shares[t]
            p.lower, p.upper = low, up
            if low > 0:
                state["bias"] = True
                if pt is not None and state["witness"] is None:
                    state["tries"] += 1
                    state["witness"] = witness_at(full_point(cell, pt))
            g_mass = mass(depth) * float(up - low)
            if up == low:
                leaves.append(Leaf(cell, ibox, BOUNDED, low, up))
                continue
            open_gap += g_mass
            heapq.heappush(front, (-g_mass, seq, p))
            seq += 1
    # the few largest uncertain boxes left that are cheap to measure exactly are measured (a
    # small network's interval then closes; a large one keeps most of its bounded boxes)
    rest = sorted(front, key=lambda it: it[:2])
    for n_tried, (_, _, p) in enumerate(rest):
        if n_tried >= final_exact or timed_out() or not (npairs == 1 and p.unstable <= exact_unstable and measure(p)):
            finals.append(p)
    for p in finals:
        leaves.append(Leaf(p.cell, p.ibox, BOUNDED if share_bounds else UNDECIDED, p.lower, p.upper))
    left = [(cell, ibox) for _, _, cell, ibox, _ in todo]
    return Search(leaves, left, state["witness"], state["boxes"], state["exact"], abandoned)


class _Rows:
    """The rows ``sel`` of a :class:`~tamp.causal.bounds.BatchBounds` (the boxes given share bounds)."""

    def __init__(self, bb, sel: np.ndarray):
        self.lower_coef, self.upper_coef = bb.lower_coef[sel], bb.upper_coef[sel]
        self.lower_const, self.upper_const = bb.lower_const[sel], bb.upper_const[sel]


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
            if leaf.status in (MEASURED, UNDECIDED, BOUNDED)
            and (leaf.share is None or leaf.share > 0 or (leaf.upper or 0) > 0)
        ),
        key=lambda leaf: (-(leaf.share or Fraction(0)), -(leaf.upper or Fraction(0))),
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
