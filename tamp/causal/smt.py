"""Translate a :class:`~tamp.causal.dag.Dag` to z3 (exact rational arithmetic).

Operators mean what :mod:`tamp.core.z3expr` says (``max``/``min``/``abs``/``ite`` are z3
``If`` terms), except where interval
bound propagation fixed their phase over the current box: those become the
chosen argument directly, which is what keeps the SMT queries small.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import z3

from tamp.core import z3expr as Z
from tamp.core.z3expr import fraction, rational

from .dag import Dag


def z3_const(v, sort: str):
    """An exact z3 constant."""
    if sort == "bool":
        return z3.BoolVal(bool(v))
    if sort == "int":
        return z3.IntVal(int(v))
    return rational(v)


def z3_var(name: str, sort: str):
    return {"bool": z3.Bool, "int": z3.Int, "real": z3.Real}[sort](name)


def _real(x):
    return z3.ToReal(x) if z3.is_int(x) else x


def translate(dag: Dag, variables: Dict[str, z3.ExprRef], phases: Optional[Dict[int, int]] = None) -> List[z3.ExprRef]:
    """z3 expressions for the roots of ``dag``; ``variables`` maps input names to z3 terms."""
    nodes = translate_nodes(dag, variables, phases)
    return [nodes[r] for r in dag.roots]


def phase_facts(dag: Dag, nodes: List[z3.ExprRef], phases: Dict[int, int]) -> List[z3.ExprRef]:
    """Constraints stating the fixed phases (implied by the box, so adding them changes no answer)."""
    facts = []
    for i, p in phases.items():
        n = dag.nodes[i]
        a = [nodes[j] for j in n.args]
        if n.kind == "max":
            facts.append(a[0] <= a[1] if p == 1 else a[1] <= a[0])
        elif n.kind == "min":
            facts.append(a[0] <= a[1] if p == 0 else a[1] <= a[0])
        elif n.kind == "abs":
            facts.append(a[0] >= 0 if p == 1 else a[0] <= 0)
        elif n.kind == "ite":
            facts.append(a[0] if p == 1 else z3.Not(a[0]))
    return facts


def translate_nodes(
    dag: Dag, variables: Dict[str, z3.ExprRef], phases: Optional[Dict[int, int]] = None
) -> List[z3.ExprRef]:
    """z3 expressions for every node of ``dag``."""
    phases = phases or {}
    out: List[z3.ExprRef] = [None] * len(dag.nodes)
    for i, n in enumerate(dag.nodes):
        k = n.kind
        if k == "const":
            out[i] = z3_const(n.payload, n.sort)
            continue
        if k == "input":
            out[i] = variables[n.name]
            continue
        a = [out[j] for j in n.args]
        if i in phases:
            p = phases[i]
            if k == "abs":
                out[i] = a[0] if p == 1 else -a[0]
            else:
                out[i] = a[p]
            if n.sort == "real":
                out[i] = _real(out[i])
            continue
        if n.sort == "real":
            a = [_real(x) if not z3.is_bool(x) else x for x in a]
        if k in Z.BINARY:  # + - * / div mod and the comparisons: the language's meaning
            r = Z.BINARY[k](a[0], a[1])
        elif k == "neg":
            r = Z.UNARY["-"](a[0])
        elif k in Z.FUNCTIONS:  # max, min, abs
            r = Z.FUNCTIONS[k](*a)
        elif k == "ite":
            r = Z.ite(a[0], a[1], a[2])
        elif k == "and":
            r = z3.And(*a)
        elif k == "or":
            r = z3.Or(*a)
        elif k == "not":
            r = z3.Not(a[0])
        else:
            raise ValueError(f"unknown operator {k}")
        out[i] = r
    return out


def model_value(model, var, sort: str):
    """An exact Python value of ``var`` in ``model`` (None if irrational, e.g. from non-linear arithmetic)."""
    v = model.eval(var, model_completion=True)
    if sort == "bool":
        return z3.is_true(v)
    f = fraction(v)
    if f is not None and z3.is_int_value(v):
        return f.numerator
    return f


def check(constraints, timeout_ms: int):
    """Run z3 on ``constraints``: returns ("sat", model), ("unsat", None) or ("unknown", reason)."""
    s = z3.Solver()
    s.set("timeout", int(timeout_ms))
    s.add(*constraints)
    r = s.check()
    if r == z3.sat:
        return "sat", s.model()
    if r == z3.unsat:
        return "unsat", None
    return "unknown", s.reason_unknown()
