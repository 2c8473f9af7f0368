"""Soundness harness, quick form: mutants of the loop-free benchmarks must never be proved, and
every "proved" (originals, and mutants that may still hold) must survive simulation.

The full form (all proved benchmarks, every mutant operator, certificates) is
``benchmarks/soundness/run.py``.
"""

from __future__ import annotations

import sys

import pytest
from locations import REPO

ROOT = REPO
sys.path.insert(0, str(ROOT / "benchmarks" / "soundness"))

from harness import check_program  # noqa: E402
from mutants import mutants  # noqa: E402

QUICK = ["illustrative/ex1.prob", "illustrative/laplace.prob", "dp/randResp.prob"]


def _program(rel):
    from lang.parser import parse_file

    return parse_file(str(ROOT / "benchmarks" / rel)).programs[0]


@pytest.mark.parametrize("rel", QUICK)
def test_mutants_of_loop_free_benchmarks_are_not_proved(rel):
    records = check_program(_program(rel), rel, timeout=20, original_timeout=120, runs=4000, limit=1)
    original = records[0]
    assert original.verdict == "proved", original
    assert "refuted" not in original.simulated, original
    assert len(records) > 3, "the harness produced too few mutants"
    problems = [r for r in records if r.problem]
    assert not problems, problems
    false_ones = [r for r in records if r.expect == "false"]
    assert false_ones and all(r.verdict != "proved" for r in false_ones)
    # the false mutants are really false: the simulator refutes most of them at some input
    assert sum(r.refuted for r in false_ones) >= len(false_ones) // 2


def test_mutation_operators_cover_the_claim_and_the_noise():
    names = {m.name for m in mutants(_program("illustrative/laplace.prob"))}
    assert {"bound/2", "bound/10", "bound=0", "droplog", "tighten", "flip", "noise*4", "noise/4"} <= names


def test_variants_are_not_proved():
    from harness import variant_record

    for rel in ("variants/ex1_failsHalf.prob", "variants/laplace_lt1.prob", "variants/randResp_fails1_5.prob"):
        for r in variant_record(rel, timeout=20, runs=0):
            assert r.verdict != "proved", r


# issue 16: conditioning assumes and loops that may not terminate were "proved"
SEMANTICS_VARIANTS = (
    "assume_bern_conditioning",
    "assume_gauss_conditioning",
    "assume_control_conditioning",
    "nonterminating/loop_spin",
    "nonterminating/loop_forever",
    "loop_retry_count",
)


@pytest.mark.parametrize("name", SEMANTICS_VARIANTS)
def test_semantics_variants_are_not_proved_and_refuted_where_simulable(name):
    from harness import benchmark_inputs, variant_record

    rel = f"variants/{name}.prob"
    for r in variant_record(rel, timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        if benchmark_inputs(rel):
            assert r.simulated and all(s == "refuted" for s in r.simulated), r


# issue 33: sums of bounded terms with data-dependent means (tamp.cfa.sums): a stale index, an
# array range that misses the last cell, a coin of another bias, a wider arm, an element rounded to 2
SUM_TERM_VARIANTS = (
    "sumsStaleIndex",
    "sumsShortRange",
    "sumsCoinMean",
    "sumsMixtureWide",
    "sumsRoundingWide",
)


@pytest.mark.parametrize("name", SUM_TERM_VARIANTS)
def test_sum_term_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# issue 33: the discrete Laplace's exact integer tail (axioms.discrete_laplace_exact) claimed one
# integer too far out
# (tails25) and the exact dexp tail and the one-sided dlap tail, likewise
@pytest.mark.parametrize("name", ["dlapExactOffByOne", "dexpExactOffByOne", "dlapOneSidedOffByOne"])
def test_dlap_exact_tail_variant_is_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# session 26: two counters with equal moments (a walk's right and left steps) were read as one
# value by the linearity engine, which then proved `R <= L` for sure
def test_two_counters_with_equal_moments_variant_is_not_proved_and_refuted():
    from harness import variant_record

    for r in variant_record("variants/equalMomentsTwoCounters.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# expprod27: `exp-prod` reads exp(-2·pk) as two misses (1 - pk)² <= exp(-2·pk); its side
# condition -1 <= -pk <= 0 must be proved from `requires`, which here lets pk be in [2, 3] too
# (no shot fired there: failure 1 > exp(-2·pk))
def test_two_shots_with_a_chance_above_one_variant_is_not_proved():
    from harness import variant_record

    for r in variant_record("variants/twoShotsChanceAboveOne.prob", timeout=20, runs=0):
        assert r.verdict != "proved" and not r.problem, r


# roots27: root counting (axioms.roots) where the polynomial may be identically zero, a draw is
# read twice, or the degree is charged too low
@pytest.mark.parametrize("name", ["rootsZeroSlope", "rootsSameDraw", "rootsCubicDegree"])
def test_root_counting_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# unifcount28: closed counts of threshold tests of a uniform draw, off by one in the bound (a
# second card drawn as if from all N, an open window paid one value short)
@pytest.mark.parametrize("name", ["unifCountTwoCards", "unifCountWindowStrict"])
def test_uniform_count_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# runs28: a body whose period (4) does not divide the trip count (2m) is not taken in blocks, and
# a run whose inner while need not end (it spins once the flag moved) is not composed as a product
def test_period_and_runs_variants_are_not_proved():
    from harness import variant_record

    for r in variant_record("variants/periodNotAMultiple.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r
    for r in variant_record("soundness/diverging/runsSpinAfterSuccess.prob", timeout=20, runs=0):
        assert r.verdict != "proved" and not r.problem, r


# iterinv28: loop facts of an iteration program (tamp.prover.nesting.loop_facts); here `aces` falls
# on a miss, so `aces == A` is no fact while no ace is dealt and each miss gets likelier
def test_a_count_that_falls_on_a_miss_variant_is_not_proved_and_refuted():
    from harness import variant_record

    for r in variant_record("variants/aceShrinksOnMiss.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# unionprod29: a draw's miss chance 1 - 1/k needs the earlier value in its set (uniform_miss's side
# condition), and conjuncts proved apart need shares that add up to the claim's bound
@pytest.mark.parametrize("name", ["missOutsideTheSet", "sharesOverTheBound"])
def test_miss_and_share_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# boundfacts29: powers with a symbolic exponent (axioms.bound_facts) where the side condition fails:
# a base that may be 1 (q^r >= q r needs q >= 2), an exponent that may be below the claimed power
@pytest.mark.parametrize("name", ["powBaseOne", "powSingleReplica"])
def test_power_fact_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# counts30: a counter compared with its start is "no trial hit" only at the start (up <= 1 is not),
# and a counter of failures is "every trial hit" only at the trial count (down >= L - 1 is not)
@pytest.mark.parametrize("name", ["countAtMostOne", "countAllButOne"])
def test_count_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# hoeff29: Hoeffding by linearity; two tallies that both rise on one value are no single
# indicator, so the tight width's range condition fails and the bound of width 1 is not proved
def test_overlapping_tallies_variant_is_not_proved_and_refuted():
    from harness import variant_record

    for r in variant_record("variants/hoeffOverlappingTallies.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# rows29: rows sharing draws made before their loop (tamp.cfa.shared_rows) whose weights are wider
# than sum-cap's 1, or which read a carry the loop writes (no shared-row program applies)
@pytest.mark.parametrize("name", ["rowsWideWeights", "rowsShareCarry"])
def test_shared_rows_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r


# tails30: independent tails multiply (min of draws split before each is weighed); a replica that
# reuses another's draw is no independent tail, and a maximum above T needs only one slow draw
@pytest.mark.parametrize("name", ["tailsSharedReplica", "tailsMaxNotMin"])
def test_independent_tails_variants_are_not_proved_and_refuted(name):
    from harness import variant_record

    for r in variant_record(f"variants/{name}.prob", timeout=20, runs=20000):
        assert r.verdict != "proved" and not r.problem, r
        assert r.simulated and all(s == "refuted" for s in r.simulated), r
