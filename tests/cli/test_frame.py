"""The CLI frame: exit statuses, one-line errors, --json shape, --input parsing, tamp bench."""

import json
import subprocess
import sys

import pytest

from lang.inputs import parse_assignment
from tamp.cli import main

COIN = """// expect: proved
program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{ y ~ bern(p); }
"""


def run_cli(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_no_command_prints_help_and_fails(capsys):
    code, out, _ = run_cli([], capsys)
    assert code == 2 and "COMMAND" in out


def test_unknown_command_is_usage_error(capsys):
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_syntax_error_is_one_located_message(tmp_path, capsys):
    f = tmp_path / "bad.prob"
    f.write_text("program p() {\n  x := 1 +;\n}\n")
    code, out, err = run_cli(["prove", str(f)], capsys)
    assert code == 2
    assert err.startswith(f"{f}:2:")
    assert "Traceback" not in err and "^" in err


def test_missing_file(tmp_path, capsys):
    code, _, err = run_cli(["prove", str(tmp_path / "nope.prob")], capsys)
    assert code == 2 and "cannot read" in err


def test_bound_must_mention_parameters_only(tmp_path, capsys):
    f = tmp_path / "coin.prob"
    f.write_text(COIN)
    code, _, err = run_cli(["prove", str(f), "--bound", "p * zz"], capsys)
    assert code == 2 and "zz" in err


def test_unknown_program_name(tmp_path, capsys):
    f = tmp_path / "coin.prob"
    f.write_text(COIN)
    code, _, err = run_cli(["prove", str(f), "--program", "nope"], capsys)
    assert code == 2 and "coin" in err


def test_prove_json_shape(tmp_path, capsys):
    f = tmp_path / "coin.prob"
    f.write_text(COIN)
    code, out, _ = run_cli(["prove", str(f), "--json"], capsys)
    data = json.loads(out)
    assert data["file"] == str(f)
    (prog,) = data["programs"]
    assert prog["name"] == "coin" and prog["verdict"] in ("proved", "unknown", "violated")
    assert "time_s" in prog and "bound" in prog
    assert code == {"proved": 0, "unknown": 1, "violated": 3}[prog["verdict"]]


def test_parse_inputs():
    got = dict(parse_assignment(a) for a in ["n=8", "eps=0.5", "q=[1, 2, -3]", "flag=true", "r=1e-7"])
    assert got["n"] == 8 and str(got["eps"]) == "1/2" and got["q"] == [1, 2, -3]
    assert got["flag"] is True and str(got["r"]) == "1/10000000"
    for bad in ("n", "n=abc", "1x=2", "q=[1,,2]", "n=--1", "n=1e99999"):
        with pytest.raises(ValueError):
            parse_assignment(bad)


def test_bench_table_and_expectations(tmp_path):
    (tmp_path / "coin.prob").write_text(COIN)
    (tmp_path / "broken.prob").write_text("program (")
    out_json = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tamp", "bench", str(tmp_path), "--timeout", "60", "--json", str(out_json)],
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in proc.stderr
    rows = json.loads(out_json.read_text())["rows"]
    by_file = {r["file"].rsplit("/", 1)[-1]: r for r in rows}
    assert by_file["broken.prob"]["verdict"] == "error"
    assert by_file["coin.prob"]["expected"] == "proved"
    assert proc.returncode == 2  # an input error in the suite
