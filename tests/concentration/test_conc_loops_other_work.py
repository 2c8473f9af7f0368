"""Concentration for counts and sums built in loops that do other work (issue 33): the body
also updates other variables, computes intermediate values (``y := 2*t; s := s + y - t``,
``v := 3*u; s := s + v/3``), draws values it does not sum, or keeps the count's increment in a
branch (either one) next to other statements. The true claims of
benchmarks/prover4/dev/conc are proved by a concentration rule and their certificates re-check
(tampered ones are rejected); every false sibling is not proved and is refuted by simulation;
and shapes that only look like a count (two increments in one branch, a scaled draw) are not
taken for one."""

import copy
from pathlib import Path

import pytest
from support.certificates import certify, check_in_process

from tamp.api import prove
from tamp.prover.concentration.proof import ConcentrationResult
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "conc"
TRUE = ["elseCount", "guardedWork", "intermediate", "majority", "majorityTie", "twoDraws"]
FALSE = sorted(p.stem for p in DEV.glob("*_false.prob"))


@pytest.mark.parametrize("name", TRUE)
def test_true_claim_proved_by_concentration_and_certified(name):
    path = DEV / f"{name}.prob"
    res, cert, raw = certify(path)
    part = res.programs[0]
    assert part.verdict == "proved", part.render_text()
    assert isinstance(part, ConcentrationResult)
    report = check_in_process(cert, path, raw)
    assert report.ok, report.reason
    sim = simulate(str(path), inputs_for(str(path))[0], runs=4000, seed=7)
    assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", FALSE)
@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_false_sibling_not_proved_and_refuted(name):
    path = DEV / f"{name}.prob"
    assert prove(str(path), timeout=10).programs[0].verdict != "proved"
    sim = simulate(str(path), inputs_for(str(path))[0], runs=20000, seed=11)
    assert sim.verdict == "refuted", sim.render_text()


def _bern_param(c):
    b = c["sums"][0]["blocks"][0]
    b["param"] = {
        "node": "Binary",
        "op": "-",
        "left": {"node": "Num", "value": "1", "is_int": True},
        "right": b["param"],
    }


def _halve_margin(c):
    a = c["applications"][0]
    a["u"] = {"node": "Binary", "op": "/", "left": a["u"], "right": {"node": "Num", "value": "2", "is_int": True}}


@pytest.mark.parametrize(
    "name,fn,reason",
    [
        ("guardedWork", _bern_param, "SHAPE"),  # the count of !f where the program counts f
        ("elseCount", _bern_param, "SHAPE"),  # the count of f where the program counts !f
        ("intermediate", _halve_margin, "tail"),
        ("majorityTie", _halve_margin, "tail"),  # a simplified margin is checked like any other
    ],
)
def test_tampered_certificates_are_rejected(name, fn, reason):
    path = DEV / f"{name}.prob"
    _res, cert, raw = certify(path)
    bad = copy.deepcopy(cert)
    fn(bad["concentration"][0])
    report = check_in_process(bad, path, raw)
    assert not report.ok
    assert reason in report.reason, report.reason


LOOKALIKES = """
program twiceInBranch(n: int, r: real, p: real)
  requires n >= 1 && 0 <= r && r <= 1 && 0 < p && p <= 1
  ensures  k <= n * r + sqrt(n * log(1 / p) / 2)
  fails    p
{
  k := 0;
  for i in 0..n {
    f ~ bern(r);
    if (f) { k := k + 1; w := 1; k := k + 1; }
  }
}
program scaledDraw(n: int, p: real)
  requires n >= 1 && 0 < p && p <= 1
  ensures  s <= n / 2 + sqrt(n * log(1 / p) / 2)
  fails    p
{
  s := 0;
  i := 0;
  while (i < n) {
    t ~ unif(0, 1);
    y := 2 * t;
    s := s + y - t / 2;
    i := i + 1;
  }
}
program countBoth(n: int, r: real, p: real)
  requires n >= 1 && 0 <= r && r <= 1 && 0 < p && p <= 1
  ensures  k <= n * r + sqrt(n * log(1 / p) / 2)
  fails    p
{
  k := 0;
  for i in 0..n {
    f ~ bern(r);
    if (f) { k := k + 1; } else { k := k + 1; }
  }
}
"""


@pytest.mark.parametrize(
    "name,inputs",
    [
        # k counts 2 per success: at n = 1, r = 1/2, k = 2 w.p. 1/2 > p = 0.4
        ("twiceInBranch", {"n": 1, "r": 0.5, "p": 0.4}),
        # s is the sum of 3t/2: at n = 4, p = 0.1 its mean 3 is above the claimed 2 + 1.07
        ("scaledDraw", {"n": 4, "p": 0.1}),
        # k counts every iteration: k = n > n r + margin at n = 10, r = 0.1, p = 0.1
        ("countBoth", {"n": 10, "r": 0.1, "p": 0.1}),
    ],
)
def test_lookalike_counts_not_proved_and_refuted(name, inputs):
    assert prove(LOOKALIKES, program=name, timeout=10).programs[0].verdict != "proved"
    sim = simulate(LOOKALIKES, inputs, program=name, runs=5000, seed=2)
    assert sim.verdict == "refuted", sim.render_text()
