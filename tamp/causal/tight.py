"""Per-box facts from symbolic linear bounds, fed back into interval propagation.

:class:`SymbolicBounds` owns the :class:`~tamp.causal.linear.LinearModel` of the self-composed
DAG. For a box it runs plain interval propagation (for the opaque atoms' ranges), relaxes every
ReLU atom level by level (:func:`tamp.causal.linear.relax`), bounds every numeric comparison's
``lhs - rhs`` and the threshold outputs' differences ``g_a - g_b`` by back-substitution, and
re-runs interval propagation with those facts: more fixed phases, more decided comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from tamp.core.interval import down as _down
from tamp.core.interval import up as _up
from tamp.core.linear import Affine

from .dag import Dag
from .linear import Form, LinearModel, Relaxation, build_model, comparison_form, lower_forms, relax
from .propagate import Bounds, propagate
from .threshold import Threshold, difference, threshold_of


@dataclass
class BoxFacts:
    """What the symbolic bounds established over one box."""

    bounds: Optional[Bounds]  # interval propagation with the sharper facts (None: forms only)
    rx: Relaxation
    forms: Dict[tuple, Tuple[np.ndarray, float, float]]  # key -> (coefficients, constant, concrete lower)


class SymbolicBounds:
    """Symbolic linear bounds for the self-composed program (``roots`` = outputs then validities)."""

    def __init__(self, dag: Dag, nouts: int, pairs):
        self.dag = dag
        self.model: LinearModel = build_model(dag)
        self.cmp_nodes = [i for i, n in enumerate(dag.nodes) if comparison_form(self.model, i) is not None]
        self.thresholds: List[Optional[Threshold]] = [threshold_of(self.model, dag.roots[k]) for k in range(nouts)]
        self.pairs = [(i, j) for i, j in pairs if self.thresholds[i] is not None and self.thresholds[j] is not None]
        keys: List[tuple] = []
        forms: List[Form] = []
        for c in self.cmp_nodes:
            f = comparison_form(self.model, c)
            if f is None:  # (cmp_nodes are the nodes with a form)
                continue
            keys += [("cmp", c), ("-cmp", c)]
            forms += [f, Affine({v: -x for v, x in f[0].items()}, -f[1])]
        for i, j in self.pairs:
            d = difference(self.threshold(i), self.threshold(j))
            keys += [("diff", i, j), ("-diff", i, j)]
            forms += [d, Affine({v: -x for v, x in d[0].items()}, -d[1])]
        self.keys = keys
        rows = [self.model.row(f) for f in forms]
        n = self.model.nvars
        self.rows = np.array([r for r, _ in rows]).reshape(len(rows), n)
        self.consts = np.array([c for _, c in rows])
        self.useful = bool(self.model.relus) or bool(self.pairs)
        cols = list(self.model.opaque)
        self.opaque_used = bool(cols) and bool(np.any(self.model.pre_m[:, cols]) or np.any(self.rows[:, cols]))

    def threshold(self, k: int) -> Threshold:
        """The threshold form of output ``k`` (an output of :attr:`pairs` has one)."""
        t = self.thresholds[k]
        if t is None:
            raise ValueError(f"output {k} is not a threshold of a linear form")
        return t

    def leaf_bounds(self, fbox: Dict[str, Tuple[float, float]], plain: Bounds):
        out = {}
        for v, name in self.model.inputs.items():
            out[v] = fbox[name]
        for v, node in self.model.opaque.items():
            iv = plain.values[node]
            if not isinstance(iv, tuple):
                return None
            out[v] = iv
        return out

    def pre_from_intervals(self, plain: Bounds) -> Dict[int, Tuple[float, float]]:
        """Pre-activation intervals implied by plain interval propagation (outward-rounded)."""
        out = {}
        for r_i, r in enumerate(self.model.relus):
            n = self.dag.nodes[r.node]
            a = [x for x in (plain.values[j] for j in n.args) if isinstance(x, tuple)]
            if len(a) != len(n.args):
                continue
            if n.kind == "max":
                lo, hi = a[1][0] - a[0][1], a[1][1] - a[0][0]
            elif n.kind == "min":
                lo, hi = a[0][0] - a[1][1], a[0][1] - a[1][0]
            else:
                lo, hi = a[0]
            if math.isfinite(lo) and math.isfinite(hi):
                out[r_i] = (_down(lo), _up(hi))
        return out

    def analyse(self, fbox: Dict[str, Tuple[float, float]]) -> Optional[BoxFacts]:
        """The facts for the box ``fbox`` (float enclosures per input), or None (unbounded box)."""
        plain = propagate(self.dag, fbox)
        leaves = self.leaf_bounds(fbox, plain)
        if leaves is None:
            return None
        rx = relax(self.model, leaves, self.pre_from_intervals(plain))
        if rx is None:
            return None
        pre = {}
        for r_i, r in enumerate(self.model.relus):
            pre[r.node] = (float(rx.pre_lo[r_i]), float(rx.pre_hi[r_i]))
        forms = {}
        diff = {}
        if len(self.keys):
            V, c, low = lower_forms(self.model, rx, self.rows, self.consts)
            for t, key in enumerate(self.keys):
                forms[key] = (V[t], float(c[t]), float(low[t]))
            for node in self.cmp_nodes:
                diff[node] = (forms[("cmp", node)][2], -forms[("-cmp", node)][2])
        bounds = propagate(self.dag, fbox, pre, diff)
        return BoxFacts(bounds, rx, forms)

    def analyse_linear(
        self, fbox: Dict[str, Tuple[float, float]], outer: Optional[BoxFacts] = None
    ) -> Optional[BoxFacts]:
        """The symbolic forms only (no interval propagation, ``bounds`` None) — the fast path of
        the mass refinement; None when the model has opaque atoms (they need interval bounds).
        ``outer``: the facts of a box containing this one, whose pre-activation bounds are
        intersected with the new ones."""
        if self.opaque_used or not len(self.keys):
            return None
        leaves = {v: fbox[name] for v, name in self.model.inputs.items()}
        leaves.update({v: (0.0, 0.0) for v in self.model.opaque})  # read by no form (opaque_used)
        # pre-activation bounds over an enclosing box (``outer``) hold here too
        pre = (
            {}
            if outer is None
            else {
                r_i: (float(outer.rx.pre_lo[r_i]), float(outer.rx.pre_hi[r_i])) for r_i in range(len(self.model.relus))
            }
        )
        rx = relax(self.model, leaves, pre)
        if rx is None:
            return None
        V, c, low = lower_forms(self.model, rx, self.rows, self.consts)
        forms = {key: (V[t], float(c[t]), float(low[t])) for t, key in enumerate(self.keys)}
        return BoxFacts(None, rx, forms)

    def linear_split_scores(self, facts: BoxFacts, widths: Dict[str, float]) -> Dict[str, float]:
        """:meth:`split_scores` from the forms alone: a threshold is undecided when its
        comparison's lower bound is < 0 < its upper bound."""
        score: Dict[str, float] = {}
        for t in self.thresholds:
            if t is None:
                continue
            lo, neg = facts.forms[("cmp", t.cmp_node)], facts.forms[("-cmp", t.cmp_node)]
            if lo[2] > 0 or neg[2] > 0:
                continue
            for v, name in self.model.inputs.items():
                score[name] = score.get(name, 0.0) + (abs(float(lo[0][v])) + abs(float(neg[0][v]))) * widths.get(
                    name, 0.0
                )
        return score

    def split_scores(self, facts: BoxFacts, widths: Dict[str, float]) -> Dict[str, float]:
        """Per input, how much the undecided threshold outputs' linear bounds move across the box
        along it (|coefficient| × width): the dimension to split first."""
        score: Dict[str, float] = {}
        for t in self.thresholds:
            if t is None or facts.bounds is None or facts.bounds.values[t.cmp_node] is not None:
                continue
            V = facts.forms[("cmp", t.cmp_node)][0]
            for v, name in self.model.inputs.items():
                score[name] = score.get(name, 0.0) + abs(float(V[v])) * widths.get(name, 0.0)
        return score
