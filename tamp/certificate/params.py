"""Lossless JSON form of an axiom family's parameter.

Parameters are, by family kind (see :mod:`axioms.base`): an expression (real families), a
string (Bernoulli / support choices), a set of support points (``uniform_finite``: ints,
rationals, booleans or pairs of them), or a tuple of these (a union-bound instance).

=====================  ===================================
Python value           JSON
=====================  ===================================
``None``               ``null``
``"none"``             ``{"choice": "none"}``
an ``lang.ast.Expr``   ``{"expr": <serialised AST>}``
``frozenset`` of pts   ``{"subset": [<point>, …]}`` (sorted by their JSON text)
``(a, b)``             ``{"tuple": [<param>, …]}``
a point 3 / 1/2 / true ``{"num": "3"}`` / ``{"num": "1/2"}`` / ``{"bool": true}``
a pair point           ``{"pair": [<point>, <point>]}``
=====================  ===================================
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json, fraction_text, parse_fraction, to_json


def param_to_json(p: Any) -> Any:
    """The JSON form of a family parameter (raises :class:`SerializeError` for unknown kinds)."""
    if p is None:
        return None
    if isinstance(p, A.Expr):
        return {"expr": to_json(p)}
    if isinstance(p, str):
        return {"choice": p}
    if isinstance(p, (frozenset, set)):
        pts = [point_to_json(x) for x in p]
        return {"subset": sorted(pts, key=lambda x: json.dumps(x, sort_keys=True))}
    if isinstance(p, tuple):
        return {"tuple": [param_to_json(x) for x in p]}
    raise SerializeError(f"cannot serialise an axiom parameter of type {type(p).__name__}")


def point_to_json(x: Any) -> Any:
    if isinstance(x, bool):
        return {"bool": x}
    if isinstance(x, (int, Fraction)):
        return {"num": fraction_text(Fraction(x))}
    if isinstance(x, tuple) and len(x) == 2:
        return {"pair": [point_to_json(x[0]), point_to_json(x[1])]}
    raise SerializeError(f"cannot serialise a support point of type {type(x).__name__}")


def param_from_json(d: Any, where: str = "param") -> Any:
    """Inverse of :func:`param_to_json`; strict (untrusted input)."""
    if d is None:
        return None
    if not isinstance(d, dict) or len(d) != 1:
        raise SerializeError(f"{where}: an axiom parameter is null or a one-key object")
    ((key, val),) = d.items()
    if key == "expr":
        return expr_from_json(val)
    if key == "choice":
        if not isinstance(val, str):
            raise SerializeError(f"{where}: a choice is a string")
        return val
    if key == "subset":
        if not isinstance(val, list):
            raise SerializeError(f"{where}: a subset is a list of points")
        return frozenset(point_from_json(x, f"{where}.subset[{i}]") for i, x in enumerate(val))
    if key == "tuple":
        if not isinstance(val, list):
            raise SerializeError(f"{where}: a tuple is a list")
        return tuple(param_from_json(x, f"{where}.tuple[{i}]") for i, x in enumerate(val))
    raise SerializeError(f"{where}: unknown parameter kind {key!r}")


def point_from_json(d: Any, where: str) -> Any:
    if isinstance(d, dict) and len(d) == 1:
        ((key, val),) = d.items()
        if key == "bool" and isinstance(val, bool):
            return val
        if key == "num":
            f = parse_fraction(val, where)
            return f.numerator if f.denominator == 1 else f
        if key == "pair" and isinstance(val, list) and len(val) == 2:
            return (point_from_json(val[0], where + ".pair[0]"), point_from_json(val[1], where + ".pair[1]"))
    raise SerializeError(f'{where}: a support point is {{"num": "p/q"}}, {{"bool": b}} or {{"pair": [a, b]}}')
