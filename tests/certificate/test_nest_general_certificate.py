"""Certificates of the general per-iteration composition (:mod:`tamp.certificate.nest_checker`,
:mod:`tamp.cfa.nesting`): a per-iteration bound that reads the iteration's counter (composed as a
``sum``), a counter read as a flag (``k > 0``, and ``k`` equal to the trip count) are re-checked
from the source; a bound that cannot be composed, a form the claim does not need and a smaller
per-iteration bound are rejected."""

from __future__ import annotations

import pytest
from cert_testlib import ast, check, make_certificate, tampered

SLOTS = """\
program slots(lam: real[], w: int)
  requires w >= 1
  requires forall s in 0..w: 0 <= lam[s] && lam[s] <= 1
  ensures got
  fails exp(-sum(s in 0..w: lam[s]))
{
  seed ~ bern(1 / 2);
  got := false;
  for s in 0..w {
    x ~ bern(lam[s]);
    if (x || (seed && s > w)) { got := true; }
  }
}
"""
LINES = """\
program lines(m: int, q: real, g: int)
  requires m >= 1 && 0 < q && q < 1 && g >= 1
  ensures !(survivors > 0)
  fails m * pow(q, g)
{
  survivors := 0;
  total := 0;
  for a in 0..m {
    up := true;
    d := 0;
    while (up && d < g) {
      kid ~ bern(q);
      up := kid;
      total := total + 1;
      d := d + 1;
    }
    if (up) { survivors := survivors + 2; }
  }
}
"""
BURSTS = """\
program bursts(slots: int, width: int, lam: real)
  requires slots >= 1 && width >= 1 && 0 < lam && lam < 1
  ensures !jam
  fails slots * pow(lam, width)
{
  jam := false;
  for s in 0..slots {
    busy := 0;
    for u in 0..width {
      x ~ bern(lam);
      if (x) { busy := busy + 1; }
    }
    if (busy == width) { jam := true; }
  }
}
"""
PROGRAMS = {"slots": SLOTS, "lines": LINES, "bursts": BURSTS}


def _file(tmp_path, name):
    path = tmp_path / f"{name}.prob"
    path.write_text(PROGRAMS[name])
    return path


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_general_nesting_certificates_are_rechecked(name, tmp_path, capsys):
    path = _file(tmp_path, name)
    cert = make_certificate(path)
    assert [c["method"] for c in cert["nesting"]] == ["nesting"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_varying_bound_under_a_logarithm_is_not_composed(tmp_path, capsys):
    path = _file(tmp_path, "slots")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["per_iteration"] = ast("2 * lam[s]")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "COMPOSE" in out, out


def test_a_smaller_varying_bound_is_rejected(tmp_path, capsys):
    # exp(-2 lam[s]) composes to exp(-2 Σ lam) <= exp(-Σ lam); no iteration meets it
    path = _file(tmp_path, "slots")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["per_iteration"] = ast("exp(-2 * lam[s])")
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and ("INNER" in out or "COMPOSE" in out), out


@pytest.mark.parametrize("name", ["lines", "bursts"])
def test_a_counter_composed_the_wrong_way_is_rejected(name, tmp_path, capsys):
    path = _file(tmp_path, name)
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["form"] = "product"
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "composes by product" in out, out
