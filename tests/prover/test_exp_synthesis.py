"""Invariant expectations found by synthesis (issue 33, :mod:`tamp.prover.expectation.synthesis`):
Markov templates with coefficients found by CEGIS, and the sum-pointwise lemma that lets a
uniform index's chance of hitting a marked cell meet a ``requires`` on a sum; a uniform draw
read in several tests, weighted exactly by the counts of each truth assignment (Karger's
repeated contraction, whose minimum reads the draw twice). True dev claims
are proved; their false siblings are not; a core that would give the bound if INDUCT were
skipped is rejected by INDUCT; a proposed core is decided again like any other."""

from __future__ import annotations

from fractions import Fraction

import pytest
import z3
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.core.z3context import proof_context
from tamp.prover import prove_program
from tamp.prover.base.smt import VALID
from tamp.prover.expectation import prove as E
from tamp.prover.expectation import synthesis as S
from tamp.prover.nesting.prove import NestResult
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

# tests of the expected-failure engine: linearity (tried before it) is turned off
pytestmark = pytest.mark.usefixtures("without_linearity")

BLIND = BENCHMARKS / "prover4" / "dev" / "blind1"
TRUE = [
    BLIND / "repetition" / "sample_marked.prob",
    BLIND / "ballsbins" / "bin_load_markov.prob",
    BLIND / "repetition" / "karger_repeat.prob",
]


def _claim(text):
    prog = parse(text).programs[0]
    cfa = build_cfa(prog, None, "<t>", text)
    claim = E.claim_of(prog, cfa)
    return claim, cfa, E.Checker(claim, None)


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_dev_claims_are_proved_by_expected_failure(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    if isinstance(r, NestResult):  # a flag loop proved one iteration at a time (tamp.prover.nesting)
        r = r.inner
    assert isinstance(r, E.ExpectationResult)
    # cross-checked: the proved bound holds when the program is run at its recorded inputs
    inputs = inputs_for(str(path))
    assert inputs
    for given in inputs:
        sim = simulate(str(path), given, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


MARKOV = """
program markov(n: int, m: int, a: real)
  requires n >= 1 && m >= 0 && a > 0
  ensures  load0 < a
  fails    BOUND
{
  load0 := 0;
  for t in 0..m {
    b ~ unif(1, n);
    if (b == 1) { load0 := load0 + 1; }
  }
}
"""


def _annotated(text, core):
    claim, cfa, chk = _claim(text)
    annot = E.LoopAnnot(parse_expr(core), "rank", parse_expr("m - t"))
    _pre, _annots, obs = E.obligations_for(claim, cfa.bound, {0: annot})
    return {kind: chk.valid(f) for kind, _w, f in obs if kind in ("INDUCT", "BUDGET")}


def test_a_wrong_markov_core_that_fits_the_budget_is_rejected_by_induct():
    # half Markov's bound is false (n = m = a = 1: the one ball lands in bin 1); the halved
    # core gives exactly that budget, so only INDUCT stands between it and a proof
    verdicts = _annotated(
        MARKOV.replace("BOUND", "m / (2 * n * a)"), "t >= 0 && load0 >= 0 ? load0 / a + (m - t) / (2 * n * a) : 1"
    )
    assert verdicts["BUDGET"] == VALID
    assert verdicts["INDUCT"] != VALID


def test_the_right_markov_core_passes_every_obligation():
    verdicts = _annotated(
        MARKOV.replace("BOUND", "m / (n * a)"), "t >= 0 && load0 >= 0 ? load0 / a + (m - t) / (n * a) : 1"
    )
    assert set(verdicts.values()) == {VALID}


def _induct_of(text):
    claim, cfa, chk = _claim(text)
    loop = next(n for n in A.walk(claim.body) if isinstance(n, A.For))
    g, body, _ = E.as_while(loop)

    def induct(core):
        w = E.Wpe(claim.body, claim.params, {}, None, types=claim.types)
        f = claim.post
        steps = E.induct_formulas(g, w.stmt(body, E.invariant(g, core, f)), core)
        return E.and_all([ob for _w, ob in steps])

    return claim, chk, induct


def test_cegis_finds_a_coefficient_the_first_guess_misses():
    # the block (m - t)/(2na) needs coefficient >= 2: the first guess (1) fails INDUCT at a
    # counterexample state, and the coefficients guessed from it pass
    with proof_context():  # as a proof runs: z3's answers do not depend on earlier tests
        claim, chk, induct = _induct_of(MARKOV.replace("BOUND", "m / (n * a)"))
        blocks = [parse_expr("load0 / a"), parse_expr("(m - t) / (2 * n * a)")]
        tmpl = S.template(blocks, parse_expr("t >= 0 && load0 >= 0"))
        first = S.instantiate(tmpl, [Fraction(0), Fraction(1), Fraction(1)])
        assert chk.valid(induct(first)) != VALID
        found = list(S.Cegis(chk, claim.types).search(tmpl, 3, induct))
        assert found, "no core found"
        assert chk.valid(induct(found[0])) == VALID


def test_sum_pointwise_needs_its_premise():
    # sum(x[j]) and sum(x[j] == 1 ? 1 : 0) are equal only where every x[j] is 0 or 1
    text = """
program p(x: int[], n: int)
  requires n >= 1
  requires REQ
  ensures  b
  fails    0
{ b ~ bern(1/2); }
"""
    goal = parse_expr("sum(j in 0..n: x[j]) == sum(u in 0..=n - 1: x[u] == 1 ? 1 : 0)")
    _c, _f, with_req = _claim(text.replace("REQ", "forall j in 0..n: x[j] == 0 || x[j] == 1"))
    assert with_req.valid(goal) == VALID
    _c, _f, without = _claim(text.replace("REQ", "n >= 1"))
    assert without.valid(goal) != VALID


def test_markov_blocks_read_the_failure_indicator():
    f = parse_expr("!(load0 < a) ? 1 : 0")
    assert S.markov_blocks(f, ["load0", "t"], {"load0", "t", "b"}) == [parse_expr("load0 / a")]
    assert S.markov_blocks(f, ["t"], {"load0", "t", "b"}) == []


def test_counterexample_values_are_language_literals():
    assert S._value(z3.IntVal(-3)) == A.Num(Fraction(-3), True)
    assert S._literal(A.Num(Fraction(-3), True)) == A.Binary("-", A.num(0), A.Num(Fraction(3), True))


def test_sum_const_needs_its_premise():
    text = """
program p(best: int, c: int, n: int)
  requires n >= 1 && REQ
  ensures  b
  fails    0
{ b ~ bern(1/2); }
"""
    goal = parse_expr("sum(u in 1..=n: min(best, c + u) == c ? 1 : 0) == 0")
    _c, _f, above = _claim(text.replace("REQ", "best > c"))
    assert above.valid(goal) == VALID
    _c, _f, equal = _claim(text.replace("REQ", "best == c"))
    assert equal.valid(goal) != VALID
    assert equal.valid(parse_expr("sum(u in 1..=n: min(best, c + u) == c ? 1 : 0) == n")) == VALID


def test_a_draw_read_in_two_tests_is_weighted_by_each_assignment():
    atoms = [parse_expr("min(b, c + x) < c"), parse_expr("min(b, c + x) == c")]
    f = parse_expr("min(b, c + x) < c ? 1 : min(b, c + x) == c ? 0 : 1")
    e = E.by_atoms(f, "x", parse_expr("1"), parse_expr("n"), parse_expr("n"), atoms)
    assert E.atoms_of(f, "x", {"x": A.INT}) == atoms
    # three weighted assignments and the all-false remainder, capped at 1
    assert isinstance(e, A.Call) and e.func == "min"
    # (φ₁, φ₂) = (T, T) and (T, F) give 1, (F, T) gives 0 (its term drops out, its weight stays
    # in the remainder's 1 - q_TT - q_TF - q_FT)
    assert sum(1 for n in A.walk(e) if isinstance(n, A.Sum)) == 5


def test_soundness_harness_checks_the_blind_false_siblings():
    import sys

    sys.path.insert(0, str(BENCHMARKS / "soundness"))
    from harness import benchmark_inputs, variant_files

    listed = set(variant_files())
    for path in TRUE:
        rel = str(path.with_name(path.stem + "_false.prob").relative_to(BENCHMARKS))
        assert rel in listed
        assert benchmark_inputs(rel), rel


SUM_MARKOV = """
program sumMarkov(m: int, a: real)
  requires m >= 0 && a > 0
  ensures  s < a
  fails    BOUND
{
  s := 0;
  for t in 0..m {
    y ~ unif(0, 4);
    s := s + y;
  }
}
"""


@pytest.mark.parametrize(
    "bound, verdict",
    # E[s] = 2m, so Markov gives 2m/a; m/a is false (m = 1, a = 2: Pr[y >= 2] = 3/5 > 1/2)
    [("2 * m / a", "proved"), ("m / a", "unknown")],
)
def test_markov_for_a_sum_of_draws(bound, verdict):
    text = SUM_MARKOV.replace("BOUND", bound)
    prog = parse(text).programs[0]
    r = prove_program(prog, path="<sum>", source=text, timeout=FALSE_CLAIM_S)
    assert r.verdict == verdict, r.render_text()


def test_accumulators_are_variables_only_added_to():
    body = parse(SUM_MARKOV.replace("BOUND", "1")).programs[0].body
    loop = next(n for n in A.walk(body) if isinstance(n, A.For))
    assert E.accumulators(loop.body) == ["s"]
