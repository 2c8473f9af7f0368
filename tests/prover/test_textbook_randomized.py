"""Textbook randomized algorithms (issue 18, brief s8/rand): the birthday union bound.

n values drawn uniformly from m; some pair collides with probability at most C(n, 2)/m. The
expected-failure engine proves it with two general pieces (:mod:`tamp.prover.expectation.hits` and the
cores of :mod:`tamp.prover.expectation.prove`): a uniform draw compared with K given values hits one
with probability at most K/N, and a deterministic loop that only raises a flag gets the exact
invariant "flag, or one of the iterations left raises it". Each true program is proved, its
certificate re-checked by `check-proof` (and a tampered one rejected), and cross-checked with
`tamp simulate`; each false variant (a bound below the exact collision probability, or a check
that compares an element with itself) is not proved."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS

from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse, parse_expr, parse_file
from tamp.prover import prove_program
from tamp.prover.expectation import hits as H
from tamp.prover.expectation import prove as E
from tamp.simulation import simulate

BIRTHDAY = BENCHMARKS / "corpus" / "randomized" / "birthday.prob"

# only the distinctness of the draws, as a failure event that must not happen
DISTINCT = """program distinct(n: int, m: int)
  requires n >= 1 && m >= 1
  ensures  !(exists p in 0..n: exists q in p + 1..n: b[p] == b[q])
  fails    BOUND
{
  for i in 0..n {
    b[i] ~ unif(0, m - 1);
  }
}"""

# days 1..d, the pairs checked as (earlier, later) with the inner loop below the outer counter
LOWER = """program birthdayLower(k: int, d: int)
  requires k >= 2 && d >= 2
  ensures  !clash
  fails    BOUND
{
  for t in 0..k {
    day[t] ~ unif(1, d);
  }
  clash := false;
  for a in 0..k {
    for c in 0..a {
      if (day[c] == day[a]) {
        clash := true;
      }
    }
  }
}"""

# each new draw checked at once against the earlier ones (a loop inside the sampling loop)
ONLINE = """program onlineBirthday(n: int, m: int)
  requires n >= 1 && m >= 1
  ensures  !dup
  fails    BOUND
{
  dup := false;
  for i in 0..n {
    b[i] ~ unif(0, m - 1);
    for j in 0..i {
      if (b[j] == b[i]) {
        dup := true;
      }
    }
  }
}"""

# hash slots: a `while` loop draws, the nest counts down
WHILE_DOWN = """program slots(n: int, s: int)
  requires n >= 1 && s >= 1
  ensures  !taken
  fails    BOUND
{
  i := 0;
  while (i < n) {
    h[i] ~ unif(0, s - 1);
    i := i + 1;
  }
  taken := false;
  for x in 0..n {
    for y in x + 1..n {
      if (h[x] == h[y]) {
        taken := true;
      }
    }
  }
}"""

# a mistaken check: j starts at i, so every element is compared with itself
SELF = """program selfCompare(n: int, m: int)
  requires n >= 1 && m >= 1
  ensures  !collide
  fails    BOUND
{
  for i in 0..n {
    b[i] ~ unif(0, m - 1);
  }
  collide := false;
  for i in 0..n {
    for j in i..n {
      if (b[i] == b[j]) {
        collide := true;
      }
    }
  }
}"""

TRUE = [
    (DISTINCT, "n * (n - 1) / (2 * m)", {"n": 5, "m": 12}),
    (LOWER, "k * (k - 1) / (2 * d)", {"k": 4, "d": 10}),
    (ONLINE, "n * (n - 1) / (2 * m)", {"n": 3, "m": 5}),
    (WHILE_DOWN, "n * (n - 1) / (2 * s)", {"n": 4, "s": 20}),
]
# below the truth: at n = 2 a collision has probability exactly 1/m (and more pairs only add)
FALSE = [
    (DISTINCT, "n * (n - 1) / (3 * m)"),
    (LOWER, "(k - 1) * (k - 1) / (2 * d)"),
    (ONLINE, "(n - 1) * (n - 1) / (2 * m)"),
    (WHILE_DOWN, "n * (n - 1) / (2 * s) - 1 / (4 * s)"),
    (SELF, "n * (n - 1) / (2 * m)"),
    (SELF, "n * n / m"),
]


def _prog(src: str, bound: str):
    return parse(src.replace("BOUND", bound)).programs[0]


def _prove_file(path):
    src = parse_file(str(path))
    return prove_program(src.programs[0], path=str(path), source=src.text, timeout=60)


def test_birthday_is_proved_and_its_false_sibling_is_not():
    r = _prove_file(BIRTHDAY)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, E.ExpectationResult)
    assert _prove_file(BIRTHDAY.with_name("birthday_false.prob")).verdict != "proved"


@pytest.mark.parametrize("src,bound,inputs", TRUE, ids=["distinct", "lower", "online", "while"])
def test_own_birthday_programs_are_proved(src, bound, inputs):
    r = prove_program(_prog(src, bound), timeout=60)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, E.ExpectationResult)
    sim = simulate(_prog(src, bound), inputs, runs=4000, seed=7)
    assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("src,bound", FALSE, ids=["distinct", "lower", "online", "while", "self", "self2"])
def test_bounds_below_the_truth_are_not_proved(src, bound):
    assert prove_program(_prog(src, bound), timeout=FALSE_CLAIM_S).verdict != "proved"


def test_the_certificate_is_rechecked_and_a_lowered_core_is_rejected(tmp_path, capsys):
    from support.certificates import check_proof, proved_certificate

    from lang.serialize import expr_from_json, to_json

    path = tmp_path / "birthday.prob"
    path.write_bytes(BIRTHDAY.read_bytes())
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    lowered = 0
    for lp in cert["expectation"][0]["loops"]:
        core = expr_from_json(lp["core"])
        if "i * (i - 1) / (2 * m)" in E.show_expr(core):  # the sampling loop's β - β[n := i]
            lp["core"] = to_json(A.Binary("/", core, A.num(2)))
            lowered += 1
    assert lowered == 1
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


def test_splitting_at_the_written_element_is_an_identity():
    """The three parts of a quantifier and a sum split at i mean what the whole did, at every
    small state (arrays of 0/1 values, i inside and outside the range)."""
    exprs = [
        "exists p in 0..n: exists q in p + 1..n: (p == i ? 7 : b[p]) == (q == i ? 7 : b[q])",
        "forall p in 1..=n: (p == i ? 7 : b[p]) != b[0]",
        "sum(p in 0..n: (p == i ? 7 : b[p]) == 1 ? 1 : 0)",
        "exists a in 0..n: exists c in 0..a: (c == i ? 7 : b[c]) == (a == i ? 7 : b[a])",
    ]
    for text in exprs:
        e = parse_expr(text)
        s = E._fold(H.split_at(e, A.Var("i")))
        assert s != e
        for n in range(0, 4):
            for i in range(-1, 5):
                for bits in itertools.product([0, 1, 7], repeat=n + 1):
                    env = {"n": n, "i": i, "b": list(bits)}
                    assert evaluate(e, env) == evaluate(s, env), (text, env, E.show_expr(s))


def test_the_hit_bound_is_above_the_exact_average():
    """E_x[F] over x in 0..N-1 against the rule's min(1, F_gen + K/N), by enumeration."""
    f = parse_expr("(exists p in 0..k: a[p] == x) || x == c ? 1 : (x != d ? 1 / 4 : 0)")
    bound = H.hit_bound(f, "x", A.Var("N"))
    for arr in itertools.product(range(4), repeat=3):
        for k in range(0, 4):
            for c in range(-1, 4):
                for d in (0, 2, 9):
                    for n in (1, 3, 5):
                        env = {"a": list(arr), "k": k, "c": c, "d": d, "N": n}
                        avg = sum(Fraction(evaluate(f, {**env, "x": v})) for v in range(n)) / n
                        assert avg <= Fraction(evaluate(bound, env)), (env, avg)


def test_a_sample_read_other_than_in_equalities_is_refused():
    for text in ("x < b[0] ? 1 : 0", "a[x] ? 1 : 0", "exists p in 0..x: b[p] == 1", "x + 1 == c ? 1 : 0"):
        with pytest.raises(H.NoHitBound):
            H.hit_bound(parse_expr(text), "x", A.Var("N"))
