"""Certificates of Las Vegas loops (:mod:`tamp.certificate.nest_checker`, form "lasvegas"): the
truncated loop and its parts (one iteration's continue bound, the entry test, the surely-proved
exits) are rebuilt from the source and re-checked; a certificate that drops the entry factor,
drops a part, swaps a part's proof or claims a smaller per-iteration bound is rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

DIE = BENCH / "prover4" / "dev" / "blind4" / "rejection" / "die_range_rejection.prob"
COIN = BENCH / "prover4" / "dev" / "lasvegas" / "coin_pairs.prob"


@pytest.mark.parametrize("path", [DIE, COIN], ids=lambda p: p.stem)
def test_lasvegas_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    (nc,) = cert["nesting"]
    assert nc["form"] == "lasvegas"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_the_entry_factor_cannot_be_dropped(tmp_path, capsys):
    cert = tampered(make_certificate(DIE))
    nc = cert["nesting"][0]
    assert nc["lead"] is True
    nc["lead"] = False
    del nc["parts"]["start"]
    code, out = check(cert, DIE, tmp_path, capsys)
    assert code != 0 and "COMPOSE" in out, out


@pytest.mark.parametrize("role", ["exit", "start_exit", "start"])
def test_a_missing_part_is_rejected(role, tmp_path, capsys):
    cert = tampered(make_certificate(DIE))
    del cert["nesting"][0]["parts"][role]
    code, out = check(cert, DIE, tmp_path, capsys)
    assert code != 0 and "INNER" in out, out


def test_a_part_proof_of_another_program_is_rejected(tmp_path, capsys):
    cert = tampered(make_certificate(DIE))
    parts = cert["nesting"][0]["parts"]
    parts["exit"] = parts["start_exit"]
    code, out = check(cert, DIE, tmp_path, capsys)
    assert code != 0 and "INNER" in out, out


def test_a_smaller_per_iteration_bound_is_rejected(tmp_path, capsys):
    cert = tampered(make_certificate(COIN))
    nc = cert["nesting"][0]
    nc["per_iteration"] = ast("1 - 3 * p * (1 - p)")
    code, out = check(cert, COIN, tmp_path, capsys)
    assert code != 0 and ("INNER" in out or "COMPOSE" in out), out


def test_a_flag_loop_form_is_not_accepted_for_a_las_vegas_loop(tmp_path, capsys):
    cert = tampered(make_certificate(COIN))
    nc = cert["nesting"][0]
    nc["form"] = "product"
    del nc["lead"], nc["parts"]
    code, out = check(cert, COIN, tmp_path, capsys)
    assert code != 0 and "CLAIM" in out, out


HALF = BENCH / "prover4" / "dev" / "blind4" / "rejection" / "halfnormal_rejection.prob"


def test_a_flag_loop_with_a_rest_is_rechecked_and_needs_its_exit_part(tmp_path, capsys):
    cert = make_certificate(HALF)
    nc = cert["nesting"][0]
    assert nc["form"] == "product" and set(nc["parts"]) == {"exit"}
    code, out = check(cert, HALF, tmp_path, capsys)
    assert code == 0, out
    bad = tampered(cert)
    del bad["nesting"][0]["parts"]
    code, out = check(bad, HALF, tmp_path, capsys)
    assert code != 0 and "EXIT" in out, out
