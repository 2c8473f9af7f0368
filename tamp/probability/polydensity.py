"""``density(lo, hi, POLY)``: the polynomial in ``_`` as exact coefficients, checked and normalised."""

from __future__ import annotations

from fractions import Fraction
from typing import List, Tuple

from lang import ast as A
from lang.walk import DESCEND, Walker
from tamp.wmi import Poly


class _Poly(Walker):
    """Coefficients (constant first) of a polynomial expression in ``_``; ``ex.err(msg, node)``
    makes the error for anything else."""

    def __init__(self, ex):
        self.ex = ex

    def enter(self, e):
        polynomial = (
            isinstance(e, (A.Num, A.Var))
            or (isinstance(e, A.Unary) and e.op == "-")
            or (isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"))
        )
        if not polynomial:
            raise self.ex.err("density: the third argument must be a polynomial in '_'", e)
        return DESCEND

    def Num(self, e: A.Num, kids) -> List[Fraction]:
        return [e.value]

    def Var(self, e: A.Var, kids) -> List[Fraction]:
        if e.name == "_":
            return [Fraction(0), Fraction(1)]
        raise self.ex.err(f"density: the polynomial may only use the bound name '_' (found '{e.name}')", e)

    def Unary(self, e: A.Unary, kids) -> List[Fraction]:
        return [-c for c in kids[0]]

    def Binary(self, e: A.Binary, kids) -> List[Fraction]:
        a, b = kids
        if e.op in ("+", "-"):
            n = max(len(a), len(b))
            a, b = a + [Fraction(0)] * (n - len(a)), b + [Fraction(0)] * (n - len(b))
            return [x + y if e.op == "+" else x - y for x, y in zip(a, b)]
        if e.op == "*":
            out = [Fraction(0)] * (len(a) + len(b) - 1)
            for i, x in enumerate(a):
                for j, y in enumerate(b):
                    out[i + j] += x * y
            return out
        if any(b[1:]) or b[0] == 0:
            raise self.ex.err("density: division only by a non-zero constant", e)
        return [x / b[0] for x in a]


def _poly(e: A.Expr, ex) -> List[Fraction]:
    """Coefficients (constant first) of a polynomial expression in ``_``."""
    return _Poly(ex).walk(e)


def _nonnegative(coeffs: List[Fraction], lo: Fraction, hi: Fraction) -> bool:
    """Exactly: is the polynomial >= 0 on [lo, hi]? (sympy real-root isolation)."""
    # deferred on purpose: sympy takes ~1 s to load; only this step needs it
    import sympy

    x = sympy.Symbol("x")
    p = sum(sympy.Rational(c.numerator, c.denominator) * x**k for k, c in enumerate(coeffs))
    p = sympy.Poly(p, x)
    if p.is_zero:
        return True
    pts = [sympy.Rational(lo.numerator, lo.denominator), sympy.Rational(hi.numerator, hi.denominator)]
    for iv, _mult in p.intervals():
        a, b = iv
        pts.extend([a, b])
    # between consecutive isolating points the sign is constant; test midpoints and the ends
    pts = sorted(set(q for q in pts if pts[0] <= q <= pts[1]))
    probes = pts + [(u + v) / 2 for u, v in zip(pts, pts[1:])]
    return all(p.eval(q) >= 0 for q in probes)


def density_coeffs(e: A.Expr, lo: Fraction, hi: Fraction, ex) -> Tuple[Fraction, ...]:
    """Normalised density coefficients on [lo, hi]; errors for negative or zero polynomials."""
    c = _poly(e, ex)
    while len(c) > 1 and c[-1] == 0:
        c.pop()
    if not _nonnegative(c, lo, hi):
        raise ex.err(f"density: the polynomial takes negative values on [{lo}, {hi}]", e)
    total = sum(ck * (hi ** (k + 1) - lo ** (k + 1)) / (k + 1) for k, ck in enumerate(c))
    if total <= 0:
        raise ex.err("density: the polynomial integrates to 0", e)
    return tuple(ck / total for ck in c)


def polytope_problem(coeffs, bounds, cons):
    """The inputs of :func:`tamp.wmi.integrate_polytope` for independent polynomial densities
    over a polytope: the product density (``coeffs[i]``: variable i's density, constant first)
    and the rows ``(coefficients, rhs, strict=False)`` of the box ``bounds[i] = (lo, hi)`` and of
    ``cons`` (``(coefficient tuple, rhs)``). Shared by the engine and the certificate checker."""
    n = len(coeffs)
    dens = Poly.const(n, 1)
    rows = []
    for i, cs in enumerate(coeffs):
        terms = {}
        for k, c in enumerate(cs):
            e = [0] * n
            e[i] = k
            terms[tuple(e)] = c
        dens = dens * Poly(n, terms)
        lo, hi = bounds[i]
        unit = [Fraction(0)] * n
        unit[i] = Fraction(1)
        rows.append((tuple(unit), hi, False))
        rows.append((tuple(-u for u in unit), -lo, False))
    for coef, rhs in cons:
        rows.append((tuple(coef), rhs, False))
    return dens, rows
