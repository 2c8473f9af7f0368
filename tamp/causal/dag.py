"""A term DAG flattened into a list in dependency order, evaluated many times over.

The certifier evaluates the same output terms over thousands of boxes; flattening
them once (children before parents, shared sub-terms once) makes each evaluation a
single loop over a list — used for exact values (:func:`evaluate`), intervals
(:mod:`tamp.causal.propagate`) and z3 formulas (:mod:`tamp.causal.smt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple, Union

import numpy as np

from lang import ops

from . import terms as T


@dataclass(frozen=True)
class Node:
    """One DAG node: ``kind`` is "const", "input" or an operator name; ``args`` index earlier nodes."""

    kind: str
    payload: object  # the constant value, or the input name
    args: Tuple[int, ...]
    sort: str

    @property
    def number(self) -> Union[int, Fraction]:
        """The value of a numeric ``const`` node."""
        if isinstance(self.payload, bool) or not isinstance(self.payload, (int, Fraction)):
            raise TypeError(f"a {self.kind} node has no numeric value")
        return self.payload

    @property
    def name(self) -> str:
        """The input's name (an ``input`` node)."""
        if not isinstance(self.payload, str):
            raise TypeError(f"a {self.kind} node has no input name")
        return self.payload


@dataclass(frozen=True)
class Dag:
    nodes: Tuple[Node, ...]
    roots: Tuple[int, ...]

    def inputs(self) -> List[str]:
        return sorted({n.name for n in self.nodes if n.kind == "input"})


def compile_dag(roots: Sequence[T.Term]) -> Dag:
    """Flatten the terms ``roots`` into a :class:`Dag`, sharing common sub-terms: the same term
    object, and structurally equal terms (same operator, payload and shared arguments) — so the
    copies of a self-composition share every node that does not depend on the sensitive input
    (e.g. the whole network when its ``sex`` weights are 0)."""
    index: Dict[int, int] = {}
    nodes: List[Node] = []
    seen: Dict[tuple, int] = {}  # structural key -> node index
    keep = []  # keep terms alive so ids stay unique

    for root in roots:
        stack = [(root, False)]
        while stack:
            t, expanded = stack.pop()
            if id(t) in index:
                continue
            if isinstance(t, T.Op) and not expanded:
                stack.append((t, True))
                stack.extend((a, False) for a in reversed(t.args) if id(a) not in index)
                continue
            keep.append(t)
            if isinstance(t, T.Const):
                node = Node("const", t.value, (), t.sort)
            elif isinstance(t, T.Input):
                node = Node("input", t.name, (), t.sort)
            elif isinstance(t, T.Op):
                node = Node(t.name, None, tuple(index[id(a)] for a in t.args), t.sort)
            else:
                raise TypeError(f"not a term: {t!r}")
            key = (node.kind, type(node.payload).__name__, node.payload, node.args, node.sort)
            if key not in seen:
                seen[key] = len(nodes)
                nodes.append(node)
            index[id(t)] = seen[key]
    return Dag(tuple(nodes), tuple(index[id(r)] for r in roots))


class _Undefined:
    """The value of a division by zero: it makes nothing undefined unless it is used (an
    ``ite`` whose other branch is taken, or an ``and`` with a false argument, does not use it)."""


_UNDEFINED = _Undefined()


def evaluate(dag: Dag, env: Dict[str, object]) -> List[object]:
    """Exact values of the roots with inputs from ``env``; ZeroDivisionError when a root's value
    needs a division by zero."""
    try:
        return _evaluate_eager(dag, env)
    except ZeroDivisionError:  # perhaps in a branch that is not taken: evaluate lazily
        return _evaluate_lazy(dag, env)


def _evaluate_eager(dag: Dag, env: Dict[str, object]) -> List[object]:
    """Every node, both branches of every ``ite`` (fast; the values agree with the lazy ones
    whenever no division by zero occurs anywhere)."""
    vals: List[object] = [None] * len(dag.nodes)
    for i, n in enumerate(dag.nodes):
        if n.kind == "const":
            vals[i] = n.payload
        elif n.kind == "input":
            vals[i] = env[n.name]
        elif n.kind == "and":
            vals[i] = all(vals[a] for a in n.args)
        elif n.kind == "or":
            vals[i] = any(vals[a] for a in n.args)
        else:
            vals[i] = T.apply_value(n.kind, [vals[a] for a in n.args])
    return [vals[r] for r in dag.roots]


def _evaluate_lazy(dag: Dag, env: Dict[str, object]) -> List[object]:
    vals: List[object] = [None] * len(dag.nodes)
    for i, n in enumerate(dag.nodes):
        a = [vals[j] for j in n.args]
        if n.kind == "const":
            vals[i] = n.payload
        elif n.kind == "input":
            vals[i] = env[n.name]
        elif n.kind == "ite":
            vals[i] = _UNDEFINED if a[0] is _UNDEFINED else a[1] if a[0] else a[2]
        elif n.kind in ("and", "or"):
            decisive = n.kind == "or"  # the value that settles it: True for or, False for and
            vals[i] = (
                decisive
                if any(x is decisive for x in a)
                else _UNDEFINED
                if any(x is _UNDEFINED for x in a)
                else not decisive
            )
        elif any(x is _UNDEFINED for x in a):
            vals[i] = _UNDEFINED
        else:
            try:
                vals[i] = T.apply_value(n.kind, a)
            except ZeroDivisionError:
                vals[i] = _UNDEFINED
    out = [vals[r] for r in dag.roots]
    if any(x is _UNDEFINED for x in out):
        raise ZeroDivisionError("division by zero")
    return out


def saturating_float(x) -> float:
    """``float(x)``, saturating to ±inf beyond the largest float (screening only)."""
    try:
        return float(x)
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def evaluate_float(dag: Dag, env: Dict[str, np.ndarray]) -> List[np.ndarray]:
    """Approximate values of the roots for a batch of points: ``env`` maps each input to a numpy
    array (one entry per point); arithmetic in binary64. Only for screening — every answer that
    matters is re-checked with :func:`evaluate`."""
    vals: List[np.ndarray] = []  # node i's values, appended in order (children come first)
    size = len(next(iter(env.values()))) if env else 1
    with np.errstate(all="ignore"):
        for n in dag.nodes:
            k = n.kind
            a = [vals[j] for j in n.args]
            if k == "const":
                v = np.full(size, bool(n.payload) if n.sort == "bool" else saturating_float(n.payload))
            elif k == "input":
                v = np.asarray(env[n.name], dtype=bool if n.sort == "bool" else float)
            elif k == "+":
                v = a[0] + a[1]
            elif k == "-":
                v = a[0] - a[1]
            elif k == "*":
                v = a[0] * a[1]
            elif k == "/":
                v = a[0] / a[1]
            elif k in ("div", "mod"):  # Euclidean, as everywhere (lang.ops)
                v = ops.euclid_divmod_elementwise(a[0], a[1])[0 if k == "div" else 1]
            elif k == "neg":
                v = -a[0]
            elif k == "max":
                v = np.maximum(a[0], a[1])
            elif k == "min":
                v = np.minimum(a[0], a[1])
            elif k == "abs":
                v = np.abs(a[0])
            elif k == "ite":
                v = np.where(a[0], a[1], a[2])
            elif k in ("<", "<=", ">", ">=", "==", "!="):
                v = {
                    "<": np.less,
                    "<=": np.less_equal,
                    ">": np.greater,
                    ">=": np.greater_equal,
                    "==": np.equal,
                    "!=": np.not_equal,
                }[k](a[0], a[1])
            elif k == "and":
                v = np.logical_and.reduce(a)
            elif k == "or":
                v = np.logical_or.reduce(a)
            elif k == "not":
                v = np.logical_not(a[0])
            else:
                raise ValueError(f"unknown operator {k}")
            vals.append(v)
    return [vals[r] for r in dag.roots]
