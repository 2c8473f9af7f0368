"""Closed forms of sums over a loop's range, each proved by induction: counting guarded iterations.

A union bound over the iterations of a loop whose per-iteration chance is ``g(c) ? q : 0`` (a
deterministic guard ``g`` over the counter and the parameters, e.g. only the cells with ``i == 0
|| j == 0`` of a grid sample a failure) sums to ``q`` times the number of iterations where ``g``
holds. z3 reads ``sum`` as an uninterpreted function, so that number must be written in closed
form: :func:`closed_sums` replaces every ``sum(c in lo..hi: b(c))`` of a formula, innermost
first, by a closed form ``F`` and returns, next to the new formula, the obligations that make the
replacement an identity.

The closed form (:func:`_sum_to`, :func:`_count`) is only a proposal, read off the body's syntax:
sums and scalings are linear, a conditional whose test does not read ``c`` is split, and the
number of ``c`` in ``[lo, h)`` satisfying a test is ``[lo <= e < h]`` for ``c == e``, the
complement for ``!`` and ``!=``, inclusion–exclusion for ``||``, the test that does not read
``c`` pulled out of an ``&&``, and ``max(min(h, U) - max(lo, L), 0)`` for a conjunction of
bounds ``L <= c < U``.

Why the replacement is sound, whatever the proposal: with ``F(h)`` the closed form for the
upper limit ``h`` (exclusive), the obligations are

- BASE ``F(lo) == 0``, and
- STEP ``forall h in lo..hi: F(h + 1) == F(h) + b(h)`` (``lo..=hi`` for an inclusive range),

both quantified over the enclosing sums' counters in their ranges, and proved valid by z3 (under
the program's ``requires``) by whoever uses the new formula. By induction on ``h`` they give
``F(h) = Σ_{lo <= c < h} b(c)`` for every ``h`` from ``lo`` to the sum's end ``U`` (``hi``, or
``hi + 1`` when inclusive), so the sum equals ``U >= lo ? F(U) : 0`` (an empty range sums to 0),
the term put in its place. A wrong proposal makes an obligation fail; it never proves a formula.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars, substitute

__all__ = ["closed_sums"]

ZERO, ONE = A.num(0), A.num(1)


def _reads(e: A.Expr, c: str) -> bool:
    return c in free_vars(e)


def _cond(p: A.Expr, a: A.Expr, b: A.Expr) -> A.Expr:
    if a == b:
        return a
    return A.Cond(p, a, b)


def _add(a: A.Expr, b: A.Expr) -> A.Expr:
    if a == ZERO:
        return b
    if b == ZERO:
        return a
    return A.Binary("+", a, b)


def _sub(a: A.Expr, b: A.Expr) -> A.Expr:
    return a if b == ZERO else A.Binary("-", a, b)


def _mul(a: A.Expr, b: A.Expr) -> A.Expr:
    if a == ONE:
        return b
    if b == ONE:
        return a
    if ZERO in (a, b):
        return ZERO
    return A.Binary("*", a, b)


def _max(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Call("max", (a, b))


def _min(a: A.Expr, b: A.Expr) -> A.Expr:
    return A.Call("min", (a, b))


def _width(lo: A.Expr, h: A.Expr) -> A.Expr:
    return A.Binary("-", h, lo) if lo != ZERO else h


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEG = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _atom(p: A.Expr, c: str) -> Optional[Tuple[str, A.Expr]]:
    """``(op, e)`` when ``p`` is ``c op e`` (or ``e op c``, or a negated comparison) with ``e`` not
    reading ``c``."""
    neg = False
    while isinstance(p, A.Unary) and p.op == "!":
        neg, p = not neg, p.operand
    if not (isinstance(p, A.Binary) and p.op in _FLIP):
        return None
    if p.left == A.Var(c) and not _reads(p.right, c):
        op, e = p.op, p.right
    elif p.right == A.Var(c) and not _reads(p.left, c):
        op, e = _FLIP[p.op], p.left
    else:
        return None
    return (_NEG[op] if neg else op), e


def _interval(atoms: List[Tuple[str, A.Expr]], lo: A.Expr, h: A.Expr) -> Optional[A.Expr]:
    """The number of integers ``c`` in ``[lo, h)`` with every ``c op e`` of ``atoms`` (bounds and
    at most one equality; ``!=`` is not an interval)."""
    eqs = [e for op, e in atoms if op == "=="]
    if any(op == "!=" for op, _ in atoms):
        return None
    if eqs:
        e = eqs[0]
        tests: A.Expr = A.Binary("&&", A.Binary("<=", lo, e), A.Binary("<", e, h))
        for op, f in atoms:
            if f is not e or op != "==":
                tests = A.Binary("&&", tests, A.Binary(op, e, f))
        return A.Cond(tests, ONE, ZERO)
    low, up = lo, h
    for op, e in atoms:
        if op == ">=":
            low = _max(low, e)
        elif op == ">":
            low = _max(low, A.Binary("+", e, ONE))
        elif op == "<":
            up = _min(up, e)
        elif op == "<=":
            up = _min(up, A.Binary("+", e, ONE))
    return _max(A.Binary("-", up, low), ZERO)


def _conjuncts(p: A.Expr) -> List[A.Expr]:
    if isinstance(p, A.Binary) and p.op == "&&":
        return _conjuncts(p.left) + _conjuncts(p.right)
    return [p]


def _count(p: A.Expr, c: str, lo: A.Expr, h: A.Expr) -> Optional[A.Expr]:
    """A proposal for the number of integers ``c`` in ``[lo, h)`` (``h >= lo``) where ``p`` holds."""
    n = _width(lo, h)
    if not _reads(p, c):
        return _cond(p, n, ZERO)
    if isinstance(p, A.Unary) and p.op == "!" and _atom(p, c) is None:
        inner = _count(p.operand, c, lo, h)
        return None if inner is None else A.Binary("-", n, inner)
    if isinstance(p, A.Binary) and p.op == "||":
        a, b = _count(p.left, c, lo, h), _count(p.right, c, lo, h)
        both = _count(A.Binary("&&", p.left, p.right), c, lo, h)
        if a is None or b is None or both is None:
            return None
        return A.Binary("-", A.Binary("+", a, b), both)
    if isinstance(p, A.Binary) and p.op == "&&":
        conj = _conjuncts(p)
        outside = [q for q in conj if not _reads(q, c)]
        inside = [q for q in conj if _reads(q, c)]
        if outside:
            rest = inside[0]
            for q in inside[1:]:
                rest = A.Binary("&&", rest, q)
            got = _count(rest, c, lo, h)
            if got is None:
                return None
            test = outside[0]
            for q in outside[1:]:
                test = A.Binary("&&", test, q)
            return _cond(test, got, ZERO)
        atoms = [_atom(q, c) for q in inside]
        if any(a is None for a in atoms):
            return None
        return _interval([a for a in atoms if a is not None], lo, h)
    at = _atom(p, c)
    if at is None:
        return None
    if at[0] == "!=":
        one = _interval([("==", at[1])], lo, h)
        return None if one is None else A.Binary("-", n, one)
    return _interval([at], lo, h)


def _sum_to(b: A.Expr, c: str, lo: A.Expr, h: A.Expr) -> Optional[A.Expr]:
    """A proposal ``F(h)`` for ``Σ_{lo <= c < h} b(c)`` (``h >= lo``), ``b`` without sums."""
    if not _reads(b, c):
        return _mul(b, _width(lo, h))
    if isinstance(b, A.Binary) and b.op in ("+", "-"):
        left, right = _sum_to(b.left, c, lo, h), _sum_to(b.right, c, lo, h)
        return None if left is None or right is None else A.Binary(b.op, left, right)
    if isinstance(b, A.Unary) and b.op == "-":
        inner = _sum_to(b.operand, c, lo, h)
        return None if inner is None else A.Unary("-", inner)
    if isinstance(b, A.Binary) and b.op == "*":
        for k, rest in ((b.left, b.right), (b.right, b.left)):
            if not _reads(k, c):
                inner = _sum_to(rest, c, lo, h)
                return None if inner is None else _mul(k, inner)
        return None
    if isinstance(b, A.Binary) and b.op == "/" and not _reads(b.right, c):
        inner = _sum_to(b.left, c, lo, h)
        return None if inner is None else A.Binary("/", inner, b.right)
    if isinstance(b, A.Cond):
        if not _reads(b.cond, c):
            yes, no = _sum_to(b.then, c, lo, h), _sum_to(b.other, c, lo, h)
            return None if yes is None or no is None else _cond(b.cond, yes, no)
        if not _reads(b.then, c) and not _reads(b.other, c):
            cnt = _count(b.cond, c, lo, h)
            if cnt is None:
                return None
            return _add(_mul(b.other, _width(lo, h)), _mul(_sub(b.then, b.other), cnt))
    return None


def _fresh(base: str, avoid) -> str:
    name = base + "$h"
    while name in avoid:
        name += "$"
    return name


def _wrap(ctx: List[A.Sum], f: A.Expr) -> A.Expr:
    for s in reversed(ctx):
        f = A.Quant("forall", s.var, s.lo, s.hi, s.inclusive, f)
    return f


def closed_sums(e: A.Expr, avoid=frozenset()) -> Optional[Tuple[A.Expr, List[Tuple[str, A.Expr]]]]:
    """``(e', obligations)``: ``e`` with every ``sum`` replaced by a closed form, and the BASE and
    STEP obligations (see the module docstring) that, once valid, make ``e'`` equal to ``e``;
    None when some sum has no closed form here (or ``e`` has none)."""
    obligations: List[Tuple[str, A.Expr]] = []
    taken = set(avoid) | {n.name for n in A.walk(e) if isinstance(n, A.Var)}
    taken |= {n.var for n in A.walk(e) if isinstance(n, (A.Sum, A.Quant))}

    def go(x: A.Expr, ctx: List[A.Sum]) -> Optional[A.Expr]:
        if isinstance(x, A.Sum):
            body = go(x.body, ctx + [x])
            if body is None:
                return None
            h = _fresh(x.var, taken)
            taken.add(h)
            f = _sum_to(body, x.var, x.lo, A.Var(h))
            if f is None:
                return None
            at = lambda v: substitute(f, {h: v})  # noqa: E731
            step = A.Binary("==", at(A.Binary("+", A.Var(x.var), ONE)), A.Binary("+", at(A.Var(x.var)), body))
            obligations.append(("SUM_BASE", _wrap(ctx, A.Binary("==", at(x.lo), ZERO))))
            obligations.append(("SUM_STEP", _wrap(ctx, A.Quant("forall", x.var, x.lo, x.hi, x.inclusive, step))))
            end = A.Binary("+", x.hi, ONE) if x.inclusive else x.hi
            return A.Cond(A.Binary(">=", end, x.lo), at(end), ZERO)
        if not any(isinstance(n, A.Sum) for n in A.walk(x)):
            return x
        if isinstance(x, A.Binary):
            left, right = go(x.left, ctx), go(x.right, ctx)
            return None if left is None or right is None else A.Binary(x.op, left, right, pos=x.pos)
        if isinstance(x, A.Unary):
            inner = go(x.operand, ctx)
            return None if inner is None else A.Unary(x.op, inner, pos=x.pos)
        if isinstance(x, A.Cond):
            c, t, o = go(x.cond, ctx), go(x.then, ctx), go(x.other, ctx)
            return None if c is None or t is None or o is None else A.Cond(c, t, o)
        if isinstance(x, A.Call):
            args = [go(a, ctx) for a in x.args]
            return None if any(a is None for a in args) else A.Call(x.func, tuple(args))  # type: ignore[arg-type]
        return None

    if not any(isinstance(n, A.Sum) for n in A.walk(e)):
        return None
    out = go(e, [])
    return None if out is None else (out, obligations)
