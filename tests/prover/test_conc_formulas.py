"""Concentration through computed values and weighted terms (issue 33, session 19): a variable
computed from sums by an expression no rule reads term by term (a verdict ``accept := s / n <=
U - k·sqrt(v / n)``, an error ``abs(h / n - p)``, a difference of two sums that do not merge) is
a :class:`tamp.cfa.sums.Formula` whose exit value the claim substitutes over the centred sums;
a loop term scaled by ``c[i]`` or of width ``w[i]`` (``unif({-1, 1})``, ``uniform(0, h[i])``) is
Hoeffding's term of width ``|c_i|·w_i`` (the method of bounded differences). The true claims of
benchmarks/prover4/dev/conc4 and blind5's variables_plan_accept, blind2's weighted_steps are
proved by concentration, agree with simulation, and their certificates re-check; the false
siblings are not proved and are refuted by simulation; values that read earlier iterations or
arrays are not taken for formulas."""

import json
from pathlib import Path

import pytest
from support.certificates import certify, check_in_process

from lang.parser import parse
from lang.typecheck import check_file
from tamp.api import prove
from tamp.cfa import build_cfa
from tamp.prover.concentration.proof import ConcentrationResult, claim_of
from tamp.prover.concentration.shapes import Formula, NotApplicable, recognise
from tamp.show import show_expr
from tamp.simulation import simulate

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev"
DEV = ROOT / "conc4"
INPUTS = json.loads((DEV / "inputs.json").read_text())
TRUE = ["gaussVerdict", "proportionError", "armGap", "weightedSigns", "varyingWidths"]


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
    assert prove(str(path), timeout=10).programs[0].verdict != "proved"
    for case in INPUTS[f"{name}_false.prob"]:
        sim = simulate(str(path), case["inputs"], runs=20000, seed=5)
        assert sim.verdict == "refuted", sim.render_text()


@pytest.mark.parametrize("rel", ["blind5/qualitycontrol/variables_plan_accept", "blind2/walks/weighted_steps"])
def test_blind_claims_proved_and_certified_and_false_siblings_not(rel):
    path = ROOT / f"{rel}.prob"
    res, cert, raw = certify(path)
    assert res.programs[0].verdict == "proved"
    assert isinstance(res.programs[0], ConcentrationResult)
    assert check_in_process(cert, path, raw).ok
    false = ROOT / f"{rel}_false.prob"
    assert prove(str(false), timeout=10).programs[0].verdict != "proved"


def _claim(body, params="n: int, p: real, t: real, c: real[]", ensures="ok", requires="n >= 1"):
    src = parse(f"program c({params}) requires {requires} ensures {ensures} fails 1 / 2 {{ {body} }}")
    check_file(src)
    prog = src.programs[0]
    return claim_of(prog, build_cfa(prog))


@pytest.mark.parametrize(
    "test",
    ["ok := h / n - p < t;", "ok := !(h >= n * p + n * t);", "e := h - n * p; ok := e < n * t;"],
)
def test_a_verdict_written_differently_is_a_formula_of_the_count(test):
    c = _claim(f"h := 0; for i in 0..n {{ f ~ bern(p); if (f) {{ h := h + 1; }} }} {test}")
    assert [s.family for s in c.sums] == ["bernoulli"]
    assert "S$1" in show_expr(c.post)


@pytest.mark.parametrize(
    "body",
    [
        # the verdict is computed inside the loop: its value is the last iteration's
        "h := 0; for i in 0..n { f ~ bern(p); if (f) { h := h + 1; } ok := h < t; }",
        # the test reads an array element at a random index
        "h := 0; for i in 0..n { f ~ bern(p); if (f) { h := h + 1; } } ok := c[h] < t;",
        # a division by the count: the runs where it is 0 stop with an error the rules do not see
        "h := 0; for i in 0..n { f ~ bern(p); if (f) { h := h + 1; } } ok := n / h < t;",
        # log of a value of the count (an error at 0)
        "h := 0; for i in 0..n { f ~ bern(p); if (f) { h := h + 1; } } ok := log(h) < t;",
        # assigned in a branch on the verdict: not a function of the sums alone
        "h := 0; for i in 0..n { f ~ bern(p); if (f) { h := h + 1; } } ok := true; if (h > t) { ok := false; }",
    ],
)
def test_values_that_are_not_functions_of_the_exit_sums_are_not_formulas(body):
    with pytest.raises(NotApplicable):
        _claim(body)


def test_formula_keeps_the_sum_it_read_when_the_sum_grows_later():
    # ok reads h after the first loop; h grows afterwards: ok's sum is the first loop's alone
    prog = parse(
        "program c(n: int, p: real, t: real) requires n >= 1 ensures ok fails 1 / 2 { h := 0;\n"
        "for i in 0..n { f ~ bern(p); if (f) { h := h + 1; } } ok := h < t;\n"
        "for j in 0..n { g ~ bern(p); if (g) { h := h + 1; } } }"
    ).programs[0]
    env = recognise(prog, build_cfa(prog)).env
    assert isinstance(env["ok"], Formula)
    (lin,) = env["ok"].lins
    assert lin.sum != env["h"].sum and lin.sum.draws < env["h"].sum.draws


@pytest.mark.parametrize(
    "step,width",
    [
        ("e ~ unif({-1, 1}); s := s + c[i] * e;", "sqrt(2 * 2 * sum(j$w in 0..n: c[j$w] * c[j$w]) / n)"),
        ("e ~ unif({-1, 1}); s := s + 3 * e;", "6"),
        ("e ~ uniform(0, c[i]); s := s + e;", "sqrt(sum(j$w in 0..n: c[j$w] * c[j$w]) / n)"),
        ("f ~ bern(p); s := s + c[i] * (f ? 1 : 0);", "sqrt(sum(j$w in 0..n: c[j$w] * c[j$w]) / n)"),
    ],
)
def test_weighted_terms_are_hoeffding_terms_of_their_widths(step, width):
    c = _claim(f"s := 0; for i in 0..n {{ {step} }}", ensures="s < t")
    (s,) = c.sums
    assert s.family == "bounded"
    assert [show_expr(b.param) for b in s.blocks] == [width]


@pytest.mark.parametrize(
    "body",
    [
        # the weight reads a value the loop changes (a martingale, not independent terms of fixed range)
        "s := 0; w := 1; for i in 0..n { e ~ unif({-1, 1}); s := s + w * e; w := w + 1; }",
        # a set with a repeated value is not the uniform on distinct values
        "s := 0; for i in 0..n { e ~ unif({1, 1, -1}); s := s + c[i] * e; }",
    ],
)
def test_weights_that_are_not_deterministic_are_not_hoeffding_terms(body):
    with pytest.raises(NotApplicable):
        _claim(body, ensures="s < t")
