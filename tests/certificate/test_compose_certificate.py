"""Certificates of stage products (issue 33, :mod:`tamp.prover.stages.products`): the expected-failure
section carries each stage's core, ``check-proof`` rebuilds every obligation (the unreliable
operators' coins included, :mod:`tamp.cfa.unreliable`); a lowered core or a smaller bound is
rejected, and a ``reliability E`` claim is checked against its ``1 - E``."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

DEV = BENCH / "prover4" / "dev" / "compose"
TRUE = [DEV / "checksum_retry.prob", DEV / "relu_layer.prob"]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_stage_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["expectation"][0]["method"] == "expectation"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_lowered_count_in_the_stage_core_is_rejected(tmp_path, capsys):
    path = DEV / "relu_layer.prob"
    c = tampered(make_certificate(path))
    c["expectation"][0]["loops"][0]["core"] = ast("failed ? 1 : r * sum(k in j + 1..n: x[k] > 0 ? 1 : 0)")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


def test_a_reliability_certificate_is_checked_against_one_minus_e(tmp_path, capsys):
    path = DEV / "relu_layer.prob"
    cert = make_certificate(path)
    code, out = check(cert, path, tmp_path, capsys, ["--bound", "r * sum(j in 0..n: x[j] > 0 ? 1 : 0) / 2"])
    assert code == 3, out
