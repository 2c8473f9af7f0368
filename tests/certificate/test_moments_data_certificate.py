"""Certificates of the Markov cores on data and state (issue 33,
:mod:`tamp.prover.expectation.moments`): a rounded cost's increments left written with the
claim's sum body, a queue bounded by a dominating step, and a branching process (the outer
bound as a function of the population, the inner core the outer invariant at the generation's
expected offspring) are ordinary cores in the expected-failure section; ``check-proof`` rebuilds
every obligation from them, and tampered cores (half the cost left, a step that does not
dominate, too few offspring) are rejected at INDUCT."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

# tests of the expected-failure engine: linearity (tried before it) is turned off
pytestmark = pytest.mark.usefixtures("without_linearity")

BLIND = BENCH / "prover4" / "dev" / "blind3"
TRUE = [
    BLIND / "rounding" / "rounding_cost_markov.prob",
    BLIND / "queues" / "queue_length_markov.prob",
    BLIND / "branching" / "subcritical_extinction.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["expectation"][0]["method"] == "expectation"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_half_the_cost_left_is_rejected(tmp_path, capsys):
    path = BLIND / "rounding" / "rounding_cost_markov.prob"
    c = tampered(make_certificate(path))
    c["expectation"][0]["loops"][0]["core"] = ast(
        "j >= 0 && cost >= 0 ? (cost + sum(l in j..n: w[l] * x[l]) / 2) / (k * sum(i in 0..n: w[i] * x[i])) : 1"
    )
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


def test_a_step_that_does_not_dominate_is_rejected(tmp_path, capsys):
    path = BLIND / "queues" / "queue_length_markov.prob"
    c = tampered(make_certificate(path))
    # a - s is the step of a busy queue; an empty one moves by a·(1 - s) > a - s
    c["expectation"][0]["loops"][0]["core"] = ast(
        "t >= 0 && 0 <= s && s <= 1 && 0 <= a && a <= 1 && q >= 0 ? (q + (T - t) * (a - s)) / B : 1"
    )
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


def test_too_few_offspring_in_the_inner_core_is_rejected(tmp_path, capsys):
    path = BLIND / "branching" / "subcritical_extinction.prob"
    c = tampered(make_certificate(path))
    inner = next(lp for lp in c["expectation"][0]["loops"] if lp["loop"] == 1)
    inner["core"] = ast("g < k ? nz >= 0 ? (nz + (z - i) * p) * pow(2 * p, k - (g + 1)) : 1 : 1")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out
