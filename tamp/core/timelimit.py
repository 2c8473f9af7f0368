"""A wall-clock bound on a whole command (``--timeout`` of ``tamp prove`` / ``check-proof``).

The engines stop themselves at their deadline and report "unknown (timeout)"; but their clock
starts after the file is read, parsed and type-checked, and those steps have no deadline of
their own. :func:`time_limit` is the backstop: an interval timer (``SIGALRM``) that raises
:class:`CommandTimeout` in the main thread when the command runs past its limit plus a small
grace (so an engine's own, more informative timeout normally comes first). Python code such as
the parser is interrupted between two bytecodes. A solver call holds the main thread until it
returns, and z3 does not always honour its own time limit (a nonlinear query of the expectation
engine's counterexample search ran on for minutes past ``--timeout 120``), so at the same moment
a timer thread interrupts z3's current context (``Z3_interrupt``, which z3 provides for exactly
this, callable from another thread): the query returns "unknown", and the alarm is raised as soon
as control is back in Python. Some of z3's nonlinear procedures do not look at the interrupt
either (the same query ran on past ``--timeout 30`` after it); for those the caller may pass
``on_stuck``: when the block has still not ended :data:`STUCK_S` seconds after the interrupt, the
timer thread calls it (the command line prints its timeout message and flushes its output) and
ends the process with the status it returns (``os._exit``: nothing else of the run can go on
while the main thread is inside z3). Without ``SIGALRM`` (Windows) or off the main thread it does
nothing.

:class:`CommandTimeout` is a :class:`BaseException` (like :class:`KeyboardInterrupt`), not an
:class:`Exception`: the engines catch ``Exception`` in many places to turn a formula they cannot
handle into "not provable" (an encoding error, a sympy failure), and an alarm landing inside
such a block was swallowed there — the timer fires once, so the run then went on with no limit
at all (issue 31: ``--timeout 120`` ran 258 s). Only ``except CommandTimeout`` (the command line)
or ``except BaseException`` stops it; ``finally`` blocks still run.
"""

from __future__ import annotations

import math
import os
import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Callable, Iterator, Optional

import z3

# Beyond this (about three years) the interval timer overflows; such a limit is no limit.
MAX_TIMER_S = 1e8
#: how long after interrupting z3 the block may take to end before ``on_stuck`` ends the process
STUCK_S = 5.0


class CommandTimeout(BaseException):
    """The command ran past its ``--timeout``."""

    def __init__(self, seconds: float):
        super().__init__(f"the run took longer than --timeout {seconds:g} s")
        self.seconds = seconds


def grace(seconds: float) -> float:
    """How long after ``seconds`` the backstop fires: 5% of it, at least 1 s."""
    return max(1.0, 0.05 * seconds)


@contextmanager
def time_limit(seconds: Optional[float], on_stuck: Optional[Callable[[CommandTimeout], int]] = None) -> Iterator[None]:
    """Raise :class:`CommandTimeout` if the block runs longer than ``seconds`` + :func:`grace`;
    if it is stuck in a call that neither the alarm nor z3's interrupt ends, ``on_stuck`` (when
    given) reports the timeout and the process exits with its status. ``None``, a non-positive, a
    non-finite or an astronomically large value means no limit (the options are checked where
    they are read)."""
    usable = (
        seconds is not None
        and isinstance(seconds, (int, float))
        and math.isfinite(seconds)
        and 0 < seconds <= MAX_TIMER_S
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable or seconds is None:
        yield
        return
    limit = float(seconds)

    def fire(signum: int, frame: Optional[FrameType]) -> None:
        raise CommandTimeout(limit)

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, limit + grace(limit))
    done = threading.Event()

    def stop() -> None:
        _interrupt_solver()
        if on_stuck is not None and not done.wait(STUCK_S):
            os._exit(on_stuck(CommandTimeout(limit)))

    stopper = threading.Timer(limit + grace(limit), stop)
    stopper.daemon = True
    stopper.start()
    try:
        yield
    finally:
        done.set()
        stopper.cancel()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _interrupt_solver() -> None:
    """Stop the z3 call running in z3's current default context (proofs install theirs as the
    default, :mod:`tamp.core.z3context`); it returns "unknown"."""
    z3.main_ctx().interrupt()
