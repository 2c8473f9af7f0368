"""The input region of a causal-fairness claim: a box over the non-sensitive inputs,
the sensitive input's values, and the per-value validity (``requires``) terms.

``requires`` conjuncts of the form ``x op c`` / ``c op x`` (c a constant
expression) bound the box; all conjuncts — bounds included, with their
strictness — are kept in the validity terms so SMT witnesses satisfy
``requires`` exactly. The sensitive values come from ``independent(e, s in {…})``,
from a Boolean type, from integer bounds on ``s``, or from a conjunct
``s == a || s == b || …``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from lang import ast as A
from lang.walk import operands

from . import terms as T
from .symexec import Context, expr_term, sort_of_type

MAX_SENSITIVE_VALUES = 64


@dataclass(frozen=True)
class Dim:
    """One non-sensitive input: its sort and its range from ``requires`` (None = unbounded)."""

    name: str
    sort: str
    lo: Optional[Fraction]
    hi: Optional[Fraction]

    @property
    def bounded(self) -> bool:
        return self.lo is not None and self.hi is not None


@dataclass(frozen=True)
class Region:
    dims: Tuple[Dim, ...]
    sensitive: str
    values: Tuple[object, ...]


def conjuncts(e: A.Expr) -> List[A.Expr]:
    """Split ``a && b && …`` into its parts."""
    return operands(e, "&&")


def _disjuncts(e: A.Expr) -> List[A.Expr]:
    return operands(e, "||")


def _const(e: A.Expr, ctx: Context):
    try:
        t = expr_term(e, {}, ctx)
    except Exception:
        return None
    return t.value if isinstance(t, T.Const) and t.sort != "bool" else None


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def bound_of(e: A.Expr, ctx: Context):
    """``(name, op, value)`` when ``e`` is ``x op c`` or ``c op x`` (normalised to x on the left), else None."""
    if not (isinstance(e, A.Binary) and e.op in _FLIP):
        return None
    if isinstance(e.left, A.Var):
        c = _const(e.right, ctx)
        if c is not None:
            return e.left.name, e.op, Fraction(c)
    if isinstance(e.right, A.Var):
        c = _const(e.left, ctx)
        if c is not None:
            return e.right.name, _FLIP[e.op], Fraction(c)
    return None


def box_bounds(prog: A.Program, ctx: Context) -> Dict[str, List[Optional[Fraction]]]:
    """Per parameter, the [lo, hi] implied by the bound conjuncts of ``requires`` (ints rounded inward)."""
    sorts = {p.name: sort_of_type(p.type, ctx, p) for p in prog.params}
    out: Dict[str, List[Optional[Fraction]]] = {n: [None, None] for n in sorts}
    for req in prog.requires:
        for c in conjuncts(req):
            b = bound_of(c, ctx)
            if b is None or b[0] not in sorts:
                continue
            name, o, v = b
            lo, hi = v, v
            if sorts[name] == "int":
                lo = Fraction(math.ceil(v) + (1 if o == ">" and v == math.ceil(v) else 0))
                hi = Fraction(math.floor(v) - (1 if o == "<" and v == math.floor(v) else 0))
            cur = out[name]
            if o in (">", ">=", "=="):
                cur[0] = lo if cur[0] is None else max(cur[0], lo)
            if o in ("<", "<=", "=="):
                cur[1] = hi if cur[1] is None else min(cur[1], hi)
    return out


def _listed_values(prog: A.Program, name: str, ctx: Context):
    """Values from a conjunct ``name == a || name == b || …`` of ``requires``, if any."""
    for req in prog.requires:
        for c in conjuncts(req):
            ds = _disjuncts(c)
            vals = []
            for d in ds:
                b = bound_of(d, ctx)
                if b is None or b[0] != name or b[1] != "==":
                    break
                vals.append(b[2])
            else:
                return vals
    return None


def _py_value(v, sort: str):
    if sort == "bool":
        return bool(v)
    if sort == "int":
        if Fraction(v).denominator != 1:
            return None
        return int(v)
    return Fraction(v)


def sensitive_values(prog: A.Program, ind: A.Independent, bounds, ctx: Context) -> List[object]:
    """The values the sensitive input ranges over (each satisfying its own bounds in ``requires``)."""
    p = prog.param(ind.var)
    if p is None:
        raise ctx.error(f"'{ind.var}' is not a parameter of program '{prog.name}'", ind)
    sort = sort_of_type(p.type, ctx, p)
    lo, hi = bounds[ind.var]
    if ind.values is not None:
        vals = []
        for v in ind.values:
            c = _const(v, ctx) if not isinstance(v, A.BoolLit) else v.value
            if c is None:
                raise ctx.error("the values of the sensitive input must be constants", v)
            pv = _py_value(c, sort)
            if pv is None:
                raise ctx.error(f"{c} is not a value of type {sort}", v)
            vals.append(pv)
    elif sort == "bool":
        vals = [False, True]
    else:
        vals = _listed_values(prog, ind.var, ctx)
        if vals is None and sort == "int" and lo is not None and hi is not None and hi - lo < MAX_SENSITIVE_VALUES:
            vals = list(range(int(lo), int(hi) + 1))
        if vals is None:
            raise ctx.error(
                f"cannot tell which values '{ind.var}' takes: write "
                f"independent(…, {ind.var} in {{a, b, …}}) or bound it in requires",
                ind,
            )
        vals = [_py_value(v, sort) for v in vals]
    if sort != "bool":
        vals = [v for v in vals if (lo is None or v >= lo) and (hi is None or v <= hi)]
    uniq = []
    for v in vals:
        if v not in uniq:
            uniq.append(v)
    return uniq


def build_region(prog: A.Program, ind: A.Independent, ctx: Context) -> Region:
    """The box of non-sensitive inputs and the sensitive values for the claim ``ind``."""
    bounds = box_bounds(prog, ctx)
    values = sensitive_values(prog, ind, bounds, ctx)
    dims = []
    for p in prog.params:
        if p.name == ind.var:
            continue
        sort = sort_of_type(p.type, ctx, p)
        lo, hi = bounds[p.name]
        if sort == "bool":
            lo, hi = Fraction(0) if lo is None else lo, Fraction(1) if hi is None else hi
        dims.append(Dim(p.name, sort, lo, hi))
    return Region(tuple(dims), ind.var, tuple(values))
