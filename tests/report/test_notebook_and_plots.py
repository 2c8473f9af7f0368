"""Notebook views (one-line reprs, compact cards), the derivation line and the report's plots,
on real results (the browser tests in tests/browser check that they display)."""

import json

import pytest
from locations import BENCHMARKS

import tamp
from tamp.report import program_card
from tamp.report.derivation import derivation_line
from tamp.report.notebook import MAX_BYTES
from tamp.report.plots import bound_plot, bound_points, causal_plot, comparison_plot
from tamp.simulation import simulate

COIN = """program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{ y ~ bern(p); }
"""
LOOP = (BENCHMARKS / "dp" / "ex2.prob").read_text()
BAND = """program band(x1: real, x2: real, sex: int)
  requires 0 <= x1 && x1 <= 1 && 0 <= x2 && x2 <= 1 && (sex == 0 || sex == 1)
  ensures independent(out, sex)
{
  h := max(0, 2*x1 + 0.1*sex - 1);
  out := h + 0.3 * x2 > 0.5 ? 1 : 0;
}
"""
COINS = """program coins()
  ensures P(a && b) <= 0.3
{
  a ~ bern(0.5);
  b ~ bern(0.5);
}
"""


@pytest.fixture(scope="module")
def coin():
    return tamp.prove(COIN, path="coin.prob")


@pytest.fixture(scope="module")
def band():
    return tamp.prove(BAND, path="band.prob")


def test_the_derivation_of_a_loop_bound_is_one_line():
    r = tamp.prove(LOOP, path="ex2.prob").programs[0]
    assert r.verdict == "proved"
    assert derivation_line(r) == "n iterations × p = p * n  <=  p * n"
    sim = simulate(LOOP, {"n": 4, "eps": 0.5, "p": 0.1, "q": [1, 2, 3, 4]}, runs=20000, seed=4)
    assert sim.verdict == "consistent"  # the proved bound, cross-checked by sampling


def test_the_derivation_counts_what_is_spent_before_the_loop():
    # issue 36, item 5: the line read "n iterations × p / (2 * n) = p / 2 <= p", dropping the
    # p / 2 the threshold's noise spends before the loop; it is read off κ at the exit now
    r = tamp.prove((BENCHMARKS / "dp" / "aboveT.prob").read_text(), path="aboveT.prob").programs[0]
    assert r.verdict == "proved"
    assert derivation_line(r) == "p / 2 + n iterations × p / (2 * n) = p  <=  p"


def test_the_derivation_compares_its_total_with_a_looser_bound():
    # the total is shown, and "<=" only because sympy shows p * n <= p * n + 1
    r = tamp.prove(LOOP, path="ex2.prob", bound="p * n + 1").programs[0]
    assert r.verdict == "proved"
    assert derivation_line(r) == "n iterations × p = p * n  <=  p * n + 1"


def test_the_derivation_of_a_loop_free_bound_and_of_no_proof(coin):
    assert derivation_line(coin.programs[0]) == "κ at the exits: p  <=  p"
    half = tamp.prove(COIN.replace("fails p", "fails p / 2"), path="half.prob").programs[0]
    assert half.verdict == "unknown" and derivation_line(half) is None


def test_reprs_are_one_short_line(coin, band):
    sim = simulate(COIN, {"p": 0.2}, runs=2000, seed=1)
    check = tamp.certify_and_check(COIN)
    for obj in (coin, coin.programs[0], band.programs[0], sim, check):
        text = repr(obj)
        assert "\n" not in text and len(text) < 160, text
    assert repr(coin.programs[0]) == "<ProofResult coin: proved  bound p  (%.2f s)>" % coin.programs[0].time_s
    assert repr(sim).startswith("<SimResult coin: consistent  rate ")
    assert repr(check).startswith("<CheckReport ok: ")


def test_cards_are_compact_and_list_the_source_left_aligned(coin, band):
    big = tamp.prove(BENCHMARKS / "dp" / "randResp.prob")
    for r in (coin, band, big):
        html = r._repr_html_()
        assert len(html) < MAX_BYTES, len(html)
        assert "tamp-card" in html and "<details><summary>source</summary>" in html
        assert "text-align: left !important" in html  # against notebooks that right-align tables
    assert "<svg" in coin._repr_html_() and 'class="plot"' in band._repr_html_()
    assert program_card(coin.programs[0], COIN) == coin.programs[0]._repr_html_()
    sim = simulate(COIN, {"p": 0.2}, runs=2000, seed=1)
    assert 'class="bar rate"' in sim._repr_html_() and "consistent".upper() in sim._repr_html_()


def test_the_bound_plot_varies_one_input_and_adds_simulated_rates(coin):
    name, others, pts = bound_points(coin.programs[0])
    assert name == "p" and others == {} and all(abs(x - v) < 1e-12 for x, v in pts)
    svg = bound_plot(coin.programs[0], simulate=True)
    assert (
        svg.startswith('<svg class="plot"')
        and "tamp simulate" in svg
        and "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    )
    assert "tamp simulate" not in bound_plot(coin.programs[0], simulate=False)


def test_the_bound_plot_caps_a_vacuous_bound_says_where_inputs_come_from_and_simulates_arrays():
    # issue 36, item 9: "Pr[fail]" was drawn up to 64, the other inputs' values were unexplained,
    # and a program with an array input got no simulated points
    r = tamp.prove(LOOP, path="ex2.prob").programs[0]
    name, others, pts = bound_points(r)
    assert name == "n" and max(v for _x, v in pts) > 1
    svg = bound_plot(r, simulate=True)
    assert "capped at 1" in svg and "vacuous" in svg
    assert "chosen where requires holds" in svg and "--input" in svg
    assert "tamp simulate" in svg  # q: real[] generated for the simulator
    fixed = tamp.prove(LOOP, path="ex2.prob", inputs={"eps": 0.5, "p": 0.01}).programs[0]
    assert "fixed: eps = 0.5, p = 0.01" in bound_plot(fixed, simulate=False)


def test_the_probability_and_causal_plots(band):
    r = tamp.prove(COINS).programs[0]
    assert r.verdict == "proved"
    svg = comparison_plot(r)
    assert svg.startswith('<svg class="plot"') and "[0.25, 0.25]" in svg
    b = band.programs[0]
    assert b.verdict == "violated" and b.regions
    assert {kind for _box, kind in b.regions} <= {"fair", "biased", "partly biased", "unknown"}
    svg = causal_plot(b)
    assert "x1" in svg and "biased" in svg and "certified" in svg
    # the drawing's (box, kind) pairs stay out of the JSON; what it lists under "regions" is the
    # causal engine's biased boxes in feature names, each with its share
    listed = b.to_json()["regions"]
    assert set(listed) == {"count", "listed", "biased_mass", "boxes"}
    assert all(set(box) == {"features", "biased_share", "biased_mass"} for box in listed["boxes"])
    assert "partly biased" not in json.dumps(b.to_json())


def test_a_file_of_several_programs_is_one_compact_card():
    r = tamp.prove(COIN + "\n" + COINS + "\n" + BAND, path="three.prob")
    html = r._repr_html_()
    assert len(html) < MAX_BYTES and html.count("<style>") == 1
    assert all(f"<b>{name}</b>" in html for name in ("coin", "coins")) and "three.prob" in html
