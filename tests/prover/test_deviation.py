"""Accumulated noise (issue 18, item 2): a loop adding samples to an accumulator stays within the
per-iteration noise bound times the iterations done of the noise-free accumulator
(:mod:`tamp.prover.concentration.deviation`); noisy averages, noisy prefix sums and scaled increments prove
with no user invariant.

Each true claim is proved and cross-checked with `tamp simulate` at two inputs; each false
variant is not proved (and `tamp simulate` refutes it at an input); a certificate whose deviation
label is weakened or strengthened is rejected by `tamp check-proof`."""

from __future__ import annotations

import pytest
from support.certificates import check_proof, proved_certificate, rewrite_labels
from support.shapes import assert_proved_and_simulated, assert_unproved_and_refuted, prove_text

from lang import ast as A
from lang.walk import Transformer

NOISY_AVG = """program noisyAvg(x: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures abs(avg - sum(j in 0..n: x[j]) / n) <= MARGIN
  fails p
{
  s := 0;
  for i in 0..n {
    y ~ lap(x[i], 1 / eps);
    s := s + y;
  }
  avg := s / n;
}"""

PREFIX = """program noisyPrefix(x: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures forall k in 0..n: abs(out[k] - sum(j in 0..=k: x[j])) <= MARGIN
  fails p
{
  s := 0;
  t := 0;
  while (t < n) {
    y ~ lap(x[t], 1 / eps);
    s := s + y;
    out[t] := s;
    t := t + 1;
  }
}"""

SCALED = """program scaledSum(x: real[], n: int, eps: real, p: real)
  requires n >= 1 && eps > 0 && 0 < p && p <= 1
  ensures abs(s - 2 * sum(j in 0..n: x[j])) <= MARGIN
  fails p
{
  s := 0;
  i := 0;
  while (i < n) {
    y ~ lap(x[i], 1 / eps);
    s := s + 2 * y;
    i := i + 1;
  }
}"""

X = [1.0, -2.0, 0.5, 3.0, 0.0, 2.5, -1.0, 4.0]

# name: (program, true margin, false margin, inputs for the cross-check, an input refuting the false one)
SHAPES = {
    "noisy_average": (
        NOISY_AVG,
        "1 / eps * log(n / p)",
        "1 / (n * eps) * log(n / p)",
        [{"x": X, "n": 8, "eps": 1, "p": 0.1}, {"x": [3.0, 1.0], "n": 2, "eps": 0.5, "p": 0.3}],
        {"x": X, "n": 8, "eps": 1, "p": 0.1},
    ),
    "noisy_prefix": (
        PREFIX,
        "(k + 1) / eps * log(n / p)",
        "(k + 1) / eps * log(n / p) / 8",
        [{"x": X, "n": 8, "eps": 1, "p": 0.1}, {"x": [3.0, 1.0], "n": 2, "eps": 0.5, "p": 0.3}],
        {"x": X, "n": 8, "eps": 1, "p": 0.1},
    ),
    "scaled_increment": (
        SCALED,
        "2 * n / eps * log(n / p)",
        "n / eps * log(n / p)",
        [{"x": X, "n": 8, "eps": 1, "p": 0.1}, {"x": [3.0], "n": 1, "eps": 0.5, "p": 0.3}],
        {"x": [3.0], "n": 1, "eps": 1, "p": 0.1},
    ),
}


prove = prove_text


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_true_claim_is_proved_and_cross_checked_by_simulation(name):
    src, good, _bad, inputs, _refute = SHAPES[name]
    assert_proved_and_simulated(src.replace("MARGIN", good), inputs)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_false_variant_is_not_proved_and_is_refuted(name):
    src, _good, bad, _inputs, refute = SHAPES[name]
    assert_unproved_and_refuted(src.replace("MARGIN", bad), refute)


def test_the_deviation_fact_is_a_label_and_a_tampered_one_is_rejected(tmp_path, capsys):
    path = tmp_path / "avg.prob"
    path.write_text(NOISY_AVG.replace("MARGIN", "1 / eps * log(n / p)"))
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    # the deviation label abs(s - sum(...)) <= (i - 0) * M, with its bound halved at every node
    # (then not inductive: one more noise can add M)
    assert rewrite_labels(cert, _Halve()) >= 2, "the deviation fact is not among the certificate's labels"
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out


class _Halve(Transformer):
    """``abs(s - F) <= B`` with B a product (the deviation fact) becomes ``abs(s - F) <= B / 2``."""

    def Binary(self, node, kids):
        left, right = kids
        if (
            node.op == "<="
            and isinstance(left, A.Call)
            and left.func == "abs"
            and isinstance(left.args[0], A.Binary)
            and left.args[0].left == A.Var("s")
            and isinstance(right, A.Binary)
            and right.op == "*"
        ):
            return A.Binary("<=", left, A.Binary("/", right, A.num(2)))
        return A.Binary(node.op, left, right)
