"""Units of Prover II: computed failure bounds κ, the sum and log-eq lemmas, dynamic filtering."""

import z3

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.prover.base.smt import Encoder, Stats, is_valid
from tamp.prover.loops.kappa import compute_kappa, simplify
from tamp.prover.loops.prove import _loops, by_index_sum
from tamp.show import show_expr

FLAG = """
program f(n: int, p: real)
  requires n >= 1 && 0 < p && p <= 1
  ensures true
  fails p
{
  found := false;
  i := 0;
  while (i < n && !found) {
    c ~ bern(p / (2 * n));
    if (c) { found := true; d ~ bern(p / 2); }
    i := i + 1;
  }
}
"""


def _axioms(cfa, cost_of):
    from axioms.base import AxiomInstance
    from axioms.bernoulli import FAMILIES  # noqa: F401  (the family exists)

    out = {}
    for u, v, k, d in cfa.sample_edges():
        st = d["stmt"]
        out[(u, v, k)] = AxiomInstance("test", st.targets[0], cost_of(st), ())
    return out


def test_flag_ending_the_loop_is_paid_once():
    cfa = build_cfa(parse(FLAG).programs[0])
    loops, dag = _loops(cfa)
    kap = compute_kappa(cfa, _axioms(cfa, lambda st: st.dist.args[0]), loops, dag)
    head = kap.at[cfa.loop_heads[0]]
    text = show_expr(head)
    assert "found ?" in text and "* (i - 0)" in text
    assert len(kap.terms) == 1 and show_expr(kap.terms[0].per) == "p / (2 * n)"


def test_simplify_folds_literal_conditions():
    e = parse_expr("(false ? p : 0) + q")
    assert show_expr(simplify(e)) == "q"


def test_combinations_by_index_sum():
    got = list(by_index_sum([["a0", "a1"], ["b0", "b1", "b2"]]))
    assert got[0] == ("a0", "b0") and set(got[1:3]) == {("a0", "b1"), ("a1", "b0")}
    assert len(got) == 6 and len(set(got)) == 6


def _enc():
    return Encoder({"q": A.array_of(A.REAL), "i": A.INT, "n": A.INT, "p": A.REAL})


def test_sum_step_lemma_proves_the_loop_step():
    enc = _enc()
    env = enc.initial_env()
    s_i = enc.expr(parse_expr("sum(j in 0..i: q[j])"), env)
    s_i1 = enc.expr(parse_expr("sum(j in 0..i + 1: q[j])"), env)
    q_i = enc.expr(parse_expr("q[i]"), env)
    i = env["i"]
    assert is_valid(z3.Implies(i >= 0, s_i1 == s_i + q_i), enc, Stats()) == "valid"
    assert is_valid(enc.expr(parse_expr("sum(j in 0..0: q[j])"), env) == 0, enc, Stats()) == "valid"
    # and nothing false: the sum is not claimed to be 0 in general
    assert is_valid(s_i == 0, enc, Stats()) != "valid"


def test_log_eq_identifies_equal_arguments_only_where_defined():
    enc = _enc()
    env = enc.initial_env()
    a = enc.expr(parse_expr("log(1 / (p / n))"), env)
    b = enc.expr(parse_expr("log(n / p)"), env)
    c = enc.expr(parse_expr("log(2 * n / p)"), env)
    req = [env["p"] > 0, env["n"] >= 1]
    assert is_valid(a == b, enc, Stats(), hypotheses=req) == "valid"
    assert is_valid(a == c, enc, Stats(), hypotheses=req) != "valid"


def test_sum_first_lemma_proves_the_step_of_a_loop_counting_down():
    enc = _enc()
    env = enc.initial_env()
    s_i = enc.expr(parse_expr("sum(j in i..n: q[j])"), env)
    s_i1 = enc.expr(parse_expr("sum(j in i - 1..n: q[j])"), env)
    q_i1 = enc.expr(parse_expr("q[i - 1]"), env)
    i, n = env["i"], env["n"]
    assert is_valid(z3.Implies(i <= n, s_i1 == q_i1 + s_i), enc, Stats()) == "valid"
    # only where the range is non-empty: for i - 1 >= n both sums are 0 and q[i - 1] is free
    assert is_valid(s_i1 == q_i1 + s_i, enc, Stats()) != "valid"


DOWN = """
program d(n: int, p: real)
  requires n >= 1 && 0 < p && p <= 1
  ensures true
  fails p
{
  i := n;
  while (i > 0) {
    c ~ bern(p / n);
    i := i - 1;
  }
}
"""


def test_counter_counting_down_gives_a_decreasing_loop_term():
    cfa = build_cfa(parse(DOWN).programs[0])
    loops, dag = _loops(cfa)
    cnt = loops[cfa.loop_heads[0]]["counter"]
    assert (cnt.name, cnt.step, show_expr(cnt.limit), cnt.strict) == ("i", -1, "0", True)
    kap = compute_kappa(cfa, _axioms(cfa, lambda st: st.dist.args[0]), loops, dag)
    assert "(n - i)" in show_expr(kap.at[cfa.loop_heads[0]])
    (term,) = kap.terms
    assert term.step == -1 and show_expr(term.bound) == "0"
    # after the loop (i = 0) the whole budget n · p/n is spent
    assert show_expr(kap.at[cfa.exit]) == "p / n * (n - 0)"


def test_counter_written_otherwise_in_the_body_is_no_counter():
    src = """program d(n: int) requires n >= 1 ensures true fails 0
             { i := n; while (i > 0) { i := i - 1; if (i == 3) { i := 0; } } }"""
    cfa = build_cfa(parse(src).programs[0])
    loops, _dag = _loops(cfa)
    assert loops[cfa.loop_heads[0]]["counter"] is None


def test_counter_compared_from_the_right_is_recognised():
    src = """program d(n: int, p: real) requires n >= 1 && 0 < p && p <= 1 ensures true fails p
             { i := 0; while (n > i) { c ~ bern(p / n); i := i + 1; } }"""
    cfa = build_cfa(parse(src).programs[0])
    loops, _dag = _loops(cfa)
    cnt = loops[cfa.loop_heads[0]]["counter"]
    assert (cnt.name, cnt.step, show_expr(cnt.limit), cnt.strict) == ("i", 1, "n", True)
