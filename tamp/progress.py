"""Progress of a long proof on the terminal: one status line on stderr, rewritten in place.

The engines report progress through a callback (``prove_program(..., progress=callable)``),
calling it with a :class:`ProgressEvent`::

    ProgressEvent("ex1", "synthesising axioms for 4 traces, split on flag", traces=4)
    ProgressEvent("noisySum", "labelling with axioms #3", best_bound="p")

:class:`Progress` shows one as ``⠹ 12.4 s  ex2 · labelling with axioms #3 · best bound p`` and
keeps the elapsed time ticking while the solver works. It is only switched on when stderr is a
terminal and the output is not ``--json`` (:func:`for_terminal`); the line is erased when the
run ends, so the result printed on stdout is all that remains.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from dataclasses import dataclass
from typing import Optional, TextIO

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


@dataclass(frozen=True)
class ProgressEvent:
    """Where an engine is: the program, the stage (free text), and the counters it knows —
    traces done and in all, the current unrolling depth, the best bound so far.

    >>> ProgressEvent("ex2", "unrolling", traces_done=12, traces=40, depth=3, best_bound="0.05").describe()
    'ex2 · unrolling · traces 12/40 · depth 3 · best bound 0.05'
    """

    program: str = ""
    stage: str = ""
    traces: Optional[int] = None
    traces_done: Optional[int] = None
    depth: Optional[int] = None
    best_bound: Optional[str] = None

    def describe(self) -> str:
        """One line: program, stage, then the counters."""
        bits = [b for b in (self.program, self.stage) if b]
        if self.traces_done is not None:
            bits.append(f"traces {self.traces_done}" + (f"/{self.traces}" if self.traces is not None else ""))
        if self.depth is not None:
            bits.append(f"depth {self.depth}")
        if self.best_bound is not None:
            bits.append(f"best bound {self.best_bound}")
        return " · ".join(bits)


class Progress:
    """A status line on ``stream`` (a callable progress callback; also a context manager).

    ``tick`` is how often (seconds) the line is redrawn with the elapsed time while no event
    arrives; 0 disables the background ticker (as the tests do)."""

    def __init__(self, stream: Optional[TextIO] = None, tick: float = 0.25, width: Optional[int] = None):
        self.stream = stream if stream is not None else sys.stderr
        self.tick = tick
        self.width = width
        self.start = time.monotonic()
        self.events = 0
        self.text = "preparing"
        self._frame = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._shown = False
        if tick > 0:
            self._thread = threading.Thread(target=self._ticker, name="tamp-progress", daemon=True)
            self._thread.start()

    # ------------------------------------------------------------------ callback
    def __call__(self, event: ProgressEvent) -> None:
        """Record one event from an engine and redraw the line."""
        with self._lock:
            self.events += 1
            self.text = event.describe() or self.text
            self._draw()

    def line(self) -> str:
        """The status line as it is drawn now (without the terminal control characters)."""
        elapsed = time.monotonic() - self.start
        return f"{SPINNER[self._frame % len(SPINNER)]} {elapsed:5.1f} s  {self.text}"

    def _draw(self) -> None:
        width = self.width or shutil.get_terminal_size((100, 20)).columns
        text = self.line()[: max(width - 1, 10)]
        try:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self._stop.set()
            return
        self._shown = True
        self._frame += 1

    def _ticker(self) -> None:
        while not self._stop.wait(self.tick):
            with self._lock:
                if not self._stop.is_set():
                    self._draw()

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Stop the ticker and erase the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        with self._lock:
            if self._shown:
                try:
                    self.stream.write("\r\033[K")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
                self._shown = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def wanted(json_output: bool, stream: Optional[TextIO] = None) -> bool:
    """Progress is shown only on an interactive terminal and never with ``--json``."""
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty()) and not json_output
    except (AttributeError, ValueError):
        return False


def for_terminal(json_output: bool, stream: Optional[TextIO] = None, tick: float = 0.25) -> Optional[Progress]:
    """A :class:`Progress` on ``stream`` (default stderr) when :func:`wanted`, else None."""
    stream = stream if stream is not None else sys.stderr
    return Progress(stream, tick) if wanted(json_output, stream) else None
