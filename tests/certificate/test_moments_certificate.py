"""Certificates of Markov cores on expected increments (issue 33,
:mod:`tamp.prover.expectation.moments`): the core is an ordinary expression in the
expected-failure section, ``check-proof`` rebuilds INDUCT/TERM/BUDGET from it (with the
``sum-sign`` lemma for a count-min row's increments left) without any search, and a core whose
increments left are halved is rejected; the same for a Chebyshev core on a walk (half the
variance left is rejected at INDUCT)."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

# tests of the expected-failure engine: linearity (tried before it) is turned off
pytestmark = pytest.mark.usefixtures("without_linearity")

BLIND = BENCH / "prover4" / "dev" / "blind2"
TRUE = [
    BLIND / "streaming" / "morris_markov.prob",
    BLIND / "streaming" / "morris_base.prob",
    BLIND / "hashing" / "count_min_row.prob",
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_markov_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["expectation"][0]["method"] == "expectation"
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_halved_increment_is_rejected(tmp_path, capsys):
    path = BLIND / "streaming" / "morris_markov.prob"
    c = tampered(make_certificate(path))
    c["expectation"][0]["loops"][0]["core"] = ast("i >= 0 && w - 1 >= 0 ? (w - 1 + (n - i) / 2) / (c * n) : 1")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out


WALK = """program rwCheb(n: int, t: real)
  requires n >= 1 && t > 0
  ensures abs(s) < t
  fails n / (t * t)
{
  s := 0;
  for i in 0..n {
    x ~ bern(1 / 2);
    if (x) { s := s + 1; } else { s := s - 1; }
  }
}
"""


def test_a_chebyshev_certificate_is_rechecked_and_a_smaller_variance_rejected(tmp_path, capsys):
    path = tmp_path / "walk.prob"
    path.write_text(WALK)
    cert = make_certificate(path)
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out
    c = tampered(cert)
    # half the variance left: the expected failure would be n / (2 t²), within the bound
    c["expectation"][0]["loops"][0]["core"] = ast("i >= 0 ? ((n - i) / 2 + s * s) / (t * t) : 1")
    code, out = check(c, path, tmp_path, capsys)
    assert code == 3 and "INDUCT" in out, out
