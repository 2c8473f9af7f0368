"""Composition by products (issue 33): a loop is a *stage* whose raised flag gates what follows
(:mod:`tamp.prover.stages.products`), with a per-iteration chance from the pre-expectation
calculus summed over the iterations left — a count that may depend on the data — and unreliable
operators as the CFA's coins (:mod:`tamp.cfa.unreliable`). True claims are proved and their
certificates re-checked; false siblings (refuted by simulation, benchmarks/prover4/dev/compose)
are never proved."""

from __future__ import annotations

import math

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.cfa.unreliable import coins_for_unreliable
from tamp.prover import prove_program
from tamp.prover.expectation import prove as E
from tamp.prover.expectation.tails import lap_chance
from tamp.prover.nesting.prove import NestResult
from tamp.prover.stages.products import iterations_sum, raised_flags
from tamp.show import show_expr

DEV = BENCHMARKS / "prover4" / "dev" / "compose"
# scrub_retry (two nested-loop stages) is not proved yet: the search for the inner loops' cores
# runs out of time (benchmarks/prover4/dev/compose/README.md)
TRUE = [DEV / f"{n}.prob" for n in ("checksum_retry", "relu_layer", "noisy_remeasure", "noisy_retry")]
FALSE = [
    DEV / "checksum_retry_false.prob",
    DEV / "relu_layer_false.prob",
    DEV / "scrub_retry_false.prob",
    DEV / "noisy_remeasure_false.prob",
    DEV / "noisy_retry_false.prob",
    DEV / "attack_stage_reads_false.prob",
    DEV / "attack_guard_ops_false.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_stages_are_proved_by_products(path, without_top_union_bound):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    # a flag loop whose iterations are independent tries may be proved one iteration at a time
    # (tamp.prover.nesting), the iteration by the same pre-expectation calculus
    # (or, for a continuous draw, by the union bound's share of the per-iteration bound)
    if isinstance(r, NestResult):
        assert r.inner.verdict == "proved"
        assert isinstance(r.inner, E.ExpectationResult) or r.inner.stats.get("method") is None
    else:
        assert isinstance(r, E.ExpectationResult)


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_false_siblings_are_not_proved(path):
    assert _prove(path, timeout=FALSE_CLAIM_S).verdict != "proved"


RELU = """
program p(x: real[], w: real[], n: int, r: real)
  rate r
  requires n >= 1 && 0 <= r && r <= 1
  reliability 1 - 2 * r * n
{
  for j in 0..n {
    if (x[j] *. 1 > 0) {
      y[j] := x[j] *. w[j] +. 1;
    }
  }
}
"""


def test_unreliable_operators_become_the_cfas_coins_in_place():
    prog = parse(RELU).programs[0]
    body = coins_for_unreliable(prog)
    assert body is not None
    coins = [n for n in A.walk(body) if isinstance(n, A.Sample)]
    flips = [d["stmt"] for _u, _v, _k, d in build_cfa(prog).edges() if isinstance(d["stmt"], A.Sample)]
    assert len(coins) == len(flips) == 3  # one per operator, as the CFA tosses them
    assert not any(isinstance(n, A.Binary) and n.op.endswith(".") for n in A.walk(body))
    first = body.stmts[0]
    assert isinstance(first, A.Assign) and first.targets == (A.Var("failed"),) and first.value == A.BoolLit(False)
    loop = body.stmts[1]
    # the test's coin comes before the `if`, the assignment's two coins before the assignment
    assert isinstance(loop.body.stmts[0], A.Sample) and isinstance(loop.body.stmts[2], A.If)


def test_an_operator_in_a_loop_test_is_outside_the_rules():
    prog = parse(
        "program p(n: int, r: real) rate r requires n >= 1 reliability 1 - r {"
        " i := 0; while (i +. 0 < n) { i := i + 1; } }"
    ).programs[0]
    assert coins_for_unreliable(prog) is None


def test_a_flag_lowered_in_the_loop_is_no_stage():
    body = (
        parse(
            "program p(n: int) requires n >= 1 ensures !b fails 0 {"
            " b := false; c := false; for i in 0..n { e ~ bern(1/2); b := b || e; c := true; if (e) { c := false; } } }"
        )
        .programs[0]
        .body
    )
    loop = body.stmts[2]
    types = {"b": A.BOOL, "c": A.BOOL, "e": A.BOOL}
    assert raised_flags(loop.body, types) == ["b"]


def test_the_union_over_iterations_counts_the_data():
    p = A.Cond(A.Binary(">", A.Index(A.Var("x"), A.Var("j")), A.num(0)), A.Var("r"), A.num(0))
    s = iterations_sum(p, "j", A.Var("j"), A.Var("n"), False, {"x", "r", "n", "j"})
    assert show_expr(s) == "r * sum(j$s in j..n: x[j$s] > 0 ? 1 : 0)"
    flat = iterations_sum(A.Var("r"), "j", A.Var("j"), A.Var("n"), False, set())
    assert show_expr(flat) == "(n - j) * r"


def test_laplace_tails_are_the_exact_probabilities():
    x, m, sc = "x", A.Var("m"), A.Var("s")
    cases = {
        "x > m + 1": lambda mv, sv: 0.5 * math.exp(-1 / sv),
        "x <= m - 2": lambda mv, sv: 0.5 * math.exp(-2 / sv),
        "abs(x - m) > 3": lambda mv, sv: math.exp(-3 / sv),
        "3 >= abs(x - m)": lambda mv, sv: 1 - math.exp(-3 / sv),
        "m + 1 < x": lambda mv, sv: 0.5 * math.exp(-1 / sv),
        "x > m - 1": lambda mv, sv: 1 - 0.5 * math.exp(-1 / sv),
    }
    for text, want in cases.items():
        phi = parse(f"program p(x: real, m: real, s: real) ensures {text} fails 0 {{ }}").programs[0].ensures[0]
        q = lap_chance(phi, x, m, sc)
        assert q is not None, text
        got = float(evaluate(q, {"m": 0.5, "s": 2.0}))
        assert abs(got - want(0.5, 2.0)) < 1e-12, (text, got)
    for text in ("x == m", "abs(x - m) + x > 1", "abs(m - x) > 1", "x * 2 > m"):
        phi = parse(f"program p(x: real, m: real, s: real) ensures {text} fails 0 {{ }}").programs[0].ensures[0]
        assert lap_chance(phi, x, m, sc) is None, text


def test_soundness_harness_checks_every_dev_false_claim():
    """benchmarks/soundness runs every false sibling and attack of the dev family (none may be
    proved), with the inputs that refute it; every dev file has simulated inputs."""
    import json
    import sys

    sys.path.insert(0, str(BENCHMARKS / "soundness"))
    from harness import benchmark_inputs, variant_files

    listed = set(variant_files())
    false = sorted(DEV.glob("*_false*.prob"))
    assert len(false) >= 12
    for f in false:
        rel = f.relative_to(BENCHMARKS).as_posix()
        assert rel in listed, f"benchmarks/soundness does not check {rel}"
        assert benchmark_inputs(rel), f"the harness finds no inputs for {rel}"
    recorded = json.loads((DEV / "inputs.json").read_text())
    assert {p.name for p in DEV.glob("*.prob")} == set(recorded)
    for name, rows in recorded.items():
        want = "refuted" if "_false" in name else "consistent"
        assert any(r["expect"] == want for r in rows), name


@pytest.mark.slow
def test_dev_claims_agree_with_simulation():
    from tamp.simulation import simulate
    from tamp.simulation.bench_inputs import load_inputs

    for e in load_inputs(DEV / "inputs.json"):
        r = simulate(e.file, e.inputs, runs=20000, seed=11)
        assert r.verdict == e.expect, r.render_text()


LAPLACE = """program lapl(x: real, eps: real, t: real)
  requires eps > 0 && t >= 0 ensures abs(y - x) <= t fails BOUND
  { c ~ bern(1 / 2); y ~ lap(x, 1 / eps); }"""


def test_a_laplace_tail_is_weighted_exactly():
    """Pr[|y - x| > t] = exp(-t eps) exactly (Dwork & Roth, Thm. 3.8): proved by expected failure
    with that bound, never with exp(-2 t eps)."""
    import time

    true = parse(LAPLACE.replace("BOUND", "exp(-t * eps)")).programs[0]
    r, why = E.try_expectation(true, build_cfa(true), time.monotonic() + 60, time.monotonic())
    assert r is not None and r.verdict == "proved", why
    false = parse(LAPLACE.replace("BOUND", "exp(-2 * t * eps)")).programs[0]
    r, _why = E.try_expectation(false, build_cfa(false), time.monotonic() + 60, time.monotonic())
    assert r is None or r.verdict != "proved"
    assert prove_program(false, timeout=FALSE_CLAIM_S).verdict != "proved"
