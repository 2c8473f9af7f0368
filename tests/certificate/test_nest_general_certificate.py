"""Certificates of the general per-iteration composition (:mod:`tamp.certificate.nest_checker`,
:mod:`tamp.cfa.nesting`): a per-iteration bound that reads the iteration's counter (composed as a
``sum``), a counter read as a flag (``k > 0``, and ``k`` equal to the trip count) are re-checked
from the source; a bound that cannot be composed, a form the claim does not need and a smaller
per-iteration bound are rejected."""

from __future__ import annotations

import pytest
from cert_testlib import ast, check, make_certificate, tampered
from locations import BENCHMARKS

#: the dev files of tests/prover/test_nesting_general.py (benchmarks/prover4/dev/nesting2)
PROGRAMS = {
    name: (BENCHMARKS / "prover4" / "dev" / "nesting2" / f"{name}.prob").read_text()
    for name in ("slots", "lines", "bursts")
}


def _file(tmp_path, name):
    path = tmp_path / f"{name}.prob"
    path.write_text(PROGRAMS[name])
    return path


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_general_nesting_certificates_are_rechecked(name, tmp_path, capsys):
    path = _file(tmp_path, name)
    cert = make_certificate(path)
    assert [c["method"] for c in cert["nesting"]] == ["nesting"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_varying_bound_under_a_logarithm_is_not_composed(tmp_path, capsys):
    path = _file(tmp_path, "slots")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["per_iteration"] = ast("2 * lam[s]")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "COMPOSE" in out, out


def test_a_smaller_varying_bound_is_rejected(tmp_path, capsys):
    # exp(-2 lam[s]) composes to exp(-2 Σ lam) <= exp(-Σ lam); no iteration meets it
    path = _file(tmp_path, "slots")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["per_iteration"] = ast("exp(-2 * lam[s])")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and ("INNER" in out or "COMPOSE" in out), out


@pytest.mark.parametrize("name", ["lines", "bursts"])
def test_a_counter_composed_the_wrong_way_is_rejected(name, tmp_path, capsys):
    path = _file(tmp_path, name)
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["form"] = "product"
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "composes by product" in out, out
