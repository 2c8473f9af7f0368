"""Running the CLI in-process on hostile input: exit code and output, never a traceback."""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager

EXIT_CODES = {0, 1, 2, 3}


@contextmanager
def time_limit(seconds: int):
    """Fail (TimeoutError) instead of hanging; SIGALRM, main thread only."""

    def handler(signum, frame):
        raise TimeoutError(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_cli(capsys, argv, limit: int = 60):
    """``tamp.cli.main(argv)`` with a wall-clock limit; returns (code, stdout, stderr).
    TAMP_DEBUG=1 (tests/conftest.py) makes an internal error raise, failing the test."""
    from tamp.cli import main

    assert os.environ.get("TAMP_DEBUG") == "1"
    capsys.readouterr()
    with time_limit(limit):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    out = capsys.readouterr()
    assert code in EXIT_CODES, (argv, code, out.err)
    assert "Traceback" not in out.err and "Traceback" not in out.out
    return code, out.out, out.err
