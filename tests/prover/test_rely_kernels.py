"""Rely's six kernels (benchmarks/reliability/rely/, issue 35): the union bound and Rely's product
bound proved symbolically and at Rely's sizes with the paper's rate (``r = 1e-7``), every proof
re-checked from its certificate; the false siblings (one operation not paid for) never proved."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tamp
from lang.parser import parse_file
from tamp.api import certify, check_proof

RELY = Path(__file__).resolve().parents[2] / "benchmarks" / "reliability" / "rely"
KERNELS = ["newton", "secant", "coord", "search_ref", "matvec", "hadamard"]

#: the concrete sizes of the README's table (Rely's rate 10^-7)
CONCRETE = {
    "newton": {"x0": 1.5, "maxiter": 50},
    "secant": {"x0": 1, "x1": 2, "maxiter": 50},
    "coord": {},
    "search_ref": {"nblocks": 64, "height": 8, "width": 8},
    "matvec": {"n": 3, "m": 4},
    "hadamard": {"s": 16},
}


def _verdicts(res):
    return {p.name: p.verdict for p in res.programs}


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_proved_symbolically_and_certified(kernel):
    path = RELY / f"{kernel}.prob"
    res = tamp.prove(str(path), timeout=120)
    assert set(_verdicts(res).values()) == {"proved"}, res.render_text()
    report = check_proof(certify(res), str(path))
    assert report.ok, report.reason


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_false_siblings_not_proved(kernel):
    res = tamp.prove(str(RELY / f"{kernel}_false.prob"), timeout=60)
    assert "proved" not in _verdicts(res).values(), res.render_text()


@pytest.mark.parametrize(
    "kernel",
    [
        "coord",
        pytest.param("matvec", marks=pytest.mark.slow),
        pytest.param("newton", marks=pytest.mark.slow),
        pytest.param("search_ref", marks=pytest.mark.slow),
    ],
)
def test_kernel_proved_at_rely_sizes(kernel):
    inputs = dict(CONCRETE[kernel], r=1e-7)
    path = RELY / f"{kernel}.prob"
    res = tamp.prove(str(path), inputs=inputs, timeout=240)
    assert set(_verdicts(res).values()) == {"proved"}, res.render_text()
    report = check_proof(certify(res, inputs=inputs), str(path), inputs=inputs)
    assert report.ok, report.reason


@pytest.mark.parametrize("kernel", ["coord", "matvec", "hadamard"])
@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_count_and_bound_mutants_of_product_claims_not_proved(kernel):
    """The soundness harness's mutants of Rely's product claims (benchmarks/soundness/mutants.py):
    one operation fewer (count-1; the kernels' counts are exact, so it is false) and half the
    bound — never proved."""
    sys.path.insert(0, str(RELY.parents[1] / "soundness"))
    from mutants import mutants

    prog = parse_file(str(RELY / f"{kernel}.prob")).program(f"{kernel}_product")
    chosen = [m for m in mutants(prog) if m.name in ("count-1", "bound/2")]
    assert {m.name for m in chosen} == {"count-1", "bound/2"}
    for m in chosen:
        res = tamp.prove(m.program, bound=m.bound, timeout=60)
        assert res.verdict != "proved", (m.label, res.render_text())
