"""Prover II: the paper's case studies are proved, each proof cross-checked by simulation at
the concrete inputs of benchmarks/inputs.json; the too-strong variants are never proved."""

import json

import pytest
from locations import BENCHMARKS

from lang.parser import parse_file
from tamp.prover import prove_program

BENCH = BENCHMARKS
INPUTS = json.loads((BENCH / "inputs.json").read_text())


def _prove(rel, timeout=120):
    path = BENCH / rel
    prog = parse_file(str(path)).programs[0]
    return prove_program(prog, timeout=timeout, path=str(path), source=path.read_text())


def _cross_check(rel):
    sim = pytest.importorskip("tamp.simulation")
    src = (BENCH / rel).read_text()
    for case in INPUTS.get(rel, []):
        sim.check_consistent(src, case["inputs"], runs=4000, seed=1)


def _assert_proved(r):
    assert r.verdict == "proved", r.render_text()
    assert r.obligations and all(o.status == "valid" for o in r.obligations)
    aut = r.automata[0]
    assert any(e.back for e in aut.edges), "the automaton covers every iteration count"
    assert isinstance(r.stats["traces"], int)


@pytest.mark.parametrize("rel", ["dp/noisySum.prob", "dp/noisyMax.prob", "dp/expMech.prob"])
def test_case_study_proved_and_cross_checked(rel):
    r = _prove(rel)
    _assert_proved(r)
    _cross_check(rel)


def test_noisy_sum_uses_p_over_n_and_the_running_sum_invariant():
    r = _prove("dp/noisySum.prob")
    _assert_proved(r)
    assert [a["cost"] for a in r.axioms] == ["p / n"]
    from lang import ast as A

    head = r.automata[0].nodes[r.cfa.loop_heads[0]]
    assert any(isinstance(n, A.Sum) for c in head.label for n in A.walk(c))


@pytest.mark.case_study
@pytest.mark.parametrize(
    "rel", ["dp/aboveT.prob", "dp/sparseVec.prob", "reliability/searchRef.prob", "reliability/searchRefConcrete.prob"]
)
def test_slow_case_study_proved_and_cross_checked(rel):
    r = _prove(rel, timeout=300)
    _assert_proved(r)
    if rel == "dp/sparseVec.prob":  # the budget split p/3 (threshold), p/(3n) per query, p/3 (release)
        assert sorted(a["cost"] for a in r.axioms) == ["p / (3 * n)", "p / 3", "p / 3"]
    _cross_check(rel)


@pytest.mark.parametrize(
    "rel", ["variants/noisyMax_exact.prob", "variants/noisySum_nolog.prob", "variants/aboveT_nomargin.prob"]
)
def test_too_strong_loop_variants_are_not_proved(rel):
    r = _prove(rel, timeout=60)
    assert r.verdict == "unknown"
    sim = pytest.importorskip("tamp.simulation")
    src = (BENCH / rel).read_text()
    refuted = False
    for case in INPUTS.get(rel, []):
        try:
            sim.check_consistent(src, case["inputs"], runs=4000, seed=1)
        except AssertionError:
            refuted = True
    assert refuted or not INPUTS.get(rel), "the variant's claim should be refuted by simulation"
