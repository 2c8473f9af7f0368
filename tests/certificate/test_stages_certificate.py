"""Certificates of the stage product (:mod:`tamp.cfa.stages`, nesting form ``stages``) and of an
early-exit loop whose counter step sits in a branch: re-checked from the source; a changed factor,
a cut at another statement and a dropped premise are rejected."""

from __future__ import annotations

import hashlib

import pytest
from cert_testlib import ast, check, make_certificate, tampered
from locations import BENCHMARKS

DEV = BENCHMARKS / "prover4" / "dev"
SINGLE = DEV / "products" / "first_mark_survives.prob"


def _file(tmp_path, src):
    path = tmp_path / src.name
    path.write_text(src.read_text())
    return path


@pytest.fixture(scope="module")
def single_cert(tmp_path_factory):
    return make_certificate(_file(tmp_path_factory.mktemp("stages"), SINGLE))


@pytest.mark.parametrize(
    "rel",
    [
        "products/first_mark_survives.prob",
        "blind6/traceback/farthest_seen.prob",
        "products/streak_in_else.prob",
        "blind7/blockchain/confirmation_runs_nested.prob",
    ],
)
def test_certificates_are_rechecked(rel, tmp_path, capsys):
    path = _file(tmp_path, DEV / rel)
    code, out = check(make_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


def test_a_larger_first_chance_is_rejected(single_cert, tmp_path, capsys):
    path = _file(tmp_path, SINGLE)
    cert = tampered(single_cert)
    nest = cert["nesting"][0]
    assert nest["form"] == "stages"
    nest["per_iteration"] = ast("p + 1 / 10")  # 1 - (p + 0.1)·b is not <= β
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "COMPOSE" in out, out


def test_a_larger_second_chance_is_rejected(single_cert, tmp_path, capsys):
    path = _file(tmp_path, SINGLE)
    cert = tampered(single_cert)
    nest = cert["nesting"][0]
    a, b = nest["per_iteration"], nest["second"]
    # the same product, written the other way round: the stages' proofs are then of other bounds
    nest["per_iteration"], nest["second"] = b, a
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "INNER" in out, out


def test_a_cut_at_another_statement_is_rejected(single_cert, tmp_path, capsys):
    path = _file(tmp_path, SINGLE)
    cert = tampered(single_cert)
    cert["nesting"][0]["cut"] = 0  # `mark := 0`, not a loop
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "COMPOSE" in out, out


def test_a_loop_that_may_not_run_is_rejected(single_cert, tmp_path, capsys):
    # the same certificate for the program whose `requires` allows d = 0 (no first iteration)
    path = tmp_path / SINGLE.name
    path.write_text(SINGLE.read_text().replace("requires d >= 1", "requires d >= 0"))
    cert = tampered(single_cert)
    cert["source_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "runs at least once" in out, out


def test_a_wrong_exponent_of_an_early_exit_is_rejected(tmp_path, capsys):
    path = _file(tmp_path, DEV / "products" / "streak_in_else.prob")
    cert = tampered(make_certificate(path))
    nest = cert["nesting"][0]
    assert nest["form"] == "product"
    nest["per_iteration"] = ast("q * q")  # q² per round: its proof is of another bound
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0, out
