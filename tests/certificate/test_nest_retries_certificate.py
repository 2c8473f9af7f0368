"""Certificates of a retry loop inside an iteration (:func:`tamp.cfa.nesting.composition`, the
product over a literal number of tries written out): re-checked from the source; a per-try bound
whose written-out product exceeds the claim is rejected at COMPOSE."""

from __future__ import annotations

import pytest
from cert_testlib import ast, check, make_certificate, tampered
from locations import BENCHMARKS

DEV = BENCHMARKS / "prover4" / "dev" / "periter"


def _file(tmp_path, name):
    path = tmp_path / f"{name}.prob"
    path.write_text((DEV / f"{name}.prob").read_text())
    return path


@pytest.mark.parametrize("name", ["batch_retries", "resend_twice"])
def test_retry_certificates_are_rechecked(name, tmp_path, capsys):
    path = _file(tmp_path, name)
    cert = make_certificate(path)
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_per_try_bound_too_large_for_the_product_is_rejected(tmp_path, capsys):
    path = _file(tmp_path, "resend_twice")
    cert = tampered(make_certificate(path))
    inner = cert["nesting"][0]["inner"]
    assert inner["method"] == "nesting" and inner["form"] == "product"
    inner["per_iteration"] = ast("q + 1 / 10")  # (q + 0.1)² > q·q
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "COMPOSE" in out, out
