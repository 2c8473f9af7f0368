"""Checking and converting concrete inputs against a program's parameters."""

from __future__ import annotations

from fractions import Fraction
from typing import Dict

import numpy as np

from lang import ast as A
from lang.errors import TampError
from lang.inputs import check_inputs

from .errors import SimulationError


def _plain(v):
    """numpy scalars and arrays as Python values (the API accepts them)."""
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def convert_inputs(
    prog: A.Program, inputs: Dict[str, object], path: str = "<string>", source=None
) -> Dict[str, object]:
    """Exact input values by parameter name, checked against the parameter types by the one
    input check every command uses (:func:`lang.inputs.check_inputs`); every parameter needs a
    value. Raises a located error naming missing parameters and ill-typed values."""
    try:
        return check_inputs(prog, {k: _plain(v) for k, v in inputs.items()}, path, source, complete=True)
    except TampError as exc:
        raise SimulationError(exc.message, exc.path, exc.line, exc.col, exc.source) from None


def to_domain(v, type_: A.Type, dom, err):
    """An exact input value in the evaluator's number domain (reals exact or as balls)."""

    def scalar(x, base):
        if base == "bool":
            return np.bool_(x)
        if base == "int":
            if abs(int(x)) >= 2**62:
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
