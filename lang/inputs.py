"""Input values written as text, as ``--input NAME=VALUE`` and ``benchmarks/inputs.json`` give them,
and a program with some inputs fixed to values (:func:`fix_inputs`).

>>> parse_inputs(["n=8", "eps=0.5", "q=[1, -2]", "flag=true"])
{'n': 8, 'eps': Fraction(1, 2), 'q': [1, -2], 'flag': True}
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Dict, List

from . import ast as A
from .errors import TampError
from .parser import parse_number


def parse_value(text: str, name: str = "input"):
    """An input value: integer/decimal (exact Fraction or int), true/false, or a list ``[1, 2.5]``."""
    t = text.strip()
    if t in ("true", "false"):
        return t == "true"
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return [parse_value(x, name) for x in inner.split(",")] if inner else []
    neg = t.startswith("-")
    body = t[1:] if neg else t
    try:
        n = parse_number(body)
    except (ValueError, ZeroDivisionError):
        raise TampError(f"bad value for {name}: {text!r} (expected a number, true/false or [..])", "--input") from None
    v = int(n.value) if n.is_int else n.value
    return -v if neg else v


def parse_inputs(items: List[str]) -> Dict[str, object]:
    """``["n=8", "q=[1,2]"]`` → ``{"n": 8, "q": [1, 2]}``."""
    out: Dict[str, object] = {}
    for item in items:
        if "=" not in item:
            raise TampError(f"--input expects NAME=VALUE, got {item!r}", "--input")
        k, v = item.split("=", 1)
        k = k.strip()
        if not k.isidentifier():
            raise TampError(f"{k!r} is not a name", "--input")
        out[k] = parse_value(v, k)
    return out


def _literal(value, name: str) -> A.Expr:
    if isinstance(value, bool):
        return A.BoolLit(value)
    if isinstance(value, int):
        return A.num(value)
    if isinstance(value, Fraction):
        return A.Num(value, False)
    raise TampError(f"--input {name}: only numbers and true/false can be fixed for the prover")


def fix_inputs(prog: A.Program, inputs: Dict[str, object]) -> A.Program:
    """Add ``requires name == value`` for each fixed scalar input (the claim is then about those)."""
    extra = []
    for name, value in inputs.items():
        if prog.param(name) is None:
            raise TampError(f"--input {name}: program '{prog.name}' has no parameter '{name}'")
        if isinstance(value, list):
            for i, v in enumerate(value):
                extra.append(A.Binary("==", A.Index(A.Var(name), A.num(i)), _literal(v, name)))
            continue
        extra.append(A.Binary("==", A.Var(name), _literal(value, name)))
    return dataclasses.replace(prog, requires=prog.requires + tuple(extra))
