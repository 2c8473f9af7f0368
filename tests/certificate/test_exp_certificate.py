"""Certificates of failure bounds proved by expected failure (products of probabilities): the
genuine ones are re-checked, every tampering — a weaker loop invariant, another termination
argument, a missing loop proof, a smaller bound — is rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

from tamp.prover import portfolio

RETRY = BENCH / "corpus" / "retry" / "retry_count.prob"
TMR = BENCH / "products" / "tmr.prob"
BERN = BENCH / "products" / "bern_sampling.prob"


@pytest.fixture(scope="module")
def retry_cert():
    # the per-iteration composition (a Las Vegas loop: retries counted by `tries`) now proves
    # retry_count first; these tests are about the expected-failure certificate
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(portfolio.Nesting, "attempt", lambda self, problem: portfolio.Attempt())
        return make_certificate(RETRY)


@pytest.mark.parametrize("path", [RETRY, TMR, BERN, BENCH / "corpus" / "randomized_response" / "rr_forced.prob"])
def test_genuine_expectation_certificate_is_accepted(path, tmp_path, capsys, monkeypatch):
    # the per-iteration composition, tried first, now proves bern_sampling (a flag loop); this
    # test is about the expected-failure certificate, so that method is turned off here
    monkeypatch.setattr(portfolio.Nesting, "attempt", lambda self, problem: portfolio.Attempt())
    cert = make_certificate(path)
    assert cert["programs"] == [] and cert["expectation"][0]["method"] == "expectation"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_lowered_invariant_rejected(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    c["expectation"][0]["loops"][0]["core"] = ast("exp(-s * (k - tries))")
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


def test_wrong_exit_chance_rejected(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    c["expectation"][0]["loops"][0]["measure"] = ast("1")
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 3 and "TERM" in out, out


def test_rank_for_a_loop_without_one_rejected(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    c["expectation"][0]["loops"][0]["termination"] = "rank"
    c["expectation"][0]["loops"][0]["measure"] = ast("k - tries")
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 3 and "TERM" in out, out


def test_missing_loop_proof_rejected(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    c["expectation"][0]["loops"] = []
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 3, out


def test_lowered_bound_rejected(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    c["expectation"][0]["bound"] = ast("exp(-s * k) / 2")
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 3, out


def test_checked_with_a_smaller_bound_rejected(retry_cert, tmp_path, capsys):
    code, out = check(retry_cert, RETRY, tmp_path, capsys, ["--bound", "exp(-2 * s * k)"])
    assert code == 3, out


def test_unknown_field_is_malformed(retry_cert, tmp_path, capsys):
    c = tampered(retry_cert)
    c["expectation"][0]["loops"][0]["trust_me"] = True
    code, out = check(c, RETRY, tmp_path, capsys)
    assert code == 2 and "unknown field" in out, out
