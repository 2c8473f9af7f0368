"""The one JSON shape every command's ``--json`` prints (docs/json.md, checked against the JSON
Schema ``tamp/schema/tamp-output.schema.json`` in the tests).

Every object has ``schema_version``, ``command``, ``verdict`` (the command's answer in its own
words, see :data:`VERDICTS`), ``exit_code`` (the exit status the command returns) and ``time_s``;
then ``file`` and ``programs`` (one object per program with at least ``name``, and for the
commands that judge a claim ``verdict`` and ``time_s``), or ``files`` (several files), or
``error`` (``message``, ``file``, ``line``, ``col``, ``text``) when the input could not be used.
The engines' own keys (axioms, intervals, statistics …) stay inside the program objects.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any, Dict, Optional

from ..results import COMMAND_VERDICTS, ERROR, exit_code_of
from ..results import JSON_SCHEMA_VERSION as SCHEMA_VERSION

#: The JSON Schema of every command's output (shipped with the package).
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "tamp-output.schema.json"

#: Each command's verdict words and the exit status of each (``error`` is 2 everywhere), from
#: the one vocabulary :data:`tamp.results.VOCABULARY`.
VERDICTS: Dict[str, Dict[str, int]] = {
    command: {word: exit_code_of(word) for word in words} for command, words in COMMAND_VERDICTS.items()
}


def jsonable(x):
    """Fractions as floats, tuples as lists, everything nested."""
    if isinstance(x, Fraction):
        return float(x)
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


def envelope(command: str, verdict: str, exit_code: int, time_s: float, *bodies: Dict[str, Any], **more: Any):
    """The top-level object: the common keys first, then the keys of ``bodies`` and ``more``
    (``file``, ``programs`` …); the common keys keep the values given here."""
    out: Dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "verdict": verdict,
        "exit_code": exit_code,
        "time_s": round(time_s, 4),
    }
    common = dict(out)
    for body in bodies + (more,):
        out.update(body)
    out.update(common)
    return out


def error_object(exc, file: Optional[str] = None) -> Dict[str, Any]:
    """A :class:`lang.errors.TampError` as ``{"message", "file", "line", "col", "text"}``
    (``line``/``col`` are 0 when the error has no place in a file, e.g. an option)."""
    path = getattr(exc, "path", None)
    return {
        "message": getattr(exc, "message", str(exc)),
        "file": path if path and path != "<string>" else file,
        "line": getattr(exc, "line", 0) or 0,
        "col": getattr(exc, "col", 0) or 0,
        "text": str(exc),
    }


def error_envelope(command: str, exc, file: Optional[str] = None, time_s: float = 0.0) -> Dict[str, Any]:
    """What ``--json`` prints when the input could not be used (exit status 2)."""
    err = error_object(exc, file)
    return envelope(command, ERROR, 2, time_s, file=err["file"], error=err)


def emit(obj) -> None:
    """Print ``obj`` as indented JSON on standard output."""
    json.dump(jsonable(obj), sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
