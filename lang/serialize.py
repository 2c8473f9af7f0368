"""Lossless JSON (de)serialisation of :mod:`lang.ast` nodes.

The printer produces source text, which cannot carry internal names (``$t1``, ``j$``) or
distinguish ``1`` from ``1.0`` exactly; this module does. Every node becomes a JSON object
``{"node": CLASS, field: value, …}``; a :class:`lang.ast.Type` is ``{"type": NAME, "elem": […]}``;
exact rationals are strings ``"p/q"`` (or ``"p"``); tuples are lists. Source positions are
not part of equality and are dropped unless ``with_pos=True``.

>>> from lang.parser import parse_expr
>>> e = parse_expr("abs(x - 0.1) <= n / eps * log(n / p)")
>>> from_json(to_json(e)) == e
True

:func:`from_json` is strict — it is the entry point for untrusted data (proof certificates):
unknown node kinds, missing or unexpected fields and values of the wrong shape raise
:class:`SerializeError` with the JSON path of the offending value.
"""

from __future__ import annotations

import dataclasses
import typing
from fractions import Fraction
from typing import Any, Dict, Type, Union

from lang import ast as A

FORMAT_VERSION = 1


class SerializeError(ValueError):
    """Malformed serialised AST; the message names the JSON path (``$.left.args[0]``)."""


def _node_classes() -> Dict[str, Type[A.Node]]:
    out: Dict[str, Type[A.Node]] = {}
    for name in dir(A):
        cls = getattr(A, name)
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and issubclass(cls, A.Node):
            out[name] = cls
    return out


NODE_CLASSES = _node_classes()
_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(A))
    return _HINTS[cls]


# ---------------------------------------------------------------------------- writing


def fraction_text(v: Fraction) -> str:
    """``"3/10"`` / ``"-2"``: the exact text of a rational."""
    v = Fraction(v)
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


def to_json(x: Any, with_pos: bool = False) -> Any:
    """The JSON form of an AST node, a :class:`lang.ast.Type`, or a tuple/list of them."""
    if isinstance(x, A.Type):
        return {"type": x.name, "elem": [to_json(t) for t in x.elem]}
    if isinstance(x, A.Node) and dataclasses.is_dataclass(x):
        out: Dict[str, Any] = {"node": type(x).__name__}
        for f in dataclasses.fields(x):
            if f.name == "pos":
                if with_pos and x.pos is not None:
                    p = x.pos
                    out["pos"] = [p.line, p.col, p.end_line, p.end_col]
                continue
            v = getattr(x, f.name)
            if f.name == "text" and v is None:
                continue
            out[f.name] = to_json(v, with_pos)
        return out
    if isinstance(x, (tuple, list)):
        return [to_json(v, with_pos) for v in x]
    if isinstance(x, Fraction):
        return fraction_text(x)
    if x is None or isinstance(x, (bool, str, int)):
        return x
    raise SerializeError(f"cannot serialise a {type(x).__name__}")


# ---------------------------------------------------------------------------- reading


def from_json(data: Any, expect: Any = None) -> Any:
    """The AST node (or Type, or tuple) that ``data`` encodes; ``expect`` is the class or typing
    hint it must satisfy (default: any node)."""
    try:
        return _read(data, expect if expect is not None else A.Node, "$")
    except RecursionError:
        raise SerializeError("$: expression nested too deeply") from None


def expr_from_json(data: Any) -> A.Expr:
    """An expression (raises :class:`SerializeError` for anything else)."""
    out: A.Expr = from_json(data, A.Expr)
    return out


def stmt_from_json(data: Any) -> A.Stmt:
    """A statement (raises :class:`SerializeError` for anything else)."""
    out: A.Stmt = from_json(data, A.Stmt)
    return out


def type_from_json(data: Any) -> A.Type:
    out: A.Type = from_json(data, A.Type)
    return out


def parse_fraction(text: Any, where: str) -> Fraction:
    """An exact rational from ``"p/q"`` / ``"p"`` (bounded size: a certificate is not a bignum test)."""
    if not isinstance(text, str) or len(text) > 4000:
        raise SerializeError(f'{where}: expected a rational number as a string like "3/10"')
    try:
        num, _, den = text.partition("/")
        if not _is_int_text(num) or (den and not _is_int_text(den)):
            raise ValueError
        return Fraction(int(num), int(den) if den else 1)
    except (ValueError, ZeroDivisionError):
        raise SerializeError(f"{where}: {text[:40]!r} is not a rational number") from None


def _is_int_text(s: str) -> bool:
    body = s[1:] if s.startswith("-") else s
    return body.isdigit() and body.isascii()


def _read(data: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is Union:
        opts = typing.get_args(hint)
        if data is None:
            if type(None) in opts:
                return None
            raise SerializeError(f"{where}: a value is required here")
        errors = []
        for o in opts:
            if o is type(None):
                continue
            try:
                return _read(data, o, where)
            except SerializeError as exc:
                errors.append(str(exc))
        raise SerializeError(
            errors[0] if len(errors) == 1 else f"{where}: does not match any of the allowed forms ({errors[0]})"
        )
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(data, list):
            raise SerializeError(f"{where}: expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_read(v, args[0], f"{where}[{i}]") for i, v in enumerate(data))
        if len(args) != len(data):
            raise SerializeError(f"{where}: expected a list of {len(args)} items")
        return tuple(_read(v, a, f"{where}[{i}]") for i, (v, a) in enumerate(zip(args, data)))
    if hint is Any:
        return data
    if hint is bool:
        if not isinstance(data, bool):
            raise SerializeError(f"{where}: expected true or false")
        return data
    if hint is str:
        if not isinstance(data, str):
            raise SerializeError(f"{where}: expected a string")
        return data
    if hint is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise SerializeError(f"{where}: expected an integer")
        return data
    if hint is Fraction:
        return parse_fraction(data, where)
    if hint is A.Type:
        return _read_type(data, where)
    if hint is A.Pos:
        if not (isinstance(data, list) and len(data) == 4 and all(type(v) is int for v in data)):
            raise SerializeError(f"{where}: a position is [line, col, end_line, end_col]")
        return A.Pos(*data)
    if isinstance(hint, type) and issubclass(hint, A.Node):
        return _read_node(data, hint, where)
    raise SerializeError(f"{where}: cannot read a value of type {hint}")  # pragma: no cover


_TYPE_NAMES = {"bool": 0, "int": 0, "real": 0, "array": 1, "set": 1, "tuple": None}


def _read_type(data: Any, where: str) -> A.Type:
    if not isinstance(data, dict) or set(data) != {"type", "elem"}:
        raise SerializeError(f'{where}: a type is {{"type": NAME, "elem": [...]}}')
    name, elem = data["type"], data["elem"]
    if name not in _TYPE_NAMES or not isinstance(elem, list):
        raise SerializeError(f"{where}: unknown type {name!r}")
    arity = _TYPE_NAMES[name]
    if arity is not None and len(elem) != arity:
        raise SerializeError(f"{where}: type {name} takes {arity} element type(s)")
    return A.Type(name, tuple(_read_type(t, f"{where}.elem[{i}]") for i, t in enumerate(elem)))


def _read_node(data: Any, want: type, where: str) -> A.Node:
    if not isinstance(data, dict) or not isinstance(data.get("node"), str):
        raise SerializeError(f'{where}: expected a syntax node {{"node": KIND, ...}}')
    kind = data["node"]
    cls = NODE_CLASSES.get(kind)
    if cls is None:
        raise SerializeError(f"{where}: unknown node kind {kind!r}")
    if not issubclass(cls, want):
        raise SerializeError(f"{where}: a {kind} is not allowed here (expected {want.__name__})")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # a dataclass (NODE_CLASSES)
    extra = set(data) - set(fields) - {"node"}
    if extra:
        raise SerializeError(f"{where}: unexpected field(s) {sorted(extra)} in {kind}")
    kwargs = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                continue
            raise SerializeError(f"{where}: {kind} needs the field '{name}'")
        hint = hints[name]
        if name == "pos":
            hint = typing.Optional[A.Pos]
        kwargs[name] = _read(data[name], hint, f"{where}.{name}")
    try:
        return cls(**kwargs)
    except TypeError as exc:  # pragma: no cover - guarded by the field checks above
        raise SerializeError(f"{where}: {exc}") from None
