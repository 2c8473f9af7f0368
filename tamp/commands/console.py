"""Printing the report's text lines: in colour (rich) on a terminal, plain otherwise.

Colour is used only when standard output is a terminal and ``NO_COLOR`` is not set
(https://no-color.org); piped or redirected output is plain text, byte for byte what the
lines say (no wrapping, no markup: formulas contain ``[``, which rich would read as markup).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Iterable

from ..report.text import STYLES, Line


def wants_colour(stream=None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Printer:
    """Prints :class:`~tamp.report.text.Line` values on standard output."""

    def __init__(self, colour: bool | None = None):
        self.colour = wants_colour() if colour is None else colour
        self._console = None
        if self.colour:
            # deferred on purpose: rich loads only when a console is drawn (not for --json or --version)
            from rich.console import Console

            self._console = Console(file=sys.stdout, highlight=False, soft_wrap=True)

    def print(self, lines: Iterable[Line]) -> None:
        for line in lines:
            if self._console is None:
                print(line.text)
                continue
            # deferred on purpose: rich loads only when a console is drawn (not for --json or --version)
            from rich.text import Text

            text = Text(line.text, style=STYLES.get(line.style, line.style))
            if line.span is not None:
                start, end, style = line.span
                text.stylize(STYLES.get(style, style), start, end)
            self._console.print(text)


class FileStream:
    """``tamp bench``: one line per file as it finishes, on standard error (the table stays on
    standard output). On a terminal a rich progress bar with the time remaining sits below the
    lines; elsewhere the lines are plain (``[3/12] dp/ex1.prob  ex1: proved  (0.41 s)``).
    ``done`` may be called from worker threads."""

    def __init__(self, total: int, stream=None, colour: bool | None = None):
        self.total, self.count = total, 0
        self.stream = stream or sys.stderr
        self.colour = wants_colour(self.stream) if colour is None else colour
        self._lock = threading.Lock()
        self._progress = None
        if self.colour:
            # deferred on purpose: rich loads only when a console is drawn (not for --json or --version)
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(file=self.stream, highlight=False, soft_wrap=True)
            self._progress = Progress(
                TextColumn("bench"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self._task = self._progress.add_task("bench", total=total)
            self._progress.start()

    def line(self, path: str, rows: list, wall_s: float) -> Line:
        """``[k/N] FILE  name: verdict, name: verdict  (time)`` for one finished file."""
        head = f"[{self.count}/{self.total}] {path}  "
        verdicts = ", ".join(f"{r.get('name', '-')}: {r.get('verdict', '?')}" for r in rows) or "no programs"
        worst = next(
            (v for v in ("error", "violated", "unknown") if any(r.get("verdict") == v for r in rows)), "proved"
        )
        return Line(f"{head}{verdicts}  ({wall_s:.2f} s)", "", (len(head), len(head) + len(verdicts), worst))

    def done(self, path: str, rows: list, wall_s: float) -> None:
        with self._lock:
            self.count += 1
            line = self.line(path, rows, wall_s)
            if self._progress is None:
                print(line.text, file=self.stream, flush=True)
                return
            # deferred on purpose: rich loads only when a console is drawn (not for --json or --version)
            from rich.text import Text

            text = Text(line.text)
            if line.span is not None:
                start, end, style = line.span
                text.stylize(STYLES.get(style, "bold"), start, end)
            self._progress.console.print(text)
            self._progress.advance(self._task)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
