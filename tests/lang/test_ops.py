"""The operator semantics of lang/ops.py: the definitions every evaluator and translator uses."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lang import ops

ints = st.integers(min_value=-(10**6), max_value=10**6)
nonzero = ints.filter(lambda b: b != 0)


@given(ints, nonzero)
def test_div_mod_are_euclidean(a, b):
    q, r = ops.BINARY["div"].exact(a, b), ops.BINARY["mod"].exact(a, b)
    assert a == b * q + r and 0 <= r < abs(b)


def test_div_mod_by_zero_and_of_non_integers_have_no_value():
    for op in ("div", "mod", "/"):
        with pytest.raises(ops.DomainError):
            ops.BINARY[op].exact(1, 0)
    with pytest.raises(ops.DomainError):
        ops.BINARY["div"].exact(Fraction(1, 2), 1)
    assert ops.BINARY["div"].exact(Fraction(-6), Fraction(4)) == -2


@given(ints, nonzero)
def test_real_division_is_exact(a, b):
    assert ops.BINARY["/"].exact(a, b) * b == a


def test_connectives_and_comparison_tables():
    for a in (False, True):
        for b in (False, True):
            assert ops.BINARY["==>"].exact(a, b) == ((not a) or b)
            assert ops.BINARY["<==>"].exact(a, b) == (a == b)
            for op, (stop, result) in ops.SHORT_CIRCUIT.items():
                if a is stop:
                    assert ops.BINARY[op].exact(a, b) is result
    for op in ops.COMPARISONS:
        for a, b in ((1, 2), (2, 2), (3, 2)):
            cmp = ops.BINARY[op].exact
            assert cmp(a, b) != ops.BINARY[ops.NEGATE[op]].exact(a, b)
            assert cmp(a, b) == ops.BINARY[ops.MIRROR[op]].exact(b, a)


def test_functions_and_domains():
    assert ops.FUNCTIONS["min"][1](3, -1) == -1 and ops.FUNCTIONS["max"][1](3, -1) == 3
    assert ops.FUNCTIONS["abs"][1](Fraction(-5, 2)) == Fraction(5, 2)
    with pytest.raises(ops.DomainError):
        ops.approx_fn("log", 0)
    with pytest.raises(ops.DomainError):
        ops.approx_fn("sqrt", Fraction(-1, 3))
    assert ops.approx_fn("exp", 10**6) == float("inf")
    assert ops.approx_fn("log", Fraction(1, 10**400)) == pytest.approx(-400 * 2.302585092994046)
    assert ops.exact_fn("sqrt", Fraction(49, 16)) == Fraction(7, 4)
    assert ops.exact_fn("sqrt", Fraction(2)) is None and ops.exact_fn("exp", Fraction(0)) == 1


@given(st.lists(st.tuples(ints, nonzero), min_size=1, max_size=20))
def test_elementwise_div_mod_on_arrays_is_euclidean_too(pairs):
    import numpy as np

    from lang.evaluate import evaluate
    from lang.parser import parse_expr

    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    q, r = ops.euclid_divmod_elementwise(a, b)
    assert q.tolist() == [ops.euclid_div(x, y) for x, y in pairs]
    assert r.tolist() == [ops.euclid_mod(x, y) for x, y in pairs]
    # the evaluator's vectorised path (bad events over many samples) means the same
    assert evaluate(parse_expr("x div y"), {"x": a, "y": b}).tolist() == q.tolist()
    assert evaluate(parse_expr("x mod y"), {"x": a, "y": b}).tolist() == r.tolist()
