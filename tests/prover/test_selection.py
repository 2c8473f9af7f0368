"""Selection mechanisms written fresh from the textbooks (benchmarks/selection) and their false
variants (benchmarks/variants): every true claim is proved and consistent with `tamp simulate` at
two inputs, every false one is never proved and is refuted by the simulator (issue 18, item 4)."""

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS

from lang.parser import parse_file
from tamp.prover import prove_program
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

TRUE = ["aboveTn", "sparseC", "histArgmax", "privMedian", "firstAbove", "keepAbove"]
FALSE = ["aboveTn_nolog", "sparseC_noc", "histArgmax_nolog", "privMedian_half", "firstAbove_half", "keepAbove_nolog"]


def _prove(path, timeout=300):
    src = parse_file(str(path))
    return prove_program(src.programs[0], timeout=timeout, path=str(path), source=src.text)


@pytest.mark.parametrize("name", TRUE)
def test_selection_mechanism_is_proved_and_consistent_with_simulation(name):
    path = BENCHMARKS / "selection" / f"{name}.prob"
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    inputs = inputs_for(str(path))
    assert len(inputs) >= 2
    for inp in inputs:
        sim = simulate(path, inp, runs=20000, seed=5)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", FALSE)
def test_false_selection_variant_is_not_proved_and_is_refuted(name):
    path = BENCHMARKS / "variants" / f"{name}.prob"
    r = _prove(path, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved"
    assert any(simulate(path, inp, runs=20000, seed=5).verdict == "refuted" for inp in inputs_for(str(path)))


def test_sentinel_candidates_split_on_the_entry_value():
    """`ans := n` before the loop and `forall j in 0..ans` in the claim: the candidates say what
    holds while ans still holds n (the prefix 0..i) and once it changed (the claim itself)."""
    from lang import ast as A
    from tamp.cfa import build_cfa
    from tamp.prover.loops.invariants import _prefix_forms
    from tamp.prover.loops.prove import _loops
    from tamp.prover.selection.sentinel import sentinel_candidates
    from tamp.show import show_expr

    src = parse_file(str(BENCHMARKS / "selection" / "aboveTn.prob"))
    cfa = build_cfa(src.programs[0], None, "aboveTn.prob", src.text)
    loops, _dag = _loops(cfa)
    post = [c for e in cfa.ensures for c in [e]]
    shown = {show_expr(c) for c in sentinel_candidates(cfa, loops, post, _prefix_forms)}
    assert any(s.startswith("ans == n ==> forall j in 0..i:") for s in shown)
    assert any(s.startswith("ans != n ==> forall j in 0..ans:") for s in shown)
    assert all(isinstance(c, A.Binary) for c in sentinel_candidates(cfa, loops, post, _prefix_forms))


def test_element_write_is_pushed_back_as_a_weakest_precondition():
    """(tamp.prover.base.wp, which the loop candidates use: the branches of sparse vector write above[i])"""
    from lang import ast as A
    from lang.parser import parse_expr
    from tamp.prover.base.wp import push_back
    from tamp.show import show_expr

    stmt = A.Assign((A.Index(A.Var("above"), A.Var("i")),), A.BoolLit(False))
    c = parse_expr("forall j in 0..i + 1: !above[j] ==> q[j] <= T")
    pushed = push_back(stmt, c)
    assert show_expr(pushed) == "forall j in 0..i + 1: !(j == i ? false : above[j]) ==> q[j] <= T"
    # a bound variable named like the written index cannot be rewritten: no candidate
    stmt_j = A.Assign((A.Index(A.Var("above"), A.Var("j")),), A.BoolLit(False))
    assert push_back(stmt_j, c) is None


def test_the_counter_moved_on_every_iteration_is_the_loop_counter():
    from tamp.cfa import build_cfa
    from tamp.prover.loops.prove import _loops

    src = parse_file(str(BENCHMARKS / "selection" / "sparseC.prob"))
    cfa = build_cfa(src.programs[0], None, "sparseC.prob", src.text)
    loops, _dag = _loops(cfa)
    assert [lp["counter"].name for lp in loops.values()] == ["i"]  # not `count`, moved only when above


def test_duplicate_proposals_are_dropped():
    from lang import ast as A
    from lang.parser import parse
    from tamp.prover.loops.ranking import distinct_proposals
    from tamp.prover.trace.candidates import proposals

    prog = parse("""program s(x: real, eps: real, p: real) requires eps > 0 && 0 < p && p <= 1
        ensures abs(y - x) <= 1 / eps * log(2 / p) fails p { y ~ lap(x, 1 / eps); }""").programs[0]
    stmt = prog.body.stmts[0]
    cands = proposals(stmt, list(prog.ensures) + [prog.fails], prog.fails, 1)
    kept = distinct_proposals([cands])[0]
    assert len(kept) < len(cands)  # `2 * (p / 2)` and `p` are one axiom
    costs = [(c.family, c.cost) for c in kept]
    assert ("laplace", A.Var("p")) in costs or any(f == "laplace" for f, _c in costs)


def _kappa_of(text):
    """The loop prover's κ computation on a program with every sampling charged 1 (the axiom
    costs do not matter for which shape κ takes)."""
    from types import SimpleNamespace

    from lang import ast as A
    from lang.parser import parse
    from tamp.cfa import build_cfa
    from tamp.prover.loops.kappa import compute_kappa
    from tamp.prover.loops.prove import _loops

    cfa = build_cfa(parse(text).programs[0])
    loops, dag = _loops(cfa)
    axioms = {(u, v, k): SimpleNamespace(cost=A.Var("c")) for u, v, k, _d in cfa.sample_edges()}
    return cfa, compute_kappa(cfa, axioms, loops, dag)


FLAGGED = """program f(q: real[], n: int, c: real) requires n >= 1 && c >= 0 ensures true fails 1 {
  found := false;
  for i in 0..n {
    if (!found) {
      a ~ lap(q[i], 1);
      if (a >= 0) { found := true; out ~ lap(q[i], 1); }
    }
  }
}"""


def test_a_sampling_behind_a_flag_the_loop_never_clears_is_charged_once():
    """`out ~ …` runs only in the iteration that sets `found`, which the loop never clears: κ at
    the loop head is c·i for the queries plus `found ? c : 0` for the release — not 2c·i."""
    from tamp.show import show_expr

    cfa, kap = _kappa_of(FLAGGED)
    head = cfa.loop_heads[0]
    text = show_expr(kap.at[head])
    assert "found ?" in text and "c * (i - 0)" in text, text
    assert [show_expr(t.per) for t in kap.terms] == ["c"]


def test_a_flag_the_loop_also_clears_is_not_charged_once():
    from tamp.prover.loops.kappa import NoKappa

    text = FLAGGED.replace("if (a >= 0) {", "if (a < -1) { found := false; } if (a >= 0) {")
    with pytest.raises(NoKappa, match="depends on the state"):
        _kappa_of(text)


def test_a_quantifier_named_like_the_loop_counter_is_renamed_apart():
    """`forall i in 0..n` over `for i in 0..n`: the CFA's claim binds a fresh `i$` (the same
    claim), so the prefix forms and the array writes `kept[i] := …` are not captured."""
    from tamp.cfa import build_cfa
    from tamp.show import show_expr

    src = parse_file(str(BENCHMARKS / "selection" / "keepAbove.prob"))
    cfa = build_cfa(src.programs[0], None, "keepAbove.prob", src.text)
    shown = show_expr(cfa.ensures[0])
    assert shown.startswith("forall i$ in 0..n: (kept[i$] ==>"), shown


def test_a_counter_moved_again_before_its_loop_starts_from_the_composed_value():
    """`r := n - 1; …; r := r - 1; while (r >= 0) { …; r := r - 1; }` (scanning candidates from
    the last, the first drawn before the loop): the counter starts at (n - 1) - 1, so the loop's
    sampling is charged per iteration (corpus exponential/expmech_down)."""
    from lang.parser import parse
    from tamp.cfa import build_cfa
    from tamp.prover.loops.prove import _loops
    from tamp.show import show_expr

    cfa = build_cfa(
        parse(
            """program d(u: real[], n: int) requires n >= 1 ensures true {
              r := n - 1; best ~ lap(u[n - 1], 1); r := r - 1;
              while (r >= 0) { v ~ lap(u[r], 1); r := r - 1; } }"""
        ).programs[0]
    )
    loops, _dag = _loops(cfa)
    cnt = next(iter(loops.values()))["counter"]
    assert cnt is not None and cnt.name == "r" and show_expr(cnt.init) == "n - 1 - 1"
    # a value that depends on a branch before the loop gives no start
    cfa2 = build_cfa(
        parse(
            """program d(n: int, b: bool) requires n >= 1 ensures true {
              r := n; if (b) { r := n - 2; } r := r - 1;
              while (r >= 0) { v ~ lap(0, 1); r := r - 1; } }"""
        ).programs[0]
    )
    loops2, _dag2 = _loops(cfa2)
    assert next(iter(loops2.values()))["counter"] is None
