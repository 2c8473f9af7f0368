"""One meaning of `assume` (docs/language.md): on inputs only a precondition, on a sampled value
conditioning. The failure-bound prover does not prove conditional bounds, so a conditioning
assume makes its answer "unknown" with the assume's location; the simulator conditions; and a
precondition assume keeps its proofs."""

import pytest

from lang.parser import parse
from tamp.prover import prove_program
from tamp.simulation import simulate


def prove(src, timeout=60):
    return prove_program(parse(src).programs[0], source=src, path="t.prob", timeout=timeout)


# ------------------------------------------------------------------ conditioning: never "proved"

BERN = """program cond1()
  ensures !x
  fails 0.1
{
  x ~ bern(0.1);
  assume(x);
}"""

# (source, inputs for the simulator, the assume's line:col) — every claim below is false under
# conditioning (all kept runs fail), and was "proved" when assume was read as "drop the run"
FALSE_UNDER_CONDITIONING = {
    "bern": (BERN, {}, "6:3"),
    "gauss": (
        """program g()
  ensures x <= 2
  fails 0.5
{
  x ~ gauss(0, 1);
  assume(x > 2);
}""",
        {},
        "6:3",
    ),
    "lap": (
        """program l(s: real)
  requires s > 0
  ensures x <= s
  fails 0.5
{
  x ~ lap(0, s);
  assume(x > s);
}""",
        {"s": 1},
        "7:3",
    ),
    "unif": (
        """program u()
  ensures d < 5
  fails 0.5
{
  d ~ unif(1, 6);
  assume(d >= 5);
}""",
        {},
        "6:3",
    ),
    "computed": (
        """program c()
  ensures !y
  fails 0.1
{
  x ~ bern(0.1);
  y := x && true;
  assume(y);
}""",
        {},
        "7:3",
    ),
    "control": (
        """program k()
  ensures !y
  fails 0.1
{
  x ~ bern(0.1);
  y := false;
  if (x) { y := true; }
  assume(y);
}""",
        {},
        "8:3",
    ),
    "array": (
        """program a()
  ensures !b[1]
  fails 0.1
{
  a[0] ~ bern(0.1);
  b[1] := a[0];
  assume(b[1]);
}""",
        {},
        "7:3",
    ),
    "in_loop": (
        """program lp(n: int)
  requires n >= 1
  ensures !x
  fails 0.5
{
  x := false;
  for i in 0..n {
    x ~ bern(0.5);
    assume(x);
  }
}""",
        {"n": 3},
        "9:5",
    ),
}


@pytest.mark.parametrize("name", sorted(FALSE_UNDER_CONDITIONING))
def test_conditioning_assume_is_not_proved_and_the_simulator_refutes(name):
    src, inputs, where = FALSE_UNDER_CONDITIONING[name]
    r = prove(src)
    assert r.verdict == "unknown", r.render_text()
    assert f"t.prob:{where}: `assume(" in r.message, r.message
    assert "conditions on a sampled value" in r.message
    assert "cannot bound Pr[" in r.message and "`if (" in r.message
    s = simulate(src, inputs, runs=20000, seed=1)
    assert s.verdict == "refuted", s.render_text()


def test_the_issue_program_is_refuted_by_simulation_and_not_proved():
    r = prove(BERN)
    assert r.verdict == "unknown"
    assert simulate(BERN, {}, runs=20000, seed=0).verdict == "refuted"


def test_a_true_claim_under_conditioning_is_unknown_not_proved():
    # Pr[!x | x] = 0 <= 0.1 holds, but the prover has no lower bound on Pr[x]
    src = BERN.replace("ensures !x", "ensures x")
    r = prove(src)
    assert r.verdict == "unknown"
    assert simulate(src, {}, runs=20000, seed=0).verdict != "refuted"


def test_an_input_assume_reached_only_under_a_sampled_branch_is_conditioning():
    src = """program b(n: int)
  ensures !x
  fails 0.1
{
  x ~ bern(0.1);
  if (x) { assume(n > 0); }
}"""
    r = prove(src)
    assert r.verdict == "unknown"
    assert "reached only under a branch on a sampled value" in r.message
    # at n = 0 the runs with x are discarded: Pr[!x | kept] = 1 — the claim's meaning changed
    s = simulate(src, {"n": 0}, runs=20000, seed=0)
    assert s.runs < s.total_runs


def test_taint_reaches_a_fixpoint_through_loop_iterations():
    # y reads x of the previous iteration: untainted in the first pass, tainted after
    src = """program fx()
  ensures y
  fails 0.5
{
  x := false;
  y := true;
  i := 0;
  while (i < 3) {
    y := x;
    x ~ bern(0.5);
    i := i + 1;
  }
  assume(y);
}"""
    r = prove(src)
    assert r.verdict == "unknown" and "`assume(y)`" in r.message, r.render_text()


# ------------------------------------------------------------------ preconditions keep proving

PRE = """program pre(n: int, p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{
  m := n * 2;
  assume(m > 0);
  y ~ bern(p);
}"""


def test_an_assume_on_inputs_is_a_precondition_and_is_proved():
    r = prove(PRE)
    assert r.verdict == "proved", r.render_text()
    s = simulate(PRE, {"n": 3, "p": 0.25}, runs=20000, seed=2)
    assert s.verdict != "refuted" and s.runs == s.total_runs


def test_inputs_violating_a_precondition_assume_are_an_error_in_the_simulator():
    from lang.errors import TampError

    with pytest.raises(TampError, match="precondition `assume`"):
        simulate(PRE, {"n": 0, "p": 0.25}, runs=100, seed=2)


def test_a_precondition_assume_in_a_counter_loop_keeps_the_proof():
    src = """program s(q: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall j in 0..n: abs(a[j] - q[j]) <= 1/eps * log(n/p)
  fails p
{
  for i in 0..n {
    assume(eps > 0);
    a[i] ~ lap(q[i], 1/eps);
  }
}"""
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    s = simulate(src, {"q": [1, 2, 3], "n": 3, "eps": 0.5, "p": 0.1}, runs=20000, seed=3)
    assert s.verdict != "refuted"


def test_branch_guards_are_not_user_assumes():
    # the guards of if/while keep their routing meaning: this is the classic proof
    src = """program ex(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{
  x ~ bern(0.5);
  if (x) { y ~ bern(p); } else { y ~ bern(p / 2); }
}"""
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    assert simulate(src, {"p": 0.5}, runs=20000, seed=4).verdict != "refuted"


# ------------------------------------------------------------------ fixed inputs: decided exactly

COND2 = """program cond2(p: real)
  requires 0 < p && p < 1
  ensures !y
  fails 0.5
{
  x ~ bern(0.5);
  y ~ bern(p);
  assume(x || y);
}"""


@pytest.mark.parametrize("p, verdict", [(0.2, "proved"), (0.5, "violated")])
def test_at_fixed_inputs_the_conditional_bound_is_decided_exactly_and_agrees_with_simulation(p, verdict):
    from fractions import Fraction

    from tamp.api import prove as api_prove

    # Pr[y | x or y] = p / (1 - (1 - p)/2): 1/3 at p = 0.2, 2/3 at p = 0.5
    res = api_prove(COND2, inputs={"p": Fraction(p).limit_denominator()}, path="c.prob")
    r = res.programs[0]
    assert r.verdict == verdict, r.render_text()
    assert "c.prob:8:3" in r.message and "conditional bound" in r.message
    s = simulate(COND2, {"p": p}, runs=20000, seed=8)
    assert (s.verdict == "refuted") == (verdict == "violated"), s.render_text()


def test_the_issue_program_is_violated_exactly_and_writes_no_certificate():
    from tamp.api import prove as api_prove
    from tamp.certificate.writer import file_certificate

    res = api_prove(BERN, path="b.prob")
    assert res.programs[0].verdict == "violated", res.programs[0].render_text()
    cert = file_certificate(res, BERN.encode())
    assert cert["programs"] == [] and cert["probability"] == []


def test_an_exactly_decided_conditional_bound_is_noted_as_not_certified():
    from fractions import Fraction

    from tamp.api import prove as api_prove
    from tamp.certificate.writer import file_certificate

    res = api_prove(COND2, inputs={"p": Fraction(1, 5)}, path="c.prob")
    assert res.programs[0].verdict == "proved"
    cert = file_certificate(res, COND2.encode(), None, {"p": Fraction(1, 5)})
    assert cert["programs"] == [] and [m["program"] for m in cert["not_certified"]] == ["cond2"]


def test_without_fixed_inputs_the_conditional_bound_stays_unknown():
    from tamp.api import prove as api_prove

    assert api_prove(COND2, path="c.prob").programs[0].verdict == "unknown"


def test_a_precondition_no_input_passes_makes_the_claim_vacuous_and_says_so():
    src = """program v(n: int)
  ensures false
  fails 0
{
  x ~ bern(0.5);
  assume(n > 0 && n < 0);
}"""
    r = prove(src)
    assert r.verdict == "proved"
    assert "holds vacuously" in r.message and "t.prob:6:3" in r.message, r.message
    assert "vacuously" not in prove(PRE).message
