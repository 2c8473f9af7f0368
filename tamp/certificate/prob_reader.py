"""Reading the ``"probability"`` entries of a certificate: strict shape checks into dataclasses.

Malformed input raises :class:`.reader.MalformedCertificate` with the JSON path (exit 2);
whether the entry certifies anything is :mod:`.prob_checker`'s business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, List, Optional, Tuple

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json

from .cellmass import MassError, Region, parse_rational
from .format import MalformedCertificate, known_keys

CLASSES = ("hit", "miss", "boundary")


@dataclass
class CellCert:
    cls: str
    region: Region
    mass: Tuple[Fraction, Fraction]
    witness: Any
    where: str


@dataclass
class TraceCert:
    choices: Tuple[int, ...]
    cells: List[CellCert]
    where: str
    branches: Tuple[int, ...] = ()  # followed branches (1 then, 0 else); absent = none


@dataclass
class TermCert:
    term: A.Expr
    text: str
    uncovered: Fraction
    traces: List[TraceCert]
    where: str


@dataclass
class ProbCert:
    name: str
    verdict: str
    clauses: List[A.Expr]
    terms: List[TermCert] = field(default_factory=list)


def _obj(d: Any, where: str) -> dict:
    if not isinstance(d, dict):
        raise MalformedCertificate(f"{where}: expected an object")
    return d


def _field(d: dict, key: str, kind, where: str):
    if key not in d:
        raise MalformedCertificate(f"{where}: missing field '{key}'")
    v = d[key]
    if kind is not None and not isinstance(v, kind):
        raise MalformedCertificate(f"{where}.{key}: expected {kind.__name__}")
    return v


def _rat(s: Any, where: str) -> Fraction:
    try:
        return parse_rational(s, where)
    except MassError as exc:
        raise MalformedCertificate(str(exc)) from None


def _expr(data, where):
    try:
        return expr_from_json(data)
    except SerializeError as exc:
        raise MalformedCertificate(f"{where}: {str(exc).replace('$', '', 1)}") from None


def _bound(v, where) -> Optional[Fraction]:
    return None if v is None else _rat(v, where)


def decode_prob(p: Any, where: str) -> ProbCert:
    known_keys(p, ("program", "verdict", "clauses", "terms"), where)
    name = _field(p, "program", str, where)
    verdict = _field(p, "verdict", str, where)
    if verdict not in ("proved", "violated"):
        raise MalformedCertificate(f'{where}.verdict: expected "proved" or "violated"')
    clauses = [_expr(c, f"{where}.clauses[{i}]") for i, c in enumerate(_field(p, "clauses", list, where))]
    out = ProbCert(name, verdict, clauses)
    for i, t in enumerate(_field(p, "terms", list, where)):
        out.terms.append(decode_term(t, f"{where}.terms[{i}]"))
    return out


def decode_term(t: Any, where: str) -> TermCert:
    known_keys(t, ("term", "text", "uncovered", "traces"), where)
    term = _expr(_field(t, "term", None, where), where + ".term")
    traces = []
    for i, tr in enumerate(_field(t, "traces", list, where)):
        w = f"{where}.traces[{i}]"
        known_keys(tr, ("choices", "branches", "cells"), w)
        ch = _field(tr, "choices", list, w)
        if not all(type(x) is int and x >= 0 for x in ch):
            raise MalformedCertificate(f"{w}.choices: expected non-negative integers")
        br = tr.get("branches", [])
        if not isinstance(br, list) or not all(type(x) is int and x in (0, 1) for x in br):
            raise MalformedCertificate(f"{w}.branches: expected a list of 0 and 1")
        cells = [decode_cell(c, f"{w}.cells[{j}]") for j, c in enumerate(_field(tr, "cells", list, w))]
        traces.append(TraceCert(tuple(ch), cells, w, tuple(br)))
    return TermCert(
        term, str(t.get("text", "")), _rat(_field(t, "uncovered", str, where), where + ".uncovered"), traces, where
    )


def decode_cell(c: Any, where: str) -> CellCert:
    known_keys(c, ("class", "box", "cons", "mass", "witness"), where)
    cls = _field(c, "class", str, where)
    if cls not in CLASSES:
        raise MalformedCertificate(f"{where}.class: expected one of {', '.join(CLASSES)}")
    box = {}
    for v, b in _field(c, "box", dict, where).items():
        if not (isinstance(b, list) and len(b) == 2):
            raise MalformedCertificate(f"{where}.box.{v}: expected [lo, hi] (null = unbounded)")
        box[v] = (_bound(b[0], f"{where}.box.{v}"), _bound(b[1], f"{where}.box.{v}"))
    cons = []
    for i, k in enumerate(_field(c, "cons", list, where)):
        w = f"{where}.cons[{i}]"
        known_keys(k, ("coef", "rhs"), w)
        coef = {v: _rat(x, f"{w}.coef.{v}") for v, x in _field(k, "coef", dict, w).items()}
        if not coef or any(x == 0 for x in coef.values()):
            raise MalformedCertificate(f"{w}: a constraint needs non-zero coefficients")
        cons.append((coef, _rat(_field(k, "rhs", str, w), w + ".rhs")))
    mass = _field(c, "mass", list, where)
    if len(mass) != 2:
        raise MalformedCertificate(f"{where}.mass: expected [lo, hi]")
    lo, hi = _rat(mass[0], where + ".mass"), _rat(mass[1], where + ".mass")
    if lo > hi:
        raise MalformedCertificate(f"{where}.mass: lo > hi")
    return CellCert(cls, Region(box, cons), (lo, hi), c.get("witness"), where)
