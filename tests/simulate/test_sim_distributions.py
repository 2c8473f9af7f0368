"""Each distribution's samples against exact means, variances and tails (≈5 standard errors)."""

import math

import numpy as np
import pytest

from tamp.simulation import run_samples

N = 200_000


def sample(body: str, name: str = "x", runs: int = N, seed: int = 7, params: str = "", inputs=None):
    return run_samples(f"program d({params}) {{ {body} }}", inputs or {}, runs=runs, seed=seed)[name]


def close(est, exact, sd, runs=N):
    """Within 5 standard errors."""
    assert abs(est - exact) <= 5 * sd / math.sqrt(runs) + 1e-12, (est, exact)


def test_bern():
    x = sample("x ~ bern(0.3);")
    assert x.dtype == bool
    close(x.mean(), 0.3, math.sqrt(0.3 * 0.7))


def test_unif_integer_inclusive():
    x = sample("x ~ unif(-2, 3);")
    assert set(np.unique(x)) == {-2, -1, 0, 1, 2, 3}
    close(x.mean(), 0.5, math.sqrt((6**2 - 1) / 12))


def test_unif_set_and_product():
    x = sample("x ~ unif({1, 5, 5, 9});")  # a set: 5 counts once
    assert set(np.unique(x)) == {1, 5, 9}
    close((x == 5).mean(), 1 / 3, math.sqrt(2 / 9))
    s = run_samples("program d() { (a, b) ~ unif({0, 1} * {0, 1, 2}); }", {}, runs=N, seed=3)
    pairs = s["a"] * 3 + s["b"]
    assert set(np.unique(pairs)) == set(range(6))
    close((pairs == 4).mean(), 1 / 6, math.sqrt(5 / 36))


def test_lap_tail_is_exact():
    x = sample("x ~ lap(2, 0.5);")
    close(x.mean(), 2, math.sqrt(2 * 0.25))
    f = 0.1356
    tail = (np.abs(x - 2) > 0.5 * math.log(1 / f)).mean()
    close(tail, f, math.sqrt(f * (1 - f)))


def test_exp_shifted():
    x = sample("x ~ exp(1, 2);")
    assert x.min() >= 1
    close(x.mean(), 3, 2)
    close((x > 1 + 2 * math.log(10)).mean(), 0.1, 0.3)


def test_dlap_true_tail_exceeds_f():
    """LANGUAGE.md: s = 0.5, f = 0.1356, the tail beyond s*log(1/f) is about 0.238, not f."""
    s, f = 0.5, 0.1356
    x = sample("x ~ dlap(4, 0.5);")
    assert np.issubdtype(x.dtype, np.integer)
    a = math.exp(-1 / s)
    exact_tail = 1 - (1 - a) / (1 + a)  # Pr[c != m], since s*log(1/f) < 1
    assert exact_tail == pytest.approx(0.238, abs=1e-3)
    est = (np.abs(x - 4) > s * math.log(1 / f)).mean()
    close(est, exact_tail, math.sqrt(exact_tail * (1 - exact_tail)))
    # Pr(c) ∝ exp(-|c - m|/s): Pr(m + 1) / Pr(m) = exp(-2)
    close((x == 5).mean(), (1 - a) / (1 + a) * a, 0.5)


def test_dexp_geometric():
    x = sample("x ~ dexp(3, 2);")
    assert x.min() == 3
    a = math.exp(-1 / 2)
    close(x.mean(), 3 + a / (1 - a), math.sqrt(a) / (1 - a))
    close((x == 3).mean(), 1 - a, math.sqrt(a * (1 - a)))


def test_gauss_takes_the_variance():
    x = sample("x ~ gauss(1, 4);")
    close(x.mean(), 1, 2)
    close(x.var(), 4, 4 * math.sqrt(2))


def test_uniform_real():
    x = sample("x ~ uniform(-1, 3);")
    assert x.min() >= -1 and x.max() <= 3
    close(x.mean(), 1, 4 / math.sqrt(12))


def test_step_piecewise_uniform():
    x = sample("x ~ step([(0, 1, 1), (1, 2, 3), (5, 5.5, 0)]);")
    assert x.max() <= 2
    close((x >= 1).mean(), 0.75, math.sqrt(0.75 * 0.25))
    close(x.mean(), 0.25 * 0.5 + 0.75 * 1.5, 0.6)


def test_density_polynomial():
    x = sample("x ~ density(0, 1, 2 * _);")
    close(x.mean(), 2 / 3, math.sqrt(1 / 18))
    y = sample("y ~ density(-1, 2, 3 - _ * _ + 1);", name="y")  # ∝ 4 - y^2 on [-1, 2]
    mass = 4 * 3 - (8 + 1) / 3
    mean = (2 * (4 - 1) - (16 - 1) / 4) / mass
    close(y.mean(), mean, 1.0)


def test_parameters_per_run():
    s = run_samples("program d() { k ~ unif(0, 1); x ~ lap(10 * k, 0.1); }", {}, runs=N, seed=1)
    close(s["x"][s["k"] == 1].mean(), 10, 0.2, runs=N // 2)
    close(s["x"][s["k"] == 0].mean(), 0, 0.2, runs=N // 2)
