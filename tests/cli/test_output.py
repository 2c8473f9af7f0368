"""`tamp prove`'s output: a one-line verdict per program, the reason at file:line when unproved,
-v / -vv for details, --quiet, several files with one summary, colour only on a terminal."""

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tamp.cli import main
from tamp.commands.console import Printer, wants_colour
from tamp.report.text import Line

REPO = Path(__file__).resolve().parents[2]
RANDRESP = REPO / "benchmarks" / "dp" / "randResp.prob"

COIN = """program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{ y ~ bern(p); }
"""

# proved with bound p but not with p / 2 (the union bound's limit: docs/tutorial-failed-proof.md)
HALF = """program half(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p / 2
{
  x ~ bern(0.5);
  y ~ bern(p);
}
"""

# a probability claim that is false: the probability engine says "violated"
FALSE_CLAIM = """program biased()
  ensures P(y) >= 0.9
{ y ~ bern(0.5); }
"""

VERDICT = re.compile(r"^(\w+): (proved|unknown|violated)(  Pr\[fail\] <= .+)?  \(\d+\.\d+ s\)$")


def run_cli(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("coin", COIN), ("half", HALF), ("biased", FALSE_CLAIM)):
        f = tmp_path / f"{name}.prob"
        f.write_text(text)
        out[name] = f
    return out


def test_default_is_one_line_per_proved_program(capsys):
    code, out, _ = run_cli(["prove", RANDRESP], capsys)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 1, out
    m = VERDICT.match(lines[0])
    assert m and m.group(1) == "randResp" and m.group(2) == "proved", lines[0]
    assert "Pr[fail] <= 0.25" in lines[0]  # `fails 1 / 4` simplified, exactly
    assert "λ" not in out and "axioms" not in out


def test_unproved_program_says_why_at_file_and_line(files, capsys):
    code, out, _ = run_cli(["prove", files["half"]], capsys)
    assert code == 1
    lines = out.splitlines()
    assert VERDICT.match(lines[0]) and lines[0].startswith("half: unknown  Pr[fail] <= p / 2"), lines[0]
    # the prover's own explanation, placed at the line of the sampling it stopped at
    assert lines[1].strip().startswith(f"{files['half']}:7: no axiom for `y ~ bern(p)`"), out
    assert any(ln.strip() == "line 6: x ~ bern(0.5)" for ln in lines), out  # the trace
    assert "λ" not in out


def test_verbose_adds_axioms_and_an_automata_summary_and_vv_the_automata(files, capsys):
    code, out, _ = run_cli(["prove", files["coin"], "-v"], capsys)
    assert code == 0
    assert "axioms:" in out and "bernoulli" in out and "Pr[y] <= p" in out
    assert re.search(r"automaton coin: \d+ nodes, \d+ edges, \d+ exit\(s\)", out)
    assert "statistics:" in out and "λ" not in out
    code, out2, _ = run_cli(["prove", files["coin"], "-vv"], capsys)
    assert code == 0 and "λ = " in out2 and "κ = " in out2  # the full automaton


def test_quiet_prints_nothing_and_sets_the_exit_status(files, capsys):
    assert run_cli(["prove", files["coin"], "--quiet"], capsys) == (0, "", "")
    assert run_cli(["prove", files["half"], "-q"], capsys) == (1, "", "")
    assert run_cli(["prove", files["biased"], "-q"], capsys) == (3, "", "")


def test_json_output_is_unchanged(files, capsys):
    code, out, _ = run_cli(["prove", files["half"], "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "unknown" and data["file"] == str(files["half"])
    assert [p["name"] for p in data["programs"]] == ["half"] and "failed_trace" in data["programs"][0]


def test_several_files_one_summary_and_the_worst_exit_status(files, capsys):
    code, out, _ = run_cli(["prove", files["coin"], files["half"]], capsys)
    assert code == 1
    assert out.splitlines()[-1].startswith("1 proved, 1 unknown, 0 violated  (2 files, ")
    code, out, _ = run_cli(["prove", files["coin"], files["biased"], files["half"]], capsys)
    assert code == 3
    assert out.splitlines()[-1].startswith("1 proved, 1 unknown, 1 violated  (3 files, ")
    assert re.search(r"^biased: violated  \(", out, re.M)


def test_several_files_json_lists_the_per_file_objects(files, capsys):
    code, out, _ = run_cli(["prove", files["coin"], files["half"], "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "unknown" and data["exit_code"] == 1
    assert [d["file"] for d in data["files"]] == [str(files["coin"]), str(files["half"])]
    assert [d["verdict"] for d in data["files"]] == ["proved", "unknown"]


def test_a_bad_file_among_several_is_reported_and_the_others_are_checked(files, tmp_path, capsys):
    code, out, err = run_cli(["prove", files["coin"], tmp_path / "missing.prob", files["half"]], capsys)
    assert code == 2
    assert "missing.prob" in err and "Traceback" not in err
    assert out.startswith("coin: proved") and "half: unknown" in out
    assert "1 proved, 1 unknown, 0 violated, 1 file(s) with errors  (3 files" in out


def test_certificate_and_report_take_one_file(files, tmp_path, capsys):
    code, _, err = run_cli(["prove", files["coin"], files["half"], "--certificate", tmp_path / "c.json"], capsys)
    assert code == 2 and "--certificate takes one file" in err
    assert not (tmp_path / "c.json").exists()


def test_version(capsys):
    assert main(["--version"]) == 0
    from tamp import __version__

    assert capsys.readouterr().out.startswith(f"tamp {__version__} ")


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["prov", "{coin}"], "did you mean 'prove'?"),
        (["simulat", "{coin}"], "did you mean 'simulate'?"),
        (["prove", "{coin}", "--bund", "p"], "did you mean '--bound'?"),
        (["prove", "{coin}", "--timout=3", "--jsn"], "did you mean '--timeout' for '--timout', '--json' for '--jsn'?"),
        (["prove", "{coin}", "--program", "con"], "no program named 'con' (did you mean 'coin'?)"),
        (["prove", "{coin}", "--input", "pp=0.5"], "unknown input(s) pp (did you mean 'p'?)"),
        (["simulate", "{coin}", "--input", "q=0.5"], "unknown input(s) q (parameters: p)"),  # nothing close: no guess
    ],
)
def test_did_you_mean(files, capsys, argv, hint):
    code, out, err = run_cli([a.format(coin=files["coin"]) for a in argv], capsys)
    assert code == 2 and hint in err, err
    assert "Traceback" not in err


def test_no_colour_when_piped_or_no_color(files):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "tamp", "prove", str(files["half"])],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1 and "\x1b[" not in proc.stdout and proc.stdout.startswith("half: unknown")


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_colour_on_a_terminal_unless_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert wants_colour(_Tty()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(_Tty())
    monkeypatch.delenv("NO_COLOR")
    tty = _Tty()
    monkeypatch.setattr(sys, "stdout", tty)
    line = "half: unknown  Pr[fail] <= p / 2  [a [bracket] is not markup]"
    Printer().print([Line(line, "", (6, 13, "unknown"))])
    text = tty.getvalue()
    assert "\x1b[" in text  # coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", text) == line + "\n"  # and otherwise the very same text


# --------------------------------------------------------------------------- tamp bench streams


def test_bench_streams_one_plain_line_per_file_on_stderr(tmp_path, files):
    """Piped: one plain line per finished file on stderr (the table on stdout is unchanged)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("NO_COLOR", None)
    proc = subprocess.run(
        [sys.executable, "-m", "tamp", "bench", str(files["coin"]), str(files["half"]), "--timeout", "60"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("[")]
    assert len(lines) == 2 and "\x1b[" not in proc.stderr
    assert lines[0].startswith("[1/2] ") and lines[1].startswith("[2/2] ")
    assert any(f"{files['coin']}  coin: proved  (" in ln for ln in lines)
    assert any(f"{files['half']}  half: unknown  (" in ln for ln in lines)
    assert "program" in proc.stdout and "[1/2]" not in proc.stdout  # the table, as before


def test_bench_progress_bar_on_a_terminal():
    from tamp.commands.console import FileStream

    tty = _Tty()
    stream = FileStream(2, stream=tty)
    assert stream.colour
    stream.done("a.prob", [{"name": "a", "verdict": "proved"}], 0.5)
    stream.done("b.prob", [{"name": "b", "verdict": "violated"}], 1.5)
    stream.close()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", tty.getvalue())
    assert "[1/2] a.prob  a: proved  (0.50 s)" in text and "[2/2] b.prob  b: violated  (1.50 s)" in text
    assert "ETA" in text  # the bar, with the time remaining, was drawn
