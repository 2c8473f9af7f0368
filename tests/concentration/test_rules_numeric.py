"""Each concentration rule against its distribution: at the rule's threshold u(f) the true tail
is at most f (exact for Gaussian and binomial, Monte Carlo with 200k runs otherwise), and the
rule's tail condition is *not* met by a margin missing its constant factor (u/2)."""

import math

import pytest

from axioms import concentration as C
from lang import ast as A
from lang.evaluate import evaluate


def _thr(rule, mode, n, param, f):
    blocks = [C.Block(A.Var("n"), A.Var("b"))]
    return float(evaluate(C.threshold(rule, mode, blocks, A.Var("f")), {"n": n, "b": param, "f": f}))


def _conds(rule, mode, n, param, u, f):
    blocks = [C.Block(A.Var("n"), A.Var("b"))]
    env = {"n": n, "b": param, "f": f, "u": u}
    side = {
        name: evaluate(c, env) for name, c in C.conditions(rule, mode, blocks, A.Var("u"), A.Var("f")) if name != "tail"
    }
    g = float(evaluate(C.exponent(rule, mode, blocks, A.Var("u")), env))
    return side, g >= math.log((2 if mode == "both" else 1) / f) - 1e-9


CASES = [
    # rule, family, n, param, f
    ("laplace-bernstein", "laplace", 20, 1.0, 0.05),
    ("laplace-bernstein", "laplace", 50, 0.5, 0.01),
    ("laplace-bernstein", "laplace", 5, 2.0, 0.1),
    ("laplace-bernstein", "dlaplace", 20, 0.7, 0.05),
    ("laplace-bernstein", "dlaplace", 10, 3.0, 0.02),
    ("exponential-bernstein", "exponential", 20, 1.0, 0.05),
    ("exponential-bernstein", "exponential", 50, 3.0, 0.01),
    ("exponential-bernstein", "geometric", 20, 1.0, 0.05),
    ("exponential-bernstein", "geometric", 30, 0.4, 0.1),
    ("gauss-chernoff", "gauss", 10, 2.0, 0.01),
    ("gauss-chernoff", "gauss", 1, 0.3, 0.2),
    ("hoeffding", "bounded", 30, 4, 0.05),
    ("hoeffding", "bernoulli", 100, 0.1, 0.05),
    ("chernoff", "bernoulli", 100, 0.1, 0.05),
    ("chernoff", "bernoulli", 400, 0.02, 0.01),
    ("chernoff", "bernoulli", 10, 0.5, 0.1),
]


@pytest.mark.parametrize("mode", C.MODES)
@pytest.mark.parametrize("rule,family,n,param,f", CASES)
def test_threshold_tail_at_most_f(rule, family, n, param, f, mode):
    if rule == "chernoff" and mode == "lower" and n * param == 0:
        pytest.skip("mu = 0")
    rp = 1 if (rule, family) == ("hoeffding", "bernoulli") else param  # a 0/1 indicator has width 1
    u = _thr(rule, mode, n, rp, f)
    side, tail_ok = _conds(rule, mode, n, rp, u, f)
    assert tail_ok is True
    if not all(side.values()):  # outside the rule's range (Bernstein): nothing claimed
        return
    p = C.exact_tail(rule, mode, family, n, param, u)
    # Monte Carlo: allow 4 standard errors of slack on 200k runs
    slack = 4 * math.sqrt(f * (1 - f) / 200_000) if family not in ("gauss", "bernoulli") else 0
    assert p <= f + slack, (p, f, u)


@pytest.mark.parametrize("rule,family,n,param,f", CASES)
def test_half_margin_fails_tail_condition(rule, family, n, param, f):
    u = _thr(rule, "both", n, param, f) / 2
    _side, tail_ok = _conds(rule, "both", n, param, u, f)
    assert tail_ok is False


def test_bernstein_range_is_log_2_over_f_at_most_n():
    # n i.i.d. Lap(0, b) at u = sqrt(8 n b^2 log(2/f)): the range condition is log(2/f) <= n
    for n, f in [(3, 0.1), (2, 0.1), (10, 1e-4), (9, 1e-4)]:
        u = _thr("laplace-bernstein", "both", n, 1.0, f)
        side, _ = _conds("laplace-bernstein", "both", n, 1.0, u, f)
        assert side["range"] == (math.log(2 / f) <= n)


def test_geometric_mgf_below_exponential_mgf():
    import numpy as np

    for s in (0.3, 1.0, 4.0):
        q = math.exp(-1 / s)
        mu = q / (1 - q)
        for lam in np.linspace(-5 / s, 0.999 / s, 61):
            geo = math.exp(-lam * mu) * (1 - q) / (1 - q * math.exp(lam))
            ex = math.exp(-lam * s) / (1 - lam * s)
            assert geo <= ex * (1 + 1e-12)
            if abs(lam) <= 1 / (2 * s):
                assert ex <= math.exp(lam * lam * s * s) * (1 + 1e-12)


def test_dlaplace_mgf_below_laplace_mgf():
    import numpy as np

    for b in (0.3, 1.0, 4.0):
        q = math.exp(-1 / b)
        for lam in np.linspace(-0.999 / b, 0.999 / b, 41):
            d = (1 - q) ** 2 / (1 - 2 * q * math.cosh(lam) + q * q)
            assert d <= 1 / (1 - lam * lam * b * b) * (1 + 1e-12)
            if abs(lam) <= 1 / (math.sqrt(2) * b):
                assert 1 / (1 - lam * lam * b * b) <= math.exp(2 * lam * lam * b * b) * (1 + 1e-12)
