"""Public entry points: :func:`wmi` and :func:`probability`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, Optional, Set

from pysmt.shortcuts import And

from .cells import CellEnumerator
from .model import Atom, Compiler, WMIInputError, weight_map
from .poly import Poly


@dataclass
class WMIResult:
    """Exact result of a weighted model integration."""

    value: Fraction
    cells: int
    time_s: float

    def __float__(self):
        return float(self.value)

    def __repr__(self):
        return f"WMIResult(value={self.value}, ≈{float(self.value):.12g}, cells={self.cells}, time_s={self.time_s:.3f})"


def _split_domain(domain):
    reals, bounds, bools = [], [], []
    for sym, bd in domain.items():
        t = sym.symbol_type()
        if t.is_real_type():
            if bd is None:
                raise WMIInputError(f"real variable {sym} needs bounds (lo, hi) in the domain")
            lo, hi = (Fraction(bd[0]), Fraction(bd[1]))
            if lo > hi:
                raise WMIInputError(f"empty bounds for {sym}: ({lo}, {hi})")
            reals.append(sym)
            bounds.append((lo, hi))
        elif t.is_bool_type():
            bools.append(sym)
        else:
            raise WMIInputError(f"variable {sym} has unsupported type {t}")
    return reals, bounds, bools


def _to_fraction(x) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x)


def wmi(formula, weight, domain: Dict, timeout: Optional[float] = None, jobs=None) -> WMIResult:
    """Exact weighted model integral of ``weight`` over ``formula``.

    ``formula`` is a pysmt Boolean formula (LRA atoms and Boolean variables),
    ``weight`` a pysmt real term (polynomial, with ``Ite`` over such
    conditions), ``domain`` maps each real symbol to its bounds ``(lo, hi)``;
    Boolean symbols may also be listed (value ``None``) — every Boolean symbol
    of the formula, the weight or the domain is summed over.  Raises
    :class:`WMITimeout` (a ``TimeoutError``) after ``timeout`` seconds. ``jobs`` (a
    :class:`tamp.executor.Executor`): where the cells' integrals run, in parallel (default: in
    this process, one after the other); the value is the same exact sum.
    """
    return _wmi(formula, weight, domain, timeout, jobs=jobs)


def _wmi(formula, weight, domain, timeout=None, integrator=None, jobs=None) -> WMIResult:
    """:func:`wmi` with a replaceable polytope integrator (for cross-checks)."""
    t0 = time.monotonic()
    deadline = None if timeout is None else t0 + timeout
    reals, bounds, bools = _split_domain(domain)
    for sym in formula.get_free_variables() | weight.get_free_variables():
        if sym.symbol_type().is_real_type() and sym not in domain:
            raise WMIInputError(f"real variable {sym} has no bounds in the domain")
    if any(lo == hi for lo, hi in bounds):
        return WMIResult(Fraction(0), 0, time.monotonic() - t0)
    comp = Compiler(reals, bounds, bools)
    phi = comp.formula(formula)
    w = comp.term(weight)
    for sym in sorted(formula.get_free_variables() | weight.get_free_variables(), key=str):
        if sym.symbol_type().is_bool_type():
            comp._bool(sym)
    n_bools = len(comp.bool_vars)

    # real variables used by no atom: integrate them out of the weight first
    used: Set[int] = set()
    for a in comp.atoms:
        used.update(i for i, c in enumerate(a.coeffs) if c)
    free = [i for i in range(len(reals)) if i not in used]
    keep = [i for i in range(len(reals)) if i in used]

    def project(p: Poly) -> Poly:
        q = p
        for i in free:
            lo, hi = bounds[i]
            q = q.integrate_between(i, Poly.const(q.nvars, lo), Poly.const(q.nvars, hi))
        # drop the integrated variables
        t: dict = {}
        for e, c in q.terms.items():
            ne = tuple(e[i] for i in keep)
            t[ne] = t.get(ne, Fraction(0)) + c
        return Poly(len(keep), t)

    w2 = weight_map(w, project)
    atoms2 = [Atom(tuple(a.coeffs[i] for i in keep), a.rhs) for a in comp.atoms]
    enum = CellEnumerator(len(keep), [bounds[i] for i in keep], atoms2, n_bools, deadline, integrator, jobs)
    value = enum.run(phi, w2)
    return WMIResult(value, enum.cells, time.monotonic() - t0)


def probability(query, evidence, weight, domain: Dict, timeout: Optional[float] = None) -> WMIResult:
    """``wmi(query ∧ evidence) / wmi(evidence)``, exactly.  ``cells`` and
    ``time_s`` add up both integrations.  Raises ``ZeroDivisionError`` if the
    evidence has weight zero."""
    t0 = time.monotonic()
    z = wmi(evidence, weight, domain, timeout)
    rest = None if timeout is None else max(0.0, timeout - (time.monotonic() - t0))
    zq = wmi(And(query, evidence), weight, domain, rest)
    if z.value == 0:
        raise ZeroDivisionError("the evidence has weighted model integral 0")
    return WMIResult(zq.value / z.value, z.cells + zq.cells, time.monotonic() - t0)
