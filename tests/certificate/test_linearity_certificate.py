"""Certificates of Markov/Chebyshev proofs by linearity of expectation
(:mod:`tamp.certificate.lin_checker`): ``check-proof`` recomputes the moments from the source
and re-decides every obligation; a certificate with a smaller mean or variance, a larger
threshold, or the other rule is rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

B4 = BENCH / "prover4" / "dev" / "blind4"
MARKOV = B4 / "caching" / "miss_cost_markov.prob"
CHEB = B4 / "graphs" / "degree_chebyshev.prob"


@pytest.mark.parametrize(
    "path",
    [
        MARKOV,
        CHEB,
        B4 / "graphs" / "edge_count_markov.prob",
        BENCH / "prover4" / "dev" / "linearity" / "mean_weight.prob",
    ],
    ids=lambda p: p.stem,
)
def test_linearity_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["linearity"][0]["method"] == "linearity"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_smaller_mean_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(MARKOV))
    c["linearity"][0]["mean"] = ast("0")
    code, out = check(c, MARKOV, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_a_smaller_variance_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(CHEB))
    c["linearity"][0]["variance"] = ast("0")
    code, out = check(c, CHEB, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_a_larger_threshold_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(MARKOV))
    c["linearity"][0]["threshold"] = ast("2 * t")  # E/(2t) fits the bound, but x < 2t is not x < t
    code, out = check(c, MARKOV, tmp_path, capsys)
    assert code == 3 and "POST" in out, out


def test_the_other_rule_at_the_same_threshold_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(MARKOV))
    c["linearity"][0]["rule"] = "chebyshev"
    code, out = check(c, MARKOV, tmp_path, capsys)
    assert code == 3, out


def test_an_unknown_rule_is_malformed(tmp_path, capsys):
    c = tampered(make_certificate(MARKOV))
    c["linearity"][0]["rule"] = "bernstein"
    code, out = check(c, MARKOV, tmp_path, capsys)
    assert code != 0 and "rule" in out, out


# session 19: the wider moments (closed uniform moments, signs, Gaussian noise, Markov on the
# square, the integer threshold) are derived again by the checker; each tampered kind is rejected
B5 = BENCH / "prover4" / "dev" / "blind5"
HOLD = B5 / "inventory" / "holding_cost_markov.prob"
SIGNS = B5 / "sketching" / "rademacher_dot_chebyshev.prob"
AMS = B5 / "sketching" / "ams_second_moment.prob"
EVENTS = B5 / "trials" / "adverse_events_sites.prob"
GAUSS = BENCH / "prover4" / "dev" / "linearity" / "gauss_noise.prob"


@pytest.mark.parametrize("path", [HOLD, SIGNS, AMS, EVENTS, GAUSS], ids=lambda p: p.stem)
def test_wider_moment_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["linearity"][0]["method"] == "linearity"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_halved_uniform_mean_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(HOLD))
    c["linearity"][0]["mean"] = ast("m / 4 * sum(t in 0..T: h[t])")
    code, out = check(c, HOLD, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


@pytest.mark.parametrize("path", [SIGNS, GAUSS], ids=lambda p: p.stem)
def test_a_smaller_variance_of_signs_or_noise_is_rejected(path, tmp_path, capsys):
    c = tampered(make_certificate(path))
    c["linearity"][0]["variance"] = ast("0")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_markov_on_the_square_read_as_markov_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(AMS))
    assert c["linearity"][0]["rule"] == "markov2"
    c["linearity"][0]["rule"] = "markov"  # Pr[z >= t] says nothing of z * z (z may be negative)
    code, out = check(c, AMS, tmp_path, capsys)
    assert code == 3, out


def test_an_integer_threshold_beyond_c_plus_one_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(EVENTS))
    c["linearity"][0]["threshold"] = ast("c + 2")  # events = c + 1 is below c + 2 but fails
    code, out = check(c, EVENTS, tmp_path, capsys)
    assert code == 3 and "POST" in out, out


# session 20: an inner loop's total in an outer sum, a flag's union bound, the pair count
LC = BENCH / "prover4" / "dev" / "lincomp"
NESTED = LC / "batch_cost.prob"
FLAG = LC / "flagged_servers.prob"
PAIRS = LC / "one_error_grid.prob"


@pytest.mark.parametrize(
    "path", [NESTED, LC / "nested_cheb.prob", FLAG, LC / "alarm_escalate.prob", PAIRS], ids=lambda p: p.stem
)
def test_composed_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["linearity"][0]["method"] == "linearity"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize("path", [NESTED, FLAG], ids=lambda p: p.stem)
def test_a_halved_composed_mean_is_rejected(path, tmp_path, capsys):
    c = tampered(make_certificate(path))
    c["linearity"][0]["mean"] = ast("(" + _show(c["linearity"][0]["mean"]) + ") / 2")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_a_flag_with_a_variance_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(FLAG))
    c["linearity"][0]["variance"] = ast("0")  # the mean is an upper bound only: no variance
    code, out = check(c, FLAG, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_the_pair_count_read_as_markov_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(PAIRS))
    assert c["linearity"][0]["rule"] == "pairs"
    c["linearity"][0]["rule"] = "markov"  # E[X]/2 is not within the bound
    code, out = check(c, PAIRS, tmp_path, capsys)
    assert code == 3 and "BUDGET" in out, out


def test_a_pair_count_threshold_of_one_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(PAIRS))
    c["linearity"][0]["threshold"] = ast("1")  # t(t-1) = 0: X(X-1) >= 0 says nothing
    code, out = check(c, PAIRS, tmp_path, capsys)
    assert code == 3 and "THRESHOLD" in out, out


def _show(j):
    from lang.serialize import expr_from_json
    from tamp.show import show_expr

    return show_expr(expr_from_json(j))
