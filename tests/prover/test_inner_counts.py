"""Counts, sums and scores computed by an inner loop feeding a sampling's mean (issue 18, item 1).

The outer loop runs over candidates (bins of a histogram, candidates of an exponential
mechanism); for each, an inner loop computes a value from the data — a count ``if (x[i] == b)
{ c := c + 1; }``, a weighted sum, an L1 loss — which becomes the mean of the sampling. The
prover infers the inner loop's closed form (``c == sum(j in 0..n: x[j] == b ? 1 : 0)``,
:mod:`tamp.prover.counting.recurrence`), rewrites the sampling's axiom over the outer counter
(:func:`tamp.prover.counting.recurrence.over_the_counter`) and accumulates it over the iterations; the
solver then relates the inner loop's sum to the claim's, written with other names, because
alpha-equivalent sums are one function (:meth:`tamp.prover.base.smt.Encoder.opaque_sum`).

The programs are written fresh (for and while loops, counting up and down, a branch or a conditional increment, the claim's
quantifier named like a program variable or not); each true claim is proved and holds under
`tamp simulate`, each false sibling (a quarter of the margin) is not proved and is refuted by
`tamp simulate`; a certificate re-checks and a tampered one is rejected."""

from __future__ import annotations

import pytest
import z3
from limits import FALSE_CLAIM_S

from lang import ast as A
from lang.parser import parse, parse_expr
from lang.walk import Transformer
from tamp.cfa.bound_names import rename_apart
from tamp.prover import prove_program
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid
from tamp.simulation import simulate

EM_ABOVE_WHILE = """program emAboveWhile(y: int[], n: int, m: int, eps: real, p: real)
  requires n >= 0 && m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall q in 0..m: sum(k in 0..n: y[k] > q ? 1 : 0) <= sum(k in 0..n: y[k] > ans ? 1 : 0) + 2 / eps * log(m / p)
  fails    p
{
  r := m - 1;
  while (r >= 0) {
    above := 0;
    k := 0;
    while (k < n) {
      if (y[k] > r) {
        above := above + 1;
      }
      k := k + 1;
    }
    score ~ exp(above, 2 / eps);
    if (r == m - 1 || score > top) {
      top := score;
      ans := r;
    }
    r := r - 1;
  }
}"""

EM_L1 = """program emL1(x: real[], n: int, m: int, eps: real, p: real)
  requires n >= 1 && m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall c in 0..m: sum(i in 0..n: abs(x[i] - out)) <= sum(i in 0..n: abs(x[i] - c)) + 2 / eps * log(m / p)
  fails    p
{
  for c in 0..m {
    loss := 0;
    for i in 0..n {
      loss := loss + abs(x[i] - c);
    }
    v ~ exp(-loss, 2 / eps);
    if (c == 0 || v > best) {
      best := v;
      out := c;
    }
  }
}"""

HIST_WHILE = """program histWhile(d: int[], len: int, k: int, eps: real, p: real)
  requires len >= 0 && k >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall j in 0..k: abs(noisy[j] - sum(t in 0..len: d[t] == j ? 1 : 0)) <= 1 / eps * log(k / p)
  fails    p
{
  j := 0;
  while (j < k) {
    cnt := 0;
    t := len - 1;
    while (t >= 0) {
      if (d[t] == j) {
        cnt := cnt + 1;
      }
      t := t - 1;
    }
    noisy[j] ~ lap(cnt, 1 / eps);
    j := j + 1;
  }
}"""

HIST_WEIGHTED = """program histWeighted(x: int[], w: real[], n: int, m: int, B: real, eps: real, p: real)
  requires n >= 0 && m >= 1 && B > 0 && eps > 0 && 0 < p && p <= 1
  ensures  forall b in 0..m: abs(h[b] - sum(i in 0..n: x[i] == b ? w[i] : 0)) <= B / eps * log(m / p)
  fails    p
{
  for b in 0..m {
    s := 0;
    for i in 0..n {
      if (x[i] == b) {
        s := s + w[i];
      }
    }
    h[b] ~ lap(s, B / eps);
  }
}"""


# the count as a conditional increment in a for loop inside a while loop
EM_COUNT_INLINE = """program emCountInline(x: real[], n: int, m: int, eps: real, p: real)
  requires n >= 1 && m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall c in 0..m: sum(i in 0..n: x[i] <= c ? 1 : 0) <= sum(i in 0..n: x[i] <= out ? 1 : 0) + 2 / eps * log(m / p)
  fails    p
{
  c := 0;
  while (c < m) {
    cnt := 0;
    for i in 0..n {
      cnt := cnt + (x[i] <= c ? 1 : 0);
    }
    v ~ exp(cnt, 2 / eps);
    if (c == 0 || v > best) {
      best := v;
      out := c;
    }
    c := c + 1;
  }
}"""


def _false(src: str) -> str:
    """The false sibling: a quarter of the claim's margin (the last ``log(…)`` term)."""
    head, ensures, rest = src.partition("  fails")
    lines = head.rstrip().split("\n")
    lines[-1] = lines[-1] + " / 4"
    return "\n".join(lines).replace("program ", "program false_", 1) + "\n" + ensures + rest


# (program, two inputs where the true claim holds and the false sibling is refuted)
CASES = {
    "em_above_while": (
        EM_ABOVE_WHILE,
        [
            {"y": [1, 9, 9, 9], "n": 4, "m": 6, "eps": 2.5, "p": 0.1},
            {"y": [1, 2, 9, 9, 9, 9], "n": 6, "m": 5, "eps": 2.5, "p": 0.2},
        ],
    ),
    "em_count_inline": (
        EM_COUNT_INLINE,
        [
            {"x": [-1, -1, -1, 4.5], "n": 4, "m": 6, "eps": 2.5, "p": 0.1},
            {"x": [0.5, 3.0, 2.0, 4.5], "n": 4, "m": 6, "eps": 1, "p": 0.2},
        ],
    ),
    "em_l1": (
        EM_L1,
        [
            {"x": [2.0], "n": 1, "m": 5, "eps": 2.5, "p": 0.1},
            {"x": [0.5, 3.0, 2.0, 4.5], "n": 4, "m": 6, "eps": 1, "p": 0.2},
        ],
    ),
    "hist_while": (
        HIST_WHILE,
        [
            {"d": [0, 1, 1, 3, 9], "len": 5, "k": 10, "eps": 1, "p": 0.1},
            {"d": [2, 2, 2], "len": 3, "k": 3, "eps": 0.3, "p": 0.25},
        ],
    ),
    "hist_weighted": (
        HIST_WEIGHTED,
        [
            {"x": [0, 1, 1, 3, 9], "w": [0.5, 1, 0.25, 1, 1], "n": 5, "m": 10, "B": 1, "eps": 1, "p": 0.1},
            {"x": [2, 2], "w": [3, 3], "n": 2, "m": 4, "B": 3, "eps": 0.5, "p": 0.3},
        ],
    ),
}


def prove(src: str, timeout: float = 120):
    return prove_program(parse(src, "inner.prob").programs[0], source=src, path="inner.prob", timeout=timeout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_true_claim_is_proved_and_holds_when_simulated(name):
    src, inputs = CASES[name]
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    for inp in inputs:
        s = simulate(src, inp, runs=3000, seed=5)
        assert s.ci[0] <= float(s.bound_value), (inp, s.ci, s.bound_value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_false_sibling_is_not_proved_and_is_refuted(name):
    src, inputs = CASES[name]
    bad = _false(src)
    r = prove(bad, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    s = simulate(bad, inputs[0], runs=3000, seed=5)
    assert s.ci[0] > float(s.bound_value), (s.ci, s.bound_value)


def test_the_false_sibling_differs_only_in_its_margin():
    bad = _false(EM_L1)
    assert "2 / eps * log(m / p) / 4" in bad and "program false_emL1(" in bad
    assert bad.replace(" / 4", "").replace("false_", "") == EM_L1


# ---------------------------------------------------------------------------- the encoder


def _valid(text: str, types, taken=()) -> str:
    """Validity of ``text`` with the bound variables in ``taken`` renamed apart (``b`` → ``b$``,
    as the CFA does with a claim's quantifier named like a program variable)."""
    enc = Encoder(types)
    e = rename_apart(parse_expr(text), set(taken))
    return is_valid(enc.expr(e, enc.env0), enc, Stats(), 5000, [])


TYPES = {"x": A.array_of(A.INT), "n": A.INT, "a": A.INT, "c": A.INT, "b": A.INT}


def test_alpha_equivalent_sums_are_one_function():
    # the claim's sum (its variables renamed apart) and the inner loop's closed form
    # the claim's quantified b (renamed b$) at the program's a: the inner loop's sum over a
    claim = "forall b in 0..n: b == a ==> sum(i in 0..n: x[i] == b ? 1 : 0) == sum(j in 0..n: x[j] == a ? 1 : 0)"
    assert _valid(claim, TYPES, taken={"b", "i"}) == VALID
    assert _valid(claim, TYPES) == VALID
    assert _valid("c == a ==> sum(i in 0..n: x[i] - c) == sum(j in 0..n: x[j] - a)", TYPES) == VALID


def test_sums_of_different_values_stay_apart():
    # the same shape over different variables is the same function at different arguments:
    # nothing makes them equal (a canonical key must not identify x[i] - a with x[i] - c)
    assert _valid("sum(i in 0..n: x[i] - a) == sum(i in 0..n: x[i] - c)", TYPES) != VALID
    assert _valid("sum(i in 0..n: x[i] == a ? 1 : 0) == sum(i in 0..n: x[i] == a ? 0 : 1)", TYPES) != VALID
    # argument order follows the body: a - x[i] and x[i] - a are different bodies
    assert _valid("sum(i in 0..n: a - x[i]) == sum(i in 0..n: x[i] - a)", TYPES) != VALID


def test_one_function_for_both_and_the_lemmas_unfold_it():
    enc = Encoder(TYPES)
    s1 = enc.expr(parse_expr("sum(i in 0..n: x[i] == a ? 1 : 0)"), enc.env0)
    s2 = enc.expr(parse_expr("sum(k in 0..n: x[k] == a ? 1 : 0)"), enc.env0)
    assert z3.eq(s1, s2)
    # sum-step through the shared function: adding the next element
    goal = "n >= 0 ==> sum(i in 0..n + 1: x[i] == a ? 1 : 0) == sum(k in 0..n: x[k] == a ? 1 : 0) + (x[n] == a ? 1 : 0)"
    assert _valid(goal, TYPES) == VALID


# ---------------------------------------------------------------------------- certificate


class _Loosen(Transformer):
    """``top >= U`` (a kept fact about the running maximum) becomes the false ``top >= U + 1``."""

    def Binary(self, node, kids):
        left, right = kids
        if node.op == ">=" and left == A.Var("top"):
            return A.Binary(">=", left, A.Binary("+", right, A.num(1)))
        return A.Binary(node.op, left, right)


def test_the_certificate_is_rechecked_and_a_tampered_one_is_rejected(tmp_path, capsys):
    from support.certificates import check_proof, proved_certificate, rewrite_labels

    path = tmp_path / "above.prob"
    path.write_text(EM_ABOVE_WHILE)
    cert = proved_certificate(path)

    def check(c):
        return check_proof(c, path, tmp_path, capsys)

    assert check(cert)[0] == 0
    changed = rewrite_labels(cert, _Loosen())
    assert changed >= 2, "no fact about the running maximum among the certificate's labels"
    code, out = check(cert)
    assert code != 0, out
