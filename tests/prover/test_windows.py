"""Samplings guarded by a condition on the loop counter: sliding windows released once full,
warm-up iterations that sample nothing (issue 18).

A sampling inside ``if (i >= w - 1) { … }`` in a loop counted by ``i`` runs on the iterations
whose counter passes the guard only, so the failure bound κ at the loop head is
``cost · max(0, i - max(lo, w - 1))`` (:mod:`tamp.prover.counting.guards`), not ``cost · (i - lo)``: the
claim's budget ``p`` pays for the n - w + 1 windows released, not for n iterations. The guard
is carried into the branch's labels, where the STEP obligation at the join needs it.

The programs are written fresh (the window a parameter or a literal, counting up and down, the
sampling in the then or the else branch, ``>=``, ``<=`` and ``<``); each true claim is proved and
holds under `tamp simulate`, each false sibling (a margin too small) is not proved and is refuted
by `tamp simulate`; certificates re-check, and one whose κ counts too few iterations is
rejected."""

from __future__ import annotations

from pathlib import Path

import pytest
from limits import FALSE_CLAIM_S

from lang import ast as A
from lang.parser import parse, parse_expr
from lang.walk import Transformer
from tamp.prover import prove_program
from tamp.prover.counting.guards import guarded_sum, threshold
from tamp.simulation import simulate

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus" / "window_sum"

SLIDE3 = """program slide3(x: real[], n: int, eps: real, p: real)
  requires n >= 3 && eps > 0 && 0 < p && p <= 1
  ensures  forall t in 0..n - 2: abs(out[t] - (x[t] + x[t + 1] + x[t + 2])) <= 3 / eps * log((n - 2) / p)
  fails    p
{
  for i in 0..n {
    if (i >= 2) {
      out[i - 2] ~ lap(x[i - 2] + x[i - 1] + x[i], 3 / eps);
    }
  }
}"""

SLIDE_DOWN = """program slideDown(x: real[], n: int, w: int, eps: real, p: real)
  requires 1 <= w && w <= n && eps > 0 && 0 < p && p <= 1
  ensures  forall t in 0..n - w + 1: abs(out[t] - sum(j in t..t + w: x[j])) <= w / eps * log((n - w + 1) / p)
  fails    p
{
  i := n - 1;
  while (i >= 0) {
    if (i <= n - w) {
      s := 0;
      for j in i..i + w {
        s := s + x[j];
      }
      out[i] ~ lap(s, w / eps);
    }
    i := i - 1;
  }
}"""

WARMUP = """program warmup(x: real[], n: int, k: int, eps: real, p: real)
  requires 0 <= k && k + 1 < n && eps > 0 && 0 < p && p <= 1
  ensures  forall t in k + 1..n: abs(out[t] - x[t]) <= 1 / eps * log((n - k - 1) / p)
  fails    p
{
  t := 0;
  while (t < n) {
    if (t <= k) {
      out[t] := 0;
    } else {
      out[t] ~ lap(x[t], 1 / eps);
    }
    t := t + 1;
  }
}"""

RUNNING = """program runningWindow(x: real[], n: int, w: int, eps: real, p: real)
  requires 1 <= w && w <= n && eps > 0 && 0 < p && p <= 1
  ensures  forall t in 0..n - w + 1: abs(y[t] - sum(j in t..t + w: x[j])) <= w / eps * log((n - w + 1) / p)
  fails    p
{
  acc := 0;
  i := 0;
  while (i < n) {
    acc := acc + x[i];
    if (i - w >= 0) {
      acc := acc - x[i - w];
    }
    if (i + 1 < w) {
      skip;
    } else {
      y[i + 1 - w] ~ lap(acc, w / eps);
    }
    i := i + 1;
  }
}"""

# name -> (source, the false sibling's margin replaced, two inputs)
CASES = {
    "slide3": (
        SLIDE3,
        ("3 / eps * log((n - 2) / p)", "3 / eps * log(1 / p)"),
        [
            {"x": [1.0, 2.0, 0.5, 3.0, 1.0, 2.0], "n": 6, "eps": 1.0, "p": 0.5},
            {"x": [0.0, 0.0, 1.0, 4.0], "n": 4, "eps": 0.5, "p": 0.2},
        ],
    ),
    "slide_down": (
        SLIDE_DOWN,
        ("w / eps * log((n - w + 1) / p)", "1 / eps * log((n - w + 1) / p)"),
        [
            {"x": [1.0, 2.0, 0.5, 3.0, 1.0, 2.0], "n": 6, "w": 3, "eps": 1.0, "p": 0.5},
            {"x": [0.0, 1.0, 4.0, 2.0, 2.0], "n": 5, "w": 2, "eps": 0.5, "p": 0.2},
        ],
    ),
    "warmup": (
        WARMUP,
        ("1 / eps * log((n - k - 1) / p)", "1 / eps * log(1 / p)"),
        [
            {"x": [1.0, 2.0, 0.5, 3.0, 1.0, 2.0], "n": 6, "k": 1, "eps": 1.0, "p": 0.5},
            {"x": [0.0, 1.0, 4.0, 2.0, 2.0], "n": 5, "k": 0, "eps": 0.5, "p": 0.2},
        ],
    ),
    "running": (
        RUNNING,
        ("w / eps * log((n - w + 1) / p)", "1 / eps * log((n - w + 1) / p)"),
        [
            {"x": [1.0, 2.0, 0.5, 3.0, 1.0, 2.0], "n": 6, "w": 3, "eps": 1.0, "p": 0.5},
            {"x": [0.0, 1.0, 4.0, 2.0, 2.0], "n": 5, "w": 2, "eps": 0.5, "p": 0.2},
        ],
    ),
}


def _false(src: str, swap) -> str:
    old, new = swap
    assert old in src
    return src.replace(old, new).replace("program ", "program false_", 1)


def prove(src: str, timeout: float = 120):
    return prove_program(parse(src, "window.prob").programs[0], source=src, path="window.prob", timeout=timeout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_true_claim_is_proved_and_holds_when_simulated(name):
    src, _swap, inputs = CASES[name]
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    for inp in inputs:
        s = simulate(src, inp, runs=3000, seed=5)
        assert s.ci[0] <= float(s.bound_value), (inp, s.ci, s.bound_value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_false_sibling_is_not_proved_and_is_refuted(name):
    src, swap, inputs = CASES[name]
    bad = _false(src, swap)
    r = prove(bad, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    s = simulate(bad, inputs[0], runs=3000, seed=5)
    assert s.ci[0] > float(s.bound_value), (s.ci, s.bound_value)


def test_a_sampling_on_more_iterations_than_the_budget_pays_for_is_not_proved():
    # the claim and its margin are those of SLIDE3, but the guard lets one more iteration sample
    # (into an element the claim does not read): the union bound needs (n - 1) * p / (n - 2),
    # which κ must count (the claim holds, but not by this budget)
    src = SLIDE3.replace("if (i >= 2)", "if (i >= 1)")
    r = prove(src, timeout=90)
    assert r.verdict != "proved", r.render_text()


@pytest.mark.parametrize("name", ["window_sliding.prob", "window_sliding_false.prob"])
def test_the_corpus_window(name):
    path = CORPUS / name
    src = path.read_text()
    r = prove_program(parse(src, str(path)).programs[0], source=src, path=str(path), timeout=120)
    assert (r.verdict == "proved") == ("false" not in name), r.render_text()


# ---------------------------------------------------------------------------- the guard arithmetic

INT = {"i": A.INT, "w": A.INT, "n": A.INT, "r": A.REAL}


@pytest.mark.parametrize(
    "text, c, at_least",
    [
        ("i >= w - 1", "w - 1", True),
        ("i > w", "w + 1", True),
        ("w <= i", "w", True),
        ("i - w + 1 >= 0", "w - 1", True),
        ("i < 3", "3", False),
        ("i <= n - w", "n - w + 1", False),
        ("!(i >= 2)", "2", False),
        ("i + 1 < w", "w - 1", False),
    ],
)
def test_a_counter_guard_is_a_threshold(text, c, at_least):
    th = threshold(parse_expr(text), "i", INT)
    assert th is not None
    got, up = th
    assert up == at_least
    # the same integer: compare by value at a few points
    from lang.evaluate import evaluate

    for w in (1, 4):
        for n in (5, 9):
            assert evaluate(got, {"w": w, "n": n}) == evaluate(parse_expr(c), {"w": w, "n": n})


@pytest.mark.parametrize("text", ["2 * i >= w", "i >= r", "i * i >= w", "i == w", "i >= w / 2"])
def test_other_conditions_are_not_thresholds(text):
    assert threshold(parse_expr(text), "i", INT) is None


class _Counter:
    def __init__(self, name, init, step):
        self.name, self.init, self.step = name, init, step


@pytest.mark.parametrize("step", [1, -1])
def test_the_guarded_sum_counts_the_iterations_that_pass(step):
    from lang.evaluate import evaluate

    # cost 1 on the iterations whose counter (read at the back edge: moved by the step) is >= 3
    per = parse_expr("i - 1 >= 3 ? 1 : 0" if step > 0 else "i + 1 >= 3 ? 1 : 0")
    init = A.num(0) if step > 0 else A.num(7)
    total = guarded_sum(per, _Counter("i", init, step), INT, {"n"})
    assert total is not None
    for i in range(0, 8) if step > 0 else range(-1, 8):
        values = range(0, i) if step > 0 else range(i + 1, 8)  # counter values of the iterations done
        assert evaluate(total, {"i": i}) == sum(1 for v in values if v >= 3), i


# ---------------------------------------------------------------------------- certificate


class _Shift(Transformer):
    """``max(0, i - 2)`` (the iterations past the guard) made ``max(0, i - 2 - 1)``: too few."""

    def Call(self, node, kids):
        kids = tuple(kids)
        if node.func == "max" and kids[0] == A.num(0):
            return A.Call("max", (kids[0], A.Binary("-", kids[1], A.num(1))))
        return A.Call(node.func, kids)


def test_the_certificate_is_rechecked_and_one_counting_too_few_is_rejected(tmp_path, capsys):
    from support.certificates import check_proof, proved_certificate, rewrite_labels

    path = tmp_path / "slide3.prob"
    path.write_text(SLIDE3)
    cert = proved_certificate(path)

    def check(c):
        return check_proof(c, path, tmp_path, capsys)

    assert check(cert)[0] == 0
    changed = rewrite_labels(cert, _Shift(), field="kappa")
    assert changed >= 2, "no guarded count among the certificate's failure bounds"
    code, out = check(cert)
    assert code != 0, out
