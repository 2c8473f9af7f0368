"""Complete per-box decision by branching on ReLU phases (Planet-style LP relaxation + splitting).

Symbolic linear bounds (:mod:`tamp.causal.linear`) back-substitute down to the inputs and so
lose the correlation between the two copies' decision functions wherever they pass through the
same unstable ReLU. This module keeps every ReLU of the self-composed network as a variable of a
linear program over the box (exact rationals, decided by z3's linear real arithmetic):

* inputs within the box, opaque atoms within their intervals;
* a ReLU ``y = relu(p)`` with a fixed phase: ``y = p, p >= 0`` (active) or ``y = 0, p <= 0``;
  an unstable one (pre-activation bounds l < 0 < u from the symbolic bounds): the triangle
  ``y >= 0, y >= p, y <= u (p - l) / (u - l), l <= p <= u``;
* the question: the decision predicates take one of the given truth combinations
  (:func:`tamp.causal.threshold.bias_cases` for "is some point biased?", the others for "is some
  point not biased?"), with the thresholds' strictness kept (``g > 0`` vs ``g >= 0``).

Every constraint holds at every point of the box (with the phases of the branch), so
*infeasible* means no such point exists there. When the LP has a solution, its input point is
evaluated exactly: a real witness ends the search; otherwise the unstable ReLU whose relaxation
the solution exploits most (largest ``y - relu(p)``) is split into its two phases
(branch-and-bound à la Reluplex / β-CROWN). With every ReLU fixed the LP is exact, so the search
is complete; it is cut off after ``max_lps`` LP calls (then: undecided, never certified).
A solver ``unknown`` also leaves the question undecided.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import z3

from tamp.core.dyadic import ceil_grid, floor_grid
from tamp.core.z3expr import fraction, rational

from .linear import Form
from .tight import BoxFacts, SymbolicBounds

NONE, FOUND, UNDECIDED = "none", "found", "undecided"


def _q(x) -> z3.ArithRef:
    return rational(Fraction(x))


@dataclass
class PhaseAnswer:
    """``status``: NONE (no point of the box takes any of the truth combinations), FOUND (``point``
    does: checked by the caller's predicate) or UNDECIDED; ``lps``: LP calls made."""

    status: str
    point: Optional[Dict[str, Fraction]] = None
    lps: int = 0


class PhaseSearch:
    """The LP encoding of a :class:`SymbolicBounds` model, reused over boxes."""

    def __init__(self, sb: SymbolicBounds):
        self.sb = sb
        m = sb.model
        self.model = m
        self.vars = [z3.Real(f"v{i}") for i in range(m.nvars)]
        self.pre = [self.linear(r.pre) for r in m.relus]
        self.relu_var = [self.vars[r.var] for r in m.relus]
        self.g = {k: self.linear(t.g) for k, t in enumerate(sb.thresholds) if t is not None}
        # exact pre-activation forms as Fraction rows, for exploitation scores of a model
        self.input_vars = dict(m.inputs)  # variable index -> input name

    def linear(self, f: Form) -> z3.ArithRef:
        terms = [_q(c) * self.vars[v] for v, c in f[0].items()]
        return z3.Sum(terms) + _q(f[1]) if terms else _q(f[1])

    def _predicate(self, k: int, truth: bool):
        t = self.sb.threshold(k)
        g = self.g[k]
        if truth:
            return g > 0 if t.strict else g >= 0
        return g <= 0 if t.strict else g < 0

    def base_constraints(self, box_exact: Dict[str, Tuple[Fraction, Fraction]], facts: BoxFacts) -> list:
        """Bounds of the leaves over the box (inputs exact, opaque atoms by their float enclosures)."""
        m, rx = self.model, facts.rx
        cs = []
        for v, name in m.inputs.items():
            lo, hi = box_exact[name]
            cs += [self.vars[v] >= _q(lo), self.vars[v] <= _q(hi)]
        for v in m.opaque:
            cs += [self.vars[v] >= _q(rx.lo[v]), self.vars[v] <= _q(rx.hi[v])]
        return cs

    def relu_constraints(self, r_i: int, facts: BoxFacts, phase: Optional[bool]) -> list:
        """Constraints of ReLU ``r_i``: its phase (fixed by the bounds or by a split) or the triangle."""
        l, u = float(facts.rx.pre_lo[r_i]), float(facts.rx.pre_hi[r_i])
        y, p = self.relu_var[r_i], self.pre[r_i]
        if phase is None:
            phase = True if l >= 0 else False if u <= 0 else None
        if phase is True:
            return [y == p, p >= 0]
        if phase is False:
            return [y == 0, p <= 0]
        lq, uq = _outward(l, u)
        k = uq / (uq - lq)
        return [y >= 0, y >= p, y <= _q(k) * (p - _q(lq)), p >= _q(lq), p <= _q(uq)]

    def search(
        self,
        box_exact,
        facts: BoxFacts,
        cases: Sequence[Tuple[int, int, bool, bool]],
        accept: Callable[[Dict[str, Fraction]], bool],
        max_lps: int = 32,
        timeout_ms: int = 2000,
        deadline: Optional[float] = None,
    ) -> PhaseAnswer:
        """Is there a point of the box at which, for some ``(i, j, p_i, p_j)`` in ``cases``, copy i's
        decision predicate is p_i and copy j's is p_j? ``accept(point)`` checks a candidate exactly."""
        m = self.model
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(*self.base_constraints(box_exact, facts))
        unstable = [r_i for r_i in range(len(m.relus)) if facts.rx.pre_lo[r_i] < 0 < facts.rx.pre_hi[r_i]]
        for r_i in range(len(m.relus)):
            if r_i not in unstable:
                s.add(*self.relu_constraints(r_i, facts, None))
        lps = 0
        for i, j, pi, pj in cases:  # one case at a time: a disjunction slows z3's simplex down a lot
            s.push()
            s.add(self._predicate(i, pi), self._predicate(j, pj))
            stack: List[Dict[int, bool]] = [{}]
            while stack:
                if lps >= max_lps or (deadline is not None and time.monotonic() > deadline):
                    return PhaseAnswer(UNDECIDED, lps=lps)
                split = stack.pop()
                s.push()
                for r_i in unstable:
                    s.add(*self.relu_constraints(r_i, facts, split.get(r_i)))
                r = s.check()
                lps += 1
                if r == z3.unsat:
                    s.pop()
                    continue
                if r != z3.sat:
                    return PhaseAnswer(UNDECIDED, lps=lps)
                mdl = s.model()
                point = {name: _value(mdl, self.vars[v]) for v, name in self.input_vars.items()}
                if accept(point):
                    return PhaseAnswer(FOUND, point, lps)
                pick = self._most_exploited(mdl, [r_i for r_i in unstable if r_i not in split])
                s.pop()
                if pick is None:  # the LP is exact here and yet the point is rejected (opaque atoms)
                    return PhaseAnswer(UNDECIDED, lps=lps)
                stack.append({**split, pick: False})
                stack.append({**split, pick: True})
            s.pop()
        return PhaseAnswer(NONE, lps=lps)

    def _most_exploited(self, mdl, free: List[int]) -> Optional[int]:
        """The unsplit unstable ReLU whose relaxation the LP solution uses most: max ``y - relu(p)``
        (ties: the later level, nearer the output)."""
        best, best_key = None, None
        for r_i in free:
            y = _value(mdl, self.relu_var[r_i])
            p = _value_expr(mdl, self.pre[r_i])
            gap = y - max(Fraction(0), p)
            if gap <= 0:
                continue
            key = (self.model.relus[r_i].level, gap)
            if best_key is None or key > best_key:
                best, best_key = r_i, key
        return best


def _outward(l: float, u: float) -> Tuple[Fraction, Fraction]:
    """Short rationals l' <= l and u' >= u (on a dyadic grid 2^-8 of the width): the triangle over
    [l', u'] contains the one over [l, u] and keeps z3's simplex on small numbers."""
    e = math.frexp(u - l)[1] - 9
    return floor_grid(Fraction(l), e), ceil_grid(Fraction(u), e)


def _value(mdl, v) -> Fraction:
    return _rational(mdl.eval(v, model_completion=True))


def _value_expr(mdl, e) -> Fraction:
    return _rational(mdl.eval(e, model_completion=True))


def _rational(t) -> Fraction:
    """A model value of linear real arithmetic (always a rational numeral)."""
    q = fraction(t)
    if q is None:
        raise ValueError(f"z3 gave the model value {t}, which is not a rational number")
    return q
