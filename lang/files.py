"""Reading a source file's text: bytes, then UTF-8 with located errors.

The one way the parser (:func:`lang.parser.parse_file`) and the loader (:func:`lang.loader.load`)
read a file: an unreadable file or an invalid byte is a :class:`lang.errors.ParseError` naming
the file (and the byte's line and column), never a Python exception.
"""

from __future__ import annotations

from pathlib import Path
from typing import Union

from .errors import ParseError


def read_bytes(path: Union[str, Path]) -> bytes:
    """The bytes of a file; an unreadable file is a :class:`ParseError` naming it."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror or exc}", str(path)) from None


def decode(data: bytes, path: str = "<string>") -> str:
    """UTF-8 text of ``data`` (a leading byte-order mark dropped); an invalid byte is a
    :class:`ParseError` at its line and column."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        shown = data.decode("utf-8", errors="replace")
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise ParseError(
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x})", path, line, col, shown
        ) from None


def read_text(path: Union[str, Path]) -> str:
    """The UTF-8 text of a file (see :func:`read_bytes` and :func:`decode`)."""
    return decode(read_bytes(path), str(path))
