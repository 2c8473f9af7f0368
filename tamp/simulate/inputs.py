"""Checking and converting concrete inputs against a program's parameters."""

from __future__ import annotations

from fractions import Fraction
from typing import Dict

import numpy as np

from lang import ast as A
from lang.errors import error_at

from .errors import SimulationError
from .exact import as_exact


def _describe(v) -> str:
    return "true" if v is True else "false" if v is False else str(v)


def _convert_scalar(v, base: str, name: str, err):
    """One exact value of base type ``base`` ("bool" | "int" | "real")."""
    if base == "bool":
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        raise err(f"input '{name}' must be true or false, got {_describe(v)}")
    if isinstance(v, (bool, np.bool_)) or isinstance(v, (list, tuple)):
        raise err(f"input '{name}' must be a number, got {_describe(v)}")
    if isinstance(v, np.generic):
        v = v.item()
    v = as_exact(v)
    if not isinstance(v, (int, Fraction)):
        raise err(f"input '{name}' must be a finite number, got {_describe(v)}")
    if base == "int":
        if Fraction(v).denominator != 1:
            raise err(f"input '{name}' must be an integer, got {_describe(v)}")
        return int(v)
    return v


def convert_inputs(prog: A.Program, inputs: Dict[str, object], path: str = "<string>",
                   source=None) -> Dict[str, object]:
    """Exact input values by parameter name, checked against the parameter types.

    Raises a located :class:`SimulationError` naming missing parameters, unknown names
    and ill-typed values.
    """
    def err(msg):
        return error_at(SimulationError, msg, prog.pos, path, source)

    missing = [p.name for p in prog.params if p.name not in inputs]
    if missing:
        raise err(f"program '{prog.name}' needs a value for every parameter; missing: "
                  + ", ".join(missing) + " (give them with --input NAME=VALUE)")
    out: Dict[str, object] = {}
    for p in prog.params:
        v = inputs[p.name]
        if p.type.name == "array":
            if isinstance(v, np.ndarray):
                v = v.tolist()
            if not isinstance(v, (list, tuple)):
                raise err(f"input '{p.name}' must be an array like [1, 2, 3], got {_describe(v)}")
            out[p.name] = [_convert_scalar(x, p.type.elem[0].name, p.name, err) for x in v]
        elif p.type.name in ("bool", "int", "real"):
            out[p.name] = _convert_scalar(v, p.type.name, p.name, err)
        else:
            raise err(f"parameter '{p.name}' of type {p.type} cannot be given a value")
    return out


def check_no_extra(progs, inputs: Dict[str, object], path: str = "<string>") -> None:
    """An input that no selected program has as a parameter is a usage error (a typo?)."""
    known = {p.name for prog in progs for p in prog.params}
    extra = sorted(k for k in inputs if k not in known)
    if extra:
        names = ", ".join(sorted(known)) or "none"
        raise SimulationError(f"unknown input(s) {', '.join(extra)} (parameters: {names})", path)


def to_domain(v, type_: A.Type, dom, err):
    """An exact input value in the evaluator's number domain (reals exact or as balls)."""
    def scalar(x, base):
        if base == "bool":
            return np.bool_(x)
        if base == "int":
            if abs(int(x)) >= 2 ** 62:
                raise err(f"input value {x} is too large for the simulator (64-bit ints)")
            return np.int64(int(x))
        return dom.lit(Fraction(x))

    if type_.name == "array":
        base = type_.elem[0].name
        items = [scalar(x, base) for x in v]
        if not items:
            return np.zeros(0, dtype={"bool": bool, "int": np.int64}.get(base, dom.blank(0).dtype))
        return np.stack([np.asarray(x) for x in items])
    return scalar(v, type_.name)
