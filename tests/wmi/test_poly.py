"""Sparse exact polynomials: ring laws and calculus checked by evaluation."""

from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tamp.wmi import Poly

N = 3
coeff = st.fractions(min_value=-5, max_value=5, max_denominator=7)
mono = st.tuples(*[st.integers(0, 3)] * N)
polys = st.dictionaries(mono, coeff, max_size=5).map(lambda d: Poly(N, d))
points = st.tuples(*[st.fractions(min_value=-3, max_value=3, max_denominator=5)] * N)


@settings(max_examples=30, deadline=None)
@given(polys, polys, points)
def test_ring_operations_agree_with_evaluation(p, q, x):
    assert (p + q).evaluate(x) == p.evaluate(x) + q.evaluate(x)
    assert (p - q).evaluate(x) == p.evaluate(x) - q.evaluate(x)
    assert (p * q).evaluate(x) == p.evaluate(x) * q.evaluate(x)
    assert (p**2).evaluate(x) == p.evaluate(x) ** 2


@settings(max_examples=30, deadline=None)
@given(polys, st.lists(coeff, min_size=N, max_size=N), coeff, points)
def test_substitute_affine(p, a, c, x):
    a[1] = F(0)  # the substituted expression must not use x1
    expr = Poly.affine(a, c)
    val = sum(ai * xi for ai, xi in zip(a, x)) + c
    y = list(x)
    y[1] = val
    assert p.substitute(1, expr).evaluate(x) == p.evaluate(y)


@settings(max_examples=30, deadline=None)
@given(
    polys,
    points,
    st.fractions(min_value=-2, max_value=2, max_denominator=3),
    st.fractions(min_value=-2, max_value=2, max_denominator=3),
)
def test_integrate_between_constants_is_exact(p, x, lo, hi):
    # fundamental theorem: F(hi) - F(lo) with F' = p in variable 0
    r = p.integrate_between(0, Poly.const(N, lo), Poly.const(N, hi))
    assert all(e[0] == 0 for e in r.terms)  # x0 is integrated out
    # compare with a closed form per monomial
    expect = F(0)
    for e, c in p.terms.items():
        k = e[0]
        rest = c
        for xi, ei in zip(x[1:], e[1:]):
            rest *= xi**ei
        expect += rest * (hi ** (k + 1) - lo ** (k + 1)) / (k + 1)
    assert r.evaluate(x) == expect


def test_basic_values_and_errors():
    x, y = Poly.var(2, 0), Poly.var(2, 1)
    p = 3 * x * x * y - F(1, 2) * y + 4
    assert p.evaluate([2, 3]) == 3 * 4 * 3 - F(3, 2) + 4
    assert p.degree() == 3 and p.degree_in(0) == 2 and p.used_vars() == {0, 1}
    assert (p - p).is_zero()
    assert Poly.const(2, 5).is_const() and Poly.const(2, 5).const_value() == 5
    assert p.antiderivative(1).evaluate([2, 3]) == F(3 * 4 * 9, 2) - F(9, 4) + 12
    with pytest.raises(ValueError):
        Poly(2, {(1,): 1})
    with pytest.raises(ValueError):
        x + Poly.var(3, 0)
    assert Poly(2, {(1, 0): 0.5}).terms == {(1, 0): F(1, 2)}  # floats converted exactly
