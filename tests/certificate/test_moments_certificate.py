"""Certificates of Markov cores on expected increments (issue 33,
:mod:`tamp.prover.expectation.moments`): the core is an ordinary expression in the
expected-failure section, ``check-proof`` rebuilds INDUCT/TERM/BUDGET from it (with the
``sum-sign`` lemma for a count-min row's increments left) without any search, and a core whose
increments left are halved is rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

BLIND = BENCH / "prover4" / "dev" / "blind2"
TRUE = [
    BLIND / "streaming" / "morris_markov.prob",
    BLIND / "streaming" / "morris_base.prob",
    BLIND / "hashing" / "count_min_row.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_markov_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["expectation"][0]["method"] == "expectation"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_halved_increment_is_rejected(tmp_path, capsys):
    path = BLIND / "streaming" / "morris_markov.prob"
    c = tampered(make_certificate(path))
    c["expectation"][0]["loops"][0]["core"] = ast("i >= 0 && w - 1 >= 0 ? (w - 1 + (n - i) / 2) / (c * n) : 1")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out
