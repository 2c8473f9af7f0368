"""Chebyshev on values built from several parts (issue 33, session 21, :mod:`tamp.cfa.expected`):
linear combinations of accumulated values (a difference of counts, a total over several loops),
indicators of events of several coin flips, and variances over input arrays kept in one ``sum``.
The moments are exact (checked numerically against the closed forms); the soundness traps get the
right covariance or no variance: two counts of one draw, ``x - x``, two loops reading one array of
draws; the dev/variance variants and the four dev/blind7 claims are proved by linearity, every
false sibling is not; the certificates: tests/certificate/test_linearity_variance_certificate.py."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.methods import attempt

from lang.parser import parse, parse_file
from tamp.cfa import build_cfa
from tamp.cfa import expected as X
from tamp.prover.base.simplify import numeric
from tamp.prover.linearity.prove import LinearityResult, try_linearity

DEV = BENCHMARKS / "prover4" / "dev" / "variance"
B7 = BENCHMARKS / "prover4" / "dev" / "blind7"
BLIND = [
    B7 / "polling" / "stratified_chebyshev.prob",
    B7 / "radioactivity" / "net_count_chebyshev.prob",
    B7 / "ecology" / "quadrat_presence_chebyshev.prob",
    B7 / "crowdsourcing" / "agreement_chebyshev.prob",
]
VARIANTS = sorted(p for p in DEV.glob("*.prob") if not p.stem.endswith("_false"))
FALSE = sorted(DEV.glob("*_false.prob")) + [p.with_name(p.stem + "_false.prob") for p in BLIND]


def _direct(text):
    src = parse(text)
    prog = src.programs[0]
    return prog, build_cfa(prog, None, "<t>", src.text)


def _claim(text):
    return X.claim_of(*_direct(text))


def _lin_file(path):
    src = parse_file(str(path))
    prog = src.programs[0]
    return try_linearity(prog, build_cfa(prog, None, str(path), src.text), None, 0.0)


@pytest.mark.parametrize("path", BLIND + VARIANTS, ids=lambda p: p.stem)
def test_combinations_are_proved_by_linearity(path):
    res, why = _lin_file(path)
    assert isinstance(res, LinearityResult), why
    assert res.proof is not None and res.proof.rule in ("chebyshev", "chebyshev_ub")


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    res, _why = attempt(_lin_file, path)
    assert res is None


TWO = """program two(n: int, p: real, q: real, t: real)
  requires n >= 1 && p >= 0 && p <= 1 && q >= 0 && q <= 1 && t > 0
  ensures abs(d) < t
  fails 1
{
  a := 0;
  b := 0;
  for i in 0..n {
    x ~ bern(p);
    y ~ bern(q);
    if (x) { a := a + 1; }
    if (BTEST) { b := b + 1; }
  }
  d := DEF;
}
"""


def _two(btest, d):
    return _claim(TWO.replace("BTEST", btest).replace("DEF", d))


ENV = {"n": 7, "p": 0.3, "q": 0.6, "t": 1}


def test_a_difference_of_independent_counts_adds_the_variances():
    c = _two("y", "a - b")
    assert numeric(c.base.mean, ENV) == pytest.approx(7 * (0.3 - 0.6))
    assert numeric(c.base.var, ENV) == pytest.approx(7 * (0.3 * 0.7 + 0.6 * 0.4))


def test_counts_of_the_same_draw_keep_their_covariance():
    # b counts x && y, a counts x: a - b counts x && !y (probability p(1 - q)), NOT Var a + Var b
    c = _two("x && y", "a - b")
    r = 0.3 * 0.4
    assert numeric(c.base.mean, ENV) == pytest.approx(7 * r)
    assert numeric(c.base.var, ENV) == pytest.approx(7 * r * (1 - r))
    # a + b: Var a + Var b + 2 Cov(a, b), Cov = n (pq - p·pq)
    s = _two("x && y", "a + b")
    cov = 0.3 * 0.6 - 0.3 * 0.3 * 0.6
    assert numeric(s.base.var, ENV) == pytest.approx(7 * (0.3 * 0.7 + 0.18 * 0.82 + 2 * cov))


def _value_mean(btest, d):
    """E[d] = coef·E[X] + const of the exit value of d."""
    v = X.analyse(*_direct(TWO.replace("BTEST", btest).replace("DEF", d))).env["d"]
    assert isinstance(v, X.Lin)
    return numeric(v.coef, ENV) * numeric(v.base.mean, ENV) + numeric(v.const, ENV)


def test_a_count_minus_itself_has_no_variance():
    assert _value_mean("y", "a - a + 3") == pytest.approx(3)
    v = X.analyse(*_direct(TWO.replace("BTEST", "y").replace("DEF", "a - a + 3"))).env["d"]
    assert isinstance(v, X.Lin) and numeric(v.coef, ENV) == 0  # 0·X + 3: Var[d] = 0²·Var[X]
    # a - a in a larger combination: a's parts cancel inside the merged increments
    c = _two("y", "a - b - a")
    assert numeric(c.base.var, ENV) == pytest.approx(7 * 0.6 * 0.4)


def test_scaled_combinations():
    c = _two("y", "2 * a - b / 2 + 1")
    assert _value_mean("y", "2 * a - b / 2 + 1") == pytest.approx(7 * (2 * 0.3 - 0.6 / 2) + 1)
    assert numeric(c.base.var, ENV) == pytest.approx(7 * (4 * 0.21 + 0.24 / 4))


def test_a_product_of_counts_is_not_a_combination():
    with pytest.raises(X.NotApplicable):
        _two("y", "a * b")


SHARED_ARRAY = """program sh(n: int, p: real, t: real)
  requires n >= 1 && p >= 0 && p <= 1 && t > 0
  ensures abs(y) < t
  fails 1
{
  for k in 0..n { c[k] ~ bern(p); }
  y := 0;
  for i in 0..n {
    if (c[i]) { y := y + 1; }
  }
  for j in 0..n {
    if (c[j]) { y := y + 1; }
  }
}
"""


def test_two_loops_reading_one_array_of_draws_get_no_variance():
    c = _claim(SHARED_ARRAY)
    assert numeric(c.base.mean, {"n": 4, "p": 0.5}) == pytest.approx(4)
    assert c.base.var is None  # the same elements twice: Var is 4·n·p(1-p), not the sum


def test_two_loops_of_fresh_draws_add_their_variances():
    c = _claim(SHARED_ARRAY.replace("if (c[j])", "z ~ bern(p);\n    if (z)"))
    assert numeric(c.base.var, {"n": 4, "p": 0.5}) == pytest.approx(2 * 4 * 0.25)


MAJ = """program m(n: int, p: real, t: real)
  requires n >= 1 && p >= 0 && p <= 1 && t > 0
  ensures abs(r) < t
  fails 1
{
  r := 0;
  for i in 0..n {
    a ~ bern(p);
    b ~ bern(p);
    c ~ bern(p);
    if ((a && b) || (a && c) || (b && c)) { r := r + 1; }
  }
}
"""


def test_an_event_of_three_coin_flips_is_averaged_exactly():
    c = _claim(MAJ)
    m = 3 * 0.7**2 - 2 * 0.7**3
    assert numeric(c.base.mean, {"n": 5, "p": 0.7}) == pytest.approx(5 * m)
    assert numeric(c.base.var, {"n": 5, "p": 0.7}) == pytest.approx(5 * m * (1 - m))


def test_two_dice_compared_are_averaged_over_the_first_die():
    # Pr[a < b] = 15/36 for two fair dice: total expectation over a's six values
    text = MAJ.replace("bern(p)", "unif(1, 6)").replace("(a && b) || (a && c) || (b && c)", "a < b")
    c = _claim(text)
    m = 15 / 36
    assert numeric(c.base.mean, {"n": 5, "p": 0.7}) == pytest.approx(5 * m)
    assert numeric(c.base.var, {"n": 5, "p": 0.7}) == pytest.approx(5 * m * (1 - m))


def test_two_uniform_draws_over_a_symbolic_range_compared_are_still_not_computed():
    text = MAJ.replace("bern(p)", "unif(1, n)").replace("(a && b) || (a && c) || (b && c)", "a < b")
    with pytest.raises(X.NotApplicable):
        _claim(text)


def test_the_variance_upper_bound_is_popoviciu_per_step():
    # a - b: one step is 1, 0 or -1 (width 2): Var[step] <= 2²/4 = 1, so Var <= n
    c = _two("y", "a - b")
    assert numeric(c.base.var_ub, ENV) == pytest.approx(7)
    assert numeric(c.base.var, ENV) <= numeric(c.base.var_ub, ENV)
    shared = _claim(SHARED_ARRAY)
    assert shared.base.var_ub is None  # no variance, no bound of it


def test_chebyshev_with_the_upper_bound_is_tried_after_the_exact_variance():
    path = DEV / "array_rates_quarter_bound.prob"
    res, why = _lin_file(path)
    assert isinstance(res, LinearityResult), why
    assert res.proof is not None and res.proof.rule == "chebyshev_ub"


# A count over an input array of chances whose sum is given: Var = Σ q - Σ q² <= Σ q = s. Kept in
# one sum (for claims written Σ q(1-q)), the solver cannot bound it by s; the same variance by
# parts (Moments.var_split) it can, so the Chebyshev budget accepts either form. s/(4t²) is false
# (n = 1, q = [1/2], s = 1/2, t = 1/2: |c - s| >= t always, while s/(4t²) = 1/2).
TRAPS_ARRAY = """
program traps(q: real[], n: int, s: real, t: real)
  requires n >= 1 && t > 0
  requires forall j in 0..n: q[j] >= 0 && q[j] <= 1
  requires sum(j in 0..n: q[j]) == s
  ensures abs(c - s) < t
  fails BOUND
{
  c := 0;
  for i in 0..n {
    hit ~ bern(q[i]);
    if (hit) { c := c + 1; }
  }
}
"""


def test_a_variance_over_an_array_is_bounded_by_its_parts():
    claim = _claim(TRAPS_ARRAY.replace("BOUND", "s / (t * t)"))
    assert claim.base.var_split is not None and claim.base.var_split != claim.base.var
    proved, why = try_linearity(*_direct(TRAPS_ARRAY.replace("BOUND", "s / (t * t)")), None, 0.0)
    assert isinstance(proved, LinearityResult) and proved.verdict == "proved", why
    false, _why = try_linearity(*_direct(TRAPS_ARRAY.replace("BOUND", "s / (4 * t * t)")), None, 0.0)
    assert false is None
