"""The differential fuzzer (tests/fuzz/differential.py), small CI budget: on programs drawn
from a fixed seed, every claim tamp proves holds at every checked input by the exact
enumerator's count, and ``tamp prob`` agrees with it. The long run is
benchmarks/fuzz/differential.py. Also the enumerator's own checks, on programs whose
probabilities are known by hand."""

from __future__ import annotations

import random
from fractions import Fraction

import differential as D
import exact
import pytest

from lang.parser import parse, parse_expr


def _outcome(body: str, n: int = 2, p=Fraction(1, 2)):
    return exact.run(parse(D.source(body, "true")).programs[0], {"n": n, "p": p})


def _fail(body: str, ensures: str, **kw):
    return _outcome(body, **kw).failure([parse_expr(ensures)])


def test_three_fair_coins_all_heads():
    body = "b0 ~ bern(0.5); b1 ~ bern(0.5); k0 ~ unif(0, 1);"
    assert _fail(body, "!(b0 && b1 && k0 == 1)") == (Fraction(1, 8), Fraction(1, 8))


def test_a_for_loop_reads_its_bound_again_at_every_test():
    """``m`` grows to 4 while the counter runs: 4 iterations, not the 2 the bound said at entry."""
    body = "m := 2; for c in 0..m { k0 := k0 + 1; m := min(m + 1, 4); }"
    out = _outcome(body)
    assert out.probability(parse_expr("k0 == 4")) == 1 and out.stuck == 0


def test_a_loop_that_never_ends_is_a_failure():
    body = "b0 ~ bern(p); if (b0) { m := 1; for c in 0..m { m := m + 1; } }"
    out = _outcome(body, p=Fraction(1, 4))
    assert out.stuck == Fraction(1, 4) and out.diverges
    assert out.failure([parse_expr("true")]) == (Fraction(1, 4), Fraction(1, 4))


def test_a_loop_that_ends_almost_surely_is_not_called_divergent():
    body = "m := 1; for c in 0..m { b0 ~ bern(1 / 2); if (b0) { m := m + 1; } }"
    out = _outcome(body)
    assert not out.diverges and 0 < out.stuck < Fraction(1, 10**30)


def test_continuous_draws_are_not_enumerated():
    with pytest.raises(exact.Unsupported):
        _outcome("r := 0; x ~ lap(0, 1);")


def test_a_false_claim_below_the_exact_failure_is_checked():
    """The fuzzer's check itself can fail: a bound below the exact value, claimed proved."""
    findings = D.check("b0 ~ bern(1 / 2);", "b0", random.Random(1), timeout=20)
    assert not findings, "\n".join(f.render() for f in findings)
    lo, _hi = _fail("b0 ~ bern(1 / 2);", "b0")
    assert D._exceeds(lo, Fraction(1, 4)) and not D._exceeds(lo, Fraction(1, 2))


def test_tamp_agrees_with_the_exact_enumerator():
    stats: dict = {}
    findings, tried = D.fuzz(seed=31, count=4, timeout=2.0, stats=stats)
    assert tried == 4
    assert not findings, "\n".join(f.render() for f in findings)
    assert stats.get("prob terms", 0) > 0, stats
