"""Reading a `.prob` file the one way every command and :mod:`tamp.api` do it.

>>> src = load("program p(n: int) ensures n >= 0 { x := n; }")
>>> [p.name for p in src.programs]
['p']

:func:`load` reads (bytes -> UTF-8, an invalid byte is a located error), parses and type-checks;
:func:`decode` is the bytes -> text step alone; :func:`parse_bound` reads a ``--bound`` option
and checks it against a program's parameters. Every problem is a :class:`lang.errors.TampError`
located in the file (or in the option), never ``<string>`` when a file name is known.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional, Union

from lang.walk import free_vars

from . import ast as A
from .errors import TampError, TypeCheckError, UnsupportedError, error_at
from .files import decode, read_bytes, read_text
from .parser import parse, parse_expr
from .suggest import did_you_mean
from .typecheck import ProgramTypes, check_file

#: re-exported: every command reads a file the loader's way
__all__ = ["Source", "decode", "read_bytes", "read_text", "load", "parse_bound", "check_bound", "select"]

Source = Union[str, bytes, Path, A.SourceFile]


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and "{" not in text and (text.endswith(".prob") or os.path.exists(text))


def load(source: Source, path: Optional[str] = None, *, check: bool = True) -> A.SourceFile:
    """Read, parse and (unless ``check`` is false) type-check a `.prob` file.

    ``source`` is a path (``str`` naming an existing or ``.prob`` file, or a ``Path``), the
    file's bytes, its text, or an already parsed :class:`lang.ast.SourceFile`. ``path`` names
    the file in messages when ``source`` is bytes or text. Raises :class:`TampError`."""
    if isinstance(source, A.SourceFile):
        src = source
    elif isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
        name = str(source)
        src = parse(decode(read_bytes(name), name), name)
    elif isinstance(source, bytes):
        name = path or "<bytes>"
        src = parse(decode(source, name), name)
    elif isinstance(source, str):
        src = parse(source, path or "<string>")
    else:
        raise TypeError(f"lang.load needs a path, bytes, text or a SourceFile, not {type(source).__name__}")
    if check:
        check_file(src)
    return src


def select(src: A.SourceFile, name: Optional[str] = None) -> List[A.Program]:
    """The programs of ``src`` (only the one called ``name`` when given; an unknown name is an
    error listing the file's programs)."""
    if name is None:
        return list(src.programs)
    progs = [p for p in src.programs if p.name == name]
    if not progs:
        names = ", ".join(p.name for p in src.programs) or "none"
        hint = did_you_mean(name, [p.name for p in src.programs])
        raise TampError(f"no program named '{name}'{hint} (the file has: {names})", src.path)
    return progs


def parse_bound(text: str, option: str = "--bound") -> A.Expr:
    """The expression of a ``--bound`` option (a :class:`ParseError` located in the option)."""
    return parse_expr(text, option)


def check_bound(prog: A.Program, bound: A.Expr, text: Optional[str] = None, option: str = "--bound") -> None:
    """A failure bound given outside the program must be a number over its parameters only;
    errors are located in the option (``text`` is the option's value, for the caret)."""
    params = {p.name: p.type for p in prog.params}
    free = set(free_vars(bound))
    for node in A.walk(bound):
        if isinstance(node, A.Var) and node.name not in params and node.name in free:
            raise error_at(
                UnsupportedError,
                f"{option} mentions '{node.name}', which is not a parameter of "
                f"program '{prog.name}' (parameters: {', '.join(sorted(params)) or 'none'})",
                node.pos,
                option,
                text,
            )
    try:
        t = ProgramTypes(prog.name, params=dict(params)).type_of(bound)
    except TampError as exc:
        exc.path, exc.source = option, text
        raise
    if not t.is_numeric:
        raise error_at(
            TypeCheckError,
            f"{option} must be a number (a failure bound), but this is {_a(t)}",
            getattr(bound, "pos", None),
            option,
            text,
        )


def _a(t: A.Type) -> str:
    return {"bool": "a bool", "int": "an int", "real": "a real"}.get(t.name, str(t))
