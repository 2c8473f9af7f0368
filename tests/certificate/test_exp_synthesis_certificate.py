"""Certificates of synthesised invariant expectations (issue 33,
:mod:`tamp.prover.expectation.synthesis`): the core CEGIS found is an ordinary expression in
the expected-failure section, ``check-proof`` rebuilds INDUCT/TERM/BUDGET from it without any
search, and a tampered coefficient is rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

# tests of the expected-failure engine: linearity (tried before it) is turned off
pytestmark = pytest.mark.usefixtures("without_linearity")

BLIND = BENCH / "prover4" / "dev" / "blind1"
TRUE = [
    BLIND / "ballsbins" / "bin_load_markov.prob",
    BLIND / "repetition" / "sample_marked.prob",
    BLIND / "repetition" / "karger_repeat.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_synthesised_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    # sample_marked's flag loop is proved one iteration at a time (tamp.prover.nesting): its
    # iteration's proof, by expected failure, is inside the nesting section
    (part,) = cert.get("expectation") or [n["inner"] for n in cert["nesting"]]
    assert part["method"] == "expectation"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_tampered_markov_coefficient_is_rejected(tmp_path, capsys):
    path = BLIND / "ballsbins" / "bin_load_markov.prob"
    c = tampered(make_certificate(path))
    # the share of the iterations left halved: the expected failure would still fit the bound
    c["expectation"][0]["loops"][0]["core"] = ast("t >= 0 && load0 >= 0 ? load0 / a + (m - t) / (2 * n * a) : 1")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


def test_a_marked_sample_iteration_with_a_faster_decay_is_rejected(tmp_path, capsys):
    # each of the k draws misses a marked cell with chance 1 - f, not 1 - 2f: the composed bound
    # exp(-f k) stays, but the iteration's own proof cannot show the smaller per-iteration bound
    path = BLIND / "repetition" / "sample_marked.prob"
    c = tampered(make_certificate(path))
    (nest,) = c["nesting"]
    nest["per_iteration"] = nest["inner"]["bound"] = ast("1 - 2 * f")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "BUDGET" in out, out


def test_a_karger_core_without_the_wrong_side_guard_is_rejected(tmp_path, capsys):
    # without `best < c ? 1`, a state below the target (unreachable, but INDUCT is for every
    # state) breaks the step: the checker's own atom-by-atom weights must see it
    path = BLIND / "repetition" / "karger_repeat.prob"
    c = tampered(make_certificate(path))
    c["expectation"][0]["loops"][0]["core"] = ast("best == c ? 0 : exp(-2 * (t - r) / (n * (n - 1)))")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out
