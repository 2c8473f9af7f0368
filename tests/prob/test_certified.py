"""Certified intervals for Gaussians, Laplace and the discrete Laplace: they must contain
the exact values (soundness) and be tight."""

import math
from fractions import Fraction

from tamp.probability import Interval, probability
from tamp.probability.dists import Gauss, PolyDensity
from tamp.probability.mass import SplitNode


def contains(iv, x):
    return iv.lo <= Fraction(x) <= iv.hi if isinstance(iv, Interval) else iv == x


def test_gaussian_sum_is_tight():
    # how fast: benchmarks/budgets.py (no wall-clock assertions in unit tests)
    iv = probability("program p() { x ~ gauss(0, 4); y ~ gauss(-1, 1); }", "x + y >= 0", tolerance=1e-4)
    assert iv.width < Fraction(1, 1000)
    exact = 0.5 * math.erfc(1 / math.sqrt(10))  # P(N(-1, 5) >= 0)
    assert abs(exact - 0.32736) < 1e-5
    assert iv.lo <= Fraction(exact) + Fraction(1, 10**12) and Fraction(exact) - Fraction(1, 10**12) <= iv.hi


def test_symmetric_gaussians_contain_half():
    iv = probability("program p() { x ~ gauss(3, 2); y ~ gauss(3, 2); }", "x - y <= 0")
    assert contains(iv, Fraction(1, 2))


def test_correlated_quadrant_contains_three_eighths():
    # P(x <= 0, x + y <= 0) for iid N(0,1) = 1/4 + asin(1/sqrt 2)/(2 pi) = 3/8 (2-D split bound)
    iv = probability("program p() { x ~ gauss(0, 1); y ~ gauss(0, 1); }", "x <= 0 && x + y <= 0", tolerance=1e-5)
    assert contains(iv, Fraction(3, 8))
    assert iv.width < Fraction(1, 10**4)


def test_three_gaussians_orthant_contains_exact():
    # iid N(0,1): P(x<=0, y<=0, z<=0) = 1/8 (three one-variable constraints: product)
    iv = probability("program p() { x ~ gauss(0,1); y ~ gauss(0,1); z ~ gauss(0,1); }", "x <= 0 && y <= 0 && z <= 0")
    assert contains(iv, Fraction(1, 8))


def test_gaussian_mean_depends_on_earlier_sample():
    # y = x + e: y ~ N(0, 2); P(y <= 0) = 1/2
    iv = probability("program p() { x ~ gauss(0, 1); y ~ gauss(x, 1); }", "y <= 0")
    assert contains(iv, Fraction(1, 2))


def test_laplace_cdf():
    iv = probability("program p() { x ~ lap(0, 1); }", "x <= 1")
    assert contains(iv, Fraction(1 - 0.5 * math.exp(-1))) or iv.width < Fraction(1, 10**12)
    iv = probability("program p() { x ~ lap(2, 3); }", "x <= 2")
    assert contains(iv, Fraction(1, 2))


def test_exponential_cdf():
    iv = probability("program p() { x ~ exp(1, 2); }", "x >= 1 && x <= 3")
    assert abs(float(iv.lo) - (1 - math.exp(-1))) < 1e-12


def test_discrete_laplace_with_tail_bound():
    iv = probability("program p() { k ~ dlap(0, 1); }", "k == 0")
    q = math.exp(-1)
    assert abs(float(iv.lo) - (1 - q) / (1 + q)) < 1e-9
    assert iv.hi - iv.lo < Fraction(1, 10**9)
    iv = probability("program p() { k ~ dexp(0, 2); }", "k >= 1")
    assert abs(float(iv.lo) - math.exp(-0.5)) < 1e-9


def test_split_bound_on_uniforms_contains_exact_integral():
    # force the certified (non-exact) path on a polytope whose exact mass is known
    u = PolyDensity.uniform(Fraction(0), Fraction(1))
    node = SplitNode([u, u], [(Fraction(0), Fraction(1))] * 2, [({0: Fraction(1), 1: Fraction(1)}, Fraction(1))])
    for _ in range(30):
        node.refine(16)
        assert node.lo <= Fraction(1, 2) <= node.hi
    assert node.hi - node.lo < Fraction(1, 20)


def test_split_bound_random_polytopes_are_sound():
    """Random 2-D constraints on uniforms: the certified bound contains the exact integral."""
    import random

    from tamp.wmi import Poly, integrate_polytope

    rng = random.Random(7)
    u = PolyDensity.uniform(Fraction(0), Fraction(1))
    for _ in range(12):
        cons = [
            ({0: Fraction(rng.randint(-5, 5)), 1: Fraction(rng.randint(1, 5))}, Fraction(rng.randint(0, 6), 3))
            for _ in range(2)
        ]
        rows = [((c[0], c[1]), r, False) for c, r in cons] + [
            ((Fraction(1), Fraction(0)), Fraction(1), False),
            ((Fraction(-1), Fraction(0)), Fraction(0), False),
            ((Fraction(0), Fraction(1)), Fraction(1), False),
            ((Fraction(0), Fraction(-1)), Fraction(0), False),
        ]
        exact = integrate_polytope(Poly.const(2, 1), rows, 2)
        node = SplitNode([u, u], [(Fraction(0), Fraction(1))] * 2, cons)
        for _ in range(10):
            node.refine(16)
            assert node.lo <= exact <= node.hi, (cons, exact, node.lo, node.hi)


def test_gaussian_cdf_far_tails_are_bounded():
    g = Gauss(Fraction(0), Fraction(1))
    lo, hi = g.cdf_f(-60.0)
    assert lo == 0.0 and 0 < hi <= 1e-300
    lo, hi = g.cdf_f(60.0)
    assert hi == 1.0 and lo < 1.0
    lo, hi = g.cdf_f(1.0)
    assert lo <= 0.8413447460685429 <= hi and hi - lo < 1e-12


def _refine_and_check(node, ref, rounds=12, budget=24):
    for _ in range(rounds):
        node.refine(budget)
        assert node.lo <= Fraction(ref) + Fraction(1, 10**9) and Fraction(ref) - Fraction(1, 10**9) <= node.hi, (
            float(node.lo),
            ref,
            float(node.hi),
        )
    return node


def test_gaussian_split_bound_with_kinks_contains_quadrature():
    """Second/third-order Taylor bounds and the kink upper bound on a 2-D Gaussian polygon:
    y <= min(1 - x, 3 + 2x), y >= (x - 2)/2 with x ~ N(0, 1), y ~ N(0, 4)."""
    import mpmath

    mpmath.mp.dps = 30
    node = SplitNode(
        [Gauss(Fraction(0), Fraction(1)), Gauss(Fraction(0), Fraction(4))],
        [(None, None)] * 2,
        [
            ({0: Fraction(1), 1: Fraction(1)}, Fraction(1)),
            ({0: Fraction(1), 1: Fraction(-2)}, Fraction(2)),
            ({0: Fraction(-1), 1: Fraction(1, 2)}, Fraction(3, 2)),
        ],
    )
    assert node.inner == 1

    def inner(x):
        up = min(1 - x, 3 + 2 * x)
        lo = (x - 2) / 2
        return mpmath.npdf(x) * (mpmath.ncdf(up, sigma=2) - mpmath.ncdf(lo, sigma=2))

    ref = float(mpmath.quad(inner, [mpmath.mpf(-8) / 3, mpmath.mpf(-2) / 3, mpmath.mpf(4) / 3]))
    _refine_and_check(node, ref)
    assert node.hi - node.lo < Fraction(1, 10**4)


def test_gaussian_split_bound_in_three_dimensions_agrees_with_monte_carlo():
    """Three Gaussians, four oblique constraints (a 3-D polytope cut like a small ReLU network): at
    every refinement the certified interval meets the 5-sigma interval of 2e6 samples."""
    import numpy as np

    ds = [Gauss(Fraction(0), Fraction(1)), Gauss(Fraction(1), Fraction(2)), Gauss(Fraction(-1), Fraction(1, 2))]
    cons = [
        ({0: Fraction(1), 1: Fraction(1), 2: Fraction(1)}, Fraction(2)),
        ({0: Fraction(-1), 1: Fraction(2), 2: Fraction(1, 2)}, Fraction(3)),
        ({0: Fraction(1, 2), 1: Fraction(-1), 2: Fraction(2)}, Fraction(1)),
        ({0: Fraction(1), 1: Fraction(-3, 10), 2: Fraction(-1)}, Fraction(1, 2)),
    ]
    rng = np.random.default_rng(11)
    n = 2_000_000
    x = np.stack([rng.normal(0, 1, n), rng.normal(1, math.sqrt(2), n), rng.normal(-1, math.sqrt(0.5), n)])
    ok = np.ones(n, dtype=bool)
    for coef, rhs in cons:
        ok &= sum(float(c) * x[i] for i, c in coef.items()) <= float(rhs)
    p = ok.mean()
    half = 5 * math.sqrt(p * (1 - p) / n)
    node = SplitNode(ds, [(None, None)] * 3, cons)
    for _ in range(10):
        node.refine(48)
        assert float(node.lo) <= p + half and p - half <= float(node.hi), (float(node.lo), p, float(node.hi))
    assert node.hi - node.lo < Fraction(1, 100)
