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
    c["linearity"][0]["rule"] = "hoeffding"
    code, out = check(c, MARKOV, tmp_path, capsys)
    assert code != 0 and "rule" in out, out
