"""Running the CLI in-process on hostile input: exit code and output, never a traceback."""

from __future__ import annotations

import os

from support.cli import EXIT_CODES, run_main


def run_cli(capsys, argv, limit: int = 60):
    """``tamp.cli.main(argv)`` with a wall-clock limit (a hang fails the test); returns (code,
    stdout, stderr). TAMP_DEBUG=1 (tests/conftest.py) makes an internal error raise, failing the test."""
    assert os.environ.get("TAMP_DEBUG") == "1"
    capsys.readouterr()
    code = run_main(argv, limit)
    out = capsys.readouterr()
    assert code in EXIT_CODES, (argv, code, out.err)
    assert "Traceback" not in out.err and "Traceback" not in out.out
    return code, out.out, out.err
