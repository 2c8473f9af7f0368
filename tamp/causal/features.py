"""The model's own feature names for a program's inputs, for witnesses and biased regions.

A program written by ``tamp import`` decodes its inputs at the top of its body: a one-hot group
is one integer input ``g`` and its features ``x01 := g == 0 ? 1 : 0`` ...; a continuous
sensitive feature split at a value is ``age := age_side == 0 ? age_below : age_above``. The
*model features* are, in the order of the parameters, the targets of these decodings for the
inputs they read, and the other parameters themselves (a hand-written program has no
decodings: its features are its parameters).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set

from lang import ast as A
from lang.walk import free_vars

from . import terms as T
from .symexec import Context, expr_term


@dataclass
class Decode:
    name: str
    expr: A.Expr
    reads: Set[str]


def _is_decoding(e: A.Cond, params: Set[str]) -> bool:
    """``g == i ? a : b`` with ``g`` a parameter, ``i`` a number and ``a``, ``b`` numbers or
    parameters: a one-hot member or a side of a split feature — not a computation such as a
    decision tree's ``t1_0 := (x0 <= 0.48 ? … : …)`` (its value is no feature of the model)."""

    def simple(x: A.Expr) -> bool:
        return isinstance(x, A.Num) or (isinstance(x, A.Var) and x.name in params)

    c = e.cond
    if not (isinstance(c, A.Binary) and c.op == "=="):
        return False
    sides = (c.left, c.right)
    has_param = any(isinstance(x, A.Var) and x.name in params for x in sides)
    return has_param and all(simple(x) for x in sides) and simple(e.then) and simple(e.other)


def decodes(prog: A.Program) -> List[Decode]:
    """The leading decoding assignments ``x := g == i ? a : b`` of the body (see :func:`_is_decoding`)."""
    params = {p.name for p in prog.params}
    out = []
    for st in prog.body.stmts:
        if not (isinstance(st, A.Assign) and len(st.targets) == 1 and isinstance(st.value, A.Cond)):
            break
        if not _is_decoding(st.value, params):
            break
        target = st.targets[0]
        name = getattr(target, "name", None)
        reads = set(set(free_vars(st.value)))
        if name is None or not reads <= params or name in params:
            break
        out.append(Decode(name, st.value, reads))
    return out


def model_features(prog: A.Program) -> List[str]:
    """The model's feature names in order (see the module docstring)."""
    ds = decodes(prog)
    out: List[str] = []
    for p in prog.params:
        readers = [d.name for d in ds if p.name in d.reads]
        if not readers:
            out.append(p.name)
        for r in readers:
            if r not in out:
                out.append(r)
    return out


def _const(v, sort: str) -> T.Term:
    return T.const(v, sort)


def feature_values(prog: A.Program, point: Dict[str, object], ctx: Optional[Context] = None) -> Dict[str, object]:
    """The model features' values at ``point`` (a value for every parameter it reads; a decoding
    whose inputs are not all given is left out)."""
    ctx = ctx or Context()
    sorts = {p.name: p.type.name for p in prog.params}
    env = {k: _const(v, sorts[k]) for k, v in point.items() if k in sorts}
    ds = {d.name: d for d in decodes(prog)}
    out: Dict[str, object] = {}
    for f in model_features(prog):
        if f in ds:
            d = ds[f]
            if not d.reads <= set(point):
                continue
            t = expr_term(d.expr, env, ctx)
            if isinstance(t, T.Const):
                out[f] = t.value
        elif f in point:
            out[f] = point[f]
    return out
