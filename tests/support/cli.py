"""Running the tamp command line in-process, under a wall-clock limit: the one runner of the
tests that feed it hostile input (tests/hostile) and generated programs (tests/fuzz, and the
long fuzz run in benchmarks/fuzz)."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Iterator, Sequence

#: every exit status tamp may end with (0 proved, 1 not proved, 2 input or usage error, 3 refuted)
EXIT_CODES = frozenset({0, 1, 2, 3})


class Hang(TimeoutError):
    """The command gave no answer within its time limit."""


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise :class:`Hang` instead of hanging (SIGALRM: the main thread only)."""

    def handler(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_main(argv: Sequence[str], limit: int = 60) -> object:
    """``tamp.cli.main(argv)`` within ``limit`` seconds; its exit code (an argparse usage
    error's ``SystemExit`` gives its code). A :class:`Hang` or an internal error propagates
    (with TAMP_DEBUG=1 an internal error raises instead of being reported)."""
    from tamp.cli import main

    with time_limit(limit):
        try:
            return main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            return exc.code
