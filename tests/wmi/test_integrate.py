"""integrate_polytope against closed forms, the independent iterated method,
sympy, and Monte Carlo."""

from fractions import Fraction as F
from math import factorial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tamp.wmi import Poly, UnboundedPolytopeError, integrate_polytope, integrate_polytope_iterated


def box(n, lo=0, hi=1):
    cons = []
    for i in range(n):
        e = [0] * n
        e[i] = 1
        cons.append((tuple(e), F(hi), False))
        e = [0] * n
        e[i] = -1
        cons.append((tuple(e), -F(lo), False))
    return cons


def simplex(n):
    """Standard simplex {x >= 0, sum x <= 1}."""
    cons = []
    for i in range(n):
        e = [0] * n
        e[i] = -1
        cons.append((tuple(e), F(0), False))
    cons.append((tuple([1] * n), F(1), False))
    return cons


def monomial(exps):
    return Poly.monomial(exps)


@pytest.mark.parametrize("a,b", [(0, 0), (1, 0), (2, 3), (4, 1), (5, 5)])
def test_standard_triangle_monomials(a, b):
    got = integrate_polytope(monomial((a, b)), simplex(2), 2)
    assert got == F(factorial(a) * factorial(b), factorial(a + b + 2))


@pytest.mark.parametrize("exps", [(0, 0, 0, 0), (1, 2, 0, 1), (2, 2, 2, 0), (3, 0, 1, 2)])
def test_standard_simplex_monomials_4d(exps):
    n = len(exps)
    expect = F(1, factorial(sum(exps) + n))
    for e in exps:
        expect *= factorial(e)
    assert integrate_polytope(monomial(exps), simplex(n), n) == expect


@pytest.mark.parametrize("exps", [(0, 0, 0), (1, 0, 2), (3, 1, 1)])
def test_box_monomials(exps):
    lo, hi = F(-1, 2), F(3, 2)
    n = len(exps)
    expect = F(1)
    for e in exps:
        expect *= (hi ** (e + 1) - lo ** (e + 1)) / (e + 1)
    assert integrate_polytope(monomial(exps), box(n, lo, hi), n) == expect


def test_scaled_shifted_simplex_volume_and_degenerate_vertices():
    # the corner x+y <= 1 of the unit square: vertices (1,0), (0,1) are degenerate
    cons = box(2) + [((1, 1), F(1), False)]
    assert integrate_polytope(Poly.const(2, 1), cons, 2) == F(1, 2)
    # octahedron-like cut of the cube through 3 vertices: x+y+z <= 1 inside [0,1]^3
    cons = box(3) + [((1, 1, 1), F(1), False)]
    assert integrate_polytope(Poly.const(3, 1), cons, 3) == F(1, 6)
    # cube cut through its centre by x+y+z <= 3/2: half the cube (symmetry)
    cons = box(3) + [((1, 1, 1), F(3, 2), False)]
    assert integrate_polytope(Poly.const(3, 1), cons, 3) == F(1, 2)
    # redundant and duplicated constraints do not change anything
    cons = box(2) + box(2) + [((1, 1), F(1), False), ((2, 2), F(2), True), ((1, 1), F(5), False)]
    assert integrate_polytope(Poly.var(2, 0), cons, 2) == F(1, 6)


def test_empty_and_lower_dimensional_give_zero():
    x = Poly.var(2, 0) + 1
    assert integrate_polytope(x, box(2) + [((1, 1), F(-1), False)], 2) == 0  # empty
    assert integrate_polytope(x, box(2) + [((1, 1), F(0), False)], 2) == 0  # one point
    # the segment x = y inside the square
    flat = box(2) + [((1, -1), F(0), False), ((-1, 1), F(0), False)]
    assert integrate_polytope(x, flat, 2) == 0
    assert integrate_polytope(x, [((0, 0), F(-1), False)] + box(2), 2) == 0  # 0 <= -1


def test_unbounded_raises():
    with pytest.raises(UnboundedPolytopeError):
        integrate_polytope(
            Poly.const(2, 1), [((-1, 0), F(0), False), ((0, -1), F(0), False), ((1, -1), F(1), False)], 2
        )
    with pytest.raises(UnboundedPolytopeError):
        integrate_polytope(Poly.const(2, 1), [((1, 0), F(1), False), ((-1, 0), F(0), False)], 2)


def test_zero_dimensional_and_errors():
    assert integrate_polytope(Poly.const(0, 7), [], 0) == 7
    with pytest.raises(ValueError):
        integrate_polytope(Poly.const(2, 1), [((1,), F(1), False)], 2)


# -- random polytopes: vertex-cone method vs iterated integration -----------------

small = st.integers(-3, 3)


@st.composite
def polytope_case(draw):
    n = draw(st.integers(1, 3))
    cons = box(n, 0, draw(st.integers(1, 2)))
    k = draw(st.integers(0, 3))
    for _ in range(k):
        a = tuple(F(draw(small)) for _ in range(n))
        b = F(draw(st.integers(-2, 6)), draw(st.integers(1, 3)))
        cons.append((a, b, draw(st.booleans())))
    terms = draw(
        st.dictionaries(
            st.tuples(*[st.integers(0, 3)] * n),
            st.fractions(min_value=-4, max_value=4, max_denominator=5),
            min_size=1,
            max_size=4,
        )
    )
    return n, cons, Poly(n, terms)


@settings(max_examples=30, deadline=None)
@given(polytope_case())
def test_vertex_method_matches_iterated_integration(case):
    n, cons, p = case
    assert integrate_polytope(p, cons, n) == integrate_polytope_iterated(p, cons, n)


@settings(max_examples=5, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.fractions(min_value=-2, max_value=2, max_denominator=4),
            st.fractions(min_value=0, max_value=2, max_denominator=4),
        ),
        min_size=2,
        max_size=2,
    ),
    st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 3)), st.integers(-3, 3), min_size=1, max_size=3),
)
def test_boxes_against_sympy(bounds, terms):
    import sympy

    xs = sympy.symbols("x0 x1")
    cons = []
    lims = []
    for i, (lo, width) in enumerate(bounds):
        hi = lo + width
        e = [0, 0]
        e[i] = 1
        cons.append((tuple(e), hi, False))
        e = [0, 0]
        e[i] = -1
        cons.append((tuple(e), -lo, False))
        lims.append((xs[i], sympy.Rational(lo.numerator, lo.denominator), sympy.Rational(hi.numerator, hi.denominator)))
    p = Poly(2, terms)
    expr = sum(c * xs[0] ** e[0] * xs[1] ** e[1] for e, c in terms.items())
    expect = sympy.integrate(expr, *lims)
    got = integrate_polytope(p, cons, 2)
    assert got == F(int(sympy.numer(expect)), int(sympy.denom(expect)))


def test_random_4d_polytope_against_monte_carlo():
    rng = np.random.default_rng(12345)
    n = 4
    A = rng.uniform(-1, 1, size=(3, n)).round(1)
    b = np.array([0.6, 0.5, 0.7])
    # exact decimal values of the (rounded) coefficients, the same numbers MC uses up to 1e-16
    cons = box(n) + [(tuple(F(str(x)) for x in row), F(str(bb)), False) for row, bb in zip(A, b)]
    p = Poly(n, {(2, 0, 0, 1): F(3), (0, 1, 1, 0): F(-1, 2), (0, 0, 0, 0): F(1)})
    exact = integrate_polytope(p, cons, n)
    pts = rng.uniform(0, 1, size=(200_000, n))
    inside = np.all(pts @ A.T <= b, axis=1)
    vals = np.where(inside, 3 * pts[:, 0] ** 2 * pts[:, 3] - 0.5 * pts[:, 1] * pts[:, 2] + 1, 0.0)
    mean, se = vals.mean(), vals.std() / np.sqrt(len(vals))
    assert abs(float(exact) - mean) < 5 * se


def test_high_dimension_cut_cube_volume():
    # [0,1]^7 ∩ {sum x <= 2}: volume = Σ_k (-1)^k C(7,k) (2-k)_+^7 / 7!
    n = 7
    from math import comb

    expect = sum(F((-1) ** k * comb(n, k) * (2 - k) ** n, factorial(n)) for k in range(3))
    got = integrate_polytope(Poly.const(n, 1), box(n) + [(tuple([1] * n), F(2), False)], n)
    assert got == expect
