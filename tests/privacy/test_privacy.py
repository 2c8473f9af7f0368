"""Privacy claims: true ones proved, false ones never proved, `private ?`, output and errors."""

import json
import math
import subprocess
import sys
from fractions import Fraction

import pytest

from lang.parser import parse
from lang.printer import print_file
from lang.typecheck import check_file
from tamp import api
from tests.privacy.programs import FALSE, TRUE


def _prove(text: str):
    src = parse(text)
    check_file(src)
    return api.prove_privacy_claim(src.programs[0])


@pytest.mark.parametrize("name", sorted(TRUE))
def test_true_claims_are_proved(name):
    r = _prove(TRUE[name])
    assert r.verdict == "proved", r.message
    assert r.obligations and all(ob.goal is not None for ob in r.obligations)


@pytest.mark.parametrize("name", sorted(FALSE))
def test_false_claims_are_never_proved(name):
    r = _prove(FALSE[name])
    assert r.verdict != "proved"
    assert r.message


def test_reason_names_the_failed_step():
    from tamp.privacy import prove_privacy

    src = parse(FALSE["branchOnSecret"])
    check_file(src)
    r = prove_privacy(src.programs[0], counterexamples=False)
    assert r.verdict == "unknown"
    assert "the output out is " in r.message and r.line == 5  # the text starts with a newline (same, or k in both)
    r = _prove(FALSE["branchOnSecret"])  # and with the search, the deterministic leak is shown
    assert r.verdict == "violated" and r.counterexample["event"] in ("out == 0", "out == 1")


@pytest.mark.parametrize(
    "body, scale, expected",
    [
        ("a ~ lap(x, 1 / (2 * eps));", None, "2 * eps"),
        ("a ~ lap(x, 1 / eps);", None, "eps"),
        ("a ~ lap(x, 2 / eps);", None, "eps / 2"),
    ],
)
def test_private_hole_infers_the_smallest_epsilon(body, scale, expected):
    text = f"""program p(x: real, eps: real)
  requires eps > 0
  neighbours abs(x - x') <= 1
  private ? on a
{{ {body} }}"""
    r = _prove(text)
    assert r.verdict == "proved" and r.epsilon == expected


def test_report_noisy_max_gets_its_own_bound_when_asked():
    # the pointwise alignment (the winner's noise shifted by 2) is tried first now: eps, not the
    # composition bound n * eps / 2 that aligning every draw gives
    text = """program rnm(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    ? on out
{
  best := 0;
  out := 0;
  for i in 0..n {
    v ~ lap(q[i], 2 / eps);
    if (i == 0 || v > best) { best := v; out := i; }
  }
}"""
    r = _prove(text)
    assert r.verdict == "proved" and r.epsilon == "eps" and r.pointwise == "out"


def test_clauses_print_and_parse_back():
    text = TRUE["discrete"] + "\n" + FALSE["releaseSecret"]
    src = parse(text)
    printed = print_file(src)
    assert "neighbours abs(c - c') <= 1" in printed and "private eps, 0 on a" in printed
    assert "private eps on out, a" in printed
    assert parse(printed).programs == src.programs


def _cli(tmp_path, text, *args):
    f = tmp_path / "p.prob"
    f.write_text(text)
    return subprocess.run([sys.executable, "-m", "tamp", *args, str(f)], capture_output=True, text=True, timeout=300)


def test_cli_line_exit_code_and_json(tmp_path):
    out = _cli(tmp_path, TRUE["laplace"], "prove")
    assert out.returncode == 0 and out.stdout.startswith("laplace: proved  private  ε <= eps  ("), out.stdout
    out = _cli(tmp_path, FALSE["svtReleasesAnswer"], "prove", "--json")
    assert out.returncode == 1
    entry = json.loads(out.stdout)["programs"][0]
    assert entry["kind"] == "privacy" and entry["verdict"] == "unknown" and entry["epsilon"] == "eps"
    assert "reason" in entry


def test_counterexample_is_shown_by_intervals(tmp_path):
    out = _cli(tmp_path, FALSE["tooLittleNoise"], "prove")
    assert out.returncode == 3
    assert out.stdout.startswith(
        "tooLittleNoise: violated  not private  ε = eps is exceeded: x=0, x'=1, a < 0: 0.5 vs 0.06767"
    )
    out = _cli(tmp_path, FALSE["tooLittleNoise"], "prove", "--json", "--input", "eps=1")
    entry = json.loads(out.stdout)["programs"][0]
    cx = entry["counterexample"]
    assert entry["verdict"] == "violated" and cx["inputs"] == {"x": 0, "eps": 1} and cx["neighbour"]["x"] == 1
    p, q = (Fraction(str(cx[k]["lower"])) for k in ("probability", "neighbour_probability"))
    q_hi = Fraction(str(cx["neighbour_probability"]["upper"]))
    assert p > Fraction(math.e) * q_hi * Fraction(101, 100) and q <= q_hi


def test_a_true_claim_has_no_counterexample():
    from lang.typecheck import check_program
    from tamp.privacy.counterexample import search

    prog = parse(TRUE["laplace"]).programs[0]
    assert search(prog, check_program(prog), {}, 20.0) is None


def test_epsilon_value_under_input(tmp_path):
    out = _cli(tmp_path, TRUE["everyAnswer"], "prove", "--json", "--input", "eps=0.5", "--input", "n=3")
    entry = json.loads(out.stdout)["programs"][0]
    assert entry["verdict"] == "proved" and entry["epsilon_value"] == "1/2"


def test_verbose_shows_the_alignment(tmp_path):
    out = _cli(tmp_path, TRUE["noisySum"], "prove", "-v")
    assert "a ~ lap(q[i], 1 / eps): values agree (shift 0)" in out.stdout
    assert "invariant" in out.stdout


def test_accuracy_and_privacy_claims_are_both_decided(tmp_path):
    text = """program both(x: real, eps: real, p: real)
  requires eps > 0 && 0 < p && p <= 1
  ensures  abs(a - x) <= log(1 / p) / eps
  fails    p
  neighbours abs(x - x') <= 1
  private  eps on a
{
  a ~ lap(x, 1 / eps);
}"""
    out = _cli(tmp_path, text, "prove", "--json")
    progs = json.loads(out.stdout)["programs"]
    assert [(p["kind"], p["verdict"]) for p in progs] == [("failure-bound", "proved"), ("privacy", "proved")]
    assert out.returncode == 0


@pytest.mark.parametrize(
    "clause, message",
    [
        ("ensures q'[0] >= 0", "may only be used in a 'neighbours' clause"),
        ("neighbours abs(z' - q[0]) <= 1", "only inputs can be primed"),
        ("private q[0] on out", "may only read public inputs"),
        ("private eps on nothing", "not a variable of the program"),
        ("private eps, ? on out", "not for δ"),
        ("ensures written(q, 0)", "only be used in a privacy event"),
    ],
)
def test_bad_specifications_are_located_errors(tmp_path, clause, message):
    base = """program p(q: real[], n: int, eps: real)
  requires n >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private eps on out
{
  out ~ lap(q[0], 1 / eps);
}"""
    if clause.startswith("neighbours"):
        text = base.replace("neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1", clause)
    elif clause.startswith("private"):
        text = base.replace("private eps on out", clause)
    else:
        text = base.replace("requires n >= 1 && eps > 0", "requires n >= 1 && eps > 0\n  " + clause)
    out = _cli(tmp_path, text, "check")
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.startswith(str(tmp_path / "p.prob") + ":")


def test_private_needs_neighbours_and_back(tmp_path):
    out = _cli(tmp_path, "program p(x: real) private 1 on a { a ~ lap(x, 1); }", "check")
    assert out.returncode == 2 and "needs a 'neighbours' clause" in out.stderr
    out = _cli(tmp_path, "program p(x: real) neighbours abs(x - x') <= 1 { a ~ lap(x, 1); }", "check")
    assert out.returncode == 2 and "needs a 'private' clause" in out.stderr


def test_on_is_still_a_name_outside_private():
    src = parse("program p(on: real) neighbours abs(on - on') <= 1 private 1 on on2 { on2 ~ lap(on, 1); }")
    check_file(src)
    assert src.programs[0].private.outputs == ("on2",)


def _laplace_cdf(t, m, s):
    return 0.5 * math.exp((t - m) / s) if t < m else 1 - 0.5 * math.exp(-(t - m) / s)


def test_laplace_mechanism_cross_checked_numerically():
    """The proved ε = eps bounds the log-ratio of P[a in [u, v]] for x = 0, x' = 1 at eps = 0.7."""
    eps, worst = 0.7, 0.0
    grid = [k / 4 for k in range(-24, 28)]
    for u in grid:
        for v in grid:
            if v <= u:
                continue
            p = _laplace_cdf(v, 0, 1 / eps) - _laplace_cdf(u, 0, 1 / eps)
            q = _laplace_cdf(v, 1, 1 / eps) - _laplace_cdf(u, 1, 1 / eps)
            worst = max(worst, abs(math.log(p / q)))
    assert worst <= eps + 1e-9 and worst > 0.9 * eps  # tight, not vacuous


def _lap_pdf(x, m, s):
    return math.exp(-abs(x - m) / s) / (2 * s)


def _lap_sf(x, m, s):  # P[X > x]
    return 1 - _laplace_cdf(x, m, s)


def test_report_noisy_max_cross_checked_numerically():
    """n = 2, eps = 1: P[out = k | q] <= e · P[out = k | q'] for neighbours on a grid (the
    probabilities by numerical integration)."""
    from scipy.integrate import quad

    eps, s = 1.0, 2.0

    def p_out1(q):  # out = 1 iff v1 > v0
        return quad(lambda x: _lap_pdf(x, q[0], s) * _lap_sf(x, q[1], s), -60, 60, points=[q[0], q[1]], limit=200)[0]

    worst = 0.0
    for q in ([0, 0], [0, 1], [1, 0], [0.5, -0.5]):
        for d0 in (-1, 0, 1):
            for d1 in (-1, 0, 1):
                qq = [q[0] + d0, q[1] + d1]
                for k in (0, 1):
                    p, pp = p_out1(q), p_out1(qq)
                    a, b = (p, pp) if k == 1 else (1 - p, 1 - pp)
                    worst = max(worst, math.log(a / b))
    assert worst <= eps + 1e-6 and worst > 0.2


def test_above_threshold_cross_checked_numerically():
    """n = 2, eps = 1: the three output maps of AboveThreshold have probabilities within e of
    each other's on neighbours (numerical integration over the threshold noise)."""
    from scipy.integrate import quad

    eps = 1.0
    st, sv = 2 / eps, 4 / eps

    def probs(q, T=0.0):
        def at(f):
            return quad(lambda t: _lap_pdf(t, T, st) * f(t), -80, 80, points=[T], limit=200)[0]

        first = at(lambda t: _lap_sf(t, q[0], sv))  # written {0: true}
        second = at(lambda t: _laplace_cdf(t, q[0], sv) * _lap_sf(t, q[1], sv))  # {0: false, 1: true}
        neither = at(lambda t: _laplace_cdf(t, q[0], sv) * _laplace_cdf(t, q[1], sv))
        return first, second, neither

    worst = 0.0
    for q in ([0, 0], [1, -1], [0.5, 2]):
        for d0 in (-1, 0, 1):
            for d1 in (-1, 0, 1):
                for a, b in zip(probs(q), probs([q[0] + d0, q[1] + d1])):
                    worst = max(worst, math.log(a / b))
    assert worst <= eps + 1e-6 and worst > 0.2


def test_bool_output_of_a_noisy_max_is_decided_without_an_internal_error():
    """The value-by-value search needs an int output (regression: a bool output reached a
    counter == k comparison of mismatched sorts)."""
    text = """program boolOut(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    eps on b
{
  best := 0;
  b := false;
  for i in 0..n {
    v ~ lap(q[i], 2 / eps);
    if (i == 0 || v > best) { best := v; b := i == 0; }
  }
}"""
    from tamp.privacy import prove_privacy

    src = parse(text)
    check_file(src)
    r = prove_privacy(src.programs[0], counterexamples=False)
    assert r.verdict == "unknown" and "cannot encode" not in r.message
