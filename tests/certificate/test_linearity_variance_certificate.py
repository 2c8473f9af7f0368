"""Certificates of Chebyshev proofs on linear combinations of accumulated values and on events of
several coin flips (session 21): ``check-proof`` derives the moments again from the source, so a
dropped variance part, a made-up covariance term or the mean of a difference with the wrong sign is
rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

B7 = BENCH / "prover4" / "dev" / "blind7"

CERT = B7 / "radioactivity" / "net_count_chebyshev.prob"


@pytest.fixture(scope="module")
def net_cert():
    """The certificate of the net count, made once (each test tampers a copy)."""
    return make_certificate(CERT)


def test_combination_certificates_are_rechecked(net_cert, tmp_path, capsys):
    code, out = check(tampered(net_cert), CERT, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(
    "field,value",
    [
        ("variance", "n * (ps * (1 - ps))"),  # the background's variance dropped
        ("variance", "n * (ps * (1 - ps) + pb * (1 - pb)) - 2 * n * ps * pb"),  # a covariance term made up
        ("mean", "n * (ps + pb)"),  # the mean of a difference with a wrong sign
    ],
)
def test_tampered_combination_moments_are_rejected(field, value, net_cert, tmp_path, capsys):
    c = tampered(net_cert)
    c["linearity"][0][field] = ast(value)
    code, out = check(c, CERT, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


def test_a_tampered_agreement_variance_is_rejected(tmp_path, capsys):
    path = B7 / "crowdsourcing" / "agreement_chebyshev.prob"
    c = tampered(make_certificate(path))
    c["linearity"][0]["variance"] = ast("n / 8")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "MOMENTS" in out, out


QUARTER = BENCH / "prover4" / "dev" / "variance" / "array_rates_quarter_bound.prob"


def test_variance_upper_bound_certificates_are_rechecked(tmp_path, capsys):
    cert = make_certificate(QUARTER)
    assert cert["linearity"][0]["rule"] == "chebyshev_ub"
    code, out = check(cert, QUARTER, tmp_path, capsys)
    assert code == 0, out


def test_the_exact_variance_rule_in_place_of_its_bound_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(QUARTER))
    c["linearity"][0]["rule"] = "chebyshev"  # Σ p(1-p) <= n/4 is not decided without the bound
    code, out = check(c, QUARTER, tmp_path, capsys)
    assert code == 3, out
