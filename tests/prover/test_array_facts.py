"""Facts about arrays that loops fill, tally into and scan (issue 18, items 1 and 3).

A one-pass histogram fills its bins with a constant (``cnt[b] := 0``), tallies the data into them
(``cnt[x[i]] := cnt[x[i]] + 1``) and then noises each bin. The prover proposes the fill's and the
tally's closed forms as loop-head facts (:mod:`tamp.prover.counting.array_forms`: ``forall k in 0..m:
cnt[k] == sum(j in 0..i: x[j] == k ? 1 : 0)``), and the unfolding lemmas of a ``sum`` that reads
the quantified bin are stated for every bin (:mod:`axioms.lemmas`), so the solver proves the
tally inductive. The programs are written fresh (while loops counting down, weights, a branch
around the tally); each true claim is proved and holds under `tamp simulate`, each false
sibling (a tally of 2 per item, bins starting at 5) is not proved and is refuted by simulation;
a certificate re-checks and a tampered one is rejected.

A loop that branches on a sample and writes array elements in the branches (stability-based
histograms: ``if (h > T) { rel[b] := true; out[b] := h; }``) is claimed with one ``forall`` over
a conjunction; each conjunct under the ``forall`` is a candidate of its own
(:func:`tamp.prover.loops.invariants.split_post`), since the body keeps the parts inductive where the
whole is not decided.

Binary search over a sorted array (``lo``/``hi`` closing in, no counter) keeps the order of its
bounds and the claim's ``forall`` cut at them (:mod:`tamp.prover.counting.bracket`: ``forall j in 0..lo:
x[j] != key``); preserving the cut needs every element below the probe to be no larger, which the
``sorted-mono`` lemma derives from the neighbour-wise ``requires`` (:mod:`axioms.lemmas`)."""

from __future__ import annotations

import re

import pytest
from limits import FALSE_CLAIM_S

from lang import ast as A
from lang.parser import parse, parse_expr
from lang.walk import Transformer
from tamp.prover import prove_program
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid
from tamp.simulation import simulate

TALLY_DOWN = """program tallyDown(d: int[], len: int, k: int, eps: real, p: real)
  requires len >= 0 && k >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall q in 0..k: abs(noisy[q] - sum(t in 0..len: d[t] == q ? 1 : 0)) <= 1 / eps * log(k / p)
  fails    p
{
  r := k - 1;
  while (r >= 0) {
    tally[r] := 0;
    r := r - 1;
  }
  t := len - 1;
  while (t >= 0) {
    tally[d[t]] := tally[d[t]] + 1;
    t := t - 1;
  }
  for q in 0..k {
    noisy[q] ~ lap(tally[q], 1 / eps);
  }
}"""

TALLY_WEIGHTED = """program tallyWeighted(x: int[], w: real[], n: int, m: int, eps: real, p: real)
  requires n >= 0 && m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall b in 0..m: abs(out[b] - sum(i in 0..n: x[i] == b ? w[i] : 0)) <= 2 / eps * log(m / p)
  fails    p
{
  for b in 0..m {
    acc[b] := 0;
  }
  for i in 0..n {
    acc[x[i]] := acc[x[i]] + w[i];
  }
  for b in 0..m {
    out[b] ~ lap(acc[b], 2 / eps);
  }
}"""

TALLY_COND = """program tallyCond(x: int[], ok: bool[], n: int, m: int, eps: real, p: real)
  requires n >= 0 && m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall b in 0..m: abs(h[b] - sum(i in 0..n: ok[i] ? (x[i] == b ? 1 : 0) : 0)) <= 1 / eps * log(m / p)
  fails    p
{
  for b in 0..m {
    c[b] := 0;
  }
  for i in 0..n {
    if (ok[i]) {
      c[x[i]] := c[x[i]] + 1;
    }
  }
  for b in 0..m {
    h[b] ~ lap(c[b], 1 / eps);
  }
}"""

TALLY_TWICE_FALSE = """program tallyTwiceFalse(x: int[], n: int, m: int, eps: real, p: real)
  requires n >= 0 && m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall b in 0..m: abs(h[b] - sum(i in 0..n: x[i] == b ? 1 : 0)) <= 1 / eps * log(m / p)
  fails    p
{
  for b in 0..m {
    cnt[b] := 0;
  }
  for i in 0..n {
    cnt[x[i]] := cnt[x[i]] + 2;
  }
  for b in 0..m {
    h[b] ~ lap(cnt[b], 1 / eps);
  }
}"""

TALLY_START_FALSE = """program tallyStartFalse(x: int[], n: int, m: int, eps: real, p: real)
  requires n >= 0 && m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall b in 0..m: abs(h[b] - sum(i in 0..n: x[i] == b ? 1 : 0)) <= 1 / eps * log(m / p)
  fails    p
{
  for b in 0..m {
    cnt[b] := 5;
  }
  for i in 0..n {
    cnt[x[i]] := cnt[x[i]] + 1;
  }
  for b in 0..m {
    h[b] ~ lap(cnt[b], 1 / eps);
  }
}"""


STABLE_DOWN = """program stableDown(c: int[], k: int, eps: real, t: real, p: real)
  requires k >= 1 && eps > 0 && t >= 0 && 0 < p && p <= 1
  ensures  forall j in 0..k: (keep[j] ==> c[j] >= 1 && abs(rel[j] - c[j]) <= 1 / eps * log(k / p))
                        && (!keep[j] ==> c[j] <= t + 1 / eps * log(k / p))
  fails    p
{
  j := k - 1;
  while (j >= 0) {
    keep[j] := false;
    if (c[j] >= 1) {
      z ~ lap(c[j], 1 / eps);
      if (z > t) {
        keep[j] := true;
        rel[j] := z;
      }
    }
    j := j - 1;
  }
}"""

FLAGS_ABOVE = """program flagsAbove(q: real[], n: int, T: real, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall i in 0..n: (above[i] ==> q[i] >= T - 2 / eps * log(n / p)) && (!above[i] ==> q[i] <= T + 2 / eps * log(n / p))
  fails    p
{
  for i in 0..n {
    a ~ lap(q[i], 2 / eps);
    if (a > T) {
      above[i] := true;
    } else {
      above[i] := false;
    }
  }
}"""

BS_INCL = """program bsIncl(a: int[], len: int, t: int)
  requires len >= 1
  requires forall k in 1..len: a[k - 1] < a[k]
  ensures  hit ==> a[pos] == t
  ensures  !hit ==> (forall k in 0..len: a[k] != t)
  fails    0
{
  left := 0;
  right := len - 1;
  hit := false;
  pos := 0;
  while (left <= right && !hit) {
    probe := (left + right) div 2;
    if (a[probe] < t) {
      left := probe + 1;
    } else {
      if (a[probe] > t) {
        right := probe - 1;
      } else {
        hit := true;
        pos := probe;
      }
    }
  }
}"""

BS_DESC = """program bsDesc(y: real[], n: int, v: real)
  requires n >= 1
  requires forall i in 0..n - 1: y[i] >= y[i + 1]
  ensures  got ==> y[at] == v
  ensures  !got ==> (forall i in 0..n: y[i] != v)
  fails    0
{
  lo := 0;
  hi := n;
  got := false;
  at := -1;
  while (lo < hi && !got) {
    mid := (lo + hi) div 2;
    if (y[mid] == v) {
      got := true;
      at := mid;
    } else {
      if (y[mid] > v) {
        lo := mid + 1;
      } else {
        hi := mid;
      }
    }
  }
}"""


def variant(text: str, name: str, old: str, new: str) -> str:
    """``text`` renamed to program ``name`` with its one occurrence of ``old`` replaced by ``new``:
    a false variant that differs from its true program in exactly what the test says."""
    assert text.count(old) == 1, old
    return re.sub(r"program \w+", f"program {name}", text.replace(old, new), count=1)


STABLE_DOWN_FALSE = variant(STABLE_DOWN, "stableDownFalse", "c[j] <= t + 1 / eps * log(k / p)", "c[j] <= t")
FLAGS_ABOVE_FALSE = variant(FLAGS_ABOVE, "flagsAboveFalse", "q[i] <= T + 2 / eps * log(n / p)", "q[i] <= T")
BS_INCL_UNSORTED_FALSE = variant(BS_INCL, "bsInclUnsortedFalse", "  requires forall k in 1..len: a[k - 1] < a[k]\n", "")
BS_DESC_SHORT_FALSE = variant(BS_DESC, "bsDescShortFalse", "0..n - 1: y[i] >= y[i + 1]", "0..n - 2: y[i] >= y[i + 1]")
BS_DESC_WRONG_FALSE = variant(BS_DESC, "bsDescWrongFalse", "y[i] >= y[i + 1]", "y[i] <= y[i + 1]")


TALLIES = {
    "tally_down": (
        TALLY_DOWN,
        [
            {"d": [0, 1, 1, 3, 9], "len": 5, "k": 10, "eps": 1, "p": 0.1},
            {"d": [2, 2, 2], "len": 3, "k": 3, "eps": 0.3, "p": 0.25},
        ],
    ),
    "tally_weighted": (
        TALLY_WEIGHTED,
        [
            {"x": [0, 1, 1, 3, 3], "w": [0.5, 1, 0.25, 1, 2], "n": 5, "m": 4, "eps": 1, "p": 0.1},
            {"x": [1, 1], "w": [3, 3], "n": 2, "m": 2, "eps": 0.5, "p": 0.3},
        ],
    ),
    "tally_cond": (
        TALLY_COND,
        [
            {"x": [0, 1, 1, 3, 3], "ok": [True, False, True, True, False], "n": 5, "m": 4, "eps": 1, "p": 0.1},
            {"x": [1, 1, 0], "ok": [True, True, True], "n": 3, "m": 2, "eps": 0.5, "p": 0.3},
        ],
    ),
}

FALSE_TALLIES = {
    "tally_twice_false": (TALLY_TWICE_FALSE, {"x": [1] * 12, "n": 12, "m": 2, "eps": 1, "p": 0.2}),
    "tally_start_false": (TALLY_START_FALSE, {"x": [0, 1], "n": 2, "m": 2, "eps": 1, "p": 0.2}),
}


BRANCH_WRITES = {
    "stable_down": (
        STABLE_DOWN,
        [
            {"c": [0, 3, 10, 1], "k": 4, "eps": 1, "t": 2, "p": 0.1},
            {"c": [5, 5], "k": 2, "eps": 0.5, "t": 1, "p": 0.3},
        ],
    ),
    "flags_above": (
        FLAGS_ABOVE,
        [
            {"q": [0, 1, 2, 3], "n": 4, "T": 1.5, "eps": 1, "p": 0.1},
            {"q": [5, 5], "n": 2, "T": 5, "eps": 0.5, "p": 0.3},
        ],
    ),
}

FALSE_BRANCH_WRITES = {
    "stable_down_false": (STABLE_DOWN_FALSE, {"c": [1, 1, 1], "k": 3, "eps": 1, "t": 0, "p": 0.2}),
    "flags_above_false": (FLAGS_ABOVE_FALSE, {"q": [5.5, 5.5, 5.5], "n": 3, "T": 5, "eps": 2, "p": 0.2}),
}


SEARCHES = {
    "bs_incl": (BS_INCL, [{"a": [1, 3, 5, 8, 13], "len": 5, "t": 8}, {"a": [1, 3, 5, 8, 13], "len": 5, "t": 4}]),
    "bs_desc": (BS_DESC, [{"y": [9.5, 7, 7, 2, 0], "n": 5, "v": 2}, {"y": [9.5, 7, 7, 2, 0], "n": 5, "v": 3}]),
}

# each refuted by one input: unsorted data, sortedness that stops short of the last element, and
# the wrong order for the search's direction
FALSE_SEARCHES = {
    "bs_incl_unsorted_false": (BS_INCL_UNSORTED_FALSE, {"a": [9, 1, 5], "len": 3, "t": 9}),
    "bs_desc_short_false": (BS_DESC_SHORT_FALSE, {"y": [5, 4, 9], "n": 3, "v": 9}),
    "bs_desc_wrong_false": (BS_DESC_WRONG_FALSE, {"y": [1, 2, 3], "n": 3, "v": 3}),
}


def prove(src: str, timeout: float = 120):
    return prove_program(parse(src, "arrays.prob").programs[0], source=src, path="arrays.prob", timeout=timeout)


@pytest.mark.parametrize("name", sorted(TALLIES))
def test_a_tallied_histogram_is_proved_and_holds_when_simulated(name):
    src, inputs = TALLIES[name]
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    for inp in inputs:
        s = simulate(src, inp, runs=2000, seed=5)
        assert s.ci[0] <= float(s.bound_value), (inp, s.ci, s.bound_value)


@pytest.mark.parametrize("name", sorted(FALSE_TALLIES))
def test_a_wrong_tally_is_not_proved_and_is_refuted(name):
    src, inp = FALSE_TALLIES[name]
    r = prove(src, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    s = simulate(src, inp, runs=2000, seed=5)
    assert s.ci[0] > float(s.bound_value), (s.ci, s.bound_value)


@pytest.mark.parametrize("name", sorted(BRANCH_WRITES))
def test_a_branch_on_a_sample_writing_elements_is_proved_and_holds_when_simulated(name):
    # the claim is one forall over a conjunction; its parts, each a forall, are the invariants
    src, inputs = BRANCH_WRITES[name]
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    for inp in inputs:
        s = simulate(src, inp, runs=2000, seed=5)
        assert s.ci[0] <= float(s.bound_value), (inp, s.ci, s.bound_value)


@pytest.mark.parametrize("name", sorted(FALSE_BRANCH_WRITES))
def test_a_branch_write_without_its_margin_is_not_proved_and_is_refuted(name):
    src, inp = FALSE_BRANCH_WRITES[name]
    r = prove(src, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    s = simulate(src, inp, runs=2000, seed=5)
    assert s.ci[0] > float(s.bound_value), (s.ci, s.bound_value)


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_a_binary_search_is_proved_and_holds_when_simulated(name):
    src, inputs = SEARCHES[name]
    r = prove(src)
    assert r.verdict == "proved", r.render_text()
    for inp in inputs:
        s = simulate(src, inp, runs=50, seed=5)
        assert s.ci[0] <= float(s.bound_value), (inp, s.ci, s.bound_value)


@pytest.mark.parametrize("name", sorted(FALSE_SEARCHES))
def test_a_search_without_its_order_is_not_proved_and_is_refuted(name):
    src, inp = FALSE_SEARCHES[name]
    r = prove(src, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    s = simulate(src, inp, runs=50, seed=5)
    assert s.ci[0] > float(s.bound_value), (s.ci, s.bound_value)


# ---------------------------------------------------------------------------- the lemmas


TYPES = {"x": A.array_of(A.INT), "cnt": A.array_of(A.INT), "i": A.INT, "m": A.INT}


def _valid(text: str, hyp: str = "true") -> str:
    enc = Encoder(TYPES)
    return is_valid(enc.expr(parse_expr(f"({hyp}) ==> ({text})"), enc.env0), enc, Stats(), 5000, [])


def test_a_sum_reading_the_bound_bin_unfolds_for_every_bin():
    step = "forall b in 0..m: sum(j in 0..i + 1: x[j] == b ? 1 : 0) == sum(j in 0..i: x[j] == b ? 1 : 0) + (x[i] == b ? 1 : 0)"
    assert _valid(step, "i >= 0") == VALID
    assert _valid("forall b in 0..m: sum(j in 0..0: x[j] == b ? 1 : 0) == 0") == VALID


def test_the_unfolding_does_not_prove_a_wrong_step():
    wrong = "forall b in 0..m: sum(j in 0..i + 1: x[j] == b ? 1 : 0) == sum(j in 0..i: x[j] == b ? 1 : 0) + 1"
    assert _valid(wrong, "i >= 0") != VALID
    assert _valid("forall b in 0..m: sum(j in 0..i: x[j] == b ? 1 : 0) == 0", "i >= 0") != VALID


def test_neighbours_in_order_give_every_pair_in_order():
    sorted_up = "forall j in 0..m - 1: x[j] <= x[j + 1]"
    assert _valid("forall a in 0..m: forall b in a..m: x[a] <= x[b]", sorted_up) == VALID
    assert _valid("0 <= i && i < m ==> x[0] <= x[i]", sorted_up) == VALID
    strict_down = "forall j in 1..m: x[j - 1] > x[j]"
    assert _valid("0 <= i && i < m - 1 ==> x[i] > x[m - 1]", strict_down) == VALID


def test_the_order_lemma_claims_nothing_beyond_its_range_or_its_direction():
    short = "forall j in 0..m - 2: x[j] <= x[j + 1]"
    assert _valid("m >= 2 ==> x[0] <= x[m - 1]", short) != VALID
    assert _valid("0 <= i && i < m ==> x[i] <= x[0]", "forall j in 0..m - 1: x[j] <= x[j + 1]") != VALID
    # not strict: equal neighbours are allowed
    assert _valid("m >= 2 ==> x[0] < x[m - 1]", "forall j in 0..m - 1: x[j] <= x[j + 1]") != VALID


# ---------------------------------------------------------------------------- certificate


class _Bump(Transformer):
    """A tally's closed form ``cnt[k] == 0 + sum(…)`` made false: ``cnt[k] == 1 + sum(…)``."""

    def Binary(self, node, kids):
        left, right = kids
        if node.op == "==" and isinstance(left, A.Index) and A.contains(right, A.Sum):
            return A.Binary("==", left, A.Binary("+", A.num(1), right))
        return A.Binary(node.op, left, right)


class _Widen(Transformer):
    """A bracket ``forall i in 0..lo: …`` widened by one element: ``forall i in 0..lo + 1: …``
    (false: element ``lo`` has not been excluded yet)."""

    def Quant(self, node, kids):
        lo, hi, body = kids
        if hi == A.Var("lo"):
            hi = A.Binary("+", hi, A.num(1))
        return A.Quant(node.kind, node.var, lo, hi, node.inclusive, body)


def test_the_search_certificate_is_rechecked_and_a_widened_bracket_rejected(tmp_path, capsys):
    from support.certificates import check_proof, proved_certificate, rewrite_labels

    path = tmp_path / "search.prob"
    path.write_text(BS_DESC)
    cert = proved_certificate(path)

    def check(c):
        return check_proof(c, path, tmp_path, capsys)

    assert check(cert)[0] == 0
    changed = rewrite_labels(cert, _Widen())
    assert changed >= 1, "no bracket fact among the certificate's labels"
    code, out = check(cert)
    assert code != 0, out


def test_the_tally_certificate_is_rechecked_and_a_tampered_one_is_rejected(tmp_path, capsys):
    from support.certificates import check_proof, proved_certificate, rewrite_labels

    path = tmp_path / "tally.prob"
    path.write_text(TALLY_DOWN)
    cert = proved_certificate(path)

    def check(c):
        return check_proof(c, path, tmp_path, capsys)

    assert check(cert)[0] == 0
    changed = rewrite_labels(cert, _Bump())
    assert changed >= 1, "no tally fact among the certificate's labels"
    code, out = check(cert)
    assert code != 0, out
