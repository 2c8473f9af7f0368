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


def convert_inputs(prog: A.Program, inputs: Dict[str, object], path: str = "<string>",
                   source=None) -> Dict[str, object]:
    """Exact input values by parameter name, checked against the parameter types by the one
    input check every command uses (:func:`lang.inputs.check_inputs`); every parameter needs a
    value. Raises a located error naming missing parameters and ill-typed values."""
    try:
        return check_inputs(prog, {k: _plain(v) for k, v in inputs.items()}, path, source, complete=True)
    except TampError as exc:
        raise SimulationError(exc.message, exc.path, exc.line, exc.col, exc.source) from None


def to_numpy(v, type_: A.Type = None):
    """An exact input value as a numpy constant for the vectorised evaluator."""
    if isinstance(v, list) and type_ is not None and type_.name == "array":
        dt = {"bool": bool, "int": np.int64, "real": np.float64}[type_.elem[0].name]
        return np.array([float(x) if dt is np.float64 else x for x in v], dtype=dt)
    if isinstance(v, bool):
        return np.bool_(v)
    if isinstance(v, int):
        return np.int64(v)
    if isinstance(v, Fraction):
        return np.float64(float(v))
    if isinstance(v, list):
        if not v:
            return np.zeros(0)
        if all(isinstance(x, bool) for x in v):
            return np.array(v, dtype=bool)
        if all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            return np.array(v, dtype=np.int64)
        return np.array([float(x) for x in v], dtype=np.float64)
    raise TypeError(f"not an input value: {v!r}")
