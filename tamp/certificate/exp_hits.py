"""The checker's union bound for a uniform sample that must avoid the values it is compared
with (``b[i] ~ unif(0, m - 1)`` followed by a check of all pairs: the birthday bound).

Rule (used by :mod:`.exp_rules` for ``x ~ unif(lo, hi)`` with N = hi - lo + 1 >= 1 values): when
F reads x only in tests ``x == e`` / ``x != e`` with e free of x, let Bad be the values the e's
take over the bound variables around them; |Bad| <= K, the sum over the distinct tests of the
product of the sizes of the ranges of the bound variables e reads. For v outside Bad every test
is decided (``==`` false, ``!=`` true), so F(v) = F_gen, and with F' = max(0, min(1, F)):

    E_x[F'] <= (1 - |Bad ∩ range|/N)·F'_gen + |Bad ∩ range|/N <= min(1, F'_gen + K/N).

A condition free of x splits F first (each branch counts only its own tests). After an element
write ``b[i] := x`` (each read ``b[t]`` became ``t == i ? x : b[t]``), :func:`split_at` splits a
quantifier or sum whose variable is compared with i into the part below i, i itself and the
part above — an identity of the integers (the three ranges partition the range), so a test
``b[p] == x`` is left only where the written element is really read.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from lang import ast as A
from lang.walk import DESCEND, Transformer, free_vars, substitute

ONE, ZERO = A.num(1), A.num(0)
Binder = Tuple[str, A.Expr, A.Expr]  # (variable, lo, hi exclusive)


class NoHitBound(Exception):
    """F reads the sample other than in equalities with values free of it."""


# ------------------------------------------------------------------------ literal differences


def _linear(e: A.Expr) -> Optional[Tuple[Dict[A.Expr, Fraction], Fraction]]:
    """``e`` as literal multiples of its atoms (variables, elements, calls) plus a literal."""
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
    if isinstance(e, A.Binary) and e.op == "*" and isinstance(e.left, A.Num) != isinstance(e.right, A.Num):
        num, other = (e.left, e.right) if isinstance(e.left, A.Num) else (e.right, e.left)
        assert isinstance(num, A.Num)
        r = _linear(other)
        if r is None:
            return None
        f = Fraction(num.value)
        return {v: f * c for v, c in r[0].items() if f * c != 0}, f * r[1]
    if isinstance(e, (A.Var, A.Index, A.Call)):
        return {e: Fraction(1)}, Fraction(0)
    return None


def delta(a: A.Expr, b: A.Expr) -> Optional[Fraction]:
    """``a - b`` when it is a literal, else None."""
    la, lb = _linear(a), _linear(b)
    if la is None or lb is None or la[0] != lb[0]:
        return None
    return la[1] - lb[1]


def _extreme(which: str, a: A.Expr, b: A.Expr) -> A.Expr:
    d = delta(a, b)
    if d is None:
        return A.Call(which, (a, b))
    return a if (d <= 0) == (which == "min") else b


# ------------------------------------------------------------------------ splitting at the written index


def _tests(v: str, idx: A.Expr) -> Tuple[A.Expr, A.Expr]:
    return A.Binary("==", A.Var(v), idx), A.Binary("==", idx, A.Var(v))


class _Decide(Transformer):
    def __init__(self, tests, value: bool):
        self.tests, self.value = tests, value

    def enter(self, node):
        return A.BoolLit(self.value) if node in self.tests else DESCEND


class _Split(Transformer):
    def __init__(self, idx: A.Expr):
        self.idx = idx
        self.ranges: Dict[str, Tuple[A.Expr, A.Expr]] = {}  # enclosing parts' variables: (lo, hi)

    def _part(self, var: str, lo: A.Expr, hi: A.Expr, body: A.Expr) -> A.Expr:
        saved = self.ranges
        self.ranges = {**saved, var: (lo, hi)}
        try:
            out: A.Expr = self.walk(body)
            return out
        finally:
            self.ranges = saved

    def _le(self, a: A.Expr, b: A.Expr) -> A.Expr:
        """``a <= b``; false when b is an enclosing part's variable, b < u, and a >= u."""
        if isinstance(b, A.Var) and b.name in self.ranges:
            up = self.ranges[b.name][1]
            for u in list(up.args) if isinstance(up, A.Call) and up.func == "min" else [up]:
                d = delta(a, u)
                if d is not None and d >= 0:
                    return A.BoolLit(False)
        d = delta(a, b)
        return A.BoolLit(d <= 0) if d is not None else A.Binary("<=", a, b)

    def enter(self, node):
        if not isinstance(node, (A.Quant, A.Sum)):
            return DESCEND
        idx, tests = self.idx, _tests(node.var, self.idx)
        if not any(n in tests for n in A.walk(node.body)) or node.var in set(free_vars(idx)):
            return DESCEND
        if any(isinstance(n, (A.Quant, A.Sum)) and n.var == node.var for n in A.walk(node.body)):
            return DESCEND  # an inner binder of the same name
        hi = A.Binary("+", node.hi, ONE) if node.inclusive else node.hi
        rest = _Decide(tests, False).walk(node.body)
        mid = self.walk(substitute(node.body, {node.var: idx}))
        nxt = A.Binary("+", idx, ONE)
        below, above = _extreme("min", hi, idx), _extreme("max", node.lo, nxt)
        low = _over(node, node.lo, below, self._part(node.var, node.lo, below, rest))
        high = _over(node, above, hi, self._part(node.var, above, hi, rest))
        inside = A.Binary("&&", self._le(node.lo, idx), self._le(nxt, hi))
        if isinstance(node, A.Sum):
            return A.Binary("+", A.Binary("+", low, A.Cond(inside, mid, ZERO)), high)
        if node.kind == "exists":
            return A.Binary("||", A.Binary("||", low, A.Binary("&&", inside, mid)), high)
        return A.Binary("&&", A.Binary("&&", low, A.Binary("==>", inside, mid)), high)


def _over(node, lo: A.Expr, hi: A.Expr, body: A.Expr) -> A.Expr:
    """``node`` (a quantifier or sum) over lo..hi (exclusive); its neutral value when surely empty."""
    d = delta(hi, lo)
    if d is not None and d <= 0:
        return ZERO if isinstance(node, A.Sum) else A.BoolLit(node.kind == "forall")
    if isinstance(node, A.Sum):
        return A.Sum(node.var, lo, hi, False, body)
    return A.Quant(node.kind, node.var, lo, hi, False, body)


def split_at(e: A.Expr, idx: A.Expr) -> A.Expr:
    """``e`` with every quantifier and sum comparing its variable with ``idx`` split at idx (an
    identity; ``idx`` must read no variable bound in ``e``)."""
    out: A.Expr = _Split(idx).walk(e)
    return out


# ------------------------------------------------------------------------ the bound


def _hit_tests(f: A.Expr, x: str) -> List[Tuple[A.Expr, Tuple[Binder, ...]]]:
    """The distinct tests ``x == e`` / ``x != e`` with the binders around each that e reads."""
    found: List[Tuple[A.Expr, Tuple[Binder, ...]]] = []
    xv = A.Var(x)

    def visit(e: A.Node, binders: Tuple[Binder, ...]) -> None:
        if not isinstance(e, A.Expr) or x not in set(free_vars(e)):
            return
        if isinstance(e, A.Binary) and e.op in ("==", "!=") and (e.left == xv or e.right == xv):
            other = e.right if e.left == xv else e.left
            if x in set(free_vars(other)):
                raise NoHitBound("the sample is compared with a value that reads it")
            used = tuple(b for b in binders if b[0] in set(free_vars(other)))
            names = {b[0] for b in binders} | {x}
            if any((set(free_vars(lo)) | set(free_vars(hi))) & names for _n, lo, hi in used):
                raise NoHitBound("a range of the values compared with the sample depends on another bound")
            if (other, used) not in found:
                found.append((other, used))
            return
        if e == xv:
            raise NoHitBound("the sample is read other than in an equality")
        if isinstance(e, (A.Quant, A.Sum)):
            if x in set(free_vars(e.lo)) | set(free_vars(e.hi)):
                raise NoHitBound("a range reads the sample")
            visit(e.body, binders + ((e.var, e.lo, A.Binary("+", e.hi, ONE) if e.inclusive else e.hi),))
            return
        if hasattr(e, "var"):
            raise NoHitBound("the sample is read under a binder this rule does not count")
        for c in A.children(e):
            visit(c, binders)

    visit(f, ())
    return found


class _Generic(Transformer):
    def __init__(self, x: str):
        self.x = x

    def enter(self, node):
        if isinstance(node, A.Expr) and self.x not in set(free_vars(node)):
            return node
        xv = A.Var(self.x)
        if isinstance(node, A.Binary) and node.op in ("==", "!=") and (node.left == xv or node.right == xv):
            return A.BoolLit(node.op == "!=")
        return DESCEND


def hit_bound(f: A.Expr, x: str, n: A.Expr) -> A.Expr:
    """An upper bound on the average of ``f`` over ``n`` (>= 1, the caller's condition) values of
    x: ``min(1, max(0, min(1, F_gen)) + K/N)`` per branch of the conditions free of x."""
    if x not in set(free_vars(f)):
        return f
    if isinstance(f, A.Cond) and x not in set(free_vars(f.cond)):
        return A.Cond(f.cond, hit_bound(f.then, x, n), hit_bound(f.other, x, n))
    k: A.Expr = ZERO
    for _other, used in _hit_tests(f, x):
        term: A.Expr = ONE
        for _v, lo, hi in used:
            d = delta(hi, lo)
            term = A.Binary(
                "*", term, A.Call("max", (ZERO, A.Binary("-", hi, lo))) if d is None else A.num(max(int(d), 0))
            )
        k = A.Binary("+", k, term)
    gen: A.Expr = _Generic(x).walk(f)
    return A.Call("min", (ONE, A.Binary("+", A.Call("max", (ZERO, A.Call("min", (ONE, gen)))), A.Binary("/", k, n))))
