"""Certificates of synthesised invariant expectations (issue 33,
:mod:`tamp.prover.expectation.synthesis`): the core CEGIS found is an ordinary expression in
the expected-failure section, ``check-proof`` rebuilds INDUCT/TERM/BUDGET from it without any
search, and a tampered coefficient is rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

BLIND = BENCH / "prover4" / "dev" / "blind1"
TRUE = [
    BLIND / "ballsbins" / "bin_load_markov.prob",
    BLIND / "repetition" / "sample_marked.prob",
    BLIND / "repetition" / "karger_repeat.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_synthesised_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["expectation"][0]["method"] == "expectation"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_tampered_markov_coefficient_is_rejected(tmp_path, capsys):
    path = BLIND / "ballsbins" / "bin_load_markov.prob"
    c = tampered(make_certificate(path))
    # the share of the iterations left halved: the expected failure would still fit the bound
    c["expectation"][0]["loops"][0]["core"] = ast("t >= 0 && load0 >= 0 ? load0 / a + (m - t) / (2 * n * a) : 1")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


def test_a_marked_sample_core_with_a_faster_decay_is_rejected(tmp_path, capsys):
    path = BLIND / "repetition" / "sample_marked.prob"
    c = tampered(make_certificate(path))
    c["expectation"][0]["loops"][0]["core"] = ast("hit ? 0 : exp(-2 * f * (k - t))")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


def test_a_karger_core_without_the_wrong_side_guard_is_rejected(tmp_path, capsys):
    # without `best < c ? 1`, a state below the target (unreachable, but INDUCT is for every
    # state) breaks the step: the checker's own atom-by-atom weights must see it
    path = BLIND / "repetition" / "karger_repeat.prob"
    c = tampered(make_certificate(path))
    c["expectation"][0]["loops"][0]["core"] = ast("best == c ? 0 : exp(-2 * (t - r) / (n * (n - 1)))")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out
