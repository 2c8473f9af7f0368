"""Certificates of linearity proofs whose obligations compare array sums by linearity
(``linear_sums``, :mod:`tamp.cfa.sum_linear`): ``check-proof`` rebuilds the named obligations
in that form and decides them; without the field, with an index of an obligation that has no
sum, with a smaller bound or a malformed field, the certificate is rejected."""

from __future__ import annotations

import pytest
from cert_testlib import BENCH, ast, check, make_certificate, tampered

HT = BENCH / "prover4" / "dev" / "blind11" / "databases" / "horvitz_thompson_sum.prob"
SIGNS = BENCH / "prover4" / "dev" / "budgets25" / "random_signs.prob"


@pytest.mark.parametrize("path", [HT, SIGNS], ids=lambda p: p.stem)
def test_linear_sums_certificates_are_rechecked(path, tmp_path, capsys):
    cert = make_certificate(path)
    assert cert["linearity"][0]["linear_sums"]
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_without_the_rewrite_the_budget_is_not_shown(tmp_path, capsys):
    c = tampered(make_certificate(HT))
    del c["linearity"][0]["linear_sums"]
    code, out = check(c, HT, tmp_path, capsys)
    assert code == 3 and "BUDGET" in out, out


def test_an_obligation_without_sums_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(HT))
    c["linearity"][0]["linear_sums"] = [0]  # SHAPE 0 <= N: nothing to rewrite
    code, out = check(c, HT, tmp_path, capsys)
    assert code == 3 and "RULE" in out, out


def test_a_smaller_bound_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(HT))
    c["linearity"][0]["bound"] = ast("(1 - p) * sum(j in 0..N: v[j] * v[j]) / (t * t)")
    code, out = check(c, HT, tmp_path, capsys)
    assert code == 3, out


def test_a_changed_number_in_the_threshold_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(HT))
    c["linearity"][0]["threshold"] = ast("2 * t")
    code, out = check(c, HT, tmp_path, capsys)
    assert code == 3, out


def test_a_malformed_field_is_rejected(tmp_path, capsys):
    c = tampered(make_certificate(HT))
    c["linearity"][0]["linear_sums"] = "4"
    code, out = check(c, HT, tmp_path, capsys)
    assert code != 0 and "linear_sums" in out, out
