"""Prover I (loop-free programs): the done-when examples, each "proved" cross-checked by simulation."""

import json

import pytest
from locations import REPO

from lang.parser import parse, parse_expr
from tamp.certificate.writer import program_certificate
from tamp.prover import ProofResult, prove_program

ROOT = REPO
BENCH = ROOT / "benchmarks"

EX1 = """
program ex1(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{
  x ~ bern(0.5);
  if (x) { y ~ bern(p); } else { y ~ bern(0.5 * p); }
}
"""

RANDRESP = """
program randResp(priv: bool)
  ensures ans == priv
  fails 1/4
{
  (r1, r2) ~ unif({0, 1} * {0, 1});
  if (r1 == 1) { ans := priv; } else { ans := (r2 == 1); }
}
"""

LAPLACE = """
program laplace(x: real, eps: real, p: real)
  requires eps > 0 && 0 < p && p <= 1
  ensures abs(a - x) <= log(1/p)/eps
  fails p
{
  a ~ lap(x, 1/eps);
}
"""


def _prove(src, bound=None, **kw):
    prog = parse(src).programs[0]
    return prove_program(prog, parse_expr(bound) if bound else None, source=src, **kw)


def _cross_check(src, inputs, bound=None, runs=20000):
    """A proved claim must be consistent with sampling: the estimate's CI reaches below the bound."""
    sim = pytest.importorskip("tamp.simulation")
    r = sim.simulate(src, inputs, runs=runs, seed=1, bound=bound)
    assert r.ci[0] <= float(r.bound_value) + 1e-12, (inputs, r.rate, r.ci, r.bound_value)
    return r


def test_ex1_proved_with_bound_p_by_merging_max():
    r = _prove(EX1)
    assert isinstance(r, ProofResult) and r.kind == "failure-bound"
    assert r.verdict == "proved", r.render_text()
    aut = r.automata[0]
    kappas = sorted(str(aut.nodes[x].kappa) for x in aut.exits)
    assert len(aut.exits) == 2 and len(set(kappas)) == 2  # two exits, each its own κ (max, not sum)
    assert all(o.status == "valid" for o in r.obligations) and r.obligations
    for p in (0.5, 1, 0.1):
        _cross_check(EX1, {"p": p})


def test_ex1_not_proved_with_half_p_and_never_violated():
    r = _prove(EX1, "p/2")
    assert r.verdict == "unknown"
    assert "y ~ bern(p)" in r.failed_trace and "line" in r.failed_trace
    # the truth is 0.75 p: sampling shows p/2 is indeed too strong
    sim = pytest.importorskip("tamp.simulation")
    s = sim.simulate(EX1, {"p": 1}, runs=20000, seed=2, bound="p/2")
    assert s.ci[0] > 0.5


def test_randresp_proved_with_quarter():
    r = _prove(RANDRESP)
    assert r.verdict == "proved", r.render_text()
    assert r.axioms and all(a["family"].startswith("uniform") for a in r.axioms)
    for priv in (True, False):
        _cross_check(RANDRESP, {"priv": priv})


def test_randresp_not_proved_with_fifth():
    r = _prove(RANDRESP, "1/5")
    assert r.verdict == "unknown"
    assert r.stats["proposals"] > 0


def test_laplace_proved_and_cross_checked():
    r = _prove(LAPLACE)
    assert r.verdict == "proved", r.render_text()
    (ax,) = r.axioms
    assert ax["family"] == "laplace" and ax["param"] == "p"
    assert r.stats["lemma_instances"] > 0
    for inputs in ({"x": 3, "eps": 0.5, "p": 0.1}, {"x": -2.5, "eps": 2, "p": 0.01}):
        _cross_check(LAPLACE, inputs)


def test_laplace_with_fixed_accuracy_not_proved():
    src = LAPLACE.replace("abs(a - x) <= log(1/p)/eps", "abs(a - x) < 1")
    assert _prove(src).verdict == "unknown"


@pytest.mark.parametrize("claim", ["abs(a - x) <= log(1/p)/(2*eps)", "abs(a - x) < log(1/p)/eps - 0.001"])
def test_laplace_slightly_too_strong_not_proved(claim):
    src = LAPLACE.replace("abs(a - x) <= log(1/p)/eps", claim)
    assert _prove(src).verdict == "unknown"


def test_zero_bound_for_a_random_claim_is_not_proved():
    assert _prove(EX1, "0").verdict == "unknown"


def test_deterministic_program_proved_with_zero_bound():
    src = "program d(n: int) requires n >= 0 ensures m >= n fails 0 { m := n + 1; }"
    assert _prove(src).verdict == "proved"


def test_deterministic_false_claim_not_proved():
    src = "program d(n: int) ensures m > n fails 1/2 { m := n - 1; }"
    assert _prove(src).verdict == "unknown"


def test_negative_bound_not_proved_even_for_a_true_claim():
    # the claim "fails with probability <= -1/2" is false for every program: BUDGET at the root
    src = "program d(n: int) ensures m > n fails -1/2 { m := n + 1; }"
    r = _prove(src)
    assert r.verdict == "unknown"


def test_coin_claim_proved_at_its_exact_probability():
    src = "program d(n: int) ensures !m fails 1/2 { m ~ bern(0.5); }"
    assert _prove(src).verdict == "proved"
    assert _prove(src, "0.49").verdict == "unknown"


def test_certificate_is_json_and_complete():
    r = _prove(EX1)
    cert = program_certificate(r)
    text = json.dumps(cert)
    assert cert["cfa"]["edges"] and cert["automata"][0]["nodes"]
    assert {o["rule"] for o in cert["obligations"]} >= {"INIT", "STEP", "BUDGET", "EXIT", "COVER"}
    assert "bernoulli" in text
    assert json.loads(json.dumps(r.to_json()))["verdict"] == "proved"
    dots = r.to_dot()
    assert any("digraph" in d for d in dots.values())
    assert "axioms:" in r.render_text()


def test_timeout_gives_unknown():
    r = _prove(EX1, timeout=1e-9)
    assert r.verdict == "unknown" and "timeout" in r.message


def test_benchmark_files_loop_free():
    from lang.parser import parse_file

    for rel, want in [
        ("illustrative/ex1.prob", "proved"),
        ("illustrative/laplace.prob", "proved"),
        ("dp/randResp.prob", "proved"),
        ("variants/ex1_failsHalf.prob", "unknown"),
        ("variants/laplace_lt1.prob", "unknown"),
        ("variants/randResp_fails1_5.prob", "unknown"),
    ]:
        path = BENCH / rel
        if not path.exists():
            continue
        src = parse_file(str(path))
        r = prove_program(src.programs[0], path=str(path), source=src.text)
        assert r.verdict == want, (rel, r.render_text())


def test_straight_line_sum_proved_with_running_total_and_costly_axioms_first():
    """Three Laplace samplings summed without a loop: the search tries the costly (informative)
    proposals first at samplings the claim depends on (a handful of proposals, not thousands),
    and the labels carry the running total s == a + b + …"""
    path = BENCH / "illustrative" / "sum3.prob"
    src = path.read_text()
    r = _prove(src)
    assert r.verdict == "proved", r.render_text()
    assert r.stats["proposals"] <= 10
    labels = [str(n.label) for n in r.automata[0].nodes.values()]
    assert any("Var(name='b')" in t and "Binary(op='=='" in t for t in labels)
    _cross_check(src, {"x": 1, "y": 2, "z": 3, "eps": 1, "p": 0.5})
    bad = (BENCH / "variants" / "sum3_nolog.prob").read_text()
    assert _prove(bad).verdict == "unknown"


def test_relevant_names_follow_data_and_branches():
    from tamp.cfa import build_cfa
    from tamp.prover.trace.synthesis import relevant_names

    src = """program r(x: real, p: real) requires 0 < p && p <= 1 ensures y > 0 fails p
             { u ~ bern(0.5); w ~ lap(x, 1); v ~ lap(x, 1); t := v + 1; if (u) { y := t; } else { y := 1; } }"""
    rel = relevant_names(build_cfa(parse(src).programs[0]))
    assert {"y", "t", "v", "u", "x"} <= rel and "w" not in rel


def test_unprovable_straight_line_claim_gives_up_with_a_clear_message(monkeypatch):
    """A union-bound-unprovable accuracy claim over several samplings: the search stops after
    its proposal budget with a message, instead of enumerating combinations for hours."""
    import tamp.prover.trace.synthesis as S

    monkeypatch.setattr(S, "MAX_PROPOSALS", 60)
    lines = [
        "program seqbad(x: real, eps: real, p: real)",
        "  requires eps > 0 && 0 < p && p <= 1",
        "  ensures abs(s - 5 * x) <= 5 / eps * log(1 / p)",
        "  fails p",
        "{",
        "  s := 0;",
    ]
    for k in range(5):
        lines += [f"  a{k} ~ lap(x, 1 / eps);", f"  s := s + a{k};"]
    src = "\n".join(lines + ["}"])
    r = _prove(src)
    assert r.verdict == "unknown"
    assert "gave up after 60 axiom proposals" in r.message and "tamp simulate" in r.message
