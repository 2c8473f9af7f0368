"""One error type for every problem in a user's input.

Every message has the form ``file:line:col: error: message`` followed by the
offending source line and a caret under the column — the CLI prints
``str(err)`` and exits with status 2.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Optional, Tuple, Type, TypeVar


class TampError(Exception):
    """An error in the user's input (lexical, syntax, type, unsupported construct, usage)."""

    kind = "error"

    def __init__(self, message: str, path: str = "<string>", line: int = 0, col: int = 0, source: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col
        self.source = source

    def with_source(self, path: str, source: str) -> "TampError":
        """Attach the file name and text, unless already attached."""
        if self.source is None:
            self.source = source
        if self.path == "<string>":
            self.path = path
        return self

    def __str__(self) -> str:
        head = (
            f"{self.path}:{self.line}:{self.col}: {self.kind}: {self.message}"
            if self.line
            else f"{self.path}: {self.kind}: {self.message}"
        )
        if self.source is not None and self.line:
            shown = source_excerpt(self.source, self.line, self.col)
            if shown is not None:
                text, caret = shown
                return f"{head}\n    {text}\n    {caret}"
        return head


E = TypeVar("E", bound="TampError")

_WINDOW = 100  # characters of a long source line shown around the error


def source_excerpt(source: str, line: int, col: int) -> Optional[Tuple[str, str]]:
    """The source line ``line`` (lines split at newlines only, as the lexer counts them) and a
    caret line pointing at column ``col``; unprintable characters shown as spaces, long lines
    cut to a window around the column. None when the line does not exist."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines):
        return None
    text = "".join(c if c.isprintable() else " " for c in lines[line - 1])
    col = max(col, 1)
    if len(text) > 2 * _WINDOW:
        start = max(0, col - 1 - _WINDOW // 2)
        prefix = "..." if start else ""
        suffix = "..." if start + _WINDOW < len(text) else ""
        text = prefix + text[start : start + _WINDOW] + suffix
        col = col - start + len(prefix)
    return text, _pad(text[: col - 1]) + "^"


def _pad(before: str) -> str:
    """Blanks as wide on a terminal as ``before``: two for each wide (East Asian) character,
    none for combining marks, a tab kept as a tab, one for everything else."""
    out = []
    for c in before:
        if c == "\t":
            out.append("\t")
        elif unicodedata.combining(c):
            continue
        else:
            out.append("  " if unicodedata.east_asian_width(c) in ("W", "F") else " ")
    return "".join(out)


class ParseError(TampError):
    pass


class TypeCheckError(TampError):
    pass


class UnsupportedError(TampError):
    """A construct that parses and type-checks but that the requested analysis cannot handle."""


def error_at(cls: Type[E], message: str, pos: Any, path: str = "<string>", source: Optional[str] = None) -> E:
    """Build an error of class ``cls`` located at AST position ``pos`` (may be None)."""
    line = pos.line if pos is not None else 0
    col = pos.col if pos is not None else 0
    return cls(message, path, line, col, source)
