"""Concrete input values for a program's parameters: ``--input NAME=VALUE`` and the API's dicts.

One reader for the option's text (:func:`parse_assignment`) and one check of values against the
parameters' types (:func:`check_inputs`), used by every command and by ``tamp.api``:

>>> parse_assignment("q=[1, 2.5]")
('q', [1, Fraction(5, 2)])
>>> from lang.parser import parse
>>> prog = parse("program p(n: int) { skip; }").programs[0]
>>> check_inputs(prog, {"n": 0.5})
Traceback (most recent call last):
...
lang.errors.TypeCheckError: <string>:1:11: error: input 'n' (parameter n: int) must be an integer, got 0.5

Values are exact: ``int`` for integers, :class:`fractions.Fraction` for other numbers (a float
through its shortest decimal), ``bool`` for ``true``/``false``, lists for arrays.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Dict, Iterable, List, Optional, Tuple, Union

from . import ast as A
from .errors import TampError, TypeCheckError, error_at
from .parser import parse_number
from .suggest import closest

Value = object  # bool | int | Fraction | list of those


# --------------------------------------------------------------------------- the option's text


def parse_value(text: str, name: str = "input") -> Value:
    """An input value: an integer or decimal (``8``, ``-0.5``, ``1e-3``, ``1/3``), ``true``/``false``,
    or an array ``[1, 2.5]``. Raises :class:`ValueError` with a message for anything else."""
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return [_scalar(x, text, name) for x in inner.split(",")] if inner else []
    return _scalar(t, text, name)


def _scalar(t: str, whole: str, name: str) -> Union[bool, int, Fraction]:
    t = t.strip()
    if t in ("true", "false"):
        return t == "true"
    neg = t.startswith("-")
    try:
        n = parse_number(t[1:] if neg else t)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"bad value for {name}: {whole!r} (expected a number, true/false or [..])") from None
    v = int(n.value) if n.is_int else n.value
    return -v if neg else v


def parse_assignment(item: str) -> Tuple[str, Value]:
    """``"n=8"`` -> ``("n", 8)``. Raises :class:`ValueError` with a message."""
    if "=" not in item:
        raise ValueError(f"expected NAME=VALUE, got {item!r}")
    name, value = item.split("=", 1)
    name = name.strip()
    if not name.isidentifier():
        raise ValueError(f"{name!r} is not a name")
    return name, parse_value(value, name)


# --------------------------------------------------------------------------- values against types


def show(v: object) -> str:
    """A value as the user would write it (``0.5``, ``1/3``, ``true``, ``[1, 2]``)."""
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(show(x) for x in v) + "]"
    if isinstance(v, Fraction) and v.denominator != 1:
        d, k2, k5 = v.denominator, 0, 0
        while d % 2 == 0:
            d, k2 = d // 2, k2 + 1
        while d % 5 == 0:
            d, k5 = d // 5, k5 + 1
        k = max(k2, k5)
        if d != 1 or k > 30:
            return f"{v.numerator}/{v.denominator}"
        digits = str(abs(int(v * 10**k))).rjust(k + 1, "0")
        return ("-" if v < 0 else "") + digits[:-k] + "." + digits[-k:]
    return str(v)


def _exact(v: object) -> Union[int, Fraction, None]:
    """An exact number from a Python number; None when ``v`` is not a finite number."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, Fraction)):
        return v
    if isinstance(v, float):
        return Fraction(repr(v)) if math.isfinite(v) else None
    return None


_WANT = {"bool": "true or false", "int": "an integer", "real": "a number"}


def _scalar_of(v: object, base: str) -> Tuple[object, Optional[str]]:
    """(converted value, None) or (None, what a value of type ``base`` must be)."""
    if base == "bool":
        return (v, None) if isinstance(v, bool) else (None, "must be true or false")
    if isinstance(v, (list, tuple, bool)):
        return None, f"must be {_WANT[base]}"
    x = _exact(v)
    if x is None:
        return None, f"must be {'a finite number' if base == 'real' else _WANT[base]}"
    if base == "int":
        if Fraction(x).denominator != 1:
            return None, "must be an integer"
        return int(x), None
    return x, None


def check_value(value: object, type_: A.Type) -> Tuple[object, Optional[str]]:
    """``value`` converted to parameter type ``type_`` (exact), or (None, what it must be)."""
    if type_.name == "array":
        if not isinstance(value, (list, tuple)):
            return None, "must be an array like [1, 2, 3]"
        out = []
        for i, x in enumerate(value):
            y, why = _scalar_of(x, type_.elem[0].name)
            if why is not None:
                return None, f"element [{i}] = {show(x)} {why}"
            out.append(y)
        return out, None
    if type_.name in ("bool", "int", "real"):
        return _scalar_of(value, type_.name)
    return None, f"cannot be given: a parameter of type {type_} takes no input"


def check_inputs(
    prog: A.Program,
    inputs: Dict[str, Value],
    path: str = "<string>",
    source: Optional[str] = None,
    complete: bool = False,
) -> Dict[str, Value]:
    """The exact values of ``prog``'s parameters among ``inputs`` (names that are not its
    parameters are left out: see :func:`check_known`). A value of the wrong type is a
    :class:`TypeCheckError` located at the parameter, naming it and its type; with ``complete``
    every parameter needs a value."""
    if complete:
        missing = [p.name for p in prog.params if p.name not in inputs]
        if missing:
            raise error_at(
                TypeCheckError,
                f"program '{prog.name}' needs a value for every parameter; missing: "
                + ", ".join(missing)
                + " (give them with --input NAME=VALUE)",
                prog.pos,
                path,
                source,
            )
    out: Dict[str, Value] = {}
    for p in prog.params:
        if p.name not in inputs:
            continue
        value = inputs[p.name]
        got, why = check_value(value, p.type)
        if why is not None:
            raise error_at(
                TypeCheckError,
                f"input '{p.name}' (parameter {p.name}: {p.type}) {why}, got {show(value)}",
                p.pos or prog.pos,
                path,
                source,
            )
        out[p.name] = got
    return out


def check_known(progs: Iterable[A.Program], inputs: Dict[str, Value], path: str = "<string>") -> None:
    """An input that none of ``progs`` has as a parameter is an error (a typo?)."""
    progs = list(progs)
    known = {p.name for prog in progs for p in prog.params}
    extra = sorted(k for k in inputs if k not in known)
    if extra:
        names = ", ".join(sorted(known)) or "none"
        near = {k: closest(k, known) for k in extra}
        hints = [f"'{m}'" if len(extra) == 1 else f"'{m}' for '{k}'" for k, m in near.items() if m]
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise TampError(f"unknown input(s) {', '.join(extra)}{hint} (parameters: {names})", path)
        raise TampError(f"unknown input(s) {', '.join(extra)} (parameters: {names})", path)


def _literal(value: object, name: str) -> A.Expr:
    if isinstance(value, bool):
        return A.BoolLit(value)
    if isinstance(value, int):
        return A.num(value)
    if isinstance(value, Fraction):
        return A.Num(value, False)
    raise TampError(f"--input {name}: only numbers and true/false can be fixed for the prover")


def fix_inputs(prog: A.Program, inputs: Dict[str, Value]) -> A.Program:
    """Add ``requires name == value`` for each fixed input of ``prog`` (the claim is then about
    those); ``inputs`` are checked values (:func:`check_inputs`), names of other programs' inputs
    are skipped."""
    extra: List[A.Expr] = []
    for name, value in inputs.items():
        if prog.param(name) is None:
            continue
        if isinstance(value, list):
            for i, v in enumerate(value):
                extra.append(A.Binary("==", A.Index(A.Var(name), A.num(i)), _literal(v, name)))
            continue
        extra.append(A.Binary("==", A.Var(name), _literal(value, name)))
    return dataclasses.replace(prog, requires=prog.requires + tuple(extra))
