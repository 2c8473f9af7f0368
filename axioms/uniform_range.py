"""Tail axioms of the integer uniform ``unif(lo, hi)`` whose bounds are expressions.

:mod:`axioms.uniform_finite` enumerates subsets of a *constant* range; a range over the
program's inputs or state (``unif(1, n)``, ``unif(lo, hi)`` inside a loop that moves ``lo`` and
``hi``) has no finite list of subsets. Its law is still simple: each of the
``N = hi - lo + 1`` integers has probability ``1/N``, so the chance of landing at or below a
threshold ``t`` is the number of integers of ``[lo, hi]`` up to ``t``, over ``N``. With the
failure parameter ``f`` (a real expression chosen by synthesis, like the Laplace family's) the
threshold is placed so that this count is at most ``f·N``::

    uniform_low:   Pr[ v <= lo - 1 + f·N ]                               <= f
    uniform_high:  Pr[ v >= hi + 1 - f·N ]                               <= f
    uniform_ends:  Pr[ v <= lo - 1 + f·N/2  ||  v >= hi + 1 - f·N/2 ]    <= f

each under the side conditions ``lo <= hi`` and ``f >= 0``. The "ends" form is the textbook
"a random pivot is central with probability at least 1 - f" (Motwani and Raghavan, Sec. 1.1):
the complement of its bad event is the middle of the range.

Soundness. The type checker makes ``lo`` and ``hi`` integers, and ``lo <= hi`` makes the
support ``lo, …, hi`` non-empty with ``N = hi - lo + 1 >= 1`` points of mass ``1/N`` each. For
a real threshold ``t >= lo - 1`` the support points ``v <= t`` are ``lo, …, min(hi, floor(t))``:
at most ``floor(t) - lo + 1 <= t - lo + 1`` of them (the integer rounding only removes points,
since ``floor(t) <= t``). With ``t = lo - 1 + f·N`` (``t >= lo - 1`` because ``f >= 0``) this is
``f·N`` points, so ``Pr[v <= t] <= f·N / N = f``. Symmetrically the points ``v >= s`` for a
real ``s <= hi + 1`` number at most ``hi - ceil(s) + 1 <= hi - s + 1``, which is ``f·N`` at
``s = hi + 1 - f·N``. The two ends with ``f/2`` each give ``f`` by the union bound. Nothing
assumes ``f <= 1`` (a larger ``f`` bounds a probability by more than 1, which is still true).
``exact_tail`` counts the support points where the ``bad`` AST itself evaluates to true.

``uniform_cut`` takes the two thresholds as its parameter instead of a share ``f`` (a window
that is not centred: ``a < v <= n - b``)::

    uniform_cut:   Pr[ v <= t1  ||  v >= t2 ]  <=  ((t1 - lo + 1) + (hi + 1 - t2)) / N

under ``lo <= hi``, ``lo - 1 <= t1`` and ``t2 <= hi + 1``: the two counts above, added (union
bound). The prover reads ``t1``, ``t2`` off the program's tests of ``v``
(:func:`window_thresholds`); any thresholds are sound, the side conditions keep each count right.

The families apply only to ranges that :mod:`axioms.uniform_finite` does not handle (a bound
that is not a constant, or more than its ``MAX_SUPPORT`` points), so the proofs over constant
ranges see the same proposals as before.
"""

from __future__ import annotations

from fractions import Fraction
from typing import List, Sequence, Tuple

from lang import ast as A
from lang.evaluate import constant_value, evaluate
from lang.walk import free_vars

from . import build as B
from ._tail import RealParamFamily
from .base import AxiomFamily, AxiomInstance, SelfReferentialSample, check_targets, target_variables
from .uniform_finite import support_points


def _int_const(e: A.Expr):
    v = constant_value(e)
    if isinstance(v, bool) or not isinstance(v, (int, Fraction)) or Fraction(v).denominator != 1:
        return None
    return int(v)


def _plus(e: A.Expr, c: int) -> A.Expr:
    """``e + c`` with the constants folded (``m - 1`` plus 1 is ``m``)."""
    k = _int_const(e)
    if k is not None:
        return B.n(k + c)
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        d = _int_const(e.right)
        if d is not None:
            total = (d if e.op == "+" else -d) + c
            return e.left if total == 0 else (B.add(e.left, total) if total > 0 else B.sub(e.left, -total))
    if c == 0:
        return e
    return B.add(e, c) if c > 0 else B.sub(e, -c)


def size(lo: A.Expr, hi: A.Expr) -> A.Expr:
    """``hi - lo + 1``, the number of integers of ``[lo, hi]``, with constants folded when ``lo``
    is one (``unif(1, n)``: ``n``; ``unif(0, m - 1)``: ``m``), to keep the SMT terms small."""
    c = _int_const(lo)
    if c is not None:
        return _plus(hi, 1 - c)
    return B.add(B.sub(hi, lo), 1)


def scaled(f: A.Expr, n: A.Expr) -> A.Expr:
    """``f·n``, written without the division when ``f`` divides by ``n`` (``k / n`` gives ``k``,
    ``1 - k / n`` gives ``n - k``): equal to ``f·n`` whenever ``n != 0`` (the side condition
    ``lo <= hi`` makes ``n >= 1``), and linear where ``f·n`` would not be."""
    if isinstance(f, A.Binary) and f.op == "/" and f.right == n:
        return f.left
    if isinstance(f, A.Binary) and f.op in ("+", "-"):
        left, right = scaled(f.left, n), scaled(f.right, n)
        return B.add(left, right) if f.op == "+" else B.sub(left, right)
    if isinstance(f, A.Num) and f.value == 1:
        return n
    return B.mul(f, n)


def points(lo: A.Expr, hi: A.Expr, f: A.Expr, share: int = 1) -> A.Expr:
    """``f·N / share``: how many support points the axiom may pay for at one end."""
    count = scaled(f, size(lo, hi))
    if share == 1:
        return count
    if isinstance(count, A.Num):
        return B.n(count.value / share)
    return B.div(count, share)


def low_threshold(lo: A.Expr, count: A.Expr) -> A.Expr:
    """``lo - 1 + count``: at most ``count`` support points lie at or below it."""
    base = _plus(lo, -1)
    return count if base == A.num(0) else B.add(base, count)


def high_threshold(hi: A.Expr, count: A.Expr) -> A.Expr:
    """``hi + 1 - count``: at most ``count`` support points lie at or above it."""
    return B.sub(_plus(hi, 1), count)


class UniformRangeTail(RealParamFamily):
    """``Pr[v <= lo - 1 + f·N] <= f`` (``low``), ``Pr[v >= hi + 1 - f·N] <= f`` (``high``) or
    both ends with ``f/2`` each (``ends``) for ``v ~ unif(lo, hi)`` with symbolic bounds."""

    distributions = ("unif",)
    arity = 2
    #: the threshold is not a ``log(c/f)``: only the budget's shares are proposed for ``f``
    log_parameters = False
    #: a draw inside a loop whose claim sums equal shares gets its share (β with a factor out)
    factor_shares = True

    def __init__(self, side: str):
        if side not in ("low", "high", "ends"):
            raise ValueError(side)
        self.side = side
        self.name = f"uniform_{side}"

    def applies(self, dist: A.Call) -> bool:
        return super().applies(dist) and support_points(dist) is None

    def axiom(self, v, args, f):
        lo, hi = args
        if self.side == "low":
            bad = B.le(v, low_threshold(lo, points(lo, hi, f)))
        elif self.side == "high":
            bad = B.ge(v, high_threshold(hi, points(lo, hi, f)))
        else:
            half = points(lo, hi, f, 2)
            bad = B.or_(B.le(v, low_threshold(lo, half)), B.ge(v, high_threshold(hi, half)))
        return bad, f, (B.le(lo, hi), B.le(0, f))

    def exact_tail(self, args, param) -> float:
        """``args = (lo, hi)`` integers: the fraction of ``lo … hi`` where ``bad`` is true."""
        lo, hi = (int(a) for a in args)
        bad = self.numeric_instance(args, param).bad
        hits = sum(1 for c in range(lo, hi + 1) if evaluate(bad, {"v": c}) is True)
        return hits / (hi - lo + 1)


class UniformRangeCut(AxiomFamily):
    """``Pr[v <= t1 || v >= t2] <= ((t1 - lo + 1) + (hi + 1 - t2)) / N`` for ``v ~ unif(lo, hi)``
    with symbolic bounds and thresholds ``(t1, t2)`` read off the program's tests of ``v``
    (``anchors``): the complement of the window ``t1 < v < t2``, paid by the number of support
    points at or below ``t1`` and at or above ``t2``."""

    name = "uniform_cut"
    distributions = ("unif",)
    param_kind = "choice"  # a pair of threshold expressions, proposed from the program's tests
    #: the prover proposes thresholds read off the program's tests (:func:`window_thresholds`)
    window_proposals = True

    def applies(self, dist: A.Call) -> bool:
        return dist.func == "unif" and len(dist.args) == 2 and support_points(dist) is None

    def choices(self, dist: A.Call):
        return ()

    def instantiate(self, targets, dist: A.Call, param) -> AxiomInstance:
        check_targets(targets, dist)
        if not (isinstance(param, tuple) and len(param) == 2 and all(isinstance(t, A.Expr) for t in param)):
            raise ValueError("uniform_cut: the parameter is a pair of threshold expressions")
        t1, t2 = param
        if (set(free_vars(t1)) | set(free_vars(t2))) & target_variables(targets):
            raise SelfReferentialSample("uniform_cut: a threshold reads the sampled variable")
        lo, hi = dist.args
        v = targets[0]
        below = B.sub(t1, _plus(lo, -1))  # t1 - lo + 1
        above = B.sub(_plus(hi, 1), t2)  # hi + 1 - t2
        bad = B.or_(B.le(v, t1), B.ge(v, t2))
        cost = B.div(B.add(below, above), size(lo, hi))
        side = (B.le(lo, hi), B.le(_plus(lo, -1), t1), B.le(t2, _plus(hi, 1)))
        return AxiomInstance(self.name, bad, cost, side, param=(t1, t2), note="outside a window")

    def _numeric(self, args, param):
        dist = A.Call("unif", tuple(B.n(a) for a in args))
        return self.instantiate((A.Var("v"),), dist, tuple(B.e(t) for t in param))

    def exact_tail(self, args, param) -> float:
        """``args = (lo, hi)`` integers, ``param = (t1, t2)`` numbers: the fraction of
        ``lo … hi`` where ``bad`` is true."""
        lo, hi = (int(a) for a in args)
        bad = self._numeric(args, param).bad
        return sum(1 for c in range(lo, hi + 1) if evaluate(bad, {"v": c}) is True) / (hi - lo + 1)

    def cost_value(self, args, param) -> float:
        return float(evaluate(self._numeric(args, param).cost, {}))

    def side_holds(self, args, param) -> bool:
        return all(bool(evaluate(x, {})) for x in self._numeric(args, param).side)


def window_thresholds(target: str, atoms: Sequence[A.Expr]) -> Tuple[List[A.Expr], List[A.Expr]]:
    """Thresholds ``t1`` (bad: ``v <= t1``) and ``t2`` (bad: ``v >= t2``) from comparisons of the
    variable ``target`` with an expression that does not read it (``v > e``, ``e <= v``, …): the
    bad side of each test, and its neighbour ``e ± 1`` where the test is strict the other way.
    Only proposals — the axiom is sound for any thresholds, and the solver decides which work."""
    lows: List[A.Expr] = []
    highs: List[A.Expr] = []

    def add(lst, e):
        if e not in lst:
            lst.append(e)

    for atom in atoms:
        for n in A.walk(atom):
            if not (isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=")):
                continue
            op, left, right = n.op, n.left, n.right
            if right == A.Var(target) and target not in free_vars(left):
                op, left, right = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op], right, left
            if left != A.Var(target) or target in free_vars(right):
                continue
            e = right
            # v > e / v <= e: the boundary between e and e + 1; v < e / v >= e: between e - 1 and
            # e; the cut one point wider () covers a threshold that is not
            # an integer, at the price of one point
            if op in (">", "<="):
                add(lows, e)
                add(highs, _plus(e, 1))
                add(highs, e)
            else:
                add(lows, _plus(e, -1))
                add(highs, e)
                add(lows, e)
    return lows, highs


FAMILIES = [UniformRangeTail("ends"), UniformRangeTail("low"), UniformRangeTail("high"), UniformRangeCut()]
