"""The linear bounds that ``bounds_batch(..., coef=True)`` hands out (coefficients and
constants on the leaves) enclose the exact network values at points of each box, with decimal
weights (not binary64 numbers: their rounding is inside the margin)."""

from fractions import Fraction

import numpy as np
import pytest

from tamp.causal.bounds import ReluGraph, bounds_batch, relax_batch


def _exact(ws, bs, x):
    h = list(x)
    for k, (W, b) in enumerate(zip(ws, bs)):
        h = [sum((w * v for w, v in zip(row, h)), Fraction(0)) + c for row, c in zip(W, b)]
        if k < len(ws) - 1:
            h = [max(Fraction(0), v) for v in h]
    return h


@pytest.mark.parametrize("seed", range(3))
def test_linear_forms_enclose_exact_values(seed):
    rng = np.random.default_rng(seed)
    sizes = [3, 7, 6, 2]
    ws = [
        [[Fraction(int(rng.integers(-999, 999)), 1000) for _ in range(a)] for _ in range(b)]
        for a, b in zip(sizes, sizes[1:])
    ]
    bs = [[Fraction(int(rng.integers(-300, 300)), 1000) for _ in range(b)] for b in sizes[1:]]
    g, outs = ReluGraph.from_layers(ws, bs)
    B = 5
    lo, hi = np.zeros((B, g.nvars)), np.zeros((B, g.nvars))
    for t in range(B):
        a = rng.random(3) - 0.5
        lo[t, :3], hi[t, :3] = a, a + rng.random(3) * 0.3
    rx = relax_batch(g, lo, hi)
    M, c = g.rows(outs)
    bb = bounds_batch(g, rx, M, c, coef=True)
    assert bb.lower_const is not None and bb.upper_const is not None
    assert bb.lower_coef is not None and bb.upper_coef is not None
    for t in range(B):
        for _ in range(30):
            a, b = [Fraction(float(v)) for v in lo[t, :3]], [Fraction(float(v)) for v in hi[t, :3]]
            x = [a[i] + (b[i] - a[i]) * Fraction(int(rng.integers(0, 33)), 32) for i in range(3)]
            y = _exact(ws, bs, x)
            for r, v in enumerate(y):
                below = Fraction(float(bb.lower_const[t, r])) + sum(
                    Fraction(float(bb.lower_coef[t, r, i])) * x[i] for i in range(3)
                )
                above = Fraction(float(bb.upper_const[t, r])) + sum(
                    Fraction(float(bb.upper_coef[t, r, i])) * x[i] for i in range(3)
                )
                assert below <= v <= above
                assert Fraction(float(bb.lower[t, r])) <= v <= Fraction(float(bb.upper[t, r]))
