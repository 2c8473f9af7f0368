"""Concentration for sums of bounded terms with data-dependent means (issue 33): an array element
at a fresh uniform index (``idx ~ unif(0, n - 1); c := c + x[idx]``), a coin mixture
(``if (h) { y := x[i]; } else { y ~ unif(0, 1); }``), and Chernoff's lower tail where μ may be 0.
The true claims of benchmarks/prover4/dev/blind1 are proved by a concentration rule and their
certificates re-check (tampered ones are rejected); their false siblings are not proved; and the
shapes that only look like independent terms (a stale index, a draw of the previous iteration,
a coin the term reuses) are not taken for them."""

import json
from pathlib import Path

import pytest
from support.certificates import certify, check_in_process

from lang.parser import parse
from lang.typecheck import check_file
from tamp.api import prove
from tamp.certificate.writer import file_certificate
from tamp.cfa import build_cfa
from tamp.prover.concentration.proof import ConcentrationResult, claim_of
from tamp.prover.concentration.shapes import NotApplicable
from tamp.show import show_expr
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "prover4" / "dev" / "blind1"
TRUE = [
    "chernoff/sample_fraction",
    "reliability/perforation_mean",
    "dpaccuracy/randomized_response",
    "chernoff/chernoff_mult_lower",
    "chernoff/randomized_rounding",
]


@pytest.mark.parametrize("name", TRUE)
def test_true_claim_proved_by_concentration_and_certified(name):
    path = DEV / f"{name}.prob"
    res, cert, raw = certify(path)
    part = res.programs[0]
    assert part.verdict == "proved", part.render_text()
    assert isinstance(part, ConcentrationResult)
    report = check_in_process(cert, path, raw)
    assert report.ok, report.reason
    sim = simulate(str(path), inputs_for(str(path))[0], runs=4000, seed=7)
    assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", TRUE)
def test_false_sibling_not_proved(name):
    path = DEV / f"{name}_false.prob"
    assert prove(str(path), timeout=20).programs[0].verdict != "proved"


def _widen(c):  # the term's width 1 claimed as 1/2: Hoeffding's exponent 4 times larger
    b = c["sums"][0]["blocks"][0]
    b["param"] = {"node": "Num", "value": "1/2", "is_int": False}


def _drop_range(c):  # a certificate cannot drop the term-range side condition: it is rebuilt
    c["obligations"] = [o for o in c["obligations"] if "term range" not in o["where"]]


def test_tampered_term_width_is_rejected_and_obligations_are_rebuilt():
    path = DEV / "chernoff/sample_fraction.prob"
    _res, cert, raw = certify(path)
    bad = json.loads(json.dumps(cert))
    _widen(bad["concentration"][0])
    report = check_in_process(bad, path, raw)
    assert not report.ok and "SHAPE" in report.reason
    ok = json.loads(json.dumps(cert))
    _drop_range(ok["concentration"][0])
    report = check_in_process(ok, path, raw)
    assert report.ok and report.obligations >= 14  # the side condition is the checker's own


def _claim(body, ensures="abs(s - sum(j in 0..n: x[j]) / 2) <= t", requires="forall j in 0..n: x[j] == 0 || x[j] == 1"):
    src = parse(
        f"program c(x: int[], n: int, t: real) requires n >= 1 && t > 0 requires {requires} "
        f"ensures {ensures} fails 2 * exp(-2 * t * t / n) {{ {body} }}"
    )
    check_file(src)
    prog = src.programs[0]
    return claim_of(prog, build_cfa(prog))


def test_sampled_element_is_a_bounded_term_with_the_arrays_mean():
    c = _claim("s := 0; for i in 0..n { idx ~ unif(0, n - 1); s := s + x[idx]; }")
    (s,) = c.sums
    assert s.family == "bounded" and [show_expr(b.param) for b in s.blocks] == ["1"]
    ranges = [show_expr(e) for name, e in c.side if name == "term range"]
    assert ranges == ["forall j$t in 0..n - 1 + 1: 0 <= x[j$t] && x[j$t] <= 1"]


def test_coin_mixture_of_array_elements_needs_the_coins_probability():
    c = _claim(
        "s := 0; for i in 0..n { up ~ bern(x[i] / 2); if (up) { y[i] := 1; } else { y[i] := 0; } s := s + y[i]; }"
    )
    assert c.sums[0].family == "bounded"
    probs = [show_expr(e) for name, e in c.side if name == "coin probability"]
    assert probs == ["forall i in 0..n: 0 <= x[i] / 2 && x[i] / 2 <= 1"]
    with pytest.raises(NotApplicable):  # arms writing different elements: no one term
        _claim("s := 0; for i in 0..n { up ~ bern(0.5); if (up) { y[i] := 1; } else { y[0] := 0; } s := s + y[i]; }")


def test_mixture_range_is_quantified_over_the_loop():
    c = _claim("s := 0; for i in 0..n { h ~ bern(0.5); if (h) { y := x[i]; } else { y ~ unif(0, 1); } s := s + y; }")
    (s,) = c.sums
    assert s.family == "bounded"
    assert [show_expr(e) for name, e in c.side if name == "term range"] == ["forall i in 0..n: 0 <= x[i] && x[i] <= 1"]


@pytest.mark.parametrize(
    "body",
    [
        # the index drawn once, before the loop: every term reads the same cell
        "s := 0; idx ~ unif(0, n - 1); for i in 0..n { s := s + x[idx]; }",
        # a term reads the draw of the previous iteration
        "s := 0; u := 0; for i in 0..n { h ~ bern(0.5); if (h) { y := u; } else { y ~ unif(0, 1); } u ~ unif(0, 1); s := s + y; }",
        # the coin is summed too: the term and the indicator share a draw
        "s := 0; for i in 0..n { h ~ bern(0.5); if (h) { y := x[i]; } else { y ~ unif(0, 1); } s := s + y + (h ? 1 : 0); }",
        # the coin is tossed once, before the loop: every term follows the same toss
        "s := 0; h ~ bern(0.5); for i in 0..n { if (h) { y := x[i]; } else { y ~ unif(0, 1); } s := s + y; }",
        # the second mixture reads the first, which reads the same coin
        "s := 0; for i in 0..n { h ~ bern(0.5); if (h) { y := 1; } else { y := 0; } "
        "if (h) { z := y; } else { z := 0; } s := s + z; }",
        # an element of an array without bounds in requires
        "s := 0; for i in 0..n { idx ~ unif(0, n - 1); s := s + x[idx] + x[idx]; }",
    ],
)
def test_dependent_terms_are_not_sums_of_independent_terms(body):
    requires = "true" if "x[idx] + x[idx]" in body else "forall j in 0..n: x[j] == 0 || x[j] == 1"
    with pytest.raises(NotApplicable):
        _claim(body, requires=requires)


REAL_NOISE = """
program realNoise(n: int, w: real, t: real)
  requires n >= 1 && w > 0 && t > 0
  ensures  abs(s - n * w / CENTRE) <= t
  fails    2 * exp(-2 * t * t / (n * w * w))
{
  s := 0;
  for i in 0..n {
    h ~ bern(0.3);
    if (h) { y ~ uniform(0, w); } else { y := w / 2; }
    s := s + y;
  }
}
"""


@pytest.mark.parametrize("centre,proved", [("2", True), ("3", False)])
def test_real_uniform_in_a_mixture_with_a_deterministic_arm(tmp_path, centre, proved):
    # a real uniform draw is a bounded term; the other arm's value w/2 is placed in [0, w] by a
    # side condition; a claim centred at n*w/3 (the mean is n*w/2) is false and not proved
    path = tmp_path / "real.prob"
    path.write_text(REAL_NOISE.replace("CENTRE", centre))
    part = prove(str(path), timeout=20).programs[0]
    assert (part.verdict == "proved") == proved, part.render_text()
    if proved:
        raw = path.read_bytes()
        cert = json.loads(json.dumps(file_certificate(prove(str(path), timeout=20), raw)))
        assert check_in_process(cert, path, raw).ok
    else:
        sim = simulate(str(path), {"n": 100, "w": 1, "t": 10}, runs=4000, seed=3)
        assert sim.verdict == "refuted", sim.render_text()
