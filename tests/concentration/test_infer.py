"""Inferred bounds (`fails ?`, `tamp prove --infer`) and margins (`ensures … <= ?`): each is proved
like a claimed bound, certified, and cross-checked with `tamp simulate` at concrete inputs."""

import json
import math
import re

import pytest

from lang.evaluate import evaluate
from lang.parser import parse_expr
from tamp.api import certify_and_check, prove
from tamp.cli import main
from tamp.simulation import simulate

SUM = """
program noisySumInfer(q: int[], n: int, b: real, t: real)
  requires n >= 1 && b > 0 && t > 0 && t <= 2 * n * b
  ensures  abs(s - sum(j in 0..n: q[j])) <= t
  fails    ?
{
  s := 0;
  i := 0;
  while (i < n) {
    a[i] ~ lap(q[i], b);
    s := s + a[i];
    i := i + 1;
  }
}
"""

MARGIN = """
program failMargin(n: int, r: real, p: real)
  requires n >= 1 && 0 < r && r <= 1 && p > 0 && p <= 1
  ensures  k <= n * r + ?
  fails    p
{
  k := 0;
  i := 0;
  while (i < n) {
    f ~ bern(r);
    if (f) { k := k + 1; }
    i := i + 1;
  }
}
"""

UNION = """
program unionSum(q: int[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && p > 0 && p <= 1
  ensures  abs(s - sum(j in 0..n: q[j])) <= n / eps * log(n / p)
  fails    ?
{
  s := 0;
  i := 0;
  while (i < n) {
    a[i] ~ lap(q[i], 1 / eps);
    s := s + a[i];
    i := i + 1;
  }
}
"""


def _value(expr_text, env):
    return float(evaluate(parse_expr(expr_text), env))


def test_fails_hole_gives_the_bernstein_tail_for_all_inputs():
    r = prove(SUM).programs[0]
    assert r.verdict == "proved", r.render_text()
    env = {"n": 50, "b": 0.5, "t": 20.0}
    assert math.isclose(_value(r.bound, env), 2 * math.exp(-(20.0**2) / (8 * 50 * 0.25)), rel_tol=1e-12)


def test_fails_hole_with_inputs_has_a_value_and_simulation_agrees(tmp_path, capsys):
    f = tmp_path / "sum.prob"
    f.write_text(SUM)
    q = "[" + ",".join(["1"] * 40) + "]"
    capsys.readouterr()
    code = main(["prove", str(f), "--input", "n=40", "--input", "b=1", "--input", "t=30", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    prog = out["programs"][0]
    assert prog["method"] == "concentration"
    expected = 2 * math.exp(-900 / (8 * 40))
    assert math.isclose(prog["bound_value"], expected, rel_tol=1e-9)
    sim = simulate(str(f), {"q": [1] * 40, "n": 40, "b": 1, "t": 30}, runs=20000, seed=3, bound=prog["bound"])
    assert sim.verdict == "consistent", sim.render_text()
    # the inferred bound is tight up to the inequality: half of it is refuted nowhere near, but a
    # bound for a margin without Bernstein's factor would be (checked in test_conc_prover)
    del q


def test_union_bound_inference_for_a_union_bound_claim():
    r = prove(UNION).programs[0]
    assert r.verdict == "proved"
    assert r.bound == "p"
    assert r.details.get("method") == "union bound"


def test_margin_hole_is_the_smallest_proved_margin_and_holds_in_simulation():
    res = prove(
        MARGIN,
        inputs={
            "n": 1000,
            "r": __import__("fractions").Fraction(1, 100),
            "p": __import__("fractions").Fraction(1, 100),
        },
    ).programs[0]
    assert res.verdict == "proved", res.render_text()
    env = {"n": 1000, "r": 0.01, "p": 0.01}
    m = float(evaluate(res.margin, env))
    hoeffding = math.sqrt(1000 * math.log(100) / 2)
    assert m < hoeffding  # Chernoff is tighter than Hoeffding for rare failures
    assert math.isclose(m, res.value, rel_tol=1e-12)
    from tamp.show import show_expr

    text = MARGIN.replace("?", "(" + show_expr(res.margin) + ")")
    sim = simulate(text, {"n": 1000, "r": 0.01, "p": 0.01}, runs=20000, seed=5)
    assert sim.verdict == "consistent", sim.render_text()
    # a margin of half the inferred one is refuted by simulation at n = 1000, r = 0.5
    res2 = prove(
        MARGIN,
        inputs={"n": 1000, "r": __import__("fractions").Fraction(1, 2), "p": __import__("fractions").Fraction(1, 100)},
    ).programs[0]
    half = MARGIN.replace("?", "(" + show_expr(res2.margin) + ") / 3")
    sim = simulate(half, {"n": 1000, "r": 0.5, "p": 0.01}, runs=20000, seed=5)
    assert sim.verdict == "refuted", sim.render_text()


@pytest.mark.parametrize("text", [SUM, MARGIN, UNION], ids=["fails?", "margin?", "union"])
def test_inferred_claims_are_certified(text):
    report = certify_and_check(text)
    assert report.ok, report.reason


def test_infer_option_reads_fails_as_a_hole(tmp_path, capsys):
    f = tmp_path / "count.prob"
    f.write_text(MARGIN.replace("?", "sqrt(n * log(1 / p) / 2)").replace("failMargin", "count"))
    capsys.readouterr()
    assert main(["prove", str(f), "--infer", "--input", "n=100", "--input", "r=0.5", "--input", "p=0.05"]) == 0
    out = capsys.readouterr().out
    m = re.search(r"inferred failure bound: .* = ([0-9.e-]+)", out)
    assert m, out
    assert float(m.group(1)) <= 0.05  # at least as good as the claimed bound
    assert main(["prove", str(f), "--infer", "--bound", "p"]) == 2


def test_margin_needs_a_failure_bound():
    from lang.errors import TampError

    with pytest.raises(TampError) as info:
        prove(MARGIN.replace("fails    p", ""))
    assert "needs a failure bound" in str(info.value)


def test_report_shows_the_rule_and_plots_the_inferred_bound_with_simulation(tmp_path):
    from fractions import Fraction

    from tamp.report import write_report

    text = MARGIN.replace("?", "t").replace("fails    p", "fails    ?").replace("p: real", "t: real")
    text = text.replace("&& p > 0 && p <= 1", "&& t > 0")
    res = prove(text, inputs={"r": Fraction(3, 10), "t": 5})
    assert res.verdict == "proved", res.render_text()
    out = tmp_path / "r.html"
    write_report(str(out), res, text)
    page = out.read_text()
    assert "Concentration" in page and "inferred failure bound" in page
    assert "<svg" in page and "tamp simulate" in page


BOTH = """
program both(q: int[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && p > 0 && p <= 1 && log(n / p) <= 2
  ensures  abs(s - sum(j in 0..n: q[j])) <= n / eps * log(n / p)
  fails    ?
{
  s := 0;
  i := 0;
  while (i < n) {
    a[i] ~ lap(q[i], 1 / eps);
    s := s + a[i];
    i := i + 1;
  }
}
"""


def test_inferred_bound_is_the_best_of_union_bound_and_concentration():
    from fractions import Fraction

    r = prove(BOTH, inputs={"n": 5, "eps": 1, "p": Fraction(9, 10)}).programs[0]
    assert r.verdict == "proved", r.render_text()
    union = 0.9  # the union bound proves p
    conc = 2 * math.exp(-((5 * math.log(5 / 0.9)) ** 2) / (8 * 5))
    assert math.isclose(r.value, min(union, conc), rel_tol=1e-9)
    methods = {a["method"] for a in r.to_json().get("alternatives", [])}
    assert "union bound" in methods  # the union-bound proof was found too, and is looser here
