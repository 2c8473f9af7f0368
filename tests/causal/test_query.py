"""Counterfactual queries: API and `tamp query` CLI, with answers known by construction."""

import json

import pytest

from lang.errors import TampError

from .helpers import load

LOAN = """
program loan(income: real, debt: real, sex: int)
  requires 0 <= income && income <= 100 && 0 <= debt && debt <= 50 && (sex == 0 || sex == 1)
{
  score := income - 2 * debt + (sex == 1 ? 5 : 0);
  if (score > 20) { approve := true; } else { approve := false; }
}
"""

COIN = """
program coin(group: int)
  requires group >= 0 && group <= 2
{
  b ~ bern(0.5);
  if (group == 1) { c ~ bern(0.9); } else { c ~ bern(0.3); }
  approve := b || c;
}
"""


def ask(text, **kw):
    from tamp.causal import query

    prog, src = load(text)
    return query(prog, **kw)


def test_would_fails_with_a_counterexample():
    # factual: 40 - 20 + 5 = 25 > 20 (approved); with sex = 0 the score is 20: not approved
    r = ask(LOAN, given="income == 40 && debt == 10 && sex == 1", vary=["sex"], would="approve")
    assert r.answer is False
    assert r.model == {"income": 40, "debt": 10, "sex": 0, "approve": False}


def test_would_holds_when_every_variation_satisfies():
    r = ask(LOAN, given="income == 90 && debt == 10 && sex == 1", vary=["sex"], would="approve")
    assert r.answer is True and r.model is None


def test_might_with_a_witness_in_a_range():
    r = ask(LOAN, given="income == 40 && debt == 10 && sex == 0", vary=["debt in 0..=20"], might="approve")
    assert r.answer is True
    m = r.model
    assert m["approve"] is True and m["sex"] == 0 and m["income"] == 40
    assert 0 <= m["debt"] < 10  # 40 - 2*debt > 20
    assert set(m) == {"income", "debt", "sex", "approve"}


def test_might_no():
    r = ask(LOAN, given="income == 10 && debt == 10 && sex == 0", vary=["debt in 0..20"], might="approve")
    assert r.answer is False  # 10 - 2*debt + 0 <= 10


def test_factual_point_is_excluded():
    # varying sex over {0, 1} from sex == 1 leaves only sex == 0
    r = ask(LOAN, given="income == 40 && debt == 10 && sex == 1", vary=["sex"], might="approve")
    assert r.answer is False


def test_requires_bounds_the_varied_input():
    r = ask(LOAN, given="income == 0 && debt == 10 && sex == 0", vary=["income"], might="approve")
    assert r.answer is True and 40 < r.model["income"] <= 100


def test_probably_on_a_sampling_program():
    # P(approve) = 1 - 0.5 * 0.1 = 0.95 for group 1, 1 - 0.5 * 0.7 = 0.65 otherwise
    r = ask(COIN, given="group == 1", vary=["group"], would="approve", probably="0.6")
    assert r.answer is True
    r = ask(COIN, given="group == 1", vary=["group"], would="approve", probably="0.7")
    assert r.answer is False and r.model["group"] in (0, 2)
    assert r.probability["lower"] == r.probability["upper"] == pytest.approx(0.65)
    r = ask(COIN, given="group == 0", vary=["group"], might="approve", probably="0.9")
    assert r.answer is True and r.model == {"group": 1}


def test_sampling_program_needs_probably():
    with pytest.raises(TampError, match="--probably"):
        ask(COIN, given="group == 1", vary=["group"], would="approve")


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(given="income == 40 && dbt == 1 && sex == 1", vary=["sex"], would="approve"), "not an input"),
        (dict(given="income == 40 && sex == 1", vary=["sex"], would="approve"), "neither fixed"),
        (dict(given="income == 40 && debt == 1 && sex == 1", vary=["debt in 0..x"], would="approve"), "constant"),
        (dict(given="income > 40 && debt == 1 && sex == 1", vary=["sex"], would="approve"), "NAME == VALUE"),
        (dict(given="income == 40 && debt == 1 && sex == 1", vary=["sex"], would="nope"), "not a variable"),
    ],
)
def test_bad_options_are_located_errors(kw, msg):
    with pytest.raises(TampError) as exc:
        ask(LOAN, **kw)
    assert msg in str(exc.value)


class _Run:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


def tamp(*args, cwd, capsys=None):
    """Run the CLI in-process (an internal error would raise here, so no traceback can hide)."""
    from tamp.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return _Run(code, out.out, out.err)


def test_cli_json_log_and_replay(tmp_path, capsys):
    f = tmp_path / "loan.prob"
    f.write_text(LOAN)
    log = tmp_path / "q.jsonl"
    p = tamp(
        "query",
        str(f),
        "--given",
        "income == 40 && debt == 10 && sex == 1",
        "--vary",
        "sex",
        "--would",
        "approve",
        "--json",
        "--log",
        str(log),
        cwd=tmp_path,
        capsys=capsys,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["answer"] is False and out["model"]["sex"] == 0
    p = tamp(
        "query",
        str(f),
        "--given",
        "income == 40 && debt == 10 && sex == 0",
        "--vary",
        "debt in 0..20",
        "--might",
        "approve",
        "--log",
        str(log),
        cwd=tmp_path,
        capsys=capsys,
    )
    assert p.returncode == 0 and "yes: " in p.stdout and "witness" in p.stdout
    assert len(log.read_text().splitlines()) == 2
    p = tamp("query", "--replay", str(log), cwd=tmp_path, capsys=capsys)
    assert p.returncode == 0 and "0 changed" in p.stdout
    f.write_text(LOAN.replace("score > 20", "score > 0"))  # the program changed: the would-query now holds
    p = tamp("query", "--replay", str(log), cwd=tmp_path, capsys=capsys)
    assert p.returncode == 3 and "changed: " in p.stdout and "1 changed" in p.stdout


def test_cli_errors_exit_2_without_traceback(tmp_path, capsys):
    f = tmp_path / "loan.prob"
    f.write_text(LOAN)
    p = tamp(
        "query",
        str(f),
        "--given",
        "income == 40 && debt == 10 &&",
        "--vary",
        "sex",
        "--would",
        "approve",
        cwd=tmp_path,
        capsys=capsys,
    )
    assert p.returncode == 2 and "--given:1:" in p.stderr and "Traceback" not in p.stderr
    p = tamp(
        "query",
        str(f),
        "--given",
        "income == 40 && debt == 10 && sex == 1",
        "--vary",
        "sex",
        cwd=tmp_path,
        capsys=capsys,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    p = tamp("query", "--replay", str(tmp_path / "missing.jsonl"), cwd=tmp_path, capsys=capsys)
    assert p.returncode == 2 and "Traceback" not in p.stderr
