"""A fairness claim about a piecewise-linear network, as cells × boxes × decision cases.

For the network engine (:mod:`tamp.causal.netfair`) the self-composed program of an
:class:`~tamp.causal.analyzer.Analyzer` is read as:

* *cells*: every combination of values of the bounded integer and Boolean inputs (a one-hot
  group imported by ``tamp import`` is one integer input: its category) — enumerated, never
  split as reals;
* a box over the real inputs, the same in every cell;
* a :class:`~tamp.causal.bounds.ReluGraph` whose leaves are the real inputs and the values that
  depend on the cell alone (categorical inputs and their decodings ``g == i ? 1 : 0``), which
  are constants in a cell;
* per copy of the program (one per sensitive value) its *decision cases*: the output is an
  ``ite`` tree over comparisons of affine functions of ReLUs (a threshold ``score > 0``, an
  argmax chain), expanded into disjoint, exhaustive cases ``(value, literals)`` — the output is
  ``value`` exactly where every literal ``h < 0`` (strict) or ``h <= 0`` holds;
* per pair of copies the *case pairs* (p, q) with their values equal (fair) or not (biased),
  each with an implied *sum* literal (the sum of all its literals' forms, a sharper joint bound).

The ``requires`` of each copy must hold on the interior of every cell's box (a box and
categorical ranges, as imported models have): checked exactly per cell. Anything else raises
:class:`NotNetwork` with the reason, and the general engine decides the claim.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from tamp.core.linear import Affine
from tamp.core.linear import affine_add as _add
from tamp.core.linear import affine_scale as _scale

from . import terms as T
from .bounds import ReluGraph
from .dag import Dag
from .linear import Form, LinearModel, build_model
from .region import Dim

Literal = Tuple[int, bool]  # (form index, strict): form < 0 if strict else form <= 0
Case = Tuple[object, Tuple[Literal, ...]]  # (output value, literals)


class NotNetwork(Exception):
    """The claim is not of the shape the network engine handles (the reason is the message)."""


@dataclass
class CasePair:
    pair: int  # index into NetClaim.pairs
    p: int  # case index of the first copy
    q: int  # case index of the second copy
    biased: bool
    literals: Tuple[Literal, ...]  # the two cases' literals
    implied: Tuple[Literal, ...]  # their sum (a sharper bound of the same condition), if several


@dataclass
class NetClaim:
    dims: Tuple[Dim, ...]
    bounds: Dict[int, Tuple[Fraction, Fraction]]  # per dimension: its (bounded) range
    real: List[int]  # indices of the real dimensions
    cat: List[int]  # indices of the categorical (integer / Boolean) dimensions
    cells: List[Tuple[object, ...]]  # values of the categorical dimensions, per cell
    model: LinearModel
    graph: ReluGraph  # columns: the real inputs (in the order of ``real``), then the ReLUs
    real_vars: Dict[int, int]  # model variable -> index into ``real``
    const_vars: Dict[int, Optional[int]]  # model variable -> DAG node whose value is constant in a cell
    cell_consts: List[Dict[int, Fraction]]  # per cell: model variable -> value
    forms: List[Form]  # the literals' forms (exact)
    rows: np.ndarray  # the forms over the graph's columns (real inputs, then ReLUs)
    consts: np.ndarray  # (cells, forms): their constants per cell (binary64 of the exact value)
    pre_c: np.ndarray  # (cells, ReLUs): the pre-activations' constants per cell
    cases: List[List[Case]]  # per copy
    pairs: List[Tuple[int, int]]
    case_pairs: List[CasePair] = field(default_factory=list)
    relu_index: Dict[int, int] = field(default_factory=dict)  # ReLU variable -> index into model.relus

    def __post_init__(self) -> None:
        self.relu_index = {r.var: i for i, r in enumerate(self.model.relus)}


def _all_values(dag: Dag, env: Dict[str, Any], skip: List[bool]) -> List[Any]:
    """Exact values of the nodes not marked in ``skip`` (those must not read skipped ones)."""
    vals: List[Any] = [None] * len(dag.nodes)
    for i, n in enumerate(dag.nodes):
        if skip[i]:
            continue
        if n.kind == "const":
            vals[i] = n.payload
        elif n.kind == "input":
            vals[i] = env[str(n.payload)]
        elif n.kind == "and":
            vals[i] = all(vals[a] for a in n.args)
        elif n.kind == "or":
            vals[i] = any(vals[a] for a in n.args)
        else:
            vals[i] = T.apply_value(n.kind, [vals[a] for a in n.args])
    return vals


_NEG = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}
MAX_CASES = 256


class _Cases:
    """Expansion of the outputs into decision cases (see the module docstring)."""

    def __init__(self, model: LinearModel, dep_real: List[bool]):
        self.model, self.dep_real = model, dep_real
        self.dag = model.dag
        self.forms: List[Form] = []
        self.index: Dict[tuple, int] = {}

    def form_id(self, f: Form) -> int:
        key = (tuple(sorted(f[0].items())), f[1])
        if key not in self.index:
            self.index[key] = len(self.forms)
            self.forms.append(f)
        return self.index[key]

    def literal(self, d: Form, op: str) -> Literal:
        """The literal ``d op 0`` as ``h < 0`` or ``h <= 0``."""
        if op == ">":  # d > 0  ⇔  -d < 0
            return self.form_id(_scale(d, Fraction(-1))), True
        if op == ">=":
            return self.form_id(_scale(d, Fraction(-1))), False
        if op == "<":
            return self.form_id(d), True
        return self.form_id(d), False

    def _limit(self, out: list) -> list:
        if len(out) > MAX_CASES:
            raise NotNetwork(f"the output has more than {MAX_CASES} decision cases")
        return out

    def numeric(self, node: int) -> List[Tuple[Tuple[Literal, ...], Form]]:
        n = self.dag.nodes[node]
        if n.kind == "ite" and self.dep_real[node]:
            out = []
            for lits, truth in self.boolean(n.args[0]):
                for l2, f in self.numeric(n.args[1] if truth else n.args[2]):
                    out.append((lits + l2, f))
            return self._limit(out)
        form = self.model.forms.get(node)
        if form is None:
            raise NotNetwork(f"a value of sort {n.sort} computed by '{n.kind}'")
        return [((), form)]

    def boolean(self, node: int) -> List[Tuple[Tuple[Literal, ...], bool]]:
        n = self.dag.nodes[node]
        if n.kind == "const":
            return [((), bool(n.payload))]
        if not self.dep_real[node]:
            raise NotNetwork("a decision that depends on categorical inputs alone")
        if n.kind in _NEG:
            out = []
            for l1, fa in self.numeric(n.args[0]):
                for l2, fb in self.numeric(n.args[1]):
                    d = _add(fa, fb, Fraction(-1))
                    out.append((l1 + l2 + (self.literal(d, n.kind),), True))
                    out.append((l1 + l2 + (self.literal(d, _NEG[n.kind]),), False))
            return self._limit(out)
        if n.kind == "not":
            return [(lits, not t) for lits, t in self.boolean(n.args[0])]
        if n.kind in ("and", "or"):
            acc: List[Tuple[Tuple[Literal, ...], bool]] = [((), n.kind == "and")]
            for a in n.args:
                nxt = []
                for lits, t in acc:
                    if t != (n.kind == "and"):  # already decided (short circuit)
                        nxt.append((lits, t))
                        continue
                    for l2, t2 in self.boolean(a):
                        nxt.append((lits + l2, t2))
                acc = self._limit(nxt)
            return acc
        raise NotNetwork(f"a decision made by '{n.kind}'")

    def output(self, node: int) -> List[Case]:
        n = self.dag.nodes[node]
        if n.kind == "const":
            return [(n.payload, ())]
        if n.kind == "ite" and self.dep_real[node]:
            out = []
            for lits, truth in self.boolean(n.args[0]):
                for v, l2 in self.output(n.args[1] if truth else n.args[2]):
                    out.append((v, lits + l2))
            return self._limit(out)
        if n.sort == "bool":
            return [(t, lits) for lits, t in self.boolean(node)]
        raise NotNetwork("the output is not a class chosen by comparisons (a threshold or an argmax)")


def _interior_truth(dag: Dag, node: int, vals, dep_real, model: LinearModel, box, real_names, memo) -> Optional[bool]:
    """The truth of a validity node on the interior of ``box`` in a cell (``vals``: the cell's
    exact values of nodes that do not depend on real inputs); None when not decided."""
    if node in memo:
        return memo[node]
    n = dag.nodes[node]
    if not dep_real[node]:
        r: Optional[bool] = bool(vals[node])
    elif n.kind in ("and", "or"):
        sub = [_interior_truth(dag, a, vals, dep_real, model, box, real_names, memo) for a in n.args]
        if n.kind == "and":
            r = False if False in sub else True if all(s is True for s in sub) else None
        else:
            r = True if True in sub else False if all(s is False for s in sub) else None
    elif n.kind == "not":
        s = _interior_truth(dag, n.args[0], vals, dep_real, model, box, real_names, memo)
        r = None if s is None else not s
    elif n.kind in _NEG:
        fa, fb = (model.forms.get(a) for a in n.args)
        r = None
        if fa is not None and fb is not None:
            d = _add(fa, fb, Fraction(-1))
            lo = hi = d[1]
            ok = True
            for v, c in d[0].items():
                if v in real_names:
                    a, b = box[real_names[v]]
                    lo, hi = lo + min(c * a, c * b), hi + max(c * a, c * b)
                elif v in model.inputs or v in model.opaque:
                    node_v = _leaf_node(model, v)
                    x = Fraction(vals[node_v]) if node_v is not None else None
                    if x is None:
                        ok = False
                        break
                    lo, hi = lo + c * x, hi + c * x
                else:
                    ok = False
                    break
            if ok:
                const = lo == hi
                # on the open box a non-constant form stays strictly inside (lo, hi)
                if n.kind == ">":
                    r = True if (lo > 0 or (not const and lo >= 0)) else False if hi <= 0 else None
                elif n.kind == ">=":
                    r = True if lo >= 0 else False if (hi < 0 or (not const and hi <= 0)) else None
                elif n.kind == "<":
                    r = True if (hi < 0 or (not const and hi <= 0)) else False if lo >= 0 else None
                else:
                    r = True if hi <= 0 else False if (lo > 0 or (not const and lo >= 0)) else None
    else:
        r = None
    memo[node] = r
    return r


def _leaf_node(model: LinearModel, v: int) -> Optional[int]:
    if v in model.opaque:
        return model.opaque[v]
    name = model.inputs[v]
    for i, n in enumerate(model.dag.nodes):
        if n.kind == "input" and n.payload == name:
            return i
    return None


def network_claim(dag: Dag, nouts: int, pairs, dims: Tuple[Dim, ...], max_cells: int = 100000) -> NetClaim:
    """Read the self-composed program (``dag``: ``nouts`` outputs then as many validities) as a
    :class:`NetClaim`, or raise :class:`NotNetwork`."""
    if not pairs:
        raise NotNetwork("the copies' outputs are the same term")
    real = [k for k, d in enumerate(dims) if d.sort == "real"]
    cat = [k for k, d in enumerate(dims) if d.sort != "real"]
    if not real:
        raise NotNetwork("no real inputs")
    bounds: Dict[int, Tuple[Fraction, Fraction]] = {}
    for k, dim in enumerate(dims):
        if not dim.bounded or dim.lo is None or dim.hi is None:
            raise NotNetwork(f"input '{dim.name}' is unbounded")
        bounds[k] = (Fraction(dim.lo), Fraction(dim.hi))
    ncells = 1
    for k in cat:
        ncells *= int(bounds[k][1] - bounds[k][0]) + 1
    if ncells > max_cells:
        raise NotNetwork(f"{ncells} combinations of categorical inputs (more than {max_cells})")
    real_names = {dims[k].name for k in real}
    dep_real: List[bool] = []
    for n in dag.nodes:
        dep_real.append((n.kind == "input" and n.payload in real_names) or any(dep_real[a] for a in n.args))
    model = build_model(dag)
    ex = _Cases(model, dep_real)
    cases = [ex.output(dag.roots[k]) for k in range(nouts)]
    used = {v for r in model.relus for v in r.pre[0]} | {v for f in ex.forms for v in f[0]}
    for v, node in model.opaque.items():
        if v in used and dep_real[node]:
            raise NotNetwork(f"'{dag.nodes[node].kind}' on real inputs (not piecewise-linear through ReLUs)")
    pos = {dims[k].name: t for t, k in enumerate(real)}
    real_vars = {v: pos[name] for v, name in model.inputs.items() if name in pos}
    const_vars = {
        v: _leaf_node(model, v)
        for v in list(model.inputs) + list(model.opaque)
        if v not in real_vars and not dep_real[_leaf_node(model, v) or 0]
    }
    # the graph for the bounds: the real inputs (columns 0..) and the ReLUs; whatever is constant
    # in a cell is folded into per-cell constants (exact, then rounded once)
    col = {v: t for v, t in real_vars.items()}
    for r in model.relus:
        col[r.var] = len(col)
    for v in used:
        if v not in col and v not in const_vars:
            raise NotNetwork("a value that is neither a real input, a ReLU nor constant in a category")

    def compact(f: Form) -> Form:
        return Affine({col[v]: c for v, c in f[0].items() if v in col}, f[1])

    graph = ReluGraph.build(len(col), list(range(len(real_vars))), [(col[r.var], compact(r.pre)) for r in model.relus])
    case_pairs = []
    for pi, (i, j) in enumerate(pairs):
        for p, (vp, lp) in enumerate(cases[i]):
            for q, (vq, lq) in enumerate(cases[j]):
                lits = lp + lq
                total: Form = Affine({}, Fraction(0))
                for f, _ in lits:
                    total = _add(total, ex.forms[f])
                extra = ((ex.form_id(total), any(s for _, s in lits)),) if len(lits) > 1 else ()
                case_pairs.append(CasePair(pi, p, q, vp != vq, lits, extra))
    try:
        rows, _ = graph.rows([compact(f) for f in ex.forms])
    except OverflowError:  # the batched bounds work in binary64: leave such weights to the exact engine
        raise NotNetwork("a weight or constant is too large for the batched bounds (binary64)") from None
    # the cells, their constants, and the validity of every copy on the interior of the box
    cells, cell_consts = [], []
    ranges = [range(int(bounds[k][0]), int(bounds[k][1]) + 1) for k in cat]
    root = {dims[k].name: bounds[k] for k in real}
    rnames = {v: model.inputs[v] for v in real_vars}
    for combo in itertools.product(*ranges):
        env: Dict[str, Any] = {dims[k].name: bounds[k][0] for k in real}
        for k, x in zip(cat, combo):
            env[dims[k].name] = bool(x) if dims[k].sort == "bool" else x
        try:
            vals = _all_values(dag, env, dep_real)
        except (ZeroDivisionError, TypeError, ValueError) as exc:
            raise NotNetwork(f"a categorical value cannot be evaluated exactly ({exc})") from None
        memo: Dict[int, Optional[bool]] = {}
        for k in range(nouts, 2 * nouts):
            if _interior_truth(dag, dag.roots[k], vals, dep_real, model, root, rnames, memo) is not True:
                raise NotNetwork("the requires are not a box over the real inputs in every category")
        consts_c = {}
        for v, nd in const_vars.items():
            val: Any = vals[nd] if nd is not None else 0
            consts_c[v] = Fraction(int(val) if isinstance(val, bool) else val)
        cells.append(tuple(env[dims[k].name] for k in cat))
        cell_consts.append(consts_c)

    def folded(f: Form, cc: Dict[int, Fraction]) -> float:
        return float(f[1] + sum((c * cc[v] for v, c in f[0].items() if v in cc), Fraction(0)))

    pre_c = np.array([[folded(r.pre, cc) for r in model.relus] for cc in cell_consts])
    consts = np.array([[folded(f, cc) for f in ex.forms] for cc in cell_consts])
    return NetClaim(
        dims,
        bounds,
        real,
        cat,
        cells,
        model,
        graph,
        real_vars,
        const_vars,
        cell_consts,
        ex.forms,
        rows,
        consts,
        pre_c,
        cases,
        list(pairs),
        case_pairs,
    )
