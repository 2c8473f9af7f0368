"""--timeout of `tamp prove` bounds the whole command, reading and parsing the file included."""

from __future__ import annotations

import time

import pytest
import z3

from tamp.cli import main
from tamp.core.timelimit import CommandTimeout, grace, time_limit


def test_time_limit_interrupts_python_code():
    with pytest.raises(CommandTimeout, match="--timeout 0.01 s"):
        with time_limit(0.01):
            while True:
                pass


def test_time_limit_interrupts_a_solver_call_without_its_own_limit():
    # z3 does not always honour its own time limit; the backstop interrupts the call itself.
    # Factoring (1e9+7)(1e9+9) by nonlinear integer search runs far longer than the limit.
    x, y = z3.Ints("x y")
    s = z3.Solver()
    s.add(x > 1, y > 1, x * y == 1_000_000_016_000_000_063)
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout):
        with time_limit(0.5):
            s.check()
    assert time.monotonic() - t0 < 10


@pytest.mark.parametrize("seconds", [None, 0, -1, float("nan"), float("inf")])
def test_no_limit_for_absent_or_unusable_values(seconds):
    with time_limit(seconds):
        sum(range(1000))


def test_grace_is_small():
    assert grace(2) == 1.0 and grace(600) == 30.0


def test_prove_timeout_covers_parsing(tmp_path, capsys):
    # 200,000 statements take seconds to parse; the limit (0.05 s + 1 s grace) stops the command
    body = "\n".join(f"  x{k} := {k};" for k in range(200_000))
    f = tmp_path / "big.prob"
    f.write_text(f"program big(n: int)\n  ensures n == n\n{{\n{body}\n}}\n")
    code = main(["prove", str(f), "--timeout", "0.05"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{f}: timeout: the run took longer than --timeout 0.05 s" in err
    assert "a larger --timeout" in err


def test_prove_timeout_json_says_unknown(tmp_path, capsys):
    """With --json the whole-run timeout is an answer like an engine's own: verdict unknown,
    exit status 1, in the output schema's shape (tools reading the JSON need no special case)."""
    import json

    import jsonschema

    from tamp.commands.jsonout import SCHEMA_PATH

    body = "\n".join(f"  x{k} := {k};" for k in range(200_000))
    f = tmp_path / "big.prob"
    f.write_text(f"program big(n: int)\n  ensures n == n\n{{\n{body}\n}}\n")
    code = main(["prove", str(f), "--timeout", "0.05", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"] == "unknown" and out["exit_code"] == 1
    assert out["programs"][0]["verdict"] == "unknown" and "timeout" in out["programs"][0]["message"]
    jsonschema.validate(out, json.loads(SCHEMA_PATH.read_text()))


def test_time_limit_is_not_swallowed_by_a_broad_except():
    """Issue 31 item 7: the engines turn ``Exception`` into "not provable" in many places; the
    backstop fires once, so an alarm caught there left the run without any limit."""
    caught = []
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout):
        with time_limit(0.01):  # fires after 0.01 s + 1 s grace
            while time.monotonic() - t0 < 4:
                try:
                    sum(range(100))
                except Exception as exc:  # noqa: BLE001 - what the engines do
                    caught.append(exc)
    assert not caught


STUCK = """
import ctypes, signal, sys
from tamp.core.timelimit import time_limit
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])  # the alarm never reaches Python

def report(exc):
    print("stuck:", exc, flush=True)
    return 7

with time_limit(0.2, on_stuck=report):
    ctypes.CDLL(None).sleep(60)  # a foreign call that neither the alarm nor z3's interrupt ends
print("not reached")
"""


def test_a_call_stuck_past_the_limit_ends_the_process():
    # what a z3 procedure that ignores its interrupt does: the reporter runs and the process
    # exits with its status soon after the limit, instead of running on
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", STUCK], capture_output=True, text=True, timeout=50, env={"PYTHONPATH": str(root)}
    )
    assert proc.returncode == 7, proc.stderr
    assert "stuck: the run took longer than --timeout 0.2 s" in proc.stdout
    assert "not reached" not in proc.stdout
    assert time.monotonic() - t0 < 30
