"""Reader of the JSON WMI problem format (the "big_random" family layout).

A problem file is a JSON object with

* ``domain``: list of ``[name, "real", [lo, hi]]`` or ``[name, "bool", null]``;
* ``formula``: an s-expression (string) for the support;
* ``weights``: an s-expression for the weight term;
* ``queries`` (optional): a list of s-expressions (query formulas).

S-expression operators: ``(& …)`` and, ``(| …)`` or, ``(~ x)`` not, ``(-> a b)``
implies, ``(<-> a b)`` iff, ``(<= a b)``, ``(< a b)``, ``(>= a b)``, ``(> a b)``,
``(= a b)``, ``(+ …)``, ``(- a b)`` / ``(- a)``, ``(* …)``, ``(/ a c)`` (c constant),
``(^ base (const real k))`` (k a non-negative integer), ``(ite c a b)``,
``(var real x)``, ``(var bool a)``, ``(const real 0.5)``, ``(const bool true)``.

Real constants are converted exactly from the double they denote
(``Fraction(float(text))``): the published reference values were computed from
the doubles, not from the decimal strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from pysmt.shortcuts import (
    GE,
    GT,
    LE,
    LT,
    And,
    Bool,
    Div,
    Equals,
    Iff,
    Implies,
    Ite,
    Minus,
    Not,
    Or,
    Plus,
    Pow,
    Real,
    Symbol,
    Times,
)
from pysmt.typing import BOOL, REAL

from lang.jsonfile import JSONError, loads


class ProblemFormatError(ValueError):
    """The problem file is malformed; the message says where and why."""


@dataclass
class Problem:
    formula: object
    weight: object
    domain: Dict[object, Optional[Tuple[Fraction, Fraction]]]
    queries: List[object] = field(default_factory=list)
    real_vars: List[object] = field(default_factory=list)
    bool_vars: List[object] = field(default_factory=list)


def tokenize(text: str) -> List[str]:
    out: List[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            out.append(ch)
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "()":
                j += 1
            out.append(text[i:j])
            i = j
    return out


def parse_sexpr(text: str):
    """Parse one s-expression into nested Python lists of strings."""
    toks = tokenize(text)
    if not toks:
        raise ProblemFormatError("empty expression")
    pos = 0

    def rec():
        nonlocal pos
        if pos >= len(toks):
            raise ProblemFormatError("unexpected end of expression (missing ')')")
        t = toks[pos]
        pos += 1
        if t == "(":
            items = []
            while True:
                if pos >= len(toks):
                    raise ProblemFormatError("unexpected end of expression (missing ')')")
                if toks[pos] == ")":
                    pos += 1
                    return items
                items.append(rec())
        if t == ")":
            raise ProblemFormatError("unexpected ')'")
        return t

    tree = rec()
    if pos != len(toks):
        raise ProblemFormatError(f"trailing text after expression: {' '.join(toks[pos : pos + 5])!r}")
    return tree


def parse_real_constant(text: str) -> Fraction:
    try:
        v = float(text)
    except ValueError:
        try:
            return Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise ProblemFormatError(f"bad real constant {text!r}") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise ProblemFormatError(f"non-finite real constant {text!r}")
    return Fraction(v)


class _Builder:
    def __init__(self, types: Dict[str, str]):
        self.types = types
        self.symbols: Dict[str, object] = {}

    def symbol(self, name: str, kind: str):
        declared = self.types.get(name)
        if declared is not None and declared != kind:
            raise ProblemFormatError(f"variable {name!r} is declared {declared} but used as {kind}")
        s = self.symbols.get(name)
        if s is None:
            s = Symbol(name, REAL if kind == "real" else BOOL)
            self.symbols[name] = s
        return s

    def build(self, tree):
        if isinstance(tree, str):
            raise ProblemFormatError(f"unexpected bare token {tree!r}")
        if not tree:
            raise ProblemFormatError("empty list '()'")
        op = tree[0]
        args = tree[1:]
        if not isinstance(op, str):
            raise ProblemFormatError("operator position holds a list")

        def need(k):
            if len(args) != k:
                raise ProblemFormatError(f"'{op}' expects {k} argument(s), got {len(args)}")

        if op == "var":
            need(2)
            kind, name = args
            if kind not in ("real", "bool") or not isinstance(name, str):
                raise ProblemFormatError(f"bad variable {tree!r}")
            return self.symbol(name, kind)
        if op == "const":
            need(2)
            kind, val = args
            if kind == "real":
                return Real(parse_real_constant(val))
            if kind == "bool":
                if val.lower() in ("true", "1"):
                    return Bool(True)
                if val.lower() in ("false", "0"):
                    return Bool(False)
            raise ProblemFormatError(f"bad constant {tree!r}")
        sub = [self.build(a) for a in args]
        try:
            return self._apply(op, sub)
        except ProblemFormatError:
            raise
        except Exception as exc:  # pysmt type errors etc.
            raise ProblemFormatError(f"ill-typed '({op} …)': {exc}") from None

    def _apply(self, op, sub):
        n = len(sub)
        if op == "&":
            return And(sub) if sub else Bool(True)
        if op == "|":
            return Or(sub) if sub else Bool(False)
        if op in ("~", "!", "not"):
            self._arity(op, n, 1)
            return Not(sub[0])
        if op in ("->", "=>"):
            self._arity(op, n, 2)
            return Implies(sub[0], sub[1])
        if op in ("<->", "iff"):
            self._arity(op, n, 2)
            return Iff(sub[0], sub[1])
        if op == "<=":
            self._arity(op, n, 2)
            return LE(sub[0], sub[1])
        if op == "<":
            self._arity(op, n, 2)
            return LT(sub[0], sub[1])
        if op == ">=":
            self._arity(op, n, 2)
            return GE(sub[0], sub[1])
        if op == ">":
            self._arity(op, n, 2)
            return GT(sub[0], sub[1])
        if op == "=":
            self._arity(op, n, 2)
            if sub[0].get_type().is_bool_type():
                return Iff(sub[0], sub[1])
            return Equals(sub[0], sub[1])
        if op == "+":
            if not sub:
                return Real(0)
            return Plus(sub) if n > 1 else sub[0]
        if op == "-":
            if n == 1:
                return Times(Real(-1), sub[0])
            if n == 2:
                return Minus(sub[0], sub[1])
            raise ProblemFormatError(f"'-' expects 1 or 2 arguments, got {n}")
        if op == "*":
            if not sub:
                return Real(1)
            return Times(sub) if n > 1 else sub[0]
        if op == "/":
            self._arity(op, n, 2)
            if not sub[1].is_constant():
                raise ProblemFormatError("division by a non-constant")
            return Div(sub[0], sub[1])
        if op in ("^", "pow"):
            self._arity(op, n, 2)
            e = sub[1]
            if not e.is_constant():
                raise ProblemFormatError("exponent of '^' must be a constant")
            k = Fraction(e.constant_value())
            if k.denominator != 1 or k < 0:
                raise ProblemFormatError(f"exponent of '^' must be a non-negative integer, got {k}")
            return Pow(sub[0], Real(int(k)))
        if op == "ite":
            self._arity(op, n, 3)
            return Ite(sub[0], sub[1], sub[2])
        raise ProblemFormatError(f"unknown operator {op!r}")

    @staticmethod
    def _arity(op, n, k):
        if n != k:
            raise ProblemFormatError(f"'{op}' expects {k} argument(s), got {n}")


def problem_from_dict(data) -> Problem:
    if not isinstance(data, dict):
        raise ProblemFormatError("top level must be a JSON object")
    for key in ("domain", "formula", "weights"):
        if key not in data:
            raise ProblemFormatError(f"missing key {key!r}")
    dom = data["domain"]
    if not isinstance(dom, list):
        raise ProblemFormatError("'domain' must be a list")
    types: Dict[str, str] = {}
    bounds: Dict[str, Optional[Tuple[Fraction, Fraction]]] = {}
    order: List[str] = []
    for entry in dom:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
            raise ProblemFormatError(f"bad domain entry {entry!r} (want [name, type, bounds])")
        name, kind, bd = entry
        if name in types:
            raise ProblemFormatError(f"variable {name!r} declared twice")
        if kind == "real":
            if not (
                isinstance(bd, list)
                and len(bd) == 2
                and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bd)
            ):
                raise ProblemFormatError(f"real variable {name!r} needs bounds [lo, hi], got {bd!r}")
            lo, hi = Fraction(bd[0]), Fraction(bd[1])
            if lo > hi:
                raise ProblemFormatError(f"empty bounds for {name!r}: [{bd[0]}, {bd[1]}]")
            bounds[name] = (lo, hi)
        elif kind == "bool":
            bounds[name] = None
        else:
            raise ProblemFormatError(f"variable {name!r} has unknown type {kind!r}")
        types[name] = kind
        order.append(name)
    b = _Builder(types)
    for name in order:
        b.symbol(name, types[name])

    def build(key, text):
        if not isinstance(text, str):
            raise ProblemFormatError(f"{key} must be an s-expression string")
        try:
            return b.build(parse_sexpr(text))
        except ProblemFormatError as exc:
            raise ProblemFormatError(f"in {key}: {exc}") from None

    formula = build("formula", data["formula"])
    weight = build("weights", data["weights"])
    if not formula.get_type().is_bool_type():
        raise ProblemFormatError("formula is not Boolean")
    if not weight.get_type().is_real_type():
        raise ProblemFormatError("weights is not a real term")
    queries = []
    for i, q in enumerate(data.get("queries") or []):
        qf = build(f"query {i}", q)
        if not qf.get_type().is_bool_type():
            raise ProblemFormatError(f"query {i} is not Boolean")
        queries.append(qf)
    undeclared = sorted(set(b.symbols) - set(types))
    if undeclared:
        raise ProblemFormatError(f"undeclared variable(s): {', '.join(undeclared)}")
    domain = {b.symbols[name]: bounds[name] for name in order}
    return Problem(
        formula=formula,
        weight=weight,
        domain=domain,
        queries=queries,
        real_vars=[b.symbols[nm] for nm in order if types[nm] == "real"],
        bool_vars=[b.symbols[nm] for nm in order if types[nm] == "bool"],
    )


def load_problem(path) -> Problem:
    """Read a JSON problem file; raises :class:`ProblemFormatError` if malformed."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ProblemFormatError(f"cannot read file: {exc.strerror or exc}") from None
    try:
        data = loads(raw)  # strict JSON: UTF-8, no NaN or duplicate keys (errors name where)
    except JSONError as exc:
        raise ProblemFormatError(f"invalid JSON: {exc}") from None
    return problem_from_dict(data)
