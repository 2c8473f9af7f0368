"""Root counting for a uniform integer draw: a nonzero polynomial rarely vanishes at it.

The fact. Let ``v ~ unif(lo, hi)`` be uniform on the ``N = hi - lo + 1`` integers of
``[lo, hi]`` (``lo <= hi``, so ``N >= 1``), and let ``P(v) = c_0 + c_1·v + … + c_d·v^d`` be a
polynomial in ``v`` whose coefficients ``c_i`` do not depend on ``v`` (they are the values,
at the sampling statement, of expressions that do not read ``v``). Then::

    uniform_root:  Pr[ P(v) = 0  ∧  (c_0 != 0 ∨ … ∨ c_d != 0) ]  <=  e / N,
                   e = (c_d != 0 ? d : c_{d-1} != 0 ? d-1 : … c_1 != 0 ? 1 : 0)

Soundness. Fix the values of everything but ``v`` (the coefficients are then fixed
reals; ``v`` is drawn independently of them). If every ``c_i`` is 0 the event is empty and the
cost is ``0/N``. Otherwise ``e`` is the exact degree of the polynomial: with ``e = 0`` it is the
nonzero constant ``c_0`` and has no root; with ``e >= 1`` a nonzero real polynomial of degree
``e`` has at most ``e`` roots, so at most ``e`` of the ``N`` equally likely integers are roots
and the chance is at most ``e/N``. The bound on the event's chance holds for every value of the
other variables, hence also averaged over them.

Schwartz–Zippel by the union bound. Several independent draws ``v_1, …, v_n`` (in sampling
order) and a polynomial ``P`` of total degree ``D`` that is not the zero polynomial: the prover
proposes at ``v_n`` the polynomial ``P`` itself (coefficients over ``v_1 … v_{n-1}``) and at each
earlier ``v_i`` the leading coefficient, among those that are not the zero polynomial, of the
polynomial proposed at ``v_{i+1}`` (:func:`leading_nonzero`). If ``P = 0`` and the last axiom's
event did not happen, all of ``P``'s coefficients in ``v_n`` vanish, in particular the proposed
one, and so on down: the failure is covered by the union of the events. Their costs are the
exact degrees, which along the chain add up to at most the degree of one monomial of ``P``,
so to at most ``D``. None of this reasoning is trusted: the trace check (and ``check-proof``)
asks the solver that the failure implies the union of the events and that the costs add up to
at most the claim's bound; a proposal that does not fit is merely not proved. In particular the
solver must show from ``requires`` that some coefficient is nonzero (``P`` is not identically
zero), since otherwise the events are empty and the failure is not covered.

The expansion (:func:`coefficients`) is exact polynomial arithmetic over :mod:`lang.ast`
(``+``, ``-``, ``*``, unary minus, division by a number, ``?:`` whose test does not read
``v``); the axiom's ``bad`` states the expanded polynomial itself, so it does not rely on the
expansion being equal to the parameter (the trace check relates the two).
"""

from __future__ import annotations

from fractions import Fraction
from typing import List, Optional, Sequence

from lang import ast as A
from lang.evaluate import evaluate
from lang.walk import free_vars

from . import build as B
from .base import AxiomFamily, AxiomInstance, SelfReferentialSample, check_targets
from .uniform_range import size

#: the highest degree expanded (guards the size of the coefficient expressions)
MAX_DEGREE = 8

Poly = List[A.Expr]


def _is_num(e: A.Expr, value) -> bool:
    return isinstance(e, A.Num) and e.value == value


def _add(a: A.Expr, b: A.Expr) -> A.Expr:
    if _is_num(a, 0):
        return b
    if _is_num(b, 0):
        return a
    if isinstance(a, A.Num) and isinstance(b, A.Num):
        return B.n(Fraction(a.value) + Fraction(b.value))
    return B.add(a, b)


def _mul(a: A.Expr, b: A.Expr) -> A.Expr:
    if _is_num(a, 0) or _is_num(b, 0):
        return B.n(0)
    if _is_num(a, 1):
        return b
    if _is_num(b, 1):
        return a
    if isinstance(a, A.Num) and isinstance(b, A.Num):
        return B.n(Fraction(a.value) * Fraction(b.value))
    return B.mul(a, b)


def _neg(a: A.Expr) -> A.Expr:
    if isinstance(a, A.Num):
        return B.n(-Fraction(a.value))
    return B.neg(a)


def _trim(p: Poly) -> Poly:
    while len(p) > 1 and _is_num(p[-1], 0):
        p = p[:-1]
    return p


def coefficients(e: A.Expr, v: str) -> Optional[Poly]:
    """``[c_0, …, c_d]`` with ``e == c_0 + c_1·v + … + c_d·v^d`` identically and no ``c_i``
    reading ``v``; None when ``e`` is not such a polynomial (or its degree exceeds
    :data:`MAX_DEGREE`). Trailing literal zeros are dropped."""
    if v not in free_vars(e):
        return [e]
    if isinstance(e, A.Var):
        return [B.n(0), B.n(1)]
    if isinstance(e, A.Unary) and e.op == "-":
        p = coefficients(e.operand, v)
        return None if p is None else [_neg(c) for c in p]
    if isinstance(e, A.Cond) and v not in free_vars(e.cond):
        a, b = coefficients(e.then, v), coefficients(e.other, v)
        if a is None or b is None:
            return None
        k = max(len(a), len(b))
        a = a + [B.n(0)] * (k - len(a))
        b = b + [B.n(0)] * (k - len(b))
        return _trim([x if x == y else A.Cond(e.cond, x, y) for x, y in zip(a, b)])
    if not isinstance(e, A.Binary):
        return None
    if e.op == "/":
        if not isinstance(e.right, A.Num) or e.right.value == 0:
            return None
        p = coefficients(e.left, v)
        return None if p is None else [c if _is_num(c, 0) else B.div(c, e.right) for c in p]
    if e.op not in ("+", "-", "*"):
        return None
    a, b = coefficients(e.left, v), coefficients(e.right, v)
    if a is None or b is None:
        return None
    if e.op == "*":
        if len(a) + len(b) - 2 > MAX_DEGREE:
            return None
        out: Poly = [B.n(0)] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                out[i + j] = _add(out[i + j], _mul(x, y))
        return _trim(out)
    if e.op == "-":
        b = [_neg(c) for c in b]
    k = max(len(a), len(b))
    a = a + [B.n(0)] * (k - len(a))
    b = b + [B.n(0)] * (k - len(b))
    return _trim([_add(x, y) for x, y in zip(a, b)])


def power(v: A.Expr, i: int) -> A.Expr:
    """``v·v·…·v`` (``i`` factors; 1 for ``i = 0``)."""
    out: A.Expr = B.n(1)
    for _ in range(i):
        out = _mul(out, v)
    return out


def polynomial(coefs: Sequence[A.Expr], v: A.Expr) -> A.Expr:
    """``c_0 + c_1·v + … + c_d·v^d``."""
    out: A.Expr = B.n(0)
    for i, c in enumerate(coefs):
        out = _add(out, _mul(c, power(v, i)))
    return out


def exact_degree(coefs: Sequence[A.Expr]) -> A.Expr:
    """``c_d != 0 ? d : … : c_1 != 0 ? 1 : 0``: the degree of the polynomial at the values of
    its coefficients (0 for a constant, also the zero one)."""
    out: A.Expr = B.n(0)
    for i in range(1, len(coefs)):
        c = coefs[i]
        if isinstance(c, A.Num):
            out = B.n(i) if c.value != 0 else out
        else:
            out = A.Cond(B.ne(c, 0), B.n(i), out)
    return out


def nonzero(p: A.Expr, variables: Sequence[str]) -> Optional[A.Expr]:
    """A condition that holds exactly when ``p``, as a polynomial in ``variables`` (its
    coefficients over everything else), is not the zero polynomial: some coefficient of a
    monomial is nonzero. None when ``p`` is not a polynomial in them."""
    if not variables:
        return B.ne(p, 0) if not isinstance(p, A.Num) else B.e(p.value != 0)
    coefs = coefficients(p, variables[0])
    if coefs is None:
        return None
    parts = []
    for c in coefs:
        nz = nonzero(c, variables[1:])
        if nz is None:
            return None
        parts.append(nz)
    return B.or_(*parts)


def leading_nonzero(p: A.Expr, v: str, earlier: Sequence[str]) -> Optional[A.Expr]:
    """The coefficient of ``p`` in ``v`` of the highest power whose coefficient is not the zero
    polynomial in ``earlier`` (the draws before ``v``): ``nz(c_d) ? c_d : nz(c_{d-1}) ? … : c_0``.
    A proposal only (see the module docstring)."""
    coefs = coefficients(p, v)
    if coefs is None:
        return None
    out = coefs[0]
    for c in coefs[1:]:
        nz = nonzero(c, earlier)
        if nz is None:
            return None
        out = c if nz == B.TRUE else out if nz == B.FALSE else A.Cond(nz, c, out)
    return out


class UniformRoot(AxiomFamily):
    """``Pr[P(v) = 0 ∧ P is not the zero polynomial] <= deg P / N`` for ``v ~ unif(lo, hi)``;
    the parameter is the polynomial ``P`` (an expression), proposed by the prover."""

    name = "uniform_root"
    distributions = ("unif",)
    param_kind = "real"  # an expression, serialised as such; proposals: ``root_proposals``
    #: the prover proposes polynomials read off the program (not the budget's shares)
    root_proposals = True

    def applies(self, dist: A.Call) -> bool:
        return dist.func == "unif" and len(dist.args) == 2 and not any(isinstance(a, A.SetLit) for a in dist.args)

    def instantiate(self, targets, dist: A.Call, param) -> AxiomInstance:
        check_targets(targets, dist)
        v = targets[0]
        if not isinstance(v, A.Var):
            raise ValueError("uniform_root: the target is a scalar variable")
        if not isinstance(param, A.Expr):
            raise ValueError("uniform_root: the parameter is a polynomial expression")
        coefs = coefficients(param, v.name)
        if coefs is None or len(coefs) < 2:
            raise ValueError("uniform_root: the parameter is not a polynomial of degree >= 1 in the target")
        if any(v.name in free_vars(c) for c in coefs):  # cannot happen; a guard for the theorem
            raise SelfReferentialSample("uniform_root: a coefficient reads the sampled variable")
        lo, hi = dist.args
        bad = B.and_(B.eq(polynomial(coefs, v), 0), B.or_(*[B.ne(c, 0) for c in coefs]))
        cost = B.div(exact_degree(coefs), size(lo, hi))
        return AxiomInstance(self.name, bad, cost, (B.le(lo, hi),), param=param, note="root of a polynomial")

    def exact_tail(self, args, param) -> float:
        """``args = (lo, hi)`` integers, ``param`` a polynomial in ``v`` with numeric
        coefficients: the fraction of ``lo … hi`` where ``bad`` holds."""
        lo, hi = (int(a) for a in args)
        inst = self.instantiate((A.Var("v"),), A.Call("unif", (B.n(lo), B.n(hi))), param)
        return sum(1 for c in range(lo, hi + 1) if evaluate(inst.bad, {"v": c}) is True) / (hi - lo + 1)

    def cost_value(self, args, param) -> float:
        lo, hi = (int(a) for a in args)
        inst = self.instantiate((A.Var("v"),), A.Call("unif", (B.n(lo), B.n(hi))), param)
        return float(evaluate(inst.cost, {}))


FAMILIES = [UniformRoot()]
