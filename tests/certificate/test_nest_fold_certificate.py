"""Certificates of two-level arguments (:mod:`tamp.certificate.nest_checker` with ``"fold"``,
:mod:`tamp.cfa.epilogue`): a union over rows of a per-row bound proved, with the row's threshold
test folded into its claim, by the pairs rule, Markov or concentration. The checker refolds the
iteration program from the number of statements alone and re-checks the sub-proof by its own
method; a changed per-row bound, a wrong fold count and a sub-proof of a different iteration body
are rejected."""

from __future__ import annotations

import pytest
from cert_testlib import ast, check, make_certificate, tampered
from locations import BENCHMARKS

DEV = BENCHMARKS / "prover4" / "dev"
FILES = {
    "frequency_cap": DEV / "blind10" / "advertising" / "frequency_cap.prob",
    **{n: DEV / "pairs2" / f"{n}.prob" for n in ("server_pairs", "row_markov", "busy_pairs", "sketch_rows")},
}


def _file(tmp_path, name, text=None):
    path = tmp_path / f"{name}.prob"
    path.write_text(FILES[name].read_text() if text is None else text)
    return path


@pytest.mark.parametrize(
    "name,method",
    [
        ("frequency_cap", "linearity"),
        ("server_pairs", "linearity"),
        ("row_markov", "linearity"),
        ("busy_pairs", "linearity"),
        ("sketch_rows", "concentration"),
    ],
)
def test_folded_rows_are_rechecked(name, method, tmp_path, capsys):
    path = _file(tmp_path, name)
    cert = make_certificate(path)
    nest = cert["nesting"][0]
    assert nest["fold"] >= 1 and nest["inner"]["method"] == method
    code, out = check(cert, path, tmp_path, capsys)
    assert code == 0, out


def test_a_changed_per_row_bound_is_rejected(tmp_path, capsys):
    # a smaller row bound composes to at most the claim's sum (the sum lemmas know a sum is monotone
    # in its body), but the row's proof is of another claim: INNER rejects it; the same bound
    # written otherwise likewise
    path = _file(tmp_path, "row_markov")
    for per in ("r * p / t", "p * (r + 1) / t"):
        cert = tampered(make_certificate(path))
        cert["nesting"][0]["per_iteration"] = ast(per)
        code, out = check(cert, path, tmp_path, capsys)
        assert code != 0 and ("INNER" in out or "COMPOSE" in out), (per, out)


@pytest.mark.parametrize("fold", [0, 2])
def test_a_wrong_fold_count_is_rejected(fold, tmp_path, capsys):
    path = _file(tmp_path, "frequency_cap")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["fold"] = fold
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "INNER" in out, out


@pytest.mark.parametrize("fold", [-1, "1", True])
def test_a_malformed_fold_is_rejected(fold, tmp_path, capsys):
    path = _file(tmp_path, "frequency_cap")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["fold"] = fold
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "fold" in out, out


def test_a_sub_proof_of_another_iteration_body_is_rejected(tmp_path, capsys):
    # the same program with the cap at three shows: its row's proof (the pairs rule at 3) does not
    # prove the row that caps at two
    text = FILES["frequency_cap"].read_text()
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = other_dir / "frequency_cap.prob"
    other.write_text(text.replace("if (seen >= 2)", "if (seen >= 3)"))
    inner = make_certificate(other)["nesting"][0]["inner"]
    path = _file(tmp_path, "frequency_cap")
    cert = tampered(make_certificate(path))
    cert["nesting"][0]["inner"] = inner
    code, out = check(cert, path, tmp_path, capsys)
    assert code != 0 and "INNER" in out, out
