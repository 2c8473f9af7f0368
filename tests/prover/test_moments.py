"""Markov's inequality on a count or sum a loop builds (issue 33,
:mod:`tamp.prover.expectation.moments`): the expected increment of one iteration read off the
body by the engine's pre-expectation, the increments left summed over the iterations left, and
the ``sum-sign`` lemma that makes such a sum of non-negative terms non-negative. True dev claims
(a Morris counter, a count-min row) and differently written versions (a while loop, an
accumulator of weighted draws) are proved; their false siblings
are not proved; a core with the wrong increment is rejected by INDUCT."""

from __future__ import annotations

from fractions import Fraction

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.prover import prove_program
from tamp.prover.base.smt import VALID
from tamp.prover.expectation import moments as M
from tamp.prover.expectation import prove as E
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

# tests of the expected-failure engine: linearity (tried before it) is turned off
pytestmark = pytest.mark.usefixtures("without_linearity")

BLIND = BENCHMARKS / "prover4" / "dev" / "blind2"
TRUE = [
    BLIND / "streaming" / "morris_markov.prob",
    BLIND / "streaming" / "morris_base.prob",
    BLIND / "hashing" / "count_min_row.prob",
]

MORRIS_WHILE = """
program morrisWhile(n: int, c: real)
  requires n >= 1 && c >= 1
  ensures x < c * n
  fails BOUND
{
  w := 1;
  i := 0;
  while (i < n) {
    i := i + 1;
    u ~ unif(1, 2);
    heads ~ bern(1 / w);
    if (heads) { w := w + w; }
  }
  x := w - 1;
}
"""

WEIGHTED = """
program weightedCount(c: real[], n: int, q: real, t: real)
  requires n >= 0 && 0 <= q && q <= 1 && t > 0
  requires forall j in 0..n: c[j] >= 0
  ensures total < t
  fails BOUND
{
  total := 0;
  steps := 0;
  for j in 0..n {
    steps := steps + 2;
    hit ~ bern(q);
    if (hit) { total := total + c[j]; }
  }
}
"""

DATA_COUNT = """
program dataCount(x: int[], n: int, q: real, a: real)
  requires n >= 0 && 0 <= q && q <= 1 && a > 0
  ensures cnt < a
  fails BOUND
{
  cnt := 0;
  for j in 0..n {
    if (x[j] > 0) {
      f ~ bern(q);
      if (f) { cnt := cnt + 1; }
    }
  }
}
"""

RADEMACHER = """
program rwCheb(n: int, t: real)
  requires n >= 1 && t > 0
  ensures abs(s) < t
  fails BOUND
{
  s := 0;
  for i in 0..n {
    x ~ bern(1 / 2);
    if (x) { s := s + 1; } else { s := s - 1; }
  }
}
"""

LAZY = """
program lazyCheb(n: int, t: real)
  requires n >= 1 && t > 0
  ensures abs(s - n / 4) < t
  fails BOUND
{
  s := 0;
  i := 0;
  while (i < n) {
    u ~ unif(0, 3);
    if (u == 0) {
      s := s - 1;
    } else if (u >= 2) {
      s := s + 1;
    }
    i := i + 1;
  }
}
"""


def _prove_text(text, timeout=60):
    src = parse(text)
    return prove_program(src.programs[0], path="<t>", source=text, timeout=timeout)


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_dev_claims_are_proved_by_markov_on_the_expected_increments(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, E.ExpectationResult)
    # cross-checked: the proved bound holds when the program is run at its recorded inputs
    for given in inputs_for(str(path)):
        sim = simulate(str(path), given, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


@pytest.mark.parametrize(
    "text, true_bound, false_bound",
    [
        # E[w] = n + 1 with the loop written as a while loop, the counter raised first, and an
        # extra draw; half of Markov's bound is false (n = c = 1: w = 2 with chance 1)
        (MORRIS_WHILE, "1 / c", "1 / (2 * c)"),
        # a sum of weighted draws (weights from an input array) next to other work
        (WEIGHTED, "q * sum(j in 0..n: c[j]) / t", "q * sum(j in 0..n: c[j]) / (2 * t)"),
        # a count that depends on the data: one coin per positive input (issue 33's example)
        (DATA_COUNT, "q * sum(j in 0..n: x[j] > 0 ? 1 : 0) / a", "q * sum(j in 0..n: x[j] > 0 ? 1 : 0) / (2 * a)"),
        # Chebyshev: ±1 steps, E[s²] = n, so Pr[|s| >= t] <= n/t²; the false bound is half
        (RADEMACHER, "n / (t * t)", "n / (2 * t * t)"),
        # a lazy walk with drift written as a while loop: mean n/4, variance 11n/16
        (LAZY, "11 * n / (16 * t * t)", "10 * n / (16 * t * t)"),
    ],
    ids=["morris_while", "weighted_sum", "data_count", "rademacher_chebyshev", "lazy_chebyshev"],
)
def test_differently_written_versions(text, true_bound, false_bound):
    r = _prove_text(text.replace("BOUND", true_bound))
    assert r.verdict == "proved", r.render_text()
    assert _prove_text(text.replace("BOUND", false_bound), timeout=FALSE_CLAIM_S).verdict != "proved"


def _claim(text):
    prog = parse(text).programs[0]
    cfa = build_cfa(prog, None, "<t>", text)
    claim = E.claim_of(prog, cfa)
    return claim, cfa, E.Checker(claim, None)


def _induct(text, core):
    claim, _cfa, chk = _claim(text)
    loop = next(n for n in A.walk(claim.body) if isinstance(n, (A.For, A.While)))
    g, body, _ = E.as_while(loop)
    w = E.Wpe(claim.body, claim.params, {}, None, types=claim.types)
    c = parse_expr(core)
    steps = E.induct_formulas(g, w.stmt(body, E.invariant(g, c, claim.post)), c)
    return chk.valid(E.and_all([ob for _w, ob in steps]), 10000)


def test_the_increment_is_read_off_the_body():
    claim, _cfa, _chk = _claim(MORRIS_WHILE.replace("BOUND", "1 / c"))
    loop = next(n for n in A.walk(claim.body) if isinstance(n, A.While))

    def pre(x):
        return E.Wpe(loop.body, claim.params, types=claim.types).stmt(loop.body, x)

    assert M.increment(pre, parse_expr("w - 1"), {"n", "c"}) == A.num(1)
    assert M.counted(loop, {"i", "u", "heads", "w"}) == ("i", A.Var("n"), False)
    assert M.remaining(A.num(1), loop, {"i", "u", "heads", "w"}) == parse_expr("n - i")
    # an increment that reads another variable the loop writes has no closed sum here
    assert M.remaining(parse_expr("w"), loop, {"i", "u", "heads", "w"}) is None


def test_factors_without_the_counter_leave_the_sum():
    s = parse("program p(c: int[], n: int) requires n >= 0 ensures true fails 0 { for j in 0..n { x := 1; } }")
    loop = next(n for n in A.walk(s.programs[0].body) if isinstance(n, A.For))
    rem = M.remaining(parse_expr("h * c[j] / w"), loop, {"j", "x"})
    assert rem == A.Binary("*", parse_expr("h / w"), parse_expr("sum(k in j..n: c[k])"))
    # the sum's index is a name the program does not use
    rem = M.remaining(parse_expr("c[j] * k"), loop, {"j", "x"}, {"c", "n", "j", "x", "k"})
    assert rem == A.Binary("*", parse_expr("k"), parse_expr("sum(l in j..n: c[l])"))


def test_a_core_with_the_wrong_increment_is_rejected_by_induct():
    # the continuation of the loop is then the postcondition itself
    text = MORRIS_WHILE.replace("BOUND", "1 / c").replace("x < c * n", "w - 1 < c * n").replace("  x := w - 1;\n", "")
    assert _induct(text, "i >= 0 && w - 1 >= 0 ? (w - 1 + (n - i)) / (c * n) : 1") == VALID
    # half the increments left: it would give half the bound, and INDUCT fails
    assert _induct(text, "i >= 0 && w - 1 >= 0 ? (w - 1 + (n - i) / 2) / (c * n) : 1") != VALID


def test_sum_sign_needs_its_premise():
    text = """
program p(c: int[], n: int, j: int)
  requires n >= 1 && 0 <= j
  requires REQ
  ensures  b
  fails    0
{ b ~ bern(1/2); }
"""
    goal = parse_expr("sum(k in j..n: c[k]) >= 0")
    _c, _f, signed = _claim(text.replace("REQ", "forall k in 0..n: c[k] >= 0"))
    assert signed.valid(goal) == VALID
    _c, _f, unsigned = _claim(text.replace("REQ", "n >= 1"))
    assert unsigned.valid(goal) != VALID


def test_the_second_moment_of_one_step_is_solved_for():
    claim, _cfa, _chk = _claim(LAZY.replace("BOUND", "n / (t * t)"))
    loop = next(n for n in A.walk(claim.body) if isinstance(n, A.While))

    def pre(x):
        return E.Wpe(loop.body, claim.params, types=claim.types).stmt(loop.body, x)

    changed = {"i", "u", "s"}
    x = parse_expr("s - n / 4")
    alpha, beta = M.square_step(pre, x, changed, {"n", "t"})
    # E[(x + Δ)²] = x² + 2·E[Δ]·x + E[Δ²], E[Δ] = 1/4, E[Δ²] = 3/4
    assert (alpha, beta) == (A.Num(Fraction(1, 2), False), A.Num(Fraction(3, 4), False))
    # a step whose square grows with the state in another way (x·s) has no such form
    assert M.square_step(pre, parse_expr("s * s"), changed, {"n", "t"}) is None


def test_a_chebyshev_core_with_too_little_variance_is_rejected_by_induct():
    text = RADEMACHER.replace("BOUND", "n / (t * t)")
    assert _induct(text, "i >= 0 ? (n - i + s * s) / (t * t) : 1") == VALID
    assert _induct(text, "i >= 0 ? ((n - i) / 2 + s * s) / (t * t) : 1") != VALID


def test_a_count_on_a_test_of_the_data_has_a_conditional_increment():
    claim, _cfa, _chk = _claim(DATA_COUNT.replace("BOUND", "1"))
    loop = next(n for n in A.walk(claim.body) if isinstance(n, A.For))
    g, body, _ = E.as_while(loop)

    def pre(x):
        return E.Wpe(body, claim.params, types=claim.types).stmt(body, x)

    d = M.increment(pre, parse_expr("cnt"), {"n", "q", "a"})
    assert d == parse_expr("x[j] > 0 ? q : 0")
    # q leaves the sum: the sum left is the count the claim writes
    rem = M.remaining(d, loop, {"j", "f", "cnt"}, {"x", "n", "q", "a", "j", "f", "cnt"})
    assert rem == A.Binary("*", A.Var("q"), parse_expr("sum(k in j..n: x[k] > 0 ? 1 : 0)"))
