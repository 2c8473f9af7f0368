"""Counts of events of fresh draws, guarded counts and coins of their own (issue 33): the
shapes of :mod:`tamp.cfa.sums` that users write for Hoeffding and Chernoff counts — ``pg < k`` of
a fresh uniform, ``a[x]`` at a fresh index, ``a != b`` of two coins, ``y < th[i]``, a count
behind the guard ``j != v`` (n - 1 terms), ``bern(p[i])``, and ±1 steps on a coin. The true
claims of benchmarks/prover4/dev/conc3 (and blind4's proportion_hoeffding) are proved by a
concentration rule, agree with simulation at the recorded inputs, and their certificates
re-check; their false siblings are not proved and are refuted by simulation; variants written
differently are proved; shapes that only look independent are not taken for sums."""

import json
from pathlib import Path

import pytest
from support.certificates import certify, check_in_process

from lang.parser import parse
from lang.typecheck import check_file
from tamp.api import prove
from tamp.cfa import build_cfa
from tamp.prover.concentration.proof import ConcentrationResult, claim_of
from tamp.prover.concentration.shapes import NotApplicable
from tamp.show import show_expr
from tamp.simulation import simulate

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev"
DEV = ROOT / "conc3"
INPUTS = json.loads((DEV / "inputs.json").read_text())
TRUE = ["eventHits", "guardedDegree", "coinXor", "thresholdArray", "varyingCoins", "biasedWalk", "markedIndex"]


@pytest.mark.parametrize("name", TRUE)
def test_true_claim_proved_by_concentration_and_agrees_with_simulation(name):
    path = DEV / f"{name}.prob"
    part = prove(str(path), timeout=60).programs[0]
    assert part.verdict == "proved", part.render_text()
    assert isinstance(part, ConcentrationResult)
    for case in INPUTS[f"{name}.prob"]:
        sim = simulate(str(path), case["inputs"], runs=2000, seed=5)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", TRUE)
def test_false_sibling_not_proved_and_refuted(name):
    path = DEV / f"{name}_false.prob"
    assert prove(str(path), timeout=30).programs[0].verdict != "proved"
    for case in INPUTS[f"{name}_false.prob"]:
        sim = simulate(str(path), case["inputs"], runs=2000, seed=5)
        assert sim.verdict == "refuted", sim.render_text()


def test_blind_proportion_proved_and_certified():
    path = ROOT / "blind4" / "montecarlo" / "proportion_hoeffding.prob"
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    assert check_in_process(cert, path, raw).ok


def _claim(body, params="n: int, k: int, p: real, t: real", ensures="h <= t", requires="n >= 1"):
    src = parse(f"program c({params}) requires {requires} ensures {ensures} fails 1 / 2 {{ {body} }}")
    check_file(src)
    prog = src.programs[0]
    return claim_of(prog, build_cfa(prog))


def test_comparison_event_has_the_count_over_the_range_and_its_side_condition():
    c = _claim("h := 0; for i in 0..n { pg ~ unif(0, n - 1); if (pg < k) { h := h + 1; } }")
    (s,) = c.sums
    assert s.family == "bernoulli"
    assert [show_expr(b.param) for b in s.blocks] == ["k / (n - 1 - 0 + 1)"]
    assert ("event range", "0 <= k && k <= n - 1 + 1") in [(n, show_expr(e)) for n, e in c.side]


@pytest.mark.parametrize(
    "test",
    ["pg < k", "k > pg", "!(pg >= k)", "pg <= k - 1"],
)
def test_the_same_event_written_differently_is_recognised(test):
    c = _claim(f"h := 0; for i in 0..n {{ pg ~ unif(0, n - 1); hit := {test}; if (hit) {{ h := h + 1; }} }}")
    assert c.sums[0].family == "bernoulli"


def test_guard_on_the_counter_counts_the_iterations_it_lets_through():
    c = _claim(
        "h := 0; for j in 0..n { if (j != k) { e ~ bern(p); if (e) { h := h + 1; } } }",
        requires="n >= 1 && 0 <= k && k < n && 0 <= p && p <= 1",
    )
    (s,) = c.sums
    assert [show_expr(b.count) for b in s.blocks] == ["n - 1 - 0"]
    assert [show_expr(e) for n, e in c.side if n == "guard range"] == ["0 <= k && k <= n - 1"]


@pytest.mark.parametrize(
    "body",
    [
        # the event reads the draw of an earlier iteration
        "h := 0; last := 0; for i in 0..n { pg ~ unif(0, n - 1); if (pg < last) { h := h + 1; } last := pg; }",
        # the index is drawn once, before the loop: every indicator reads the same cell
        "h := 0; x ~ unif(0, n - 1); for i in 0..n { if (x < k) { h := h + 1; } }",
        # the event and the summed draw share a draw: h adds pg and the indicator of pg < k
        "h := 0; for i in 0..n { pg ~ unif(0, n - 1); h := h + pg + (pg < k ? 1 : 0); }",
        # a guard on a value the loop changes
        "h := 0; m := 0; for j in 0..n { if (j != m) { e ~ bern(p); if (e) { h := h + 1; } } m := m + 1; }",
        # two events of the same draw combined: not independent
        "h := 0; for i in 0..n { pg ~ unif(0, n - 1); if (pg < k && pg > 0 && pg < k) { h := h + 1; } }",
    ],
)
def test_dependent_events_are_not_sums_of_independent_terms(body):
    with pytest.raises(NotApplicable):
        c = _claim(body)
        if not any(s.family == "bernoulli" for s in c.sums):
            raise NotApplicable("no count")


def test_coin_arm_reading_the_events_draw_is_not_a_mixture():
    # y := pg when pg < k, else 0: the coin (the event) and the arm read the same draw
    with pytest.raises(NotApplicable):
        _claim("h := 0; for i in 0..n { pg ~ unif(0, n - 1); if (pg < k) { y := pg; } else { y := 0; } h := h + y; }")


def test_events_and_guards_on_values_earlier_iterations_set_leave_the_other_sums_alone():
    # h counts an event against last (set by the previous iteration), g is guarded by the running
    # sum s: neither is a sum of independent terms, and neither may spoil the Hoeffding sum s
    c = _claim(
        "s := 0; last := 0; h := 0; g := 0; for i in 0..n { y ~ unif(0, 1); s := s + y; "
        "pg ~ unif(0, n - 1); if (pg < last) { h := h + 1; } "
        "if (s > 3) { e ~ bern(p); if (e) { g := g + 1; } } last := pg; }",
        ensures="s <= t",
    )
    assert [s.family for s in c.sums] == ["bounded"]
    for ensures in ("h <= t", "g <= t"):
        with pytest.raises(NotApplicable):
            _claim(
                "s := 0; last := 0; h := 0; g := 0; for i in 0..n { y ~ unif(0, 1); s := s + y; "
                "pg ~ unif(0, n - 1); if (pg < last) { h := h + 1; } "
                "if (s > 3) { e ~ bern(p); if (e) { g := g + 1; } } last := pg; }",
                ensures=ensures,
            )
