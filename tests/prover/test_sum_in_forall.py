"""A `sum` with symbolic bounds inside a `forall` that reads the quantified variable
(`forall k in 0..n: rs[k] <= sum(j in 0..m: q[k*m + j])`) crashed the solver with "Formulas
should not contain unbound variables": lemma instances were made for the sum's application
under the quantifier. The prover now proves or answers unknown, and check-proof agrees."""

from __future__ import annotations

import pytest
import z3

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cli import main
from tamp.prover import prove_program
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid, transcendental_apps

LOOP_FREE = """
program rows(q: real[], rs: real[], n: int, m: int, eps: real, p: real)
  requires n >= 1 && m >= 1 && eps > 0 && p > 0 && p <= 1
  requires forall k in 0..n: rs[k] <= sum(j in 0..m: q[k*m + j])
  ensures forall k in 0..n: rs[k] <= sum(j in 0..m: q[k*m + j]) + abs(t)
  ensures abs(t) <= 1 / eps * log(1 / p)
  fails p
{
  t ~ lap(0, 1 / eps);
}
"""

LOOP = """
program rowsums(q: real[], n: int, m: int, eps: real, p: real)
  requires n >= 1 && m >= 1 && eps > 0 && p > 0 && p <= 1
  ensures forall k in 0..n: rs[k] <= sum(j in 0..m: q[k*m + j]) + 1 / eps * log(n / p)
  fails p
{
  i := 0;
  while (i < n) {
    s := 0;
    j := 0;
    while (j < m) {
      s := s + q[i*m + j];
      j := j + 1;
    }
    t ~ lap(0, 1 / eps);
    rs[i] := s + t;
    i := i + 1;
  }
}
"""


def test_the_sum_under_the_quantifier_gets_lemmas_for_every_value_and_the_query_is_answered():
    types = {"q": A.array_of(A.REAL), "rs": A.array_of(A.REAL), "n": A.INT, "m": A.INT}
    enc = Encoder(types)
    env = enc.initial_env()
    f = enc.expr(parse_expr("forall k in 0..n: rs[k] <= sum(j in 0..m: q[k*m + j])"), env)
    g = enc.expr(parse_expr("sum(j in 0..m: q[j]) >= 0"), env)
    apps = transcendental_apps(z3.And(f, g))
    # the ground sum over q[j], and the one under forall k generalised: k's argument a placeholder
    # its lemmas are stated for every value of (no bound variable leaves its quantifier)
    ground = [t for t in apps if "sum$arg" not in t.sexpr()]
    assert len(ground) == 1 and "k" not in ground[0].sexpr()
    assert len(apps) == 2 and all("k!q" not in t.sexpr() for t in apps)
    assert is_valid(f, enc, Stats(), 2000, [f]) == VALID


def test_loop_free_claim_is_proved_and_its_certificate_checks(tmp_path):
    src = tmp_path / "rows.prob"
    src.write_text(LOOP_FREE)
    cert = tmp_path / "rows.json"
    assert main(["prove", str(src), "--certificate", str(cert), "--quiet"]) == 0
    assert main(["check-proof", str(cert), str(src)]) == 0
    sim = pytest.importorskip("tamp.simulation")
    for inputs in (
        {"q": [1, 2, 3, 4], "rs": [3, 7], "n": 2, "m": 2, "eps": 1, "p": 0.2},
        {"q": [0.5] * 3, "rs": [1.5], "n": 1, "m": 3, "eps": 0.5, "p": 0.05},
    ):
        s = sim.simulate(LOOP_FREE, inputs, runs=20000, seed=2)
        assert s.ci[0] <= float(s.bound_value)


def test_loop_claim_is_answered_without_a_crash():
    prog = parse(LOOP, "rowsums.prob").programs[0]
    r = prove_program(prog, path="rowsums.prob", source=LOOP, timeout=120)
    assert r.verdict in ("proved", "unknown")
