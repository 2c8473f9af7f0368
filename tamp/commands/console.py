"""Printing the report's text lines: in colour (rich) on a terminal, plain otherwise.

Colour is used only when standard output is a terminal and ``NO_COLOR`` is not set
(https://no-color.org); piped or redirected output is plain text, byte for byte what the
lines say (no wrapping, no markup: formulas contain ``[``, which rich would read as markup).
"""

from __future__ import annotations

import os
import sys
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
            from rich.console import Console

            self._console = Console(file=sys.stdout, highlight=False, soft_wrap=True)

    def print(self, lines: Iterable[Line]) -> None:
        for line in lines:
            if self._console is None:
                print(line.text)
                continue
            from rich.text import Text

            text = Text(line.text, style=STYLES.get(line.style, line.style))
            if line.span is not None:
                start, end, style = line.span
                text.stylize(STYLES.get(style, style), start, end)
            self._console.print(text)
