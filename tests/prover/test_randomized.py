"""Randomized algorithms (issue 18, brief s7/rand): the expected-failure engine over programs
that write array elements (nested coins per element, a `forall` postcondition over the array).

Each true program is proved by :mod:`tamp.prover.expectation.prove`, its certificate re-checked by
`check-proof`, and cross-checked with `tamp simulate` at two inputs; each false sibling (a bound
below the exact failure probability) is not proved."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS

from lang.parser import parse, parse_file
from tamp.prover import portfolio, prove_program
from tamp.prover.expectation import prove as E
from tamp.simulation import simulate

CORPUS = [
    BENCHMARKS / "corpus" / "randomized_response" / "rr_bits.prob",
    BENCHMARKS / "corpus" / "randomized_response" / "rr_oue.prob",
    BENCHMARKS / "corpus" / "randomized" / "bin_load.prob",
    BENCHMARKS / "corpus" / "randomized" / "witness_search.prob",
]

# two nested coins per element, a `while` loop counting up, another bias
KEEP_WHILE = """program keepWhile(x: bool[], n: int, p: real)
  requires n >= 1 && 0 <= p && p <= 1
  ensures  forall t in 0..n: y[t] == x[t]
  fails    BOUND
{
  i := 0;
  while (i < n) {
    redo ~ bern(p);
    if (redo) {
      y[i] ~ bern(1 / 2);
    } else {
      y[i] := x[i];
    }
    i := i + 1;
  }
}"""

# counting down, the array written from its end
KEEP_DOWN = """program keepDown(x: bool[], n: int, p: real)
  requires n >= 1 && 0 <= p && p <= 1
  ensures  forall t in 0..n: out[t] == x[t]
  fails    BOUND
{
  i := n - 1;
  while (i >= 0) {
    c ~ bern(p);
    if (c) {
      out[i] ~ bern(1 / 2);
    } else {
      out[i] := x[i];
    }
    i := i - 1;
  }
}"""

# three coins deep: replaced w.p. p, then flipped w.p. 1/4
FLIP_DEEP = """program flipDeep(x: bool[], m: int, p: real)
  requires m >= 1 && 0 <= p && p <= 1
  ensures  forall t in 0..m: z[t] == x[t]
  fails    BOUND
{
  for i in 0..m {
    a ~ bern(p);
    if (a) {
      b ~ bern(1 / 4);
      if (b) {
        z[i] := !x[i];
      } else {
        z[i] := x[i];
      }
    } else {
      z[i] := x[i];
    }
  }
}"""

# a count of rare events against a threshold: bin 3 of 1..m, a `while` loop
BIN_THREE = """program binThree(n: int, m: int)
  requires n >= 1 && m >= 3
  ensures  hits < 2
  fails    BOUND
{
  hits := 0;
  j := 0;
  while (j < n) {
    ball ~ unif(1, m);
    if (ball == 3) {
      hits := hits + 1;
    }
    j := j + 1;
  }
}"""

# two events needed, coins instead of a uniform, the count compared the other way round
TWO_ERRORS = """program twoErrors(n: int, p: real)
  requires n >= 1 && 0 <= p && p <= 1
  ensures  2 > errs
  fails    BOUND
{
  errs := 0;
  for t in 0..n {
    e ~ bern(p);
    if (e) {
      errs := errs + 1;
    }
  }
}"""

# a witness found by uniform probing, density 2/3, indices 1..n
PROBE = """program probe(good: bool[], n: int, k: int)
  requires n >= 1 && k >= 1
  requires 3 * sum(j in 1..=n: good[j] ? 1 : 0) >= 2 * n
  ensures  hit
  fails    BOUND
{
  hit := false;
  r := k;
  while (r > 0) {
    idx ~ unif(1, n);
    if (good[idx]) {
      hit := true;
    }
    r := r - 1;
  }
}"""

# one iteration singled out (unary encoding's true bit), counting down
ONE_HOT_DOWN = """program oneHotDown(t: int, k: int, q: real)
  requires k >= 2 && 0 <= t && t < k && 0 <= q && q <= 1
  ensures  forall u in 0..k: u != t ==> !bits[u]
  fails    BOUND
{
  j := k - 1;
  while (j >= 0) {
    if (j == t) {
      bits[j] ~ bern(1 / 2);
    } else {
      bits[j] ~ bern(q);
    }
    j := j - 1;
  }
}"""

# the same, the other bits set with probability 1 - q and the test written `t == i`
ONE_COLD = """program oneCold(t: int, n: int, q: real)
  requires n >= 2 && 0 <= t && t < n && 0 <= q && q <= 1
  ensures  forall u in 0..n: u == t || on[u]
  fails    BOUND
{
  for i in 0..n {
    if (t == i) {
      on[i] := false;
    } else {
      on[i] ~ bern(1 - q);
    }
  }
}"""

# the postcondition as a failure event that must not happen, a uniform over a set inside
NO_BAD = """program noBad(n: int, p: real)
  requires n >= 1 && 0 <= p && p <= 1
  ensures  !(exists u in 0..n: bad[u])
  fails    BOUND
{
  for i in 0..n {
    c ~ bern(p);
    if (c) {
      d ~ unif({0, 1, 2});
      bad[i] := d == 1;
    } else {
      bad[i] := false;
    }
  }
}"""

# the balls kept in an array: a uniform sampled into an element, the last bin
BIN_ARRAY = """program binArr(n: int, m: int)
  requires n >= 1 && m >= 1
  ensures  load <= 1
  fails    BOUND
{
  load := 0;
  for i in 0..n {
    b[i] ~ unif(0, m - 1);
    if (b[i] == m - 1) {
      load := load + 1;
    }
  }
}"""

TRUE = [
    (KEEP_WHILE, "n * p / 2", {"x": [True, False, True, True], "n": 4, "p": 0.3}),
    (KEEP_DOWN, "n * p / 2", {"x": [False, False, True], "n": 3, "p": 0.5}),
    (FLIP_DEEP, "m * p / 4", {"x": [True, False, True, False, True], "m": 5, "p": 0.6}),
    (BIN_THREE, "n * (n - 1) / (2 * m * m)", {"n": 6, "m": 3}),
    (TWO_ERRORS, "n * (n - 1) * p * p / 2", {"n": 6, "p": 0.3}),
    (PROBE, "exp(-k * log(3))", {"good": [False, True, True, False, True, True, True], "n": 6, "k": 2}),
    (ONE_HOT_DOWN, "(k - 1) * q", {"t": 1, "k": 4, "q": 0.2}),
    (ONE_COLD, "(n - 1) * q", {"t": 0, "n": 3, "q": 0.3}),
    (NO_BAD, "n * p / 3", {"n": 5, "p": 0.4}),
    (BIN_ARRAY, "n * (n - 1) / (2 * m * m)", {"n": 5, "m": 3}),
]
# bounds below the truth: at the inputs above the exact failure probability exceeds them
FALSE = [
    (KEEP_WHILE, "n * p / 4"),
    (KEEP_DOWN, "n * p / 3"),
    (FLIP_DEEP, "m * p / 8"),
    (KEEP_WHILE, "p / 2"),
    (BIN_THREE, "n * (n - 1) / (4 * m * m)"),
    (TWO_ERRORS, "n * (n - 1) * p * p / 4"),
    (PROBE, "exp(-k * log(4))"),
    (ONE_HOT_DOWN, "q"),
    (ONE_COLD, "(n - 1) * q / 2"),
    (NO_BAD, "n * p / 4"),
    (BIN_ARRAY, "n * (n - 1) / (3 * m * m)"),
]


def _prog(src: str, bound: str):
    return parse(src.replace("BOUND", bound)).programs[0]


def _prove(path):
    src = parse_file(str(path))
    return prove_program(src.programs[0], path=str(path), source=src.text, timeout=60)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_element_writes_are_proved(path, monkeypatch):
    # the per-iteration composition now proves witness_search first (k draws each a witness with
    # chance >= 1/2: the claim's exp(-k * log(2)) proposes 1/2 per draw); this test is about
    # expected failure, so that method is turned off here; so is linearity, whose pair rule
    # (Markov on X(X-1)) now proves the two-in-one-bin shapes (tests/prover/test_linearity_compose.py)
    monkeypatch.setattr(portfolio.Nesting, "attempt", lambda self, problem: portfolio.Attempt())
    monkeypatch.setattr(portfolio.Linearity, "attempt", lambda self, problem: portfolio.Attempt())
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, E.ExpectationResult)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_false_siblings_are_not_proved(path):
    assert _prove(path.with_name(path.stem + "_false.prob")).verdict != "proved"


@pytest.mark.parametrize(
    "src,bound,inputs", TRUE, ids=["while", "down", "deep", "bin3", "coins", "probe", "hot", "cold", "nobad", "binarr"]
)
def test_own_programs_of_the_shapes_are_proved(src, bound, inputs, monkeypatch):
    # about expected failure: linearity's pair rule proves the two-in-one-bin shapes too
    monkeypatch.setattr(portfolio.Linearity, "attempt", lambda self, problem: portfolio.Attempt())
    r = prove_program(_prog(src, bound), timeout=60)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, E.ExpectationResult)
    sim = simulate(_prog(src, bound), inputs, runs=4000, seed=5)
    assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize(
    "src,bound", FALSE, ids=["while", "down", "deep", "one", "bin3", "coins", "probe", "hot", "cold", "nobad", "binarr"]
)
def test_bounds_below_the_truth_are_not_proved(src, bound):
    assert prove_program(_prog(src, bound), timeout=60).verdict != "proved"


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_certificates_are_rechecked(path, tmp_path):
    from tamp.cli import main

    cert = tmp_path / "cert.json"
    assert main(["prove", "-q", str(path), "--certificate", str(cert)]) == 0
    assert main(["check-proof", str(cert), str(path)]) == 0


def test_the_certificate_is_rechecked(tmp_path):
    from tamp.cli import main

    path = tmp_path / "keep.prob"
    path.write_text(KEEP_DOWN.replace("BOUND", "n * p / 2"))
    cert = tmp_path / "keep.json"
    assert main(["prove", "-q", str(path), "--certificate", str(cert)]) == 0
    assert main(["check-proof", str(cert), str(path)]) == 0


def test_an_element_write_is_the_value_read_afterwards():
    """``a[e] := v`` before a read ``a[x]``: ``x == e ? v : a[x]``; a whole-array use refuses."""
    from lang.parser import parse_expr
    from lang.printer import print_expr

    f = parse_expr("forall t in 0..n: a[t] == x[t]")
    out = E.assign(f, parse_expr("a[i]"), parse_expr("!x[i]"))
    assert print_expr(out) == "forall t in 0..n: (t == i ? !x[i] : a[t]) == x[t]"
    with pytest.raises(E.NotApplicable):
        E.assign(parse_expr("forall t in 0..n: a[t] == x[t + t]"), parse_expr("a[t]"), parse_expr("true"))


ONE_DRAW = """program oneDraw(m: int)
  requires m >= 1
  ensures  b != 2
  fails    BOUND
{
  b ~ unif(1, m);
}"""


def test_a_symbolic_uniform_is_weighted_exactly():
    """Pr[b == 2] is 1/m for m >= 2 and 0 for m = 1: 1/m is proved, 1/(m + 1) is not."""
    assert prove_program(_prog(ONE_DRAW, "1 / m")).verdict == "proved"
    assert prove_program(_prog(ONE_DRAW, "1 / (m + 1)")).verdict != "proved"


def test_a_sample_read_in_two_different_tests_is_refused():
    from lang.parser import parse_expr

    f = parse_expr("(b == 2 ? 1 : 0) + (b == 3 ? 1 : 0)")
    assert E.the_atom(f, "b", {"b": E.A.INT}) is None
    assert E.the_atom(parse_expr("(b == 2 ? 1 : 0) * (b == 2 ? 1 : 0)"), "b", {"b": E.A.INT}) is not None
    assert E.the_atom(parse_expr("b + 1 > 2 && b < 9"), "b", {"b": E.A.INT}) is None


def test_a_staircase_below_the_truth_is_rejected():
    """bin_load's staircase with the one-ball level halved is not an invariant."""
    from lang.parser import parse_expr
    from tamp.cfa import build_cfa

    prog = parse_file(str(BENCHMARKS / "corpus" / "randomized" / "bin_load.prob")).programs[0]
    cfa = build_cfa(prog)
    claim = E.claim_of(prog, cfa)
    chk = E.Checker(claim)

    def steps_valid(core: str) -> bool:
        annots = {0: E.LoopAnnot(parse_expr(core), "rank", parse_expr("n - i"))}
        _pre, _used, obs = E.obligations_for(claim, cfa.bound, annots)
        return all(chk.valid(f, 20000) == "valid" for k, _w, f in obs if k == "INDUCT")

    good = "load >= 2 ? 1 : load >= 1 ? (n - i) / m : (n - i) * (n - i - 1) / (2 * m * m)"
    assert steps_valid(good)
    assert not steps_valid(good.replace("(n - i) / m", "(n - i) / (2 * m)"))
