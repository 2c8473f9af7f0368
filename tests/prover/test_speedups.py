"""The prover's speed-ups keep its answers: liveness pruning, the C-API term walk, memoised
free variables, the solver reuse (push/pop) and the parser's table cache."""

import os

import z3

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.prover.liveness import live_variables, mentions_only_live
from tamp.prover.smt import VALID, INVALID, Encoder, Stats, is_valid, transcendental_apps

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
    assert "a" not in live[head]              # re-sampled before it is read again
    assert {"t", "i", "found", "q", "n", "ans"} <= live[head]
    # after the sampling of a, a is live (the test a > t reads it)
    after = [v for u, v, k, d in cfa.edges() if isinstance(d["stmt"], A.Sample) and u != cfa.entry
             and d["stmt"].targets[0] == A.Var("a")]
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


def _reference_apps(f):
    seen, out, stack = set(), [], [f]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t):
            if t.decl().name() in ("log", "exp", "sqrt") and t.num_args() == 1:
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
    f = z3.And(log(x) > log(y * 2), z3.ForAll([j], log(z3.ToReal(j)) + exp(x) > 0), log(x) < 3,
               z3.Function("other", z3.RealSort(), z3.RealSort())(x) > 0)
    got = transcendental_apps(f)
    want = _reference_apps(f)
    assert [g.sexpr() for g in got] == [w.sexpr() for w in want]
    assert len(got) == 4


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
    assert A.free_vars(e1) == {"x", "y"}
    s = A.free_vars(e1)
    s.add("w")                                  # callers may change their copy
    assert A.free_vars(e1) == {"x", "y"} and A.free_vars(e2) == {"x", "z"}


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
    from tamp.prover.check import decide_all

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
