"""Failure bounds that are products of probabilities (issue 18, the expected-failure engine):
retries, nested coins, voters. Every true claim here is proved by :mod:`tamp.prover.expectation.prove`
and cross-checked with `tamp simulate` at two inputs; every false sibling is not proved; a
solver ``unknown`` is never a proof; the lemmas the engine adds are true of the real exp."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS

from lang import ast as A
from lang.parser import parse, parse_file
from tamp.prover import portfolio, prove_program
from tamp.prover.concentration import proof as conc_proof
from tamp.prover.expectation import prove as E
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import load_inputs

PRODUCTS = sorted((BENCHMARKS / "products").glob("*.prob"))
CORPUS = [
    BENCHMARKS / "corpus" / f
    for f in (
        "retry/retry_bounded.prob",
        "retry/retry_count.prob",
        "retry/retry_twice.prob",
        "randomized_response/rr_forced.prob",
    )
]
FALSE = (
    sorted((BENCHMARKS / "variants").glob("products_*_false.prob"))
    + [BENCHMARKS / "variants" / "loop_retry_count.prob"]
    + [p.with_name(p.stem + "_false.prob") for p in CORPUS]
)


def _prove(path, timeout=60, **kw):
    src = parse_file(str(path))
    return prove_program(src.programs[0], path=str(path), source=src.text, timeout=timeout, **kw)


@pytest.fixture
def without_nesting(monkeypatch):
    """The per-iteration composition, tried before expected failure, now proves several of these
    programs first (a retry is a flag loop), and so does linearity of expectation when the claim
    is that a count stays 0 (Markov at 1: ``Pr[lost >= 1] <= E[lost]``); the tests here are about
    the expected-failure engine, so those methods are turned off for them."""
    monkeypatch.setattr(portfolio.Nesting, "attempt", lambda self, problem: portfolio.Attempt())
    monkeypatch.setattr(portfolio.Linearity, "attempt", lambda self, problem: portfolio.Attempt())


@pytest.mark.parametrize("path", PRODUCTS + CORPUS, ids=lambda p: p.stem)
def test_products_of_probabilities_are_proved(path, without_nesting):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, E.ExpectationResult)
    assert r.stats["method"] == "expectation"


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    assert _prove(path, timeout=FALSE_CLAIM_S).verdict != "proved"


def test_proved_claims_survive_simulation_at_two_inputs():
    entries = load_inputs(BENCHMARKS / "inputs.json")
    for path in PRODUCTS:
        mine = [b for b in entries if b.file.resolve() == path.resolve()]
        assert len(mine) >= 2, path
        for b in mine[:2]:
            r = simulate(b.file, b.inputs, runs=4000, seed=3)
            assert r.verdict == "consistent", r.render_text()


RR = """program rr(priv: bool, h: real)
  requires 0 <= h && h <= 1
  ensures ans == priv
  fails BOUND
{
  first ~ bern(h);
  if (first) { ans := priv; } else { second ~ bern(1 / 2); ans := second; }
}"""


def test_nested_coins_weight_their_branches_exactly():
    """(1 - h)/2 is the exact failure probability: a hair less is not proved."""
    assert prove_program(parse(RR.replace("BOUND", "(1 - h) / 2")).programs[0]).verdict == "proved"
    assert prove_program(parse(RR.replace("BOUND", "(1 - h) / 2 - h / 100")).programs[0]).verdict != "proved"


def test_a_solver_unknown_is_not_a_proof(monkeypatch):
    # the expected-failure engine's queries go through the concentration engine's checker
    monkeypatch.setattr(conc_proof, "is_valid", lambda *a, **k: "unknown")
    r = _prove(BENCHMARKS / "products" / "tmr.prob")
    assert r.verdict != "proved"


def test_the_loop_proof_is_shown_with_v(capsys, without_nesting):
    from tamp.cli import main

    main(["prove", "-v", str(BENCHMARKS / "corpus" / "retry" / "retry_bounded.prob")])
    out = capsys.readouterr().out
    assert "derivation: loop at line 13" in out
    assert "at most k - att iterations left, each goes on with probability <= 1 - s" in out
    assert "Pr[fail] from its head <= exp(-s * (k - att))" in out


def test_continuous_samples_are_left_to_the_union_bound():
    """Gaussian noise is outside the rules; a Laplace draw is weighted only by one tail event
    (tails.py, issue 33), so one read by its value is refused by the transformer."""
    prog = parse("""program gaus(x: real, eps: real, p: real)
      requires eps > 0 && 0 < p && p <= 1 ensures abs(y - x) <= log(1 / p) / eps fails p
      { c ~ bern(1 / 2); y ~ gauss(x, 1 / eps); }""").programs[0]
    from tamp.cfa import build_cfa

    with pytest.raises(E.NotApplicable):
        E.claim_of(prog, build_cfa(prog))
    valued = parse("""program lapv(x: real, eps: real)
      requires eps > 0 ensures y * y <= 1 / (eps * eps) fails 1 / 2
      { c ~ bern(1 / 2); y ~ lap(x, 1 / eps); }""").programs[0]
    claim = E.claim_of(valued, build_cfa(valued))
    with pytest.raises(E.NotApplicable):
        E.Wpe(claim.body, claim.params, types=claim.types).stmt(claim.body, claim.post)


def test_a_loop_without_termination_argument_is_not_proved():
    """`while (!ok) { skip }` never ends once ok is false: no rank, no exit chance."""
    prog = parse("""program stuck(s: real)
      requires 0 < s && s <= 1 ensures ok fails 0
      { ok ~ bern(s); while (!ok) { skip; } }""").programs[0]
    assert prove_program(prog).verdict != "proved"


def test_an_invariant_below_the_truth_is_rejected():
    """A loop that surely fails (ok := false in every iteration) cannot be given the invariant
    expectation -5 (clamped to 0): INDUCT fails at the last iteration."""
    prog = parse("""program neg(n: int)
      requires n >= 1 ensures ok fails 0
      { ok := true; i := 0; while (i < n) { c ~ bern(1 / 2); ok := false; i := i + 1; } }""").programs[0]
    from tamp.cfa import build_cfa

    cfa = build_cfa(prog)
    claim = E.claim_of(prog, cfa)
    annots = {0: E.LoopAnnot(A.Binary("-", A.num(0), A.num(5)), "rank", A.Binary("-", A.Var("n"), A.Var("i")))}
    _pre, _used, obs = E.obligations_for(claim, cfa.bound, annots)
    chk = E.Checker(claim)
    assert any(chk.valid(f) != "valid" for _k, _w, f in obs)


def test_for_loops_over_literal_bounds_are_unrolled():
    s = parse("program u() ensures true { for i in 0..3 { x := i; } }").programs[0].body.stmts[0]
    b = E.unroll(s)
    assert b is not None and len(b.stmts) == 7
    assert (
        E.unroll(parse("program u(n: int) ensures true { for i in 0..n { x := i; } }").programs[0].body.stmts[0])
        is None
    )


@settings(max_examples=200, deadline=None)
@given(st.floats(-30, 30), st.floats(-30, 30))
def test_product_lemmas_hold_for_the_real_exp(a, b):
    """exp-add and exp-pos, the facts :func:`axioms.lemmas.product_lemmas` instantiates."""
    assert math.isclose(math.exp(a), math.exp(b) * math.exp(a - b), rel_tol=1e-9)
    assert math.exp(a - b) >= 1 + (a - b)


def test_product_lemma_instances_are_the_stated_facts():
    import z3

    from axioms.lemmas import product_lemmas
    from tamp.prover.base.smt import Encoder

    enc = Encoder({"x": A.REAL, "y": A.REAL})
    x, y = z3.Reals("x y")
    lem = dict((n, f) for n, f in product_lemmas([enc.exp(x), enc.exp(y)], enc))
    # with exp read as a function satisfying exp(u)·exp(v) = exp(u + v) on these terms, each
    # instance is a consequence; here: the instances are not contradictory at x = y = 0
    s = z3.Solver()
    s.add(*lem.values(), x == 0, y == 0)
    assert s.check() == z3.sat


UNIF_TEST = """
program u(n: int, t: int)
  requires n >= 1 && t >= 0
  ensures x * x >= t
  fails 1/4
{
  x ~ unif(0, n);
}
"""


def test_unknown_message_names_no_engine_variable(monkeypatch):
    """The 'exact for these coins' message shows the expected failure as a user writes it: the
    sum over a unif's values names its variable ``j``, not the engine's ``u$``, also when sympy's
    simplification gives up (the expression is then shown unsimplified)."""

    def give_up(e):
        raise RuntimeError("no simplification")

    monkeypatch.setattr(E, "simplify", give_up)
    r = prove_program(parse(UNIF_TEST).programs[0], source=UNIF_TEST, timeout=30)
    text = r.render_text()
    assert r.verdict != "proved"
    line = [x for x in text.splitlines() if "exact for these coins" in x]
    assert line and "sum(" in line[0] and "$" not in line[0], text
