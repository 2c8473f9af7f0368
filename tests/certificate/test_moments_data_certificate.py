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


TAMPERED_CORES = [
    # half the cost left to pay
    (
        "rounding/rounding_cost_markov.prob",
        0,
        "j >= 0 && cost >= 0 ? (cost + sum(l in j..n: w[l] * x[l]) / 2) / (k * sum(i in 0..n: w[i] * x[i])) : 1",
    ),
    # a - s is the step of a busy queue; an empty one moves by a·(1 - s) > a - s: it does not dominate
    (
        "queues/queue_length_markov.prob",
        0,
        "t >= 0 && 0 <= s && s <= 1 && 0 <= a && a <= 1 && q >= 0 ? (q + (T - t) * (a - s)) / B : 1",
    ),
    # too few offspring in the inner loop's core
    (
        "branching/subcritical_extinction.prob",
        1,
        "g < k ? nz >= 0 ? (nz + (z - i) * p) * pow(2 * p, k - (g + 1)) : 1 : 1",
    ),
]


@pytest.mark.parametrize("rel,loop,core", TAMPERED_CORES, ids=["half_cost", "not_dominating", "few_offspring"])
def test_a_core_that_is_not_inductive_is_rejected(rel, loop, core, tmp_path, capsys):
    path = BLIND / rel
    c = tampered(make_certificate(path))
    entry = next(lp for lp in c["expectation"][0]["loops"] if lp["loop"] == loop)
    entry["core"] = ast(core)
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out
