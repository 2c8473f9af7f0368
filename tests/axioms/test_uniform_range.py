"""Tail axioms of unif(lo, hi) with symbolic bounds: the exact tail never exceeds the cost."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import axioms
from axioms.uniform_range import FAMILIES, UniformRangeTail
from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse_expr

TAILS = FAMILIES[:3]
ENDS, LOW, HIGH = TAILS

RANGES = [(1, 1), (1, 2), (0, 9), (1, 10), (-3, 4), (5, 17), (1, 100)]
FS = [Fraction(0), Fraction(1, 100), Fraction(1, 10), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3), 1]


@pytest.mark.parametrize("fam", TAILS, ids=lambda f: f.name)
@pytest.mark.parametrize("lo,hi", RANGES)
@pytest.mark.parametrize("f", FS)
def test_exact_tail_at_most_cost(fam, lo, hi, f):
    assert fam.side_holds((lo, hi), f)
    assert fam.exact_tail((lo, hi), f) <= fam.cost_value((lo, hi), f) + 1e-12


@pytest.mark.parametrize("fam", TAILS, ids=lambda f: f.name)
@pytest.mark.parametrize("lo,hi,f", [(1, 8, Fraction(1, 2)), (0, 99, Fraction(1, 10)), (-2, 9, Fraction(1, 3))])
def test_tight_when_f_n_is_even(fam, lo, hi, f):
    """With f·N/2 an integer every threshold falls on a support point: the bound is exact."""
    assert fam.exact_tail((lo, hi), f) == pytest.approx(float(f))


@settings(max_examples=200, deadline=None)
@given(
    lo=st.integers(-50, 50),
    width=st.integers(0, 120),
    f=st.fractions(min_value=0, max_value=Fraction(3, 2), max_denominator=97),
    k=st.integers(0, 2),
)
def test_hypothesis(lo, width, f, k):
    fam = TAILS[k]
    hi = lo + width
    assert fam.exact_tail((lo, hi), f) <= fam.cost_value((lo, hi), f) + 1e-12


def test_negative_f_is_refused_by_the_side_condition():
    """f < 0 would put the low threshold below lo - 1 and the cost below 0."""
    for fam in TAILS:
        assert not fam.side_holds((1, 10), Fraction(-1, 10))


def test_empty_range_is_refused_by_the_side_condition():
    for fam in TAILS:
        assert not fam.side_holds((5, 4), Fraction(1, 2))


def test_the_ends_of_a_pivot_range():
    """The 'central pivot' reading: for unif(1, n) and f = 1/2 the bad event is r <= n/4 or
    r >= n + 1 - n/4, i.e. the middle half is the good event."""
    dist = parse_expr("unif(1, n)")
    inst = ENDS.instantiate((A.Var("r"),), dist, Fraction(1, 2))
    for n in (4, 8, 9, 100):
        good = [r for r in range(1, n + 1) if not evaluate(inst.bad, {"r": r, "n": n})]
        assert all(n / 4 < r < n + 1 - n / 4 for r in good)
        assert len(good) >= n / 2


def test_only_symbolic_or_large_ranges():
    """Constant ranges keep the finite family's proposals only (no new search)."""
    names = {f.name for f in axioms.families_for(parse_expr("unif(1, 6)"))}
    assert not names & {f.name for f in FAMILIES}
    names = {f.name for f in axioms.families_for(parse_expr("unif(0, 20000)"))}
    assert {f.name for f in FAMILIES} <= names


def test_parameter_reading_the_target_is_refused():
    with pytest.raises(ValueError):
        LOW.instantiate((A.Var("r"),), parse_expr("unif(1, n)"), parse_expr("r / n"))


def test_unknown_side():
    with pytest.raises(ValueError):
        UniformRangeTail("middle")


@pytest.mark.parametrize("fam", TAILS, ids=lambda f: f.name)
@pytest.mark.parametrize(
    "dist,f",
    [
        ("unif(1, n)", "2 * a / n"),
        ("unif(0, n - 1)", "a / n"),
        ("unif(1, n)", "1 - a / n"),
        ("unif(a, n + a)", "1 / 3"),
        ("unif(2, n + 3)", "a / (n + 2)"),
        ("unif(n - a, n)", "0.5"),
    ],
)
def test_symbolic_thresholds_count_at_most_f_n_points(fam, dist, f):
    """The thresholds are written with the range's size folded and ``f·N`` simplified (``a / n``
    times ``n`` is ``a``): at concrete inputs, the support points where the symbolic bad event
    holds are still at most ``f·N``."""
    d = parse_expr(dist)
    inst = fam.instantiate((A.Var("v"),), d, parse_expr(f))
    for n in range(1, 14):
        for a in range(0, n + 1):
            env = {"n": n, "a": a}
            lo, hi = (evaluate(x, env) for x in d.args)
            fv = Fraction(evaluate(inst.cost, env))
            if lo > hi or fv < 0:
                continue
            hits = sum(1 for v in range(lo, hi + 1) if evaluate(inst.bad, {**env, "v": v}))
            assert hits <= fv * (hi - lo + 1), (n, a, hits)


CUT = FAMILIES[3]


@pytest.mark.parametrize("lo,hi", RANGES)
@pytest.mark.parametrize(
    "t1,t2", [(0, 100), (2, 5), (Fraction(5, 2), Fraction(17, 3)), (-4, 200), (3, 3), (7, 2), (Fraction(-1, 3), 9)]
)
def test_cut_exact_tail_at_most_cost(lo, hi, t1, t2):
    t1, t2 = max(Fraction(t1), lo - 1), min(Fraction(t2), hi + 1)  # the side conditions
    assert CUT.side_holds((lo, hi), (t1, t2))
    assert CUT.exact_tail((lo, hi), (t1, t2)) <= CUT.cost_value((lo, hi), (t1, t2)) + 1e-12


@settings(max_examples=200, deadline=None)
@given(
    lo=st.integers(-20, 20),
    width=st.integers(0, 60),
    t1=st.fractions(min_value=-30, max_value=90, max_denominator=7),
    t2=st.fractions(min_value=-30, max_value=90, max_denominator=7),
)
def test_cut_hypothesis(lo, width, t1, t2):
    hi = lo + width
    if CUT.side_holds((lo, hi), (t1, t2)):
        assert CUT.exact_tail((lo, hi), (t1, t2)) <= CUT.cost_value((lo, hi), (t1, t2)) + 1e-12


def test_cut_side_conditions_keep_the_thresholds_in_range():
    # below lo - 1 the cost would go negative: the side condition refuses it
    assert not CUT.side_holds((1, 10), (-1, 11))
    assert not CUT.side_holds((1, 10), (0, 12))
    assert CUT.side_holds((1, 10), (0, 11))


def test_cut_refuses_thresholds_reading_the_target():
    with pytest.raises(ValueError):
        CUT.instantiate((A.Var("r"),), parse_expr("unif(1, n)"), (parse_expr("r"), parse_expr("n")))
    with pytest.raises(ValueError):
        CUT.instantiate((A.Var("r"),), parse_expr("unif(1, n)"), parse_expr("n"))


def test_window_thresholds_read_the_tests_of_the_target():
    from axioms.uniform_range import window_thresholds
    from lang.printer import print_expr

    lows, highs = window_thresholds("r", [parse_expr("r > a && r <= n - b"), parse_expr("x < r"), parse_expr("r == c")])
    assert [print_expr(t) for t in lows] == ["a", "n - b", "x"]
    assert [print_expr(t) for t in highs] == ["a + 1", "a", "n - b + 1", "n - b", "x + 1", "x"]
    assert window_thresholds("r", [parse_expr("r > r - 1")]) == ([], [])
