"""Hostile files and streams (issue 16, items 6-8): certificates that are not strict JSON, files
that are not UTF-8, standard output that goes away or cannot be written, messages that must
name the file, and counterfactual questions about an empty scenario."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_lib import run_cli

ROOT = Path(__file__).resolve().parents[2]
COIN = "program coin(p: real)\n  requires 0 < p && p <= 1\n  ensures !y\n  fails p\n{ y ~ bern(p); }\n"


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    """A .prob file and the text of its certificate."""
    d = tmp_path_factory.mktemp("cert")
    f = d / "coin.prob"
    f.write_text(COIN)
    from tamp.cli import main

    assert main(["prove", str(f), "--certificate", str(d / "c.json"), "--quiet"]) == 0
    return f, (d / "c.json").read_text()


@pytest.mark.parametrize(
    "tamper, where",
    [
        (lambda t: t.replace('"version": 1', '"version": 1, "x": NaN', 1), "$.x: NaN is not a JSON number"),
        (lambda t: t.replace('"version": 1', '"version": 1, "y": -Infinity', 1), "$.y: -Infinity is not a JSON number"),
        (lambda t: t.replace('"version": 1', '"version": 1, "version": 1', 1), 'the key "version" appears twice'),
        (
            lambda t: t.replace('"root": ', '"root": ' + "9" * 5001 + ', "_r": ', 1),
            "$.programs[0].automata[0].root: an integer of 5001 digits is too long",
        ),
        (lambda t: t.replace('"root": ', '"root": 1e400, "_r": ', 1), "root: the number 1e400 is out of range"),
        (
            lambda t: t.replace('"program": "coin"', '"program": "coin", "extra": 1', 1),
            "$.programs[0].extra: unknown field",
        ),
        (lambda t: t.replace('"claim": {', '"claim": {"more": 1, ', 1), "$.claim.more: unknown field"),
        (lambda t: t.replace('"format"', '"formats": 1, "format"', 1), "$.formats: unknown field"),
    ],
)
def test_tampered_certificate_is_malformed_with_its_json_path(proved, tmp_path, capsys, tamper, where):
    f, text = proved
    cert = tmp_path / "t.json"
    cert.write_text(tamper(text))
    code, out, err = run_cli(capsys, ["check-proof", str(cert), str(f)])
    assert code == 2 and "ok: " not in out and "ok (" not in out, out + err
    assert err.startswith(f"{cert}: error: malformed certificate: "), err
    assert where in err, err


def test_certificate_reading_leaves_the_interpreter_limit_alone(proved, tmp_path, capsys):
    f, text = proved
    before = sys.get_int_max_str_digits()
    cert = tmp_path / "t.json"
    cert.write_text(text.replace('"root": ', '"root": ' + "9" * 5001 + ', "_r": ', 1))
    run_cli(capsys, ["check-proof", str(cert), str(f)])
    assert sys.get_int_max_str_digits() == before
    import tamp.wmi.bigq
    import tamp.wmi.cli

    for mod in (tamp.wmi.cli, tamp.wmi.bigq):  # GMP converts huge numbers; the global limit stays put
        assert "set_int_max_str_digits" not in Path(mod.__file__).read_text()


def test_certificate_not_utf8(proved, tmp_path, capsys):
    f, _ = proved
    cert = tmp_path / "t.json"
    cert.write_bytes(b'{"format": "\xff"}')
    code, out, err = run_cli(capsys, ["check-proof", str(cert), str(f)])
    assert code == 2 and f"{cert}: error: malformed certificate: 1:13: not UTF-8 text (byte 0xff)" in err, err


@pytest.mark.parametrize("cmd", [["wmi"], ["query", "--replay"]])
def test_non_utf8_file_is_a_located_error(tmp_path, capsys, cmd):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a": 1}\n{"b": "\xff\xfe"}\n')
    code, out, err = run_cli(capsys, cmd + [str(bad)])
    assert code == 2 and str(bad) in err and "UTF-8" in err and "2:" in err, err


@pytest.mark.parametrize(
    "line",
    [
        '{"query": {"file": 3}}',
        '{"query": {"file": "a.prob", "vary": "x"}}',
        '{"query": {"file": "a.prob", "timeout": -1}}',
        "[1, 2]",
        '{"query": 1}',
    ],
)
def test_replay_of_a_malformed_log_line(tmp_path, capsys, line):
    log = tmp_path / "q.jsonl"
    log.write_text(line + "\n")
    code, out, err = run_cli(capsys, ["query", "--replay", str(log)])
    assert code == 2 and f"{log}:1:1: error: not a query-log line" in err, err


def test_non_utf8_program_is_located_for_every_command(tmp_path, capsys):
    f = tmp_path / "bad.prob"
    f.write_bytes(b"program p() {\n  x := 1; // \xff\n}\n")
    for argv in (
        ["check", str(f)],
        ["prove", str(f)],
        ["cfa", str(f)],
        ["prob", str(f)],
        ["simulate", str(f)],
        ["fairness", str(f)],
        ["query", str(f), "--would", "x", "--vary", "y"],
        ["check-proof", str(f), str(f)],
    ):
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and "UTF-8" in err, (argv, err)
        if argv[0] != "check-proof":
            assert err.startswith(f"{f}:2:"), (argv, err)


# ---------------------------------------------------------------------------- messages name the file


def test_errors_without_a_location_name_the_file_not_string(tmp_path, capsys):
    f = tmp_path / "coin.prob"
    f.write_text(COIN)
    loan = tmp_path / "loan.prob"
    loan.write_text(LOAN)
    for argv in (
        ["prob", str(f)],
        ["query", str(f), "--vary", "p", "--would", "y"],
        ["query", str(loan), "--given", "income == 1 && debt == 1 && sex == 1", "--would", "approve"],
        ["check-proof", str(tmp_path / "none.json"), str(f)],
    ):
        code, out, err = run_cli(capsys, argv)
        assert code == 2 and "<string>" not in err, (argv, err)
        assert err.startswith(str(tmp_path)), (argv, err)


# ---------------------------------------------------------------------------- standard output


def _tamp(args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TAMP_DEBUG", None)  # the user's view
    return subprocess.run([sys.executable, "-m", "tamp"] + args, env=env, timeout=300, **kw)


@pytest.mark.parametrize("args", [["check"], ["cfa"], ["prove"], ["prove", "--json"], ["cfa", "--json"]])
def test_output_into_a_closed_pipe_stops_quietly(tmp_path, args):
    f = tmp_path / "coin.prob"
    f.write_text(COIN * 1 + "".join(COIN.replace("coin", f"coin{i}") for i in range(40)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tamp", args[0], str(f)] + args[1:],
        env=dict(os.environ, PYTHONPATH=str(ROOT), TAMP_DEBUG=""),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.read(1)  # the reader takes a little and goes away (like `| head -c1`)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=300)
    assert err == "", err
    assert code in (0, 1)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["check"], ["prove"], ["cfa", "--json"]])
def test_output_on_a_full_disk_is_a_clear_error(tmp_path, args):
    f = tmp_path / "coin.prob"
    f.write_text(COIN)
    with open("/dev/full", "w") as full:
        r = _tamp([args[0], str(f)] + args[1:], stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2
    assert r.stderr.strip() == "tamp: error: cannot write the output: No space left on device", r.stderr


# ---------------------------------------------------------------------------- item 8: query on an empty scenario

LOAN = """program loan(income: real, debt: real, sex: int)
  requires 0 <= income && income <= 100 && 0 <= debt && debt <= 50 && (sex == 0 || sex == 1)
{
  score := income - 2 * debt + (sex == 1 ? 5 : 0);
  if (score > 20) { approve := true; } else { approve := false; }
}
"""


@pytest.mark.parametrize("vary", ["debt in 10..5", "debt in 60..70", "debt in 10..10"])
@pytest.mark.parametrize("mode", ["--would", "--might"])
def test_query_on_an_empty_scenario_is_vacuous(tmp_path, capsys, vary, mode):
    f = tmp_path / "loan.prob"
    f.write_text(LOAN)
    argv = ["query", str(f), "--given", "income == 40 && debt == 10 && sex == 1", "--vary", vary, mode, "approve"]
    code, out, err = run_cli(capsys, argv)
    assert code == 1 and out.startswith("vacuous:") and "no execution of the scenario exists" in out, out
    assert "yes:" not in out and "no:" not in out
    code, out, err = run_cli(capsys, argv + ["--json"])
    data = json.loads(out)
    assert data["verdict"] == "vacuous" and data["answer"] is None


def test_query_on_a_nonempty_scenario_still_answers(tmp_path, capsys):
    f = tmp_path / "loan.prob"
    f.write_text(LOAN)
    code, out, err = run_cli(
        capsys,
        [
            "query",
            str(f),
            "--given",
            "income == 40 && debt == 10 && sex == 1",
            "--vary",
            "debt in 0..5",
            "--would",
            "approve",
        ],
    )
    assert code == 0 and out.startswith("yes:"), out


def test_probably_query_on_an_empty_scenario_is_vacuous(tmp_path, capsys):
    f = tmp_path / "coin.prob"
    f.write_text("program coin(group: int)\n  requires group >= 0 && group <= 2\n{ b ~ bern(0.5); approve := b; }\n")
    code, out, err = run_cli(
        capsys,
        [
            "query",
            str(f),
            "--given",
            "group == 1",
            "--vary",
            "group in 5..9",
            "--would",
            "approve",
            "--probably",
            "0.4",
        ],
    )
    assert code == 1 and out.startswith("vacuous:"), out


def test_an_error_located_without_a_file_gets_the_file_and_its_line(tmp_path, capsys, monkeypatch):
    """An engine that raises a located error but forgets the file name: the CLI names the file
    (never `<string>:`) and shows the line."""
    import tamp.commands.check as check
    from lang.errors import TampError

    f = tmp_path / "coin.prob"
    f.write_text(COIN)

    def boom(src):
        raise TampError("something is wrong here", "<string>", 4, 3)

    monkeypatch.setattr(check, "api_check", boom)
    code, out, err = run_cli(capsys, ["check", str(f)])
    assert code == 2 and err.startswith(f"{f}:4:3: error: something is wrong here"), err
    assert "fails p" in err and "^" in err
