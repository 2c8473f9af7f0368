"""The prover's speed-ups keep its answers: liveness pruning, the C-API term walk, memoised
free variables, the solver reuse (push/pop) and the parser's table cache."""

import os

import z3
from locations import BENCHMARKS

from lang import ast as A
from lang.parser import parse, parse_expr
from lang.walk import free_vars
from tamp.cfa import build_cfa
from tamp.prover.base.liveness import live_variables, mentions_only_live
from tamp.prover.base.smt import INVALID, VALID, Encoder, Stats, is_valid, transcendental_apps

ABOVE = """
program above(q: real[], n: int, T: real, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  found ==> q[ans] >= T - 10
  fails    p
{
  t ~ lap(T, 1 / eps);
  found := false;
  i := 0;
  while (i < n && !found) {
    a ~ lap(q[i], 2 / eps);
    if (a > t) { found := true; ans := i; }
    i := i + 1;
  }
}
"""


def test_resampled_variable_is_dead_at_the_loop_head():
    cfa = build_cfa(parse(ABOVE).programs[0])
    head = cfa.loop_heads[0]
    live = live_variables(cfa, {}, {})
    assert "a" not in live[head]  # re-sampled before it is read again
    assert {"t", "i", "found", "q", "n", "ans"} <= live[head]
    # after the sampling of a, a is live (the test a > t reads it)
    after = [
        v
        for u, v, k, d in cfa.edges()
        if isinstance(d["stmt"], A.Sample) and u != cfa.entry and d["stmt"].targets[0] == A.Var("a")
    ]
    assert after and "a" in live[after[0]]
    # at the exit only what the postcondition (and requires, bound) read is live
    assert "t" not in live[cfa.exit] and "ans" in live[cfa.exit]


def test_kappa_variables_count_as_read():
    cfa = build_cfa(parse(ABOVE).programs[0])
    live = live_variables(cfa, {cfa.exit: parse_expr("p / 2 + i * p")}, {})
    assert "i" in live[cfa.exit]


def test_candidate_filter_ignores_names_the_cfa_does_not_know():
    c = parse_expr("forall j in 0..i: q[j] <= t")
    assert mentions_only_live(c, {"i", "q", "t"}, {"i", "q", "t", "a"})
    assert not mentions_only_live(parse_expr("a - q[i] <= 1"), {"i", "q"}, {"i", "q", "a"})


def _ground(t):
    return not z3.is_var(t) and not z3.is_quantifier(t) and all(_ground(c) for c in t.children())


def _reference_apps(f):
    seen, out, stack = set(), [], [f]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t):
            if t.decl().name() in ("log", "exp", "sqrt") and t.num_args() == 1 and _ground(t):
                out.append(t)
            stack.extend(t.children())
        elif z3.is_quantifier(t):
            stack.append(t.body())
    return out


def test_c_api_walk_finds_the_same_applications():
    x, y = z3.Reals("x y")
    log = z3.Function("log", z3.RealSort(), z3.RealSort())
    exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
    j = z3.Int("j")
    f = z3.And(
        log(x) > log(y * 2),
        z3.ForAll([j], log(z3.ToReal(j)) + exp(x) > 0),
        log(x) < 3,
        z3.Function("other", z3.RealSort(), z3.RealSort())(x) > 0,
    )
    got = transcendental_apps(f)
    want = _reference_apps(f)
    assert [g.sexpr() for g in got] == [w.sexpr() for w in want]
    assert len(got) == 3  # log(j) under the quantifier is left out: not ground


def test_reused_solver_answers_each_query_alone():
    enc = Encoder({"x": A.Type("real"), "y": A.Type("real")})
    env = enc.initial_env()
    hyp = [enc.expr(parse_expr("x > 0"), env)]
    st = Stats()
    assert is_valid(enc.expr(parse_expr("x >= 0"), env), enc, st, 1000, hyp) == VALID
    # a refuted query leaves nothing behind: the next one is decided on its own
    assert is_valid(enc.expr(parse_expr("y > x"), env), enc, st, 1000, hyp) == INVALID
    assert is_valid(enc.expr(parse_expr("x + 1 > 1"), env), enc, st, 1000, hyp) == VALID
    assert is_valid(enc.expr(parse_expr("x < 0"), env), enc, st, 1000, hyp) == INVALID
    assert st.solver_calls == 4


def test_free_vars_memo_is_per_node():
    e1 = parse_expr("x + y")
    e2 = parse_expr("x + z")
    assert set(free_vars(e1)) == {"x", "y"}
    s = set(free_vars(e1))
    s.add("w")  # callers may change their copy
    assert set(free_vars(e1)) == {"x", "y"} and set(free_vars(e2)) == {"x", "z"}


def test_parser_cache_damage_is_harmless(tmp_path, monkeypatch):
    import lang.parser as P

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    P._parser.cache_clear()
    try:
        assert parse(ABOVE).programs[0].name == "above"
        cache = tmp_path / "tamp" / "grammar-lalr.cache"
        assert cache.exists() and (os.stat(tmp_path / "tamp").st_mode & 0o077) == 0
        cache.write_bytes(b"garbage")
        P._parser.cache_clear()
        assert parse(ABOVE).programs[0].name == "above"
    finally:
        P._parser.cache_clear()


def test_grouped_obligations_keep_each_status():
    from tamp.prover.trace.check import decide_all

    enc = Encoder({"x": A.Type("real")})
    env = enc.initial_env()
    st = Stats()
    hyp = [enc.expr(parse_expr("x > 0"), env)]
    texts = ["x >= 0", "x > 1", "x + 1 > 0", "x * x >= 0", "x < 0", "x != 0"] * 4
    formulas = [enc.expr(parse_expr(t), env) for t in texts]
    valid = lambda f: is_valid(f, enc, st, 1000, hyp)  # noqa: E731
    want = [valid(f) for f in formulas]
    assert want.count(VALID) == 16 and want.count(INVALID) == 8
    assert decide_all(formulas, valid, valid) == want
    # with every obligation valid, each group of 16 is one query
    calls = []
    ok = [f for f, w in zip(formulas, want) if w == VALID]
    assert decide_all(ok, valid, lambda f: calls.append(f) or valid(f)) == [VALID] * len(ok)
    assert len(calls) == 1


# ---------------------------------------------------------------------------- axiom ranking


def _ranking_setup(path):
    from tamp.prover.loops.prove import _loops
    from tamp.prover.trace.candidates import proposals

    cfa = build_cfa(parse(open(path).read()).programs[0])
    loops, dag = _loops(cfa)
    samples = [(u, v, k) for u, v, k, d in cfa.edges() if isinstance(d["stmt"], A.Sample)]
    spec = list(cfa.ensures) + [cfa.bound]
    cands = [proposals(cfa.graph.edges[s]["stmt"], spec, cfa.bound, 1) for s in samples]
    cands = [[c for c in cs if c.cost != A.num(0)] + [c for c in cs if c.cost == A.num(0)] for cs in cands]
    return cfa, loops, dag, samples, cands


def test_a_combination_spending_exactly_the_budget_comes_first_and_alone(monkeypatch):
    """searchRef: 4 failure samplings with 3 proposals each. The per-proposal filter drops the
    ones over budget on their own, and the combination whose κ equals β (cost r each) is yielded
    before the remaining combinations are even scored."""
    import tamp.prover.loops.prove as L

    root = str(BENCHMARKS / "reliability" / "searchRef.prob")
    cfa, loops, dag, samples, cands = _ranking_setup(root)
    assert [len(c) for c in cands] == [3, 3, 3, 3]
    calls = []
    real = L.compute_kappa
    monkeypatch.setattr(L, "compute_kappa", lambda *a: calls.append(1) or real(*a))
    ranked = L.ranked_combinations(cfa, samples, cands, loops, dag)
    axioms, kap = next(ranked)
    assert {a.family for a in axioms.values()} == {"bernoulli"}
    assert all(a.cost == A.Var("r") for a in axioms.values())
    assert len(calls) <= 12 + 4  # one κ per proposal, then a few combinations: not 3**4 = 81
    rest = list(ranked)  # the others are still there, on demand
    assert rest and all(set(a) == set(axioms) for a, _k in rest)


def test_proposals_over_budget_on_their_own_are_dropped():
    import tamp.prover.loops.prove as L

    root = str(BENCHMARKS / "reliability" / "searchRef.prob")
    cfa, loops, dag, samples, cands = _ranking_setup(root)
    kept = L._affordable(cfa, samples, cands, loops, dag, L._sample_inputs(cfa))
    for before, after in zip(cands, kept):
        assert len(after) == len(before) - 1
        gone = [c for c in before if c not in after][0]
        assert gone.cost != A.Var("r") and gone.cost != A.num(0)  # the "outcome true" axiom, cost 1 - r


def test_conj_is_z3_and():
    from tamp.prover.base.smt import conj

    x, y = z3.Ints("x y")
    a, b, c = x > 0, y > x, z3.Bool("c")
    for args in [(a,), (a, b), (a, b, c), ()]:
        s = z3.Solver()
        s.add(conj(*args) != z3.And(*args))
        assert s.check() == z3.unsat
    assert conj(a, True).eq(z3.And(a, True))  # a Python bool: falls back to z3.And


def test_substitute_all_is_z3_substitute():
    from tamp.prover.base.smt import substitute_all

    x, y, z = z3.Ints("x y z")
    terms = [x + y > 2, z3.ForAll([z], z > x), y == 1]
    pairs = [(x, y + 1), (y, z * 2)]
    for got, t in zip(substitute_all(terms, pairs), terms):
        assert got.eq(z3.substitute(t, *pairs))
    assert substitute_all(terms, []) == terms


def test_the_lean_pool_is_tried_first_and_is_part_of_the_full_one():
    """The first labelling uses the claim's own forms (no shape families, no guarded forms);
    the full pool follows only if that labelling is not a proof, and contains the lean one."""
    from lang.parser import parse_file
    from tamp.prover.loops.invariants import candidate_pool
    from tamp.prover.loops.prove import _loops, _pool_phases

    path = BENCHMARKS / "dp" / "noisyMax.prob"  # an argmax scan: its index ranges are a family
    cfa = build_cfa(parse_file(str(path)).programs[0])
    loops, dag = _loops(cfa)
    lean, full = candidate_pool(cfa, {}, loops, lean=True), candidate_pool(cfa, {}, loops)
    assert set(lean) <= set(full) and len(lean) < len(full)
    phases = list(_pool_phases(cfa, dag, {}, loops, lean=True))
    assert len(phases) >= 2
    first, second = phases[0], phases[1]
    assert all(set(first[n]) <= set(second[n]) for n in first)
    assert sum(map(len, first.values())) < sum(map(len, second.values()))
    assert len(list(_pool_phases(cfa, dag, {}, loops, lean=False))) == len(phases) - 1


def test_point_evaluation_settles_unequal_log_arguments_without_the_solver():
    from axioms.lemmas import differ_at_a_point, equal_where_defined

    p, n = z3.Real("p"), z3.Int("n")
    two_n = z3.ToReal(2 * n)
    assert differ_at_a_point(two_n / p, z3.RealVal(2) / p)
    assert equal_where_defined(two_n / p, z3.RealVal(2) / p) is None
    # equal where defined: the points agree, and the solver proves it under p != 0
    assert not differ_at_a_point(1 / (p / two_n), two_n / p)
    assert equal_where_defined(1 / (p / two_n), two_n / p) is not None
    # an uninterpreted function's value is not fixed by a point: left to the solver
    f = z3.Function("f", z3.RealSort(), z3.RealSort())
    assert not differ_at_a_point(f(p), f(p) + 1)
