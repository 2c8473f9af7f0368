"""A uniform sample that must avoid the values it is compared with (the birthday union bound).

The expected-failure engine (:mod:`tamp.prover.expectation.prove`) weights ``x ~ unif(lo, hi)`` with
symbolic bounds exactly when the failure reads x in one test. A sample that must differ from
*every* earlier sample (``b[i] ~ unif(0, m - 1)`` followed by a check of all pairs) is read in
many tests ``b[p] == x``, one per earlier element. The textbook argument is the union bound:
x hits one of K given values with probability at most K/N. As a pre-expectation rule:

    F reads x only in equalities ``x == e`` / ``x != e`` with e free of x. Let Bad be the set
    of values the e's take (over the bound variables of the quantifiers and sums around
    them); |Bad| <= K, the sum over the distinct tests of the product of the ranges of the
    bound variables e reads. For v outside Bad every test is false, so F(v) = F_gen, F with
    the tests replaced by ``false`` (``!=`` by ``true``). With F' = max(0, min(1, F)) (an upper
    bound on the true failure probability whenever F is one, since that is at most 1):

        E_x[F'] <= (1 - |Bad ∩ range|/N)·F'_gen + (|Bad ∩ range|/N)·1 <= min(1, F'_gen + K/N).

A condition that does not read x splits F first (``c ? A : B`` → ``c ? E[A] : E[B]``), so each
branch counts only its own tests.

To count tests precisely after an element write ``b[i] := x`` (each read ``b[t]`` became
``t == i ? x : b[t]``), a quantifier or sum whose variable is compared with the written index is
split at it (:func:`split_at`): ``exists t in lo..hi: B`` is ``(exists t in lo..min(hi, i): B')
|| (lo <= i && i < hi && B[t := i]) || (exists t in max(lo, i + 1)..hi: B')``, where B' is B with
``t == i`` false — an identity of the integers (the three ranges partition lo..hi), which leaves
the tests ``b[p] == x`` only where the element written is really read.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars
from tamp.prover.base.exprs import subst
from tamp.show import show_expr

ONE = A.num(1)
ZERO = A.num(0)


def _binder_var_tests(body: A.Expr, v: str, idx: A.Expr) -> bool:
    t1, t2 = A.Binary("==", A.Var(v), idx), A.Binary("==", idx, A.Var(v))
    return any(n == t1 or n == t2 for n in A.walk(body))


def _decide(body: A.Expr, v: str, idx: A.Expr, value: bool) -> A.Expr:
    """``body`` with the tests ``v == idx`` (either way round) replaced by ``value``."""

    tests = (A.Binary("==", A.Var(v), idx), A.Binary("==", idx, A.Var(v)))

    class _Rep(Transformer):
        def enter(self, node):
            return A.BoolLit(value) if node in tests else DESCEND

    out: A.Expr = _Rep().walk(body)
    return out


def split_at(e: A.Expr, idx: A.Expr) -> A.Expr:
    """``e`` with every quantifier and sum whose body compares its variable with ``idx``
    (``t == idx``) split into the part below idx, idx itself and the part above (an identity;
    see the module docstring). ``idx`` must not read a variable bound in ``e``."""

    class _Split(Transformer):
        ranges: Dict[str, Tuple[A.Expr, A.Expr]] = {}  # the enclosing split parts' variables

        def part(self, var: str, lo: A.Expr, hi: A.Expr, body: A.Expr) -> A.Expr:
            saved = dict(self.ranges)
            self.ranges = {**saved, var: (lo, hi)}
            try:
                out: A.Expr = self.walk(body)
                return out
            finally:
                self.ranges = saved

        def le(self, a: A.Expr, b: A.Expr) -> A.Expr:
            """``a <= b``, decided when b is an enclosing part's variable whose range puts
            it below a."""
            if isinstance(b, A.Var) and b.name in self.ranges:
                up = self.ranges[b.name][1]  # b < up, and b < each argument of a min
                ups = list(up.args) if isinstance(up, A.Call) and up.func == "min" else [up]
                for u in ups:
                    d = delta(a, u)
                    if d is not None and d >= 0:
                        return A.BoolLit(False)
            return _less_eq(a, b)

        def enter(self, node):
            if not isinstance(node, (A.Quant, A.Sum)):
                return DESCEND
            if not _binder_var_tests(node.body, node.var, idx) or node.var in set(free_vars(idx)):
                return DESCEND
            if any(isinstance(n, (A.Quant, A.Sum)) and n.var == node.var for n in A.walk(node.body)):
                return DESCEND  # an inner binder of the same name: its tests are not this one's
            hi = A.Binary("+", node.hi, ONE) if node.inclusive else node.hi
            rest = _decide(node.body, node.var, idx, False)
            mid = self.walk(subst(node.body, {node.var: idx}))
            nxt = A.Binary("+", idx, ONE)
            below, above = _extreme("min", hi, idx), _extreme("max", node.lo, nxt)
            low = _rebuild(node, node.lo, below, self.part(node.var, node.lo, below, rest))
            high = _rebuild(node, above, hi, self.part(node.var, above, hi, rest))
            inside = A.Binary("&&", self.le(node.lo, idx), self.le(nxt, hi))
            if isinstance(node, A.Sum):
                return A.Binary("+", A.Binary("+", low, A.Cond(inside, mid, ZERO)), high)
            if node.kind == "exists":
                return A.Binary("||", A.Binary("||", low, A.Binary("&&", inside, mid)), high)
            return A.Binary("&&", A.Binary("&&", low, A.Binary("==>", inside, mid)), high)

    out: A.Expr = _Split().walk(e)
    return out


def _rebuild(node, lo: A.Expr, hi: A.Expr, body: A.Expr) -> A.Expr:
    """The quantifier or sum ``node`` over ``lo..hi`` (exclusive) with ``body``; its neutral
    value when the range is surely empty."""
    d = delta(hi, lo)
    if d is not None and d <= 0:
        return ZERO if isinstance(node, A.Sum) else A.BoolLit(node.kind == "forall")
    if isinstance(node, A.Sum):
        return A.Sum(node.var, lo, hi, False, body)
    return A.Quant(node.kind, node.var, lo, hi, False, body)


def _linear(e: A.Expr) -> Optional[Tuple[Dict[str, Fraction], Fraction]]:
    """``e`` as a sum of literal multiples of its non-arithmetic parts (by their text) plus a
    literal, or None."""
    if isinstance(e, A.Num):
        return {}, Fraction(e.value)
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        a, b = _linear(e.left), _linear(e.right)
        if a is None or b is None:
            return None
        k = 1 if e.op == "+" else -1
        coef = dict(a[0])
        for v, c in b[0].items():
            coef[v] = coef.get(v, Fraction(0)) + k * c
        return {v: c for v, c in coef.items() if c != 0}, a[1] + k * b[1]
    if isinstance(e, A.Binary) and e.op == "*" and (isinstance(e.left, A.Num) or isinstance(e.right, A.Num)):
        num, other = (e.left, e.right) if isinstance(e.left, A.Num) else (e.right, e.left)
        r = _linear(other)
        if r is None or not isinstance(num, A.Num):
            return None
        f = Fraction(num.value)
        return {v: f * c for v, c in r[0].items() if f * c != 0}, f * r[1]
    if isinstance(e, (A.Var, A.Index, A.Call)):
        return {show_expr(e): Fraction(1)}, Fraction(0)
    return None


def delta(a: A.Expr, b: A.Expr) -> Optional[Fraction]:
    """``a - b`` when it is a literal (the two differ by a constant), else None."""
    la, lb = _linear(a), _linear(b)
    if la is None or lb is None or la[0] != lb[0]:
        return None
    return la[1] - lb[1]


def _extreme(which: str, a: A.Expr, b: A.Expr) -> A.Expr:
    """``min(a, b)`` / ``max(a, b)``, the argument itself when they differ by a literal."""
    d = delta(a, b)
    if d is None:
        return A.Call(which, (a, b))
    return a if (d <= 0) == (which == "min") else b


def _less_eq(a: A.Expr, b: A.Expr) -> A.Expr:
    d = delta(a, b)
    return A.BoolLit(d <= 0) if d is not None else A.Binary("<=", a, b)


class NoHitBound(Exception):
    """F reads the sample other than in equalities with values free of it."""


def hit_tests(f: A.Expr, x: str) -> List[Tuple[A.Expr, Tuple[Tuple[str, A.Expr, A.Expr], ...]]]:
    """The distinct tests ``x == e`` / ``x != e`` of ``f`` with the bound variables around
    each that e reads ((name, lo, hi exclusive) from the outside in); :class:`NoHitBound` when
    x occurs anywhere else, or a range of those variables reads x or another bound variable."""
    found: List[Tuple[A.Expr, Tuple[Tuple[str, A.Expr, A.Expr], ...]]] = []
    xv = A.Var(x)

    def visit(e: A.Node, binders: Tuple[Tuple[str, A.Expr, A.Expr], ...]) -> None:
        if not isinstance(e, A.Expr) or x not in set(free_vars(e)):
            return
        if isinstance(e, A.Binary) and e.op in ("==", "!=") and (e.left == xv or e.right == xv):
            other = e.right if e.left == xv else e.left
            if x in set(free_vars(other)):
                raise NoHitBound("the sample is compared with a value that reads it")
            used = tuple(b for b in binders if b[0] in set(free_vars(other)))
            names = {b[0] for b in binders}
            for _n, lo, hi in used:
                if (set(free_vars(lo)) | set(free_vars(hi))) & (names | {x}):
                    raise NoHitBound("a range of the values compared with the sample depends on another bound")
            key = (other, used)
            if key not in found:
                found.append(key)
            return
        if e == xv:
            raise NoHitBound("the sample is read other than in an equality")
        if hasattr(e, "var") and not isinstance(e, (A.Quant, A.Sum)):
            raise NoHitBound("the sample is read under a binder this rule does not count")
        if isinstance(e, (A.Quant, A.Sum)):
            if x in set(free_vars(e.lo)) | set(free_vars(e.hi)):
                raise NoHitBound("a range reads the sample")
            hi = A.Binary("+", e.hi, ONE) if e.inclusive else e.hi
            visit(e.body, binders + ((e.var, e.lo, hi),))
            return
        for c in A.children(e):
            visit(c, binders)

    visit(f, ())
    return found


def hit_count(tests) -> A.Expr:
    """K: the most values the tests' right-hand sides take (the product of the ranges of the
    bound variables each reads, summed over the tests)."""
    total: A.Expr = ZERO
    for _other, used in tests:
        term: A.Expr = ONE
        for _n, lo, hi in used:
            d = delta(hi, lo)
            size = A.Call("max", (ZERO, A.Binary("-", hi, lo))) if d is None else A.num(max(int(d), 0))
            term = A.Binary("*", term, size)
        total = A.Binary("+", total, term)
    return total


def generic(f: A.Expr, x: str) -> A.Expr:
    """``f`` with every test ``x == e`` false and ``x != e`` true (its value at a value of x
    that no e takes)."""

    xv = A.Var(x)

    class _Gen(Transformer):
        def enter(self, node):
            if isinstance(node, A.Expr) and x not in set(free_vars(node)):
                return node
            if isinstance(node, A.Binary) and node.op in ("==", "!=") and (node.left == xv or node.right == xv):
                return A.BoolLit(node.op == "!=")
            return DESCEND

    out: A.Expr = _Gen().walk(f)
    return out


def hit_bound(f: A.Expr, x: str, n: A.Expr) -> A.Expr:
    """An upper bound on the average of ``f`` over N = ``n`` values of x (N >= 1 is the
    caller's condition): conditions free of x split f, each branch
    ``min(1, max(0, min(1, F_gen)) + K/N)`` (module docstring). :class:`NoHitBound` when x is
    read other than in equalities."""
    if x not in set(free_vars(f)):
        return f
    if isinstance(f, A.Cond) and x not in set(free_vars(f.cond)):
        return A.Cond(f.cond, hit_bound(f.then, x, n), hit_bound(f.other, x, n))
    tests = hit_tests(f, x)
    gen = A.Call("max", (ZERO, A.Call("min", (ONE, generic(f, x)))))
    k = hit_count(tests)
    return A.Call("min", (ONE, A.Binary("+", gen, A.Binary("/", k, n))))
