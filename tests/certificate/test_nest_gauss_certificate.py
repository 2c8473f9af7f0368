"""Certificates of per-iteration composition with Gaussian accumulators
(:func:`tamp.cfa.nesting.gaussian_accumulator`, re-derived by :mod:`tamp.certificate.nest_checker`
through :func:`tamp.cfa.nesting.iteration_program`): the dev files of
tests/prover/test_nesting_gauss.py are re-checked from the source; a smaller per-iteration
bound, and the certificate of an accumulator checked against a source whose update is no longer
one (so the iteration program keeps the worst case over the state), are rejected."""

from __future__ import annotations

import hashlib

import pytest
from cert_testlib import ast, check, make_certificate, tampered
from locations import BENCHMARKS

DEV = BENCHMARKS / "prover4" / "dev" / "periter"
NAMES = ("scaled_walk", "paired_difference", "centred_drift", "noise_readings")


def _file(tmp_path, name, text=None):
    path = tmp_path / f"{name}.prob"
    path.write_text(text if text is not None else (DEV / f"{name}.prob").read_text())
    return path


@pytest.mark.parametrize("name", NAMES)
def test_gaussian_look_certificates_are_rechecked(name, tmp_path, capsys, without_top_union_bound):
    path = _file(tmp_path, name)
    cert = make_certificate(path)
    assert [c["method"] for c in cert["nesting"]] == ["nesting"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_smaller_per_look_bound_is_rejected(tmp_path, capsys):
    path = _file(tmp_path, "scaled_walk")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["per_iteration"] = ast("exp(-t * t)")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0, out


def test_an_update_that_is_no_accumulator_is_rejected(tmp_path, capsys):
    path = _file(tmp_path, "scaled_walk")
    cert = make_certificate(path)
    text = path.read_text().replace("w := w + a * z;", "w := 2 * w + a * z;")
    assert "2 * w" in text
    path.write_text(text)  # the same file name, its hash recorded: only the rebuild can object
    cert = tampered(cert)
    cert["source_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "INNER" in out, out
