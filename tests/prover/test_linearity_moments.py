"""Linearity of expectation, wider (issue 33, session 19): the moment table of every draw the
language has (checked against sampling), a uniform draw used as a value (closed mean and
variance), signs from a finite set and Markov on the square (E[X²] = Var + E²), integer
accumulators' Markov threshold c + 1 (and not for reals), increments written ``x + a + b``, and
``fails ?`` inferring a linearity bound. The dev variants (benchmarks/prover4/dev/linearity) and
their false siblings run in test_linearity.py."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.cfa import expected as X
from tamp.prover import prove_program
from tamp.prover.base.simplify import numeric
from tamp.prover.linearity.prove import LinearityResult, try_linearity
from tamp.show import show_expr
from tamp.simulation import simulate

RNG = np.random.default_rng(11)
N = 400_000


def _sample(func, args):
    """Draws of the language's distributions (LANGUAGE.md's table), written with numpy."""
    a, b = args
    if func == "unif":
        return RNG.integers(a, b + 1, N).astype(float)
    if func == "gauss":
        return RNG.normal(a, math.sqrt(b), N)
    if func == "lap":
        return RNG.laplace(a, b, N)
    if func == "exp":
        return a + RNG.exponential(b, N)
    if func == "uniform":
        return RNG.uniform(a, b, N)
    q = math.exp(-1 / b)
    geo = RNG.geometric(1 - q, N) - 1.0  # Pr(g) ∝ q^g on 0, 1, …
    if func == "dexp":
        return a + geo
    assert func == "dlap"
    return a + geo - (RNG.geometric(1 - q, N) - 1.0)  # Pr(c) ∝ q^|c|


@pytest.mark.parametrize(
    "func,args",
    [
        ("unif", (2, 7)),
        ("unif", (-3, 3)),
        ("gauss", (1.5, 2.0)),
        ("lap", (-1.0, 0.7)),
        ("exp", (2.0, 1.5)),
        ("uniform", (-1.0, 3.0)),
        ("dexp", (1, 2.0)),
        ("dlap", (3, 1.5)),
    ],
)
def test_the_moment_table_matches_sampling(func, args):
    raw = X.RAW[func](*(parse_expr(str(v)) for v in args))
    xs = _sample(func, args)
    for k, m in enumerate(raw, start=1):
        want = numeric(m, {})
        got = float(np.mean(xs**k))
        spread = float(np.std(xs**k)) / math.sqrt(N)
        assert want is not None and abs(got - want) < 6 * spread + 1e-9, (func, k, got, want)


def _direct(text):
    src = parse(text)
    prog = src.programs[0]
    return prog, build_cfa(prog, None, "<t>", src.text)


def _claim(text):
    return X.claim_of(*_direct(text))


def _linearity(text):
    prog, cfa = _direct(text)
    return try_linearity(prog, cfa, None, 0.0)[0]


UNIF = """program u(T: int, lo: int, hi: int, K: real)
  requires T >= 1 && 0 <= lo && lo <= hi && K > 0
  ensures total < K
  fails T * (lo + hi) / (2 * K)
{
  total := 0;
  for t in 0..T {
    d ~ unif(lo, hi);
    total := total + d;
  }
}
"""


def test_a_uniform_draw_used_as_a_value_has_closed_moments():
    c = _claim(UNIF)
    env = {"T": 3, "lo": 2, "hi": 6}
    assert numeric(c.base.mean, env) == pytest.approx(3 * 4)
    assert numeric(c.base.var, env) == pytest.approx(3 * (25 - 1) / 12)
    assert not any(isinstance(n, A.Sum) for n in A.walk(c.base.mean))  # no average left
    assert isinstance(_linearity(UNIF), LinearityResult)
    assert _linearity(UNIF.replace("(2 * K)", "(4 * K)")) is None  # half the mean: not proved


SIGNS = """program s(a: real[], n: int, t: real)
  requires n >= 1 && t > 0
  ensures abs(z) < t
  fails sum(j in 0..n: a[j] * a[j]) / (t * t)
{
  z := 0;
  for i in 0..n {
    s ~ unif({-1, 1});
    z := z + s * a[i];
  }
}
"""


def test_random_signs_have_mean_zero_and_variance_the_squares():
    c = _claim(SIGNS)
    assert c.base.mean == X.ZERO
    assert numeric(c.base.var, {"n": 3, "a": [1, 2, 3]}) == pytest.approx(14)
    assert isinstance(_linearity(SIGNS), LinearityResult)
    # a lopsided set has a mean: unif({0, 2}) is 1 on average, variance 1
    lop = _claim(SIGNS.replace("{-1, 1}", "{0, 2}"))
    assert numeric(lop.base.mean, {"n": 2, "a": [1, 1]}) == pytest.approx(2)
    assert numeric(lop.base.var, {"n": 2, "a": [1, 1]}) == pytest.approx(2)
    assert _linearity(SIGNS.replace("{-1, 1}", "{0, 2}")) is None  # |z| is about 2: false claim


def test_a_set_with_repeated_values_is_not_read():
    with pytest.raises(X.NotApplicable):
        _claim(SIGNS.replace("{-1, 1}", "{1, 1, -1}"))


SQUARE = """program q(f: int[], n: int, c: real)
  requires n >= 1 && c > 0
  requires sum(j in 0..n: f[j] * f[j]) > 0
  ensures z * z < c * sum(j in 0..n: f[j] * f[j])
  fails 1 / c
{
  z := 0;
  for i in 0..n {
    s ~ unif({-1, 1});
    z := z + s * f[i];
  }
}
"""


def test_markov_on_the_square_uses_the_second_moment():
    r = _linearity(SQUARE)
    assert isinstance(r, LinearityResult) and r.proof.rule == "markov2"
    assert _linearity(SQUARE.replace("fails 1 / c", "fails 1 / (2 * c)")) is None
    # dependent increments (one sign reused every iteration): no second moment, not proved
    reused = SQUARE.replace("  for i in 0..n {\n    s ~ unif({-1, 1});", "  s ~ unif({-1, 1});\n  for i in 0..n {")
    assert _linearity(reused) is None
    # without the requirement the square may have to be below 0: not proved
    assert _linearity(SQUARE.replace("  requires sum(j in 0..n: f[j] * f[j]) > 0\n", "")) is None


COUNT = """program c(n: int, p: real, c: int)
  requires n >= 1 && p >= 0 && p <= 1 && c >= 0
  ensures events <= c
  fails p * n / (c + 1)
{
  events := 0;
  for i in 0..n {
    e ~ bern(p);
    if (e) { events := events + 1; }
  }
}
"""


def test_an_integer_count_gets_markovs_threshold_c_plus_one():
    assert _claim(COUNT).base.integral
    r = _linearity(COUNT)
    assert isinstance(r, LinearityResult) and show_expr(r.proof.threshold) == "c + 1"


def test_a_real_accumulator_does_not_get_the_integer_threshold():
    # halves raised by 1/2: at n = 1, p = 1, c = 0 the value 1/2 > 0 always, bound 1/2
    real = COUNT.replace("events := events + 1;", "events := events + 0.5;").replace(
        "fails p * n / (c + 1)", "fails p * n / (2 * (c + 1))"
    )
    assert not _claim(real).base.integral
    assert _linearity(real) is None
    r = simulate_text(real, {"n": 1, "p": 1, "c": 0})
    assert r == "refuted"


def simulate_text(text, inputs):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.prob"
        p.write_text(text)
        return simulate(str(p), inputs, runs=4000, seed=7).verdict


GAUSS = """program g(q: real[], v: real[], n: int, t: real)
  requires n >= 1 && t > 0
  requires forall j in 0..n: v[j] >= 0
  ensures abs(noisy - sum(j in 0..n: q[j])) < t
  fails sum(j in 0..n: v[j]) / (t * t)
{
  noisy := 0;
  for i in 0..n {
    e ~ gauss(0, v[i]);
    noisy := noisy + q[i] + e;
  }
}
"""


def test_gaussian_noise_written_x_plus_a_plus_b_is_read():
    assert isinstance(_linearity(GAUSS), LinearityResult)
    # Markov needs a value never negative: a Gaussian increment is not
    markov = GAUSS.replace("ensures abs(noisy - sum(j in 0..n: q[j])) < t", "ensures noisy < t").replace(
        "fails sum(j in 0..n: v[j]) / (t * t)", "fails sum(j in 0..n: q[j]) / t"
    )
    assert _linearity(markov) is None


EXPO = """program e(n: int, s: real, K: real)
  requires n >= 1 && s > 0 && K > 0
  ensures wait < K
  fails n * s / K
{
  wait := 0;
  for i in 0..n {
    w ~ exp(0, s);
    wait := wait + w;
  }
}
"""


def test_exponential_waits_are_never_negative_and_markov_applies():
    assert isinstance(_linearity(EXPO), LinearityResult)
    assert _linearity(EXPO.replace("exp(0, s)", "exp(-1, s)")) is None  # may be negative
    assert simulate_text(EXPO, {"n": 2, "s": 1.0, "K": 4.0}) == "consistent"


def test_fails_hole_infers_a_linearity_bound():
    src = parse(UNIF.replace("fails T * (lo + hi) / (2 * K)", "fails ?"))
    prog = src.programs[0]
    r = prove_program(prog, path="<t>", source=src.text, timeout=120)
    assert r.verdict == "proved", r.render_text()
    assert r.details.get("method") == "linearity"
    assert "linearity of expectation" in r.message
    assert numeric(parse_expr(r.bound), {"T": 2, "lo": 1, "hi": 3, "K": 4}) == pytest.approx(2 * 2 / 4)


ROUND = """program r(q: int[], f: real[], n: int, t: real)
  requires n >= 1 && t > 0
  requires forall j in 0..n: f[j] >= 0 && f[j] <= 1
  ensures abs(total - sum(j in 0..n: q[j] + f[j])) < t
  fails n / (4 * t * t)
{
  total := 0;
  for i in 0..n {
    up ~ bern(f[i]);
    if (up) { r := q[i] + 1; } else { r := q[i]; }
    total := total + r;
  }
}
"""


def test_a_value_chosen_by_a_test_on_a_draw_has_exact_moments():
    c = _claim(ROUND)
    env = {"n": 2, "q": [3, 5], "f": [0.25, 0.5]}
    assert numeric(c.base.mean, env) == pytest.approx(3.25 + 5.5)
    assert numeric(c.base.var, env) == pytest.approx(0.25 * 0.75 + 0.25)
    # set in one branch only: its value after the branch is not known
    with pytest.raises(X.NotApplicable):
        _claim(ROUND.replace(" else { r := q[i]; }", ""))


SPARSE = """program p(n: int, t: real)
  requires n >= 1 && t > 0
  ensures abs(y) < t
  fails n / (3 * t * t)
{
  y := 0;
  for i in 0..n {
    u ~ unif(1, 6);
    if (u == 1) { y := y + 1; }
    if (u == 2) { y := y - 1; }
  }
}
"""


def test_two_equalities_of_one_draw_with_different_values_never_hold_together():
    c = _claim(SPARSE)
    assert not any(isinstance(n, A.Sum) for n in A.walk(c.base.var))  # the cross term is 0
    assert numeric(c.base.var, {"n": 3}) == pytest.approx(3 * (1 / 3))
    assert isinstance(_linearity(SPARSE), LinearityResult)
    assert _linearity(SPARSE.replace("fails n / (3 * t * t)", "fails n / (6 * t * t)")) is None
