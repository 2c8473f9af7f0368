"""Symbolic terms: the value of a program variable as an expression over the inputs.

A :class:`Term` is either a constant, an input, or an operator applied to terms.
The smart constructor :func:`op` folds constants (exactly, with Fractions), so
that a program executed with some inputs fixed collapses to the part that still
depends on the free ones. Every term knows its sort: ``"bool"``, ``"int"`` or
``"real"``.

Operators: ``+ - * / div mod neg max min abs ite`` (arithmetic),
``< <= > >= == !=`` (comparison), ``and or not`` (Boolean).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Set, Tuple, Union

from lang import ops

Value = Union[bool, int, Fraction]

ARITH = {"+", "-", "*", "/", "div", "mod", "neg", "max", "min", "abs"}
COMPARE = {"<", "<=", ">", ">=", "==", "!="}
LOGIC = {"and", "or", "not"}


class Term:
    """Base class of terms (for isinstance checks)."""

    sort: str


@dataclass(frozen=True, eq=False)
class Const(Term):
    """A constant: a bool, or an exact number (``sort`` "int" when it is an integer literal)."""

    value: Value
    sort: str


@dataclass(frozen=True, eq=False)
class Input(Term):
    """A program input (a parameter that is not fixed)."""

    name: str
    sort: str


@dataclass(frozen=True, eq=False)
class Op(Term):
    """An operator applied to argument terms."""

    name: str
    args: Tuple[Term, ...]
    sort: str


TRUE = Const(True, "bool")
FALSE = Const(False, "bool")


def const(v: Value, sort: Optional[str] = None) -> Const:
    """A constant term, its sort inferred from the Python value unless given."""
    if isinstance(v, bool):
        return TRUE if v else FALSE
    if sort is None:
        sort = "int" if isinstance(v, int) else "real"
    if sort == "int":
        v = int(v)
    else:
        v = Fraction(v)
    return Const(v, sort)


def is_const(t: Term) -> bool:
    return isinstance(t, Const)


def same(a: Term, b: Term) -> bool:
    """Structural equality of two terms (identical terms have identical values everywhere)."""
    if a is b:
        return True
    if type(a) is not type(b) or a.sort != b.sort:
        return False
    if isinstance(a, Const) and isinstance(b, Const):
        return a.value == b.value
    if isinstance(a, Input) and isinstance(b, Input):
        return a.name == b.name
    if isinstance(a, Op) and isinstance(b, Op):
        return a.name == b.name and len(a.args) == len(b.args) and all(same(x, y) for x, y in zip(a.args, b.args))
    return False  # (Const, Input and Op are the only terms)


def _num_sort(*ts: Term) -> str:
    return "int" if all(t.sort == "int" for t in ts) else "real"


#: the causal engine's operator names that are not the language's spelling
_NAMED = {
    "neg": ops.UNARY["-"].exact,
    "not": ops.UNARY["!"].exact,
    "ite": ops.ite,
    "max": ops.FUNCTIONS["max"][1],
    "min": ops.FUNCTIONS["min"][1],
    "abs": ops.FUNCTIONS["abs"][1],
}


def apply_value(name: str, vals):
    """Evaluate operator ``name`` on concrete values: the language's meaning (:mod:`lang.ops`:
    exact, Euclidean ``div``/``mod``; division by zero raises ``ZeroDivisionError``)."""
    meaning = ops.BINARY.get(name)
    if meaning is not None and meaning.kind != "logic":
        return meaning.exact(vals[0], vals[1])
    if name == "and":
        return all(vals)
    if name == "or":
        return any(vals)
    f = _NAMED.get(name)
    if f is None:
        raise ValueError(f"unknown operator {name}")
    return f(*vals)


def op(name: str, *args: Term) -> Term:
    """Build ``name(args)``, folding constants and trivial identities."""
    if name == "ite":
        c, a, b = args
        if isinstance(c, Const):
            return a if c.value else b
        if same(a, b):
            return a
        if a.sort == "bool":
            return Op("ite", args, "bool")
        return Op("ite", args, _num_sort(a, b))
    if name in ("and", "or"):
        flat: List[Term] = []
        for a in args:
            if isinstance(a, Const):
                if a.value == (name == "or"):
                    return a
                continue
            flat.extend(a.args if isinstance(a, Op) and a.name == name else (a,))
        if not flat:
            return TRUE if name == "and" else FALSE
        return flat[0] if len(flat) == 1 else Op(name, tuple(flat), "bool")
    consts = [a for a in args if isinstance(a, Const)]
    if len(consts) == len(args):
        v = apply_value(name, [a.value for a in consts])
        if name in COMPARE or name in LOGIC:
            return const(bool(v))
        if name == "/":
            return Const(Fraction(v), "real")
        sort = _num_sort(*args)
        return Const(int(v), "int") if sort == "int" else Const(Fraction(v), "real")
    if name == "not":
        a = args[0]
        if isinstance(a, Op) and a.name == "not":
            return a.args[0]
        return Op("not", args, "bool")
    if name in COMPARE:
        if same(args[0], args[1]):
            return const(name in ("<=", ">=", "=="))
        return Op(name, args, "bool")
    if name == "+":
        a, b = args
        if isinstance(a, Const) and a.value == 0:
            return b if b.sort == _num_sort(a, b) else Op(name, args, "real")
        if isinstance(b, Const) and b.value == 0:
            return a if a.sort == _num_sort(a, b) else Op(name, args, "real")
    if name == "-" and isinstance(args[1], Const) and args[1].value == 0 and args[0].sort == _num_sort(*args):
        return args[0]
    if name == "*":
        a, b = args
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Const) and x.value == 0:
                return const(0, _num_sort(a, b))
            if isinstance(x, Const) and x.value == 1 and y.sort == _num_sort(a, b):
                return y
    if name == "/":
        return Op("/", args, "real")
    if name in ("div", "mod"):
        return Op(name, args, "int")
    return Op(name, args, _num_sort(*args))


def evaluate(t: Term, env: Dict[str, Value], memo: Optional[Dict[int, Value]] = None) -> Value:
    """The exact value of ``t`` with inputs from ``env`` (name -> value)."""
    memo = {} if memo is None else memo
    key = id(t)
    if key in memo:
        return memo[key]
    if isinstance(t, Const):
        v = t.value
    elif isinstance(t, Input):
        v = env[t.name]
    elif not isinstance(t, Op):
        raise TypeError(f"not a term: {t!r}")
    elif t.name == "ite":
        v = evaluate(t.args[1], env, memo) if evaluate(t.args[0], env, memo) else evaluate(t.args[2], env, memo)
    elif t.name == "and":
        v = all(evaluate(a, env, memo) for a in t.args)
    elif t.name == "or":
        v = any(evaluate(a, env, memo) for a in t.args)
    else:
        v = apply_value(t.name, [evaluate(a, env, memo) for a in t.args])
    memo[key] = v
    return v


def inputs_of(t: Term, acc: Optional[Set[str]] = None, seen: Optional[Set[int]] = None) -> Set[str]:
    """Names of the inputs ``t`` reads."""
    acc = set() if acc is None else acc
    seen = set() if seen is None else seen
    stack = [t]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, Input):
            acc.add(x.name)
        elif isinstance(x, Op):
            stack.extend(x.args)
    return acc


def size(t: Term) -> int:
    """Number of distinct nodes of the term DAG."""
    seen: Set[int] = set()
    stack = [t]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, Op):
            stack.extend(x.args)
    return len(seen)
