"""Retries inside an iteration (issue 33): a product over a literal number of tries whose bound is
written as a product (``f * f * f``), not ``exp(E)``, is composed by writing the product out
(:func:`tamp.cfa.nesting.composition`), and the outer loop takes the union over its iterations.
The dev files are benchmarks/prover4/dev/periter's batch_retries and resend_twice (variants of
blind5 inventory/supplier_retry and grouptesting/inconclusive_retest: a ``for`` with an
``if (!done)`` early exit, a cap written ``tries <= 1``, success written ``acked := !lost``),
cross-checked by simulation; their false siblings (one factor too many) stay unknown."""

from __future__ import annotations

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.cfa.nesting import composition, flag_loop
from tamp.prover.nesting.prove import NestResult, candidates
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev" / "periter"
BLIND5 = BENCHMARKS / "prover4" / "dev" / "blind5"
TRUE = [
    DEV / "batch_retries.prob",
    DEV / "resend_twice.prob",
    BLIND5 / "inventory" / "supplier_retry.prob",
    BLIND5 / "grouptesting" / "inconclusive_retest.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_retries_compose_per_iteration(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and r.form == "union"
    assert isinstance(r.inner, NestResult) and r.inner.form == "product"
    for given in inputs_for(str(path)):
        sim = simulate(str(path), given, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


RETRY = """
program retry(f: real)
  requires f >= 0 && f <= 1
  ensures got
  fails BOUND
{
  got := false;
  tries := 0;
  while (!got && tries < 3) {
    fail ~ bern(f);
    if (!fail) { got := true; }
    tries := tries + 1;
  }
}
"""


def _loop(bound):
    prog = parse(RETRY.replace("BOUND", bound)).programs[0]
    fl = flag_loop(prog, prog.ensures, build_cfa(prog).types)
    assert fl is not None and fl.form == "product"
    return prog, fl


def test_the_product_is_written_out_for_a_literal_trip_count():
    _prog, fl = _loop("f * f * f")
    sides = dict(composition(fl, parse_expr("f * f * f"), parse_expr("f")))
    assert set(sides) == {"NONNEGATIVE", "PRODUCT"}
    assert parse_expr("f") in candidates(fl, parse_expr("f * f * f"))


def test_the_three_tries_are_proved_and_two_factors_more_are_not(tmp_path):
    for bound, verdict in (("f * f * f", "proved"), ("f * f * f * f", "unknown")):
        text = RETRY.replace("BOUND", bound)
        path = tmp_path / "retry.prob"
        path.write_text(text)
        r = _prove(path, timeout=FALSE_CLAIM_S)
        assert (r.verdict == "proved") == (verdict == "proved"), r.render_text()
