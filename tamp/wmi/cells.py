"""Enumeration of disjoint convex cells and the weighted sum over them.

The real space (the domain box) is split recursively on the LRA atoms that the
residual support formula or the residual weight still depend on.  At every
node an incremental z3 solver holds the cell's strict literals; a split on atom
``h`` checks both open half-cells: a side with empty interior is dropped and,
if one side is empty, ``h`` is simply implied on the cell (no new constraint).
When neither the formula nor the weight mentions an LRA atom any more, the
integrand on the cell is the polynomial ``Σ_A [φ(A)]·w(A)`` summed over the
assignments ``A`` to the Boolean variables, and it is integrated exactly over
the cell with :func:`integrate_polytope`.  Sibling cells share only boundary
(measure zero), so the sum of the cell integrals is exact.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

import z3

from tamp.core.z3expr import rational

from .bigq import tree_sum, z3_fraction
from .integrate import _Deadline, _integrate_rows, _normalize
from .model import Atom, formula_vars, simplify, simplify_w, weight_vars
from .poly import Poly


class WMITimeout(TimeoutError):
    """Raised when the time limit is reached; carries the progress made."""

    def __init__(self, message, cells=0, partial=Fraction(0)):
        super().__init__(message)
        self.cells = cells
        self.partial = partial


class CellEnumerator:
    def __init__(
        self,
        n: int,
        bounds,
        atoms: List[Atom],
        n_bools: int,
        deadline: Optional[float] = None,
        integrator=None,
        jobs=None,
    ):
        self.n = n
        # jobs: a tamp.executor.Executor; the cells' integrals are then its jobs (in parallel,
        # while the enumeration goes on), summed in the cells' order once all are back
        self.jobs = jobs
        self._pending = 0
        # integrator(poly, rows, n) -> Fraction; default: the vertex-cone method
        self.integrator = integrator
        self.bounds = bounds
        self.atoms = atoms
        self.n_bools = n_bools
        self.deadline = deadline
        self.cells = 0
        # exact cell integrals, summed once (pairwise, GMP when available):
        # a running Fraction total costs a quadratic gcd per cell on
        # denominators of up to millions of bits
        self.values: List[Fraction] = []
        self.xs = [z3.Real(f"x{i}") for i in range(n)]
        self.solver = z3.SolverFor("QF_LRA")
        self.box_rows = []
        for i, (lo, hi) in enumerate(bounds):
            self.solver.add(self.xs[i] > rational(lo), self.xs[i] < rational(hi))
            e = [Fraction(0)] * n
            e[i] = Fraction(1)
            self.box_rows.append((tuple(e), hi))
            e = [Fraction(0)] * n
            e[i] = Fraction(-1)
            self.box_rows.append((tuple(e), -lo))
        self._zatoms: Dict[int, object] = {}
        self._bsum_memo: Dict = {}

    # -- helpers -------------------------------------------------------------
    def _check_time(self):
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise WMITimeout("time limit reached", self.cells, self.total())

    def _zatom(self, j):
        e = self._zatoms.get(j)
        if e is None:
            a = self.atoms[j]
            e = z3.Sum([rational(c) * self.xs[i] for i, c in enumerate(a.coeffs) if c]) - rational(a.rhs)
            self._zatoms[j] = e
        return e

    def _lit(self, j, positive):
        e = self._zatom(j)
        return e < 0 if positive else e > 0

    def _feasible(self, j, positive) -> bool:
        self.solver.push()
        self.solver.add(self._lit(j, positive))
        r = self.solver.check()
        self.solver.pop()
        if r == z3.unknown:
            raise RuntimeError("z3 returned unknown on a linear real problem")
        return r == z3.sat

    def boolsum(self, phi, w) -> Poly:
        """Σ over all Boolean assignments of [phi]·w (no LRA atoms left)."""
        free = {v for v in formula_vars(phi) if v[0] == "b"} | {v for v in weight_vars(w) if v[0] == "b"}
        return self._bsum(phi, w, free).scale(Fraction(2) ** (self.n_bools - len(free)))

    def _bsum(self, phi, w, free) -> Poly:
        if phi is False:
            return Poly.zero(self.n)
        if not free:
            assert phi is True and isinstance(w, Poly)
            return w
        key = (phi, id(w))
        r = self._bsum_memo.get(key)
        if r is not None and r[0] is w:
            return r[1]
        v = min(free)
        rest = free - {v}
        parts = []
        for val in (True, False):
            assign = {v: val}
            memo: dict = {}
            phi2 = simplify(phi, assign, memo)
            w2 = simplify_w(w, assign, memo)
            f2 = {u for u in formula_vars(phi2) if u[0] == "b"} | {u for u in weight_vars(w2) if u[0] == "b"}
            p = self._bsum(phi2, w2, f2)
            k = len(rest) - len(f2)
            parts.append(p.scale(Fraction(2) ** k) if k else p)
        r = parts[0] + parts[1]
        self._bsum_memo[key] = (w, r)
        return r

    # -- recursion -------------------------------------------------------------
    def run(self, phi, w) -> Fraction:
        if self.solver.check() != z3.sat:
            return Fraction(0)
        try:
            self._rec(phi, w, [])
        except WMITimeout:
            if self.jobs is not None:
                self.jobs.cancel()
            raise
        if self.jobs is not None and self._pending:
            self._gather()
        return self.total()

    def _gather(self) -> None:
        """The integrals of the cells sent to ``jobs``, in the cells' order (the sum is exact, so
        the order only keeps the partial sums of a timeout reproducible)."""
        got: Dict[int, Optional[Fraction]] = dict(self.jobs.as_completed(self.deadline))
        done = [got.get(i) for i in range(self._pending)]
        self.values.extend(v for v in done if v is not None)
        missing = sum(v is None for v in done)
        if missing:
            raise WMITimeout("time limit reached", self.cells - missing, self.total())

    def total(self) -> Fraction:
        """Exact sum of the cell integrals computed so far."""
        return tree_sum(list(self.values))

    def _choose(self, phi, w):
        counts: Dict[int, int] = {}

        def walk_f(f, weight):
            stack = [f]
            while stack:
                g = stack.pop()
                if g is True or g is False:
                    continue
                t = g[0]
                if t == "a":
                    counts[g[1]] = counts.get(g[1], 0) + weight
                elif t == "not":
                    stack.append(g[1])
                elif t in ("and", "or"):
                    stack.extend(g[1])

        walk_f(phi, 2)
        stack = [w]
        while stack:
            x = stack.pop()
            if isinstance(x, Poly):
                continue
            walk_f(x[1], 1)
            stack.append(x[2])
            stack.append(x[3])
        if not counts:
            return None
        return max(counts, key=lambda j: (counts[j], -j))

    def _rec(self, phi, w, lits: List[Tuple[int, bool]]):
        if phi is False:
            return
        self._check_time()
        j = self._choose(phi, w)
        if j is None:
            self._leaf(phi, w, lits)
            return
        pos_ok = self._feasible(j, True)
        neg_ok = self._feasible(j, False) if pos_ok else True
        sides = []
        if pos_ok and neg_ok:
            sides = [(True, True), (False, True)]
        elif pos_ok:
            sides = [(True, False)]
        else:
            sides = [(False, False)]
        for val, add in sides:
            memo: dict = {}
            key = ("a", j)
            phi2 = simplify(phi, {key: val}, memo)
            if phi2 is False:
                continue
            w2 = simplify_w(w, {key: val}, memo)
            if add:
                self.solver.push()
                self.solver.add(self._lit(j, val))
                self._rec(phi2, w2, lits + [(j, val)])
                self.solver.pop()
            else:
                self._rec(phi2, w2, lits)

    def _leaf(self, phi, w, lits):
        f = self.boolsum(phi, w)
        if f.is_zero():
            return
        if self.solver.check() != z3.sat:
            return
        m = self.solver.model()
        point = [z3_fraction(m.eval(x, model_completion=True)) for x in self.xs]
        cons = list(self.box_rows)
        for j, val in lits:
            cons.append(self.atoms[j].constraint(val))
        rows = _normalize([(a, b, False) for a, b in cons], self.n)
        self.cells += 1
        if rows is None:
            return
        if self.integrator is not None:
            self.values.append(self.integrator(f, [(a, b, False) for a, b in rows], self.n))
            return
        if self.jobs is not None:
            seconds = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
            self.jobs.submit(self._pending, integrate_cell, f, rows, self.n, point, seconds)
            self._pending += 1
            return
        try:
            self.values.append(_integrate_rows(f, rows, self.n, point, self.deadline))
        except _Deadline:
            raise WMITimeout("time limit reached", self.cells - 1, self.total()) from None


def integrate_cell(f: Poly, rows, n: int, point, seconds: Optional[float]) -> Optional[Fraction]:
    """One cell's exact integral (None when it takes more than ``seconds``): a pure job on plain
    data (exact rationals, a polynomial), for :mod:`tamp.executor`."""
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        return _integrate_rows(f, rows, n, point, deadline)
    except _Deadline:
        return None
