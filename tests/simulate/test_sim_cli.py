"""``tamp simulate`` from the command line: exit statuses, --json, and clean input errors."""

import json

import pytest
from locations import BENCHMARKS

from tamp.cli import main

BENCH = BENCHMARKS
EX2 = str(BENCH / "dp" / "ex2.prob")
EX2_IN = ["--input", "n=3", "--input", "eps=0.5", "--input", "p=0.1", "--input", "q=[1,5,2]"]


def run(capsys, *argv):
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_consistent_exits_0(capsys):
    code, out, _ = run(capsys, EX2, *EX2_IN, "--runs", "5000", "--seed", "3")
    assert code == 0 and "ex2: consistent" in out and "Clopper-Pearson" in out


def test_refuted_exits_3(capsys):
    f = str(BENCH / "variants" / "randResp_fails1_5.prob")
    code, out, _ = run(capsys, f, "--input", "priv=true", "--runs", "20000")
    assert code == 3 and "randResp_fails1_5: refuted" in out


def test_bound_override_and_json(capsys):
    code, out, _ = run(capsys, EX2, *EX2_IN, "--runs", "20000", "--bound", "p", "--json")
    assert code == 3
    data = json.loads(out)
    (prog,) = data["programs"]
    assert prog["verdict"] == "refuted" and prog["bound"] == "p" and prog["bound_value"] == 0.1
    assert prog["runs"] == 20000 and prog["ci"][0] > 0.1 and 0 <= prog["rate"] <= 1
    assert prog["inputs"]["q"] == [1, 5, 2]


def test_confidence_option(capsys):
    code, out, _ = run(capsys, EX2, *EX2_IN, "--runs", "2000", "--confidence", "0.9", "--json")
    assert json.loads(out)["programs"][0]["confidence"] == 0.9


def test_probability_spec_json(tmp_path, capsys):
    f = tmp_path / "fair.prob"
    f.write_text("program fair() ensures P(h | g) / P(h | !g) >= 0.5\n{ g ~ bern(0.5); h ~ bern(0.4); }\n")
    code, out, _ = run(capsys, str(f), "--runs", "50000", "--json")
    prog = json.loads(out)["programs"][0]
    assert code == 0 and prog["verdict"] == "confirmed"
    assert len(prog["prob_terms"]) == 2 and prog["comparisons"][0]["holds"] is True
    code, out, _ = run(capsys, str(f), "--runs", "50000")
    assert "P(h | g)" in out.replace("  ", " ") or "P(h|g)" in out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--input", "n=3"], "missing: q, eps, p"),
        (EX2_IN[:-2] + ["--input", "q=[1,x]"], "bad value"),
        (EX2_IN[:2] + ["--input", "eps=0.5", "--input", "p=2", "--input", "q=[1,5,2]"], "requires clause is false"),
        (EX2_IN + ["--input", "zz=1"], "unknown input"),
        (EX2_IN + ["--bound", "1/(n-3)"], "division by zero"),
        (EX2_IN + ["--runs", "0"], "must be positive"),
        (["--input", "n=4", "--input", "eps=0.5", "--input", "p=0.1", "--input", "q=[1,5,2]"], "out of range"),
        (EX2_IN + ["--program", "nope"], "no program named"),
    ],
)
def test_bad_input_exits_2_with_one_message(capsys, args, needle):
    code, out, err = run(capsys, EX2, "--runs", "100", *args)
    assert code == 2
    assert needle in err


def test_independent_exits_2(tmp_path, capsys):
    f = tmp_path / "c.prob"
    f.write_text("program c(s: bool) ensures independent(y, s) { y := 1; }\n")
    code, _, err = run(capsys, str(f), "--input", "s=true")
    assert code == 2 and "not a sampling property" in err and f"{f}:1:" in err


def test_parse_error_exits_2(tmp_path, capsys):
    f = tmp_path / "bad.prob"
    f.write_text("program b() { x := ; }\n")
    code, _, err = run(capsys, str(f))
    assert code == 2 and f"{f}:1:" in err
