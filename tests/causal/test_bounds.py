"""Linear bound propagation over batches of boxes (tamp.causal.bounds): the bounds enclose the
exact values of the network at random points of each box, and tighten on smaller boxes."""

from fractions import Fraction

import numpy as np
import pytest

from tamp.causal.bounds import ReluGraph, bounds_batch, relax_batch


def _net(rng, sizes):
    ws, bs = [], []
    for a, b in zip(sizes, sizes[1:]):
        ws.append([[Fraction(int(rng.integers(-1000, 1000)), 997) for _ in range(a)] for _ in range(b)])
        bs.append([Fraction(int(rng.integers(-300, 300)), 1009) for _ in range(b)])
    return ws, bs


def _exact(ws, bs, x):
    h = [Fraction(v) for v in x]
    for k, (W, b) in enumerate(zip(ws, bs)):
        h = [sum((w * v for w, v in zip(row, h)), Fraction(0)) + c for row, c in zip(W, b)]
        if k < len(ws) - 1:
            h = [max(Fraction(0), v) for v in h]
    return h


@pytest.mark.parametrize("seed", range(4))
def test_bounds_enclose_exact_values(seed):
    rng = np.random.default_rng(seed)
    sizes = [3, 6, 5, 2]
    ws, bs = _net(rng, sizes)
    g, outs = ReluGraph.from_layers(ws, bs)
    B = 6
    lo, hi = np.zeros((B, g.nvars)), np.zeros((B, g.nvars))
    boxes = []
    for t in range(B):
        a = rng.random(3) - 0.5
        w = rng.random(3) * (0.5 if t % 2 else 0.01)
        boxes.append((a, a + w))
        lo[t, :3], hi[t, :3] = a, a + w  # binary64 ends: exact
    rx = relax_batch(g, lo, hi)
    # the last row: out0 - out1 (a form over the same last-layer ReLUs)
    co = dict(outs[0][0])
    for k, v in outs[1][0].items():
        co[k] = co.get(k, 0) - v
    M, c = g.rows(outs + [(co, outs[0][1] - outs[1][1])])
    bb = bounds_batch(g, rx, M, c)
    for t, (a, b) in enumerate(boxes):
        for _ in range(40):
            x = [
                Fraction(float(a[i]))
                + (Fraction(float(b[i])) - Fraction(float(a[i]))) * Fraction(int(rng.integers(0, 65)), 64)
                for i in range(3)
            ]
            y = _exact(ws, bs, x)
            vals = y + [y[0] - y[1]]
            for r, v in enumerate(vals):
                assert Fraction(bb.lower[t, r]) <= v <= Fraction(bb.upper[t, r])
    # small boxes give tighter bounds than wide ones on average
    width = bb.upper - bb.lower
    assert width[1::2].mean() > width[0::2].mean()


def test_parent_bounds_are_intersected():
    rng = np.random.default_rng(7)
    ws, bs = _net(rng, [2, 8, 8, 1])
    g, outs = ReluGraph.from_layers(ws, bs)
    lo, hi = np.zeros((1, g.nvars)), np.zeros((1, g.nvars))
    lo[0, :2], hi[0, :2] = -1.0, 1.0
    parent = relax_batch(g, lo, hi)
    lo2, hi2 = lo.copy(), hi.copy()
    hi2[0, 0] = 0.0
    child = relax_batch(g, lo2, hi2, (parent.pre_lo, parent.pre_hi))
    assert np.all(child.pre_lo >= parent.pre_lo) and np.all(child.pre_hi <= parent.pre_hi)
    assert child.unstable().sum() <= parent.unstable().sum()
