"""Certificates of proofs with exponential draws written with a rate (``exp(0, 1 / lam)``):
the upper tail (non-strict) and the lower tail ``Pr[v - k <= s f] <= f`` of
:mod:`axioms.exponential`. ``tamp check-proof`` re-derives each axiom from the library by
family name and parameter; tampered certificates (a changed rate, a lower tail named as an
upper one, a family for a distribution it does not apply to) are rejected."""

from __future__ import annotations

import copy

import pytest
from cert_testlib import check, make_certificate, sampling_edges

import axioms
from axioms.base import union_bound
from axioms.exponential import FAMILIES
from lang import ast as A
from lang.parser import parse_expr
from lang.serialize import to_json
from tamp.certificate.axiom_tree import TreeError, leaf_instances
from tamp.certificate.params import param_to_json

HAZARD = """program hazard(lam: real, T: real)
  requires lam > 0 && T >= 0
  ensures  tau > T
  fails    lam * T
{
  tau ~ exp(0, 1 / lam);
}
"""

GAP = """program gap(q: real, g: real)
  requires q > 0 && g >= 0
  ensures  h < g
  fails    exp(-q * g)
{
  h ~ exp(0, 1 / q);
}
"""


def _cert(tmp_path, text, name):
    path = tmp_path / f"{name}.prob"
    path.write_text(text)
    return path, make_certificate(path)


def _edge(cert, family):
    (e,) = sampling_edges(cert)
    assert e["axiom"]["family"] == family, e["axiom"]["family"]
    return e


def _restate(e, family, f, dist_text, target):
    """Make the edge's axiom the library's own ``family`` instance at ``f`` joined with the
    support fact, as the prover states it: a derivation the checker accepts as such."""
    fam = next(x for x in FAMILIES if x.name == family)
    dist = parse_expr(dist_text)
    inst = fam.instantiate((A.Var(target),), dist, f)
    (sup_fam,) = [x for x in axioms.families_for(dist) if x.name == "support"]
    sup = sup_fam.instantiate((A.Var(target),), dist, sup_fam.choices(dist)[0])
    joined = union_bound([inst, sup])
    ax = e["axiom"]
    ax["parts"]["union"][0] = {"family": family, "param": param_to_json(inst.param)}
    ax["family"], ax["param"] = family, param_to_json(inst.param)
    ax["bad"], ax["cost"] = to_json(joined.bad), to_json(joined.cost)
    ax["side"] = [to_json(s) for s in joined.side]


def test_lower_tail_certificate_is_rechecked(tmp_path, capsys):
    path, cert = _cert(tmp_path, HAZARD, "hazard")
    _edge(cert, "exponential_lower")
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_rate_upper_tail_certificate_is_rechecked(tmp_path, capsys):
    path, cert = _cert(tmp_path, GAP, "gap")
    _edge(cert, "exponential")
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_changed_rate_is_rejected(tmp_path, capsys):
    # the parameter lam * T becomes lam * T / 2: the library's threshold T / 2 no longer
    # excuses tau in (T/2, T], whatever the certificate states as its bad event
    path, cert = _cert(tmp_path, HAZARD, "hazard")
    bad = copy.deepcopy(cert)
    _restate(_edge(bad, "exponential_lower"), "exponential_lower", parse_expr("lam * T / 2"), "exp(0, 1 / lam)", "tau")
    code, _out = check(bad, path, tmp_path, capsys)
    assert code != 0


def test_a_stated_bad_event_wider_than_the_librarys_is_rejected(tmp_path, capsys):
    path, cert = _cert(tmp_path, HAZARD, "hazard")
    bad = copy.deepcopy(cert)
    e = _edge(bad, "exponential_lower")
    e["axiom"]["bad"] = to_json(parse_expr("tau <= 2 * T || tau < 0"))
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "AXIOM" in out, out


def test_a_lower_tail_named_as_the_upper_tail_is_rejected(tmp_path, capsys):
    path, cert = _cert(tmp_path, HAZARD, "hazard")
    bad = copy.deepcopy(cert)
    e = _edge(bad, "exponential_lower")
    e["axiom"]["family"] = "exponential"
    e["axiom"]["parts"]["union"][0]["family"] = "exponential"
    code, out = check(bad, path, tmp_path, capsys)
    assert code != 0 and "AXIOM" in out, out


@pytest.mark.parametrize("dist", ["lap(0, 1 / lam)", "gauss(0, 1 / lam)", "dexp(0, 1 / lam)", "dlap(0, 1 / lam)"])
def test_the_lower_tail_for_a_distribution_without_it_is_refused(dist):
    # the closed-form lower tail is the exponential's only: the checker's derivation of a
    # leaf refuses the family for any other distribution
    stmt = A.Sample((A.Var("tau"),), parse_expr(dist))
    with pytest.raises(TreeError):
        leaf_instances(stmt, "exponential_lower", parse_expr("lam * T"))


CROSSING = """program crossing(k: int, q: real, g: real)
  requires k >= 1 && q > 0 && g >= 0
  ensures  crossed
  fails    exp(-k * exp(-q * g))
{
  crossed := false;
  w := 0;
  while (w < k && !crossed) {
    h ~ exp(0, 1 / q);
    if (h >= g) { crossed := true; }
    w := w + 1;
  }
}
"""


def _below_leaves(obj):
    if isinstance(obj, dict):
        if obj.get("family") == "exponential_below":
            yield obj
        for v in obj.values():
            yield from _below_leaves(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _below_leaves(v)


def test_retry_with_an_exact_exponential_chance_is_rechecked(tmp_path, capsys):
    path, cert = _cert(tmp_path, CROSSING, "crossing")
    assert list(_below_leaves(cert)), "the per-iteration proof uses the exact lower tail"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_retry_with_a_changed_rate_in_the_chance_is_rejected(tmp_path, capsys):
    path, cert = _cert(tmp_path, CROSSING, "crossing")
    bad = copy.deepcopy(cert)
    for leaf in _below_leaves(bad):
        leaf["param"] = param_to_json(parse_expr("1 - exp(-2 * q * g)"))
    code, _out = check(bad, path, tmp_path, capsys)
    assert code != 0
