"""The differential-privacy suite (benchmarks/privacy) is well formed, cheaply and without the
privacy engine: every file parses under LANGUAGE.md's privacy clauses and its body under today's
front end (check_syntax.py), the checker itself rejects the mistakes it is meant to catch, and
every file has its Monte Carlo case in reference.py with a witness pair that satisfies the file's
relation. The Monte Carlo run itself (about 30 s) is `python benchmarks/privacy/reference.py`;
here only two cheap cases run, one of each kind, so a broken reference shows up."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from locations import BENCHMARKS

SUITE = BENCHMARKS / "privacy"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"privacy_{name}", SUITE / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


check_syntax = _load("check_syntax")
reference = _load("reference")
PRIVATE = sorted((SUITE / "private").glob("*.prob"))
BROKEN = sorted((SUITE / "broken").glob("*.prob"))


@pytest.fixture(scope="module")
def lark():
    return check_syntax._parser()


def test_size_and_balance():
    assert len(PRIVATE) + len(BROKEN) >= 24
    assert abs(len(PRIVATE) - len(BROKEN)) <= 4


@pytest.mark.parametrize("path", PRIVATE + BROKEN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_file_is_well_formed(path, lark):
    assert check_syntax.check_file(path, lark) == []


GOOD = """// good.prob: the Laplace mechanism.
// Source: Dwork & Roth (2014), Theorem 3.6.
// expect: private at eps
program good(q: real, eps: real)
  requires   eps > 0
  neighbours abs(q - q') <= 1
  private    eps on a
{
  a ~ lap(q, 1 / eps);
}
"""

MISTAKES = {
    "primed_in_body": ("a ~ lap(q, 1 / eps);", "a ~ lap(q', 1 / eps);", "in the body"),
    "budget_reads_private": ("private    eps on a", "private    q * eps on a", "budget reads q"),
    "budget_reads_local": ("private    eps on a", "private    a * eps on a", "not an input"),
    "unassigned_output": ("private    eps on a", "private    eps on a, b", "never assigned"),
    "prime_not_param": ("abs(q - q')", "abs(q - r')", "not a parameter"),
    "no_prime": ("abs(q - q') <= 1", "abs(q) <= 1", "primes no input"),
    "syntax": ("private    eps on a", "private    eps a", "syntax error"),
    "no_expect": ("// expect: private at eps\n", "", "expect: private"),
    "no_source": ("// Source: Dwork & Roth (2014), Theorem 3.6.\n", "", "no source"),
    "body_type_error": ("a ~ lap(q, 1 / eps);", "a ~ lap(q, 1 / eps); a := true;", "front end rejects"),
    "missing_clause": ("  neighbours abs(q - q') <= 1\n", "", "one `neighbours`"),
}


def _write(tmp_path: Path, folder: str, text: str) -> Path:
    (tmp_path / folder).mkdir(exist_ok=True)
    f = tmp_path / folder / "good.prob"
    f.write_text(text)
    return f


def test_checker_accepts_the_template(tmp_path, lark):
    assert check_syntax.check_file(_write(tmp_path, "private", GOOD), lark, tmp_path) == []


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_checker_rejects(name, tmp_path, lark):
    old, new, message = MISTAKES[name]
    assert old in GOOD
    problems = check_syntax.check_file(_write(tmp_path, "private", GOOD.replace(old, new, 1)), lark, tmp_path)
    assert any(message in p for p in problems), problems


def test_checker_wants_the_folder_verdict(tmp_path, lark):
    problems = check_syntax.check_file(_write(tmp_path, "broken", GOOD), lark, tmp_path)
    assert any("expect: violated" in p for p in problems)
    assert any("witness" in p for p in problems)


def test_every_file_has_a_reference_case_with_related_inputs():
    cases = {c.file: c for c in reference.cases()}
    files = {f"{p.parent.name}/{p.name}" for p in PRIVATE + BROKEN}
    assert set(cases) == files
    for name, case in cases.items():
        assert case.broken == name.startswith("broken/")
        for a, b in case.pairs:
            assert case.relation(a, b), name


def test_reference_confirms_and_clears_one_case_each():
    import numpy as np

    rng = np.random.default_rng(1)
    cases = {c.file: c for c in reference.cases()}
    broken = cases["broken/laplaceDifference.prob"]
    broken.n_samples = 50_000
    assert reference.run_case(broken, rng)["confirmed"]
    private = cases["private/laplace.prob"]
    private.n_samples = 50_000
    assert not reference.run_case(private, rng)["confirmed"]
    # the private program at the broken one's witness: exp(eps) is exactly the ratio, never above
    private.pairs = [({"q": 1.0}, {"q": 0.0})]
    assert not reference.run_case(private, rng)["confirmed"]


def test_reference_rejects_a_non_neighbour_witness():
    case = {c.file: c for c in reference.cases()}["broken/laplaceDifference.prob"]
    case.pairs = [({"x": 2.0, "y": 0.0}, {"x": 0.0, "y": 1.0})]
    with pytest.raises(AssertionError, match="not neighbours"):
        reference.run_case(case, __import__("numpy").random.default_rng(0))


def test_no_stray_files():
    for f in SUITE.rglob("*.prob"):
        assert f.parent.name in ("private", "broken"), f
