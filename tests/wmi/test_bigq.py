"""The gmpy2 fast path of tamp.wmi.bigq agrees exactly with Fraction."""

import random
from fractions import Fraction

import pytest

from tamp.wmi import bigq


def _terms(seed, n=37, bits=300):
    rng = random.Random(seed)
    return [(rng.randint(-(1 << bits), 1 << bits), rng.randint(1, 1 << bits)) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_tree_sum_fraction_branch_is_exact(seed):
    terms = _terms(seed)
    expect = sum((Fraction(a, b) for a, b in terms), Fraction(0))
    got = bigq.tree_sum([bigq.make_q(a, b, use_gmp=False) for a, b in terms], use_gmp=False)
    assert type(got) is Fraction and got == expect


@pytest.mark.parametrize("seed", range(5))
def test_tree_sum_gmp_branch_matches_fraction(seed):
    terms = _terms(seed)
    expect = sum((Fraction(a, b) for a, b in terms), Fraction(0))
    got = bigq.tree_sum([bigq.make_q(a, b, use_gmp=True) for a, b in terms], use_gmp=True)
    assert type(got) is Fraction and got == expect


def test_empty_and_single():
    assert bigq.tree_sum([]) == 0
    assert bigq.tree_sum([bigq.make_q(-7, 3)]) == Fraction(-7, 3)
    assert bigq.to_fraction(5) == Fraction(5)


def test_z3_fraction_beyond_the_int_str_digit_limit():
    """A z3 numeral with more than 4300 decimal digits converts exactly."""
    import z3

    num, den = 3**10000 + 1, 2**20000
    s = z3.Solver()
    x = z3.Real("x")
    import sys

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        s.add(x == z3.RealVal(f"{num}/{den}"))
    finally:
        sys.set_int_max_str_digits(old)
    assert s.check() == z3.sat
    v = s.model().eval(x)
    assert bigq.z3_fraction(v) == Fraction(num, den)
    assert sys.get_int_max_str_digits() == old
