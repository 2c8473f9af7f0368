"""Certificates of the selection shapes of issue 18: a sampling charged once behind a flag, and
report noisy max labelled on its CFA (a DAG, not a trace tree). Genuine ones are accepted;
tampering with what they rest on is rejected, with the place in the user's terms."""

from __future__ import annotations

import re

import pytest
from cert_testlib import BENCH, aut, check, exit_nodes, make_certificate, tampered

FIRST_ABOVE = BENCH / "selection" / "firstAbove.prob"
NOISY_MAX = BENCH / "dp" / "unrolled" / "noisyMax_k8.prob"


@pytest.fixture(scope="module")
def first_above_cert():
    return make_certificate(FIRST_ABOVE)


@pytest.fixture(scope="module")
def noisy_max_cert():
    return make_certificate(NOISY_MAX)


def _drop_flag_terms(e):
    """``e`` (JSON AST) with every ``found ? A : B`` replaced by its cheap arm ``B``."""
    if isinstance(e, dict):
        if e.get("node") == "Cond" and e["cond"] == {"node": "Var", "name": "found"}:
            return _drop_flag_terms(e["other"])
        return {k: _drop_flag_terms(v) for k, v in e.items()}
    if isinstance(e, list):
        return [_drop_flag_terms(x) for x in e]
    return e


def test_flag_charged_once_is_accepted(first_above_cert, tmp_path, capsys):
    code, out = check(first_above_cert, FIRST_ABOVE, tmp_path, capsys)
    assert code == 0, out
    assert any("found" in str(n["kappa"]) for n in aut(first_above_cert)["nodes"])


def test_release_not_charged_is_rejected(first_above_cert, tmp_path, capsys):
    """Without the `found ? …` term κ no longer pays for the release sampling: STEP fails at
    the release (or where the flag is set), named by its statement and line."""
    cert = tampered(first_above_cert)
    a = aut(cert)
    for n in a["nodes"]:
        n["kappa"] = _drop_flag_terms(n["kappa"])
    code, out = check(cert, FIRST_ABOVE, tmp_path, capsys)
    assert code == 3 and "rejected: " in out and "STEP" in out, out
    assert "(line " in out and not re.search(r"\bq\d+\b", out), out


def test_noisy_max_on_its_cfa_is_linear_and_accepted(noisy_max_cert, tmp_path, capsys):
    a = aut(noisy_max_cert)
    # one node per program point: far fewer than the 2^7 = 128 traces of the tree
    assert len(exit_nodes(noisy_max_cert)) == 1 and len(a["nodes"]) < 100
    code, out = check(noisy_max_cert, NOISY_MAX, tmp_path, capsys)
    assert code == 0, out


def test_noisy_max_join_label_weakened_is_rejected(noisy_max_cert, tmp_path, capsys):
    from cert_testlib import ast

    cert = tampered(noisy_max_cert)
    for n in exit_nodes(cert):
        n["lambda"] = ast("true")
    code, out = check(cert, NOISY_MAX, tmp_path, capsys)
    assert code == 3 and "EXIT fails at the end of the program" in out, out
