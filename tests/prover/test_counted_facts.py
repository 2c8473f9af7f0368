"""A sampling's axiom over a value the loop computes (issue 18, item 2): the mean of an
exponential mechanism read from an accumulator (``below``, the running count of a histogram) or
from an inner counting loop (``cnt``) is rewritten over the loop's counter with the closed forms
(:func:`tamp.prover.counting.recurrence.over_the_counter`), so the argmax templates can carry it through
``best := v; out := r`` and accumulate it over the iterations.

The true claim is proved and cross-checked with `tamp simulate` at two inputs; its false variant
(a quarter of the margin) is not proved and `tamp simulate` refutes it; a certificate whose
carried fact is weakened is rejected by `tamp check-proof`."""

from __future__ import annotations

from limits import FALSE_CLAIM_S
from support.certificates import check_proof, proved_certificate, rewrite_labels

from lang import ast as A
from lang.parser import parse, parse_file
from lang.walk import Transformer
from tamp.cfa import build_cfa
from tamp.prover import prove_program
from tamp.prover.counting.recurrence import over_the_counter
from tamp.prover.loops.prove import _loops
from tamp.show import show_expr
from tamp.simulation import simulate

MEDIAN = """program medianHist(c: int[], m: int, eps: real, p: real)
  requires m >= 1 && eps > 0 && 0 < p && p <= 1
  ensures  forall r in 0..m: abs(sum(j in 0..out: c[j]) - sum(j in 0..m: c[j]) / 2)
                             <= abs(sum(j in 0..r: c[j]) - sum(j in 0..m: c[j]) / 2) + MARGIN
  fails    p
{
  total := 0;
  for j in 0..m {
    total := total + c[j];
  }
  below := 0;
  for r in 0..m {
    v ~ exp(-abs(below - total / 2), 2 / eps);
    if (r == 0 || v > best) {
      best := v;
      out := r;
    }
    below := below + c[r];
  }
}"""

TRUE = MEDIAN.replace("MARGIN", "2 / eps * log(m / p)")
FALSE = MEDIAN.replace("MARGIN", "2 / eps * log(m / p) / 4")
ONES = {"c": [1] * 10, "m": 10, "eps": 1, "p": 0.1}


def prove(src: str, timeout: float = 120):
    return prove_program(parse(src, "median.prob").programs[0], source=src, path="median.prob", timeout=timeout)


def test_the_median_of_a_histogram_is_proved_and_cross_checked():
    r = prove(TRUE)
    assert r.verdict == "proved", r.render_text()
    for inp in (ONES, {"c": [0, 10, 3, 0], "m": 4, "eps": 0.5, "p": 0.1}):
        s = simulate(TRUE, inp, runs=4000, seed=11)
        assert s.ci[0] <= float(s.bound_value), (inp, s.ci, s.bound_value)


def test_a_quarter_of_the_margin_is_not_proved_and_is_refuted():
    r = prove(FALSE, timeout=FALSE_CLAIM_S)
    assert r.verdict != "proved", r.render_text()
    s = simulate(FALSE, ONES, runs=4000, seed=11)
    assert s.ci[0] > float(s.bound_value), (s.ci, s.bound_value)


def _rewritten(prog, counter):
    cfa = build_cfa(prog)
    loops, _dag = _loops(cfa)
    (h,) = [h for h, lp in loops.items() if lp["counter"] is not None and lp["counter"].name == counter]
    ((u, st),) = [
        (u, d["stmt"]) for u, _v, _k, d in cfa.edges() if isinstance(d["stmt"], A.Sample) and u in loops[h]["body"]
    ]
    fact = A.Binary(">=", A.Var("v"), st.dist.args[0])
    return [show_expr(g) for g in over_the_counter(cfa, h, loops, u, [fact], {"v", counter})]


def test_an_accumulator_in_a_mean_is_put_over_the_counter():
    prog = parse(TRUE).programs[0]
    assert _rewritten(prog, "r") == ["v >= -abs(sum(j$ in 0..r: c[j$]) - total / 2)"]


def test_an_inner_loops_count_is_put_over_the_counter():
    # cnt == sum(j$ in 0..n: x[j$] < r ? 1 : 0): a summand reading the counter, one opaque sum
    # function of r with the claim's sum(i in 0..n: x[i] < r ? 1 : 0) (smt.Encoder.opaque_sum)
    from locations import REPO

    prog = parse_file(str(REPO / "benchmarks" / "corpus" / "median" / "median_em.prob")).programs[0]
    assert _rewritten(prog, "r") == ["v >= -abs(sum(j$ in 0..n: x[j$] < r ? 1 : 0) - n / 2)"]


class _Weaken(Transformer):
    """``best >= U`` accumulated over ``forall k$ in ...`` becomes ``best >= U + 1``."""

    def Quant(self, node, kids):
        lo, hi, body = kids
        if node.var == "k$" and isinstance(body, A.Binary) and body.op == ">=" and body.left == A.Var("best"):
            body = A.Binary(">=", body.left, A.Binary("+", body.right, A.num(1)))
        return A.Quant(node.kind, node.var, lo, hi, node.inclusive, body)


def test_the_accumulated_fact_is_certified_and_a_tampered_one_is_rejected(tmp_path, capsys):
    path = tmp_path / "median.prob"
    path.write_text(TRUE)
    cert = proved_certificate(path)
    assert check_proof(cert, path, tmp_path, capsys)[0] == 0
    assert rewrite_labels(cert, _Weaken()) >= 2, "the accumulated fact is not among the certificate's labels"
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0, out
