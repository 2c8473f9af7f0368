"""Concentration proofs end to end: every program of benchmarks/concentration is proved by a
concentration rule for all inputs (and is consistent with `tamp simulate` at its recorded
inputs); every false variant (a margin missing its constant factor) is not proved and is
refuted by `tamp simulate`; certificates re-check, and tampered ones are rejected."""

import copy
from pathlib import Path

import pytest
from support.certificates import certify, check_in_process

from tamp.api import prove
from tamp.prover.concentration.proof import ConcentrationResult
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "benchmarks" / "concentration").glob("*.prob"))
VARIANTS = sorted((ROOT / "benchmarks" / "variants").glob("*Conc_half.prob")) + [
    ROOT / "benchmarks" / "variants" / f"{n}_half.prob"
    for n in ("failuresCount", "failuresCountLower", "failuresChernoff", "gaussThree")
]

RULE_OF = {
    "noisySumConc": "laplace-bernstein",
    "noisyAvgConc": "laplace-bernstein",
    "dlapSumConc": "laplace-bernstein",
    "gaussSumConc": "gauss-chernoff",
    "gaussThree": "gauss-chernoff",
    "boundedSumConc": "hoeffding",
    "failuresCount": "hoeffding",
    "failuresCountLower": "hoeffding",
    "failuresChernoff": "chernoff",
    "expSumConc": "exponential-bernstein",
    "geomSumConc": "exponential-bernstein",
}


def test_every_program_has_an_expected_rule():
    assert sorted(p.stem for p in PROGRAMS) == sorted(RULE_OF)


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_proved_by_concentration_and_certified(path):
    res, cert, raw = certify(path)
    part = res.programs[0]
    assert part.verdict == "proved", part.render_text()
    assert isinstance(part, ConcentrationResult)
    assert [a.rule for a in part.proof.apps] == [RULE_OF[path.stem]]
    assert "concentration" in cert and not cert["programs"]
    report = check_in_process(cert, path, raw)
    assert report.ok, report.reason
    # cross-check: the claim holds statistically at the recorded inputs
    for inputs in inputs_for(str(path))[:1]:
        sim = simulate(str(path), inputs, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", VARIANTS, ids=[p.stem for p in VARIANTS])
def test_false_variant_not_proved_and_refuted(path):
    res = prove(str(path), timeout=8)
    assert res.programs[0].verdict != "proved"
    refuted = [i for i in inputs_for(str(path))]
    assert refuted
    sim = simulate(str(path), refuted[0], runs=20000, seed=11)
    assert sim.verdict == "refuted", sim.render_text()


@pytest.fixture(scope="module")
def sum_cert():
    path = ROOT / "benchmarks" / "concentration" / "noisySumConc.prob"
    _res, cert, raw = certify(path)
    return path, cert, raw


def _tamper(cert, fn):
    c = copy.deepcopy(cert)
    fn(c["concentration"][0])
    return c


def _halve(x):
    return {"node": "Binary", "op": "/", "left": x, "right": {"node": "Num", "value": "2", "is_int": True}}


def _double(x):
    return {"node": "Binary", "op": "*", "left": {"node": "Num", "value": "2", "is_int": True}, "right": x}


@pytest.mark.parametrize(
    "what,fn,reason",
    [
        ("half margin", lambda c: c["applications"][0].update(u=_halve(c["applications"][0]["u"])), "tail"),
        ("double probability", lambda c: c["applications"][0].update(f=_double(c["applications"][0]["f"])), "BUDGET"),
        ("wrong rule", lambda c: c["applications"][0].update(rule="hoeffding"), "does not apply"),
        ("one tail only", lambda c: c["applications"][0].update(mode="upper"), "POST"),
        (
            "other sums",
            lambda c: c["sums"][0]["blocks"][0].update(param={"node": "Num", "value": "1", "is_int": True}),
            "SHAPE",
        ),
        ("no application", lambda c: c.update(applications=[]), "exactly one"),
    ],
)
def test_tampered_certificates_are_rejected(sum_cert, what, fn, reason):
    path, cert, raw = sum_cert
    report = check_in_process(_tamper(cert, fn), path, raw)
    assert not report.ok, what
    assert reason in report.reason, report.reason


def test_certificate_for_another_bound_is_rejected(sum_cert):
    from lang.parser import parse_expr

    path, cert, raw = sum_cert
    report = check_in_process(cert, path, raw, bound=parse_expr("p / 2"))
    assert not report.ok and "bound" in report.reason
