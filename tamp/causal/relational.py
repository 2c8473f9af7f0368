"""Relational certification of a box: the two copies' decision functions and their difference,
bounded by linear functions of the inputs, leave no room for a biased point.

For a pair of threshold outputs (g_a, g_b) and each truth combination (p_a, p_b) for which the
outputs differ, a biased point x must satisfy

* p_a true ⇒ g_a(x) >= 0 ⇒ U_a(x) >= 0;   p_a false ⇒ g_a(x) <= 0 ⇒ L_a(x) <= 0   (same for b);
* (true, false) ⇒ g_a - g_b >= 0 ⇒ U_D(x) >= 0;   (false, true) ⇒ L_D(x) <= 0,

where L, U are the sound linear lower/upper bounds of :mod:`tamp.causal.linear` (float
coefficients are exact binary rationals; their error margins are in the constants). If this
linear system has no solution in the box — decided exactly by z3 over the rationals, a solver
``unknown`` counting as "has a solution" — no point of the box is biased for that combination.
The difference D is what makes the check relational: the copies share the inputs, so the
linear bounds of g_a - g_b cancel the common part of the network.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Tuple

import numpy as np
import z3

from tamp.core.z3expr import rational

from .threshold import bias_cases
from .tight import BoxFacts, SymbolicBounds


def _q(x: float):
    return rational(Fraction(float(x)))


def _linear(vs: Dict[int, object], V: np.ndarray, c: float, cols):
    terms = [_q(V[k]) * vs[k] for k in cols if V[k] != 0.0]
    return z3.Sum(terms) + _q(c) if terms else _q(c)


def _g_forms(sb: SymbolicBounds, facts: BoxFacts, k: int):
    """((V, c) lower form of g_k, (V, c) lower form of -g_k)."""
    t = sb.threshold(k)
    negated = sb.dag.nodes[t.cmp_node].kind in ("<", "<=")
    lo, neg = facts.forms[("cmp", t.cmp_node)], facts.forms[("-cmp", t.cmp_node)]
    if negated:
        lo, neg = neg, lo
    return lo, neg


def pair_cannot_differ(sb: SymbolicBounds, facts: BoxFacts, i: int, j: int, timeout_ms: int = 5000) -> bool:
    """True when no point of the box makes the outputs of copies ``i`` and ``j`` differ."""
    a, b = sb.threshold(i), sb.threshold(j)
    (la, na), (lb, nb) = _g_forms(sb, facts, i), _g_forms(sb, facts, j)
    ld, nd = facts.forms[("diff", i, j)], facts.forms[("-diff", i, j)]
    cols = [int(k) for k in sb.model.leaf_cols]
    for pa, pb in bias_cases(a, b):
        # quick concrete checks first: an impossible constraint on its own
        need: List[Tuple[Tuple, bool]] = [(la if not pa else na, pa), (lb if not pb else nb, pb)]
        # a form (V, c, low) with "upper >= 0" means -(lower of -g) >= 0, i.e. (lower of -g) <= 0
        impossible = False
        for (_V, _c, low), _ in need:
            if low > 0:  # the constrained lower form is > 0 on the whole box: "<= 0" impossible
                impossible = True
        if pa and not pb and nd[2] > 0:
            impossible = True
        if pb and not pa and ld[2] > 0:
            impossible = True
        if impossible:
            continue
        vs = {k: z3.Real(f"v{k}") for k in cols}
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        for k in cols:
            s.add(vs[k] >= _q(facts.rx.lo[k]), vs[k] <= _q(facts.rx.hi[k]))
        for (V, c, _), _ in need:
            s.add(_linear(vs, V, c, cols) <= 0)
        if pa and not pb:
            s.add(_linear(vs, nd[0], nd[1], cols) <= 0)
        if pb and not pa:
            s.add(_linear(vs, ld[0], ld[1], cols) <= 0)
        if s.check() != z3.unsat:
            return False
    return True


def box_cannot_be_biased(sb: SymbolicBounds, facts: BoxFacts, pairs) -> bool:
    """True when every pair of copies is shown unable to differ on the box (``pairs``: all the
    analyser's pairs; one without threshold structure makes the answer False)."""
    for i, j in pairs:
        if (i, j) not in sb.pairs or not pair_cannot_differ(sb, facts, i, j):
            return False
    return True
