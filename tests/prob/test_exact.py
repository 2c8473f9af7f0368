"""Exact probabilities: discrete choices and polynomial densities give Fractions."""

from fractions import Fraction

from tamp.probability import probability


def P(src, event, given=None, **kw):
    return probability(src, event, given, **kw)


def test_two_bernoullis_or_is_18_25():
    assert P("program p() { a ~ bern(0.3); b ~ bern(0.6); }", "a || b") == Fraction(18, 25)


def test_two_uniforms_sum_below_one_is_half():
    assert P("program p() { x ~ uniform(0, 1); y ~ uniform(0, 1); }", "x + y <= 1") == Fraction(1, 2)


def test_triangular_density_normalises():
    src = "program p() { x ~ density(0, 1, 2 * _); }"
    assert P(src, "true") == 1
    assert P(src, "x <= 0.5") == Fraction(1, 4)
    # unnormalised polynomial: same distribution
    assert P("program p() { x ~ density(0, 2, _); }", "x <= 1") == Fraction(1, 4)


def test_step_bins_and_branching():
    src = """program p() {
      s ~ step([(0, 1, 0.3307), (1, 2, 0.6693)]);
      x ~ uniform(0, 2);
      if (s < 1) { t := x <= 0.5; } else { t := x <= 1.5; }
    }"""
    exact = Fraction(3307, 10000) * Fraction(1, 4) + Fraction(6693, 10000) * Fraction(3, 4)
    assert P(src, "t") == exact
    assert P(src, "t", "s < 1") == Fraction(1, 4)


def test_assume_conditions():
    src = "program p() { x ~ unif(1, 6); assume(x >= 4); }"
    assert P(src, "x == 6") == Fraction(1, 3)


def test_max_splits_paths():
    src = "program p() { x ~ uniform(-1, 1); y := max(0, x); z := abs(x); }"
    assert P(src, "y <= 0.5") == Fraction(3, 4)
    assert P(src, "z <= 0.5") == Fraction(1, 2)


def test_constant_loop_unrolled():
    src = "program p() { c := 0; for i in 0..4 { b ~ bern(0.5); if (b) { c := c + 1; } } }"
    assert P(src, "c == 2") == Fraction(6, 16)


def test_uniform_with_affine_location():
    src = "program p() { x ~ uniform(0, 1); y ~ uniform(x, x + 1); }"
    # y - x ~ U(0,1) independent of x: P(y <= 1) = ∫ P(u <= 1 - x) dx = 1/2
    assert P(src, "y <= 1") == Fraction(1, 2)


def test_tuples_from_finite_set_product():
    src = "program p() { (a, b) ~ unif({1, 2, 3} * {1, 2}); }"
    assert P(src, "a + b == 3") == Fraction(2, 6)
