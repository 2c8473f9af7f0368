"""Probability specifications: P-term intervals, ratios, fairness sugar, verdicts."""

import pytest

from lang.errors import TampError
from tamp.simulation import simulate

HIRING = """program hiring(t: real)
  ensures P(hire | female) / P(hire | !female) >= t
{
  female ~ bern(0.3);
  if (female) { s ~ uniform(0, 1); } else { s ~ uniform(0, 1.1); }
  hire := s >= 0.5;
}"""
RATIO = 0.5 / (0.6 / 1.1)  # 0.91666…


def test_terms_contain_exact_values_and_fair_is_confirmed():
    r = simulate(HIRING, {"t": 0.85}, runs=200000, seed=1)
    assert r.kind == "probability" and r.verdict == "confirmed" and r.exit_code == 0
    (t1, e1, lo1, hi1), (t2, e2, lo2, hi2) = r.prob_terms
    assert "female" in t1 and "!female" in t2.replace(" ", "")
    assert lo1 < 0.5 < hi1 and lo2 < 0.6 / 1.1 < hi2
    (cmp,) = r.comparisons
    lo, hi = cmp["interval"]
    assert lo < RATIO < hi and cmp["holds"] is True
    # the ratio interval comes from the (Bonferroni) term intervals
    assert lo == pytest.approx(lo1 / hi2) and hi == pytest.approx(hi1 / lo2)


def test_unfair_is_refuted_and_close_call_undecided():
    assert simulate(HIRING, {"t": 0.99}, runs=200000, seed=2).verdict == "refuted"
    close = simulate(HIRING, {"t": RATIO}, runs=20000, seed=3)
    assert close.verdict == "undecided" and close.exit_code == 1


def test_fairness_sugar_and_parity():
    src = HIRING.replace("ensures P(hire | female) / P(hire | !female) >= t", "ensures fairness hire given female >= t")
    assert simulate(src, {"t": 0.85}, runs=100000, seed=4).verdict == "confirmed"
    par = src.replace("fairness", "parity")
    assert simulate(par, {"t": 0.85}, runs=100000, seed=4).verdict == "confirmed"
    assert simulate(par, {"t": 0.95}, runs=100000, seed=4).verdict == "refuted"


def test_unconditional_term_and_sums():
    src = """program sq()
      ensures P(x + y <= 1) + P(b) >= 0.79
    { x ~ uniform(0, 1); y ~ uniform(0, 1); b ~ bern(0.3); }"""
    r = simulate(src, {}, runs=100000, seed=5)
    (_, _, lo, hi), (_, _, lo2, hi2) = r.prob_terms
    assert lo < 0.5 < hi and lo2 < 0.3 < hi2
    assert r.verdict == "confirmed"


def test_empty_condition_gives_uninformative_interval():
    src = "program z() ensures P(x == 1 | x > 5) >= 0.5 { x ~ unif(0, 3); }"
    r = simulate(src, {}, runs=1000)
    assert r.prob_terms[0][2:] == (0.0, 1.0) and r.verdict == "undecided"


def test_independent_is_not_simulated():
    with pytest.raises(TampError, match="not a sampling property"):
        simulate("program c(s: bool) ensures independent(y, s) { y := 1; }", {"s": True})
