"""Interval bound propagation over a :class:`~tamp.causal.dag.Dag`, rounded outward.

Numbers are float ranges ``(lo, hi)`` of :mod:`tamp.core.interval` (widened by one ulp after
every inexact operation, so they always contain the exact rational value; an exactly-zero
factor makes a product exactly 0 even against an unbounded range); Booleans are tri-state
(True, False, or None = undetermined). The pass also reports which piecewise nodes (``max``,
``min``, ``abs``, ``ite``) have a fixed phase over the box — ReLU phase fixing — and how many
do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple, Union

from tamp.core.interval import INF, FRange, enclose, fadd, fcompare, fdiv, fmul, fsign_compare, fsub

from .dag import Dag


def _arith(op: str, x: FRange, y: FRange) -> FRange:
    """``x op y`` for op in + - *: a point when both operands are points and the float result
    is exact (constants stay exact), else the outward-rounded range."""
    if x[0] == x[1] and y[0] == y[1]:
        a, b = x[0], y[0]
        v = a + b if op == "+" else a - b if op == "-" else a * b
        if -INF < v < INF:
            p, q = Fraction(a), Fraction(b)
            if Fraction(v) == (p + q if op == "+" else p - q if op == "-" else p * q):
                return (v, v)
    return fadd(x, y) if op == "+" else fsub(x, y) if op == "-" else fmul(x, y)


def _hull(a, b):
    if isinstance(a, tuple):
        return (min(a[0], b[0]), max(a[1], b[1]))
    return a if a == b else None


#: a node's bound: a float range (numeric sort) or a tri-state Boolean (None = undetermined)
NodeValue = Union[FRange, bool, None]


@dataclass
class Bounds:
    """The result of one propagation: a value per node, the fixed phases, the count of unfixed ones."""

    values: List[NodeValue]
    phases: Dict[int, int]  # node index -> index of the argument it equals (for max/min/ite), or 0/1 for abs sign
    unstable: int

    def root(self, dag: Dag, k: int):
        return self.values[dag.roots[k]]


def _pick_from_pre(kind, pre):
    """The phase of a max/min/abs node from a sound interval of its pre-activation
    (max(a, b): b - a; min(a, b): a - b; abs(a): a), or None."""
    lo, hi = pre
    if kind == "max":
        return 1 if lo >= 0 else 0 if hi <= 0 else None
    if kind == "min":
        return 1 if lo >= 0 else 0 if hi <= 0 else None
    if kind == "abs":
        return 1 if lo >= 0 else 0 if hi <= 0 else None
    return None


def _meet(a, b):
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return (lo, hi) if lo <= hi else a


def propagate(
    dag: Dag,
    box: Dict[str, Tuple[float, float]],
    pre: Optional[Dict[int, Tuple[float, float]]] = None,
    diff: Optional[Dict[int, Tuple[float, float]]] = None,
) -> Bounds:
    """Bounds of every node of ``dag`` when each input ranges over ``box`` (float intervals).

    Boolean inputs take (0, 0), (1, 1) or (0, 1). Optional sharper facts from symbolic linear
    bounds (:mod:`tamp.causal.linear`), all sound intervals: ``pre`` — per max/min/abs node, its
    pre-activation; ``diff`` — per numeric comparison node, ``lhs - rhs``. They fix phases and
    decide comparisons that the intervals alone leave open."""
    pre = pre or {}
    diff = diff or {}
    # Any, not NodeValue: the node's sort says which kind each operand is (the program was type
    # checked), and narrowing every operand would put an isinstance test per node and box into
    # the certifier's innermost loop. Bounds.values has the precise type.
    vals: List[Any] = [None] * len(dag.nodes)
    phases: Dict[int, int] = {}
    unstable = 0
    for i, n in enumerate(dag.nodes):
        k = n.kind
        if k == "const":
            vals[i] = n.payload if n.sort == "bool" else enclose(n.number)
            continue
        if k == "input":
            lo, hi = box[n.name]
            vals[i] = (True if lo == 1 else False if hi == 0 else None) if n.sort == "bool" else (lo, hi)
            continue
        a = [vals[j] for j in n.args]
        if k in ("+", "-", "*"):
            vals[i] = _arith(k, a[0], a[1])
        elif k == "/":
            vals[i] = fdiv(a[0], a[1])
        elif k in ("div", "mod"):
            vals[i] = (-INF, INF)
        elif k == "neg":
            vals[i] = (-a[0][1], -a[0][0])
        elif k in ("max", "min"):
            x, y = a
            if k == "max":
                vals[i] = (max(x[0], y[0]), max(x[1], y[1]))
                pick = 1 if x[1] <= y[0] else 0 if y[1] <= x[0] else None
            else:
                vals[i] = (min(x[0], y[0]), min(x[1], y[1]))
                pick = 0 if x[1] <= y[0] else 1 if y[1] <= x[0] else None
            if pick is None and i in pre:
                pick = _pick_from_pre(k, pre[i])
                if pick is not None:
                    vals[i] = _meet(vals[i], a[pick])
            if pick is None:
                unstable += 1
            else:
                phases[i] = pick
        elif k == "abs":
            x = a[0]
            p = _pick_from_pre(k, pre[i]) if i in pre and x[0] < 0 < x[1] else None
            if p == 1:
                x = (max(x[0], 0.0), x[1])
            elif p == 0:
                x = (x[0], min(x[1], 0.0))
            if x[0] >= 0:
                vals[i], phases[i] = x, 1
            elif x[1] <= 0:
                vals[i], phases[i] = (-x[1], -x[0]), 0
            else:
                vals[i] = (0.0, max(-x[0], x[1]))
                unstable += 1
        elif k == "ite":
            c, x, y = a
            if c is None:
                vals[i] = _hull(x, y)
                unstable += 1
            else:
                vals[i] = x if c else y
                phases[i] = 1 if c else 2
        elif k in ("<", "<=", ">", ">=", "==", "!="):
            x, y = a
            if n.args and dag.nodes[n.args[0]].sort == "bool":
                if k in ("==", "!="):
                    r = None if x is None or y is None else (x == y)
                    vals[i] = r if r is None or k == "==" else not r
                else:
                    vals[i] = None
            else:
                vals[i] = fcompare(k, x, y)
                if vals[i] is None and i in diff:
                    vals[i] = fsign_compare(k, diff[i])
        elif k == "and":
            vals[i] = False if any(v is False for v in a) else True if all(v is True for v in a) else None
        elif k == "or":
            vals[i] = True if any(v is True for v in a) else False if all(v is False for v in a) else None
        elif k == "not":
            vals[i] = None if a[0] is None else not a[0]
        else:
            raise ValueError(f"unknown operator {k}")
    return Bounds(vals, phases, unstable)


def differ(a, b):
    """Tri-state: do two root values (intervals or tri-state Booleans) certainly differ (True), certainly
    coincide (False), or is it undetermined (None)?"""
    if isinstance(a, tuple):
        r = fcompare("==", a, b)
        return None if r is None else not r
    if a is None or b is None:
        return None
    return a != b
