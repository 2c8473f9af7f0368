"""Certificates of proofs that use :mod:`axioms.uniform_range`: re-checked by ``tamp
check-proof``, which re-derives the axiom from the library (the threshold is not the
certificate's to state) and re-asks its side conditions and every trace; tampered ones are
rejected."""

from __future__ import annotations

import copy
from fractions import Fraction

from cert_testlib import check, make_certificate, sampling_edges

from axioms.base import union_bound
from axioms.support import IntRangeSupport
from axioms.uniform_range import FAMILIES
from lang import ast as A
from lang.parser import parse_expr
from lang.serialize import to_json
from tamp.certificate.params import param_to_json

CENTRAL = """program central(n: int)
  requires n >= 1
  ensures found
  fails 0.5
{
  found := false;
  r ~ unif(1, n);
  if (4 * (r - 1) <= 3 * n && 4 * (n - r) <= 3 * n) { found := true; }
}
"""

RETRY = """program retry(n: int, a: int, K: int)
  requires n >= 3 && a >= 1 && 2 * a < n && K >= 1
  ensures good
  fails pow(2 * a / n, K)
{
  good := false;
  for t in 0..K {
    if (!good) {
      pivot ~ unif(1, n);
      if (pivot > a && pivot <= n - a) { good := true; }
    }
  }
}
"""


def _central(tmp_path):
    path = tmp_path / "central.prob"
    path.write_text(CENTRAL)
    return path, make_certificate(path)


def _uniform_edge(cert):
    (e,) = sampling_edges(cert)
    assert e["axiom"]["family"] == "uniform_ends", e["axiom"]["family"]
    return e


def test_the_certificate_is_rechecked(tmp_path, capsys):
    path, cert = _central(tmp_path)
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def _restate(e, family, f):
    """Make the edge's axiom the library's own ``family`` instance at ``f``, joined with the
    support facts as the prover does: a derivation the checker accepts as such."""
    fam = next(x for x in FAMILIES if x.name == family)
    stmt_dist = parse_expr("unif(1, n)")
    inst = fam.instantiate((A.Var("r"),), stmt_dist, f)
    ax = e["axiom"]
    parts = ax["parts"]["union"]
    parts[0] = {"family": family, "param": param_to_json(inst.param)}
    ax["family"], ax["param"] = family, param_to_json(inst.param)
    sup = IntRangeSupport().instantiate((A.Var("r"),), stmt_dist)
    joined = union_bound([inst, sup])
    ax["bad"], ax["cost"] = to_json(joined.bad), to_json(joined.cost)
    ax["side"] = [to_json(s) for s in joined.side]


def test_a_cheaper_axiom_that_does_not_cover_the_failures_is_rejected(tmp_path, capsys):
    path, cert = _central(tmp_path)
    bad = copy.deepcopy(cert)
    _restate(_uniform_edge(bad), "uniform_ends", A.num(Fraction(1, 4)))
    code, out = check(bad, path, tmp_path, capsys)
    # a derivation the library accepts, so the trace itself must fail: a rank in (n/8, n/4]
    assert code != 0 and "STEP" in out, out


def test_a_stated_threshold_that_is_not_the_librarys_is_rejected(tmp_path, capsys):
    path, cert = _central(tmp_path)
    bad = copy.deepcopy(cert)
    e = _uniform_edge(bad)
    # the bad event narrowed to the outermost ranks, the derivation and cost left as they were
    e["axiom"]["bad"] = to_json(parse_expr("r <= 0 || r >= n + 1 || r < 1 || r > n"))
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "AXIOM" in out, out


def test_a_derivation_naming_the_other_end_is_rejected(tmp_path, capsys):
    path, cert = _central(tmp_path)
    bad = copy.deepcopy(cert)
    e = _uniform_edge(bad)
    e["axiom"]["parts"]["union"][0]["family"] = "uniform_low"
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "AXIOM" in out, out


def test_a_negative_parameter_is_rejected(tmp_path, capsys):
    # f = -1/2: both thresholds outside the range, a bad event that never happens at a cost
    # below zero — the side condition f >= 0 is re-asked by the checker
    path, cert = _central(tmp_path)
    bad = copy.deepcopy(cert)
    _restate(_uniform_edge(bad), "uniform_ends", A.num(Fraction(-1, 2)))
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "side conditions" in out, out


def test_the_retry_loop_composition_is_rechecked(tmp_path, capsys):
    path = tmp_path / "retry.prob"
    path.write_text(RETRY)
    cert = make_certificate(path)
    assert [c["method"] for c in cert["nesting"]] == ["nesting"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


WINDOW = """program window(n: int, a: int, b: int)
  requires n >= 2 && a >= 0 && b >= 0 && a + b < n
  ensures good
  fails (a + b) / n
{
  r ~ unif(1, n);
  good := r > a && r <= n - b;
}
"""


def _restate_cut(e, t1, t2):
    from axioms.uniform_range import UniformRangeCut

    dist = parse_expr("unif(1, n)")
    inst = UniformRangeCut().instantiate((A.Var("r"),), dist, (parse_expr(t1), parse_expr(t2)))
    joined = union_bound([inst, IntRangeSupport().instantiate((A.Var("r"),), dist)])
    ax = e["axiom"]
    ax["parts"]["union"][0] = {"family": "uniform_cut", "param": param_to_json(inst.param)}
    ax["param"] = param_to_json(inst.param)
    ax["bad"], ax["cost"] = to_json(joined.bad), to_json(joined.cost)
    ax["side"] = [to_json(s) for s in joined.side]


def test_a_window_certificate_is_rechecked_and_tampered_thresholds_rejected(tmp_path, capsys):
    path = tmp_path / "window.prob"
    path.write_text(WINDOW)
    cert = make_certificate(path)
    (e,) = sampling_edges(cert)
    assert e["axiom"]["family"] == "uniform_cut"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    # a threshold one below the test: the rank a is no longer excused
    bad = copy.deepcopy(cert)
    _restate_cut(sampling_edges(bad)[0], "a - 1", "n - b + 1")
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "STEP" in out, out
    # a low threshold below lo - 1 makes the cost smaller than the points it excuses
    bad = copy.deepcopy(cert)
    _restate_cut(sampling_edges(bad)[0], "-5", "n - b + 1")
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "side conditions" in out, out
