"""Strict JSON for the files users hand to tamp (certificates, WMI problems).

Python's :mod:`json` accepts things that are not JSON or that silently change meaning: ``NaN``
and ``Infinity``, a number such as ``1e400`` that becomes ``inf``, the same key twice (the last
one wins), and integers beyond the interpreter's 4300-digit conversion limit raise an unrelated
``ValueError``. :func:`loads` refuses each of them with the JSON path of the offending value:

>>> loads('{"a": [1, NaN]}')
Traceback (most recent call last):
...
lang.jsonfile.JSONError: $.a[1]: NaN is not a JSON number
>>> loads('{"a": 1, "a": 2}')
Traceback (most recent call last):
...
lang.jsonfile.JSONError: $: the key "a" appears twice
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Tuple, Union

MAX_INT_DIGITS = 4000  # below Python's int/str conversion limit (4300), so every value prints


class JSONError(ValueError):
    """Not strict JSON; the message starts with the JSON path (``$.programs[0].bound``) or the
    line and column of a syntax error."""


class _Bad:
    """A value that is not acceptable, found while parsing (reported with its path afterwards)."""

    def __init__(self, why: str):
        self.why = why


class _Duplicate(Dict[str, Any]):
    """An object in which some key appeared twice."""

    key = ""


def _int(text: str) -> Union[int, _Bad]:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Bad(f"an integer of {digits} digits is too long (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> Union[float, _Bad]:
    v = float(text)
    if not math.isfinite(v):
        return _Bad(f"the number {text[:40]} is out of range")
    return v


def _constant(text: str) -> _Bad:
    return _Bad(f"{text} is not a JSON number")


def _object(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            dup = _Duplicate(out)
            dup.key = k
            return dup
        out[k] = v
    return out


def _key(k: str) -> str:
    return f".{k}" if k.isidentifier() else f"[{json.dumps(k)}]"


def _check(data: Any) -> None:
    """Raise for the first unacceptable value, with its path (iterative: no recursion limit)."""
    stack = [(data, "$")]
    while stack:
        v, where = stack.pop()
        if isinstance(v, _Bad):
            raise JSONError(f"{where}: {v.why}")
        if isinstance(v, _Duplicate):
            raise JSONError(f"{where}: the key {json.dumps(v.key)} appears twice")
        if isinstance(v, dict):
            stack.extend((x, where + _key(k)) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((x, f"{where}[{i}]") for i, x in reversed(list(enumerate(v))))


def loads(data: Union[str, bytes]) -> Any:
    """Parse strict JSON text (or UTF-8 bytes); raises :class:`JSONError`."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
            raise JSONError(f"{line}:{col}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from None
    else:
        text = data
    try:
        out = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        raise JSONError(f"{exc.lineno}:{exc.colno}: malformed JSON: {exc.msg}") from None
    except RecursionError:
        raise JSONError("$: nested too deeply") from None
    _check(out)
    return out
