"""Counter guards: which iterations of a counted loop take a branch, and what they cost in total.

A sampling inside ``if (i >= w - 1) { … }`` in a loop counted by ``i`` happens only from
iteration w - 1 on (a sliding window released once it is full). The failure bound κ of such a
loop grows by the sampling's cost only on those iterations, so at the loop head it is not
``cost · (i - lo)`` but ``cost · max(0, i - max(lo, w - 1))``. This module recognises such
*counter guards* — a comparison linear in the counter with coefficient ±1 and an integer
threshold over values the loop does not write (``i >= c``, ``i > c``, ``c <= i``, ``i - c < 0``,
``!(…)``) — and sums a per-iteration cost that is a sum of terms ``g ? A : B`` (``g`` a counter
guard, A and B free of the counter) and counter-free terms over the iterations done.

Nothing here needs to be right for soundness: the sums become κ at the loop head, which the
checker's STEP obligations verify like every κ (the guard itself is carried into the labels of
the branch, where STEP needs it).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Dict, List, Mapping, Optional, Tuple

from lang import ast as A
from lang.walk import free_vars
from tamp.prover.base.exprs import ZERO, iterations_done, plus, subst

Linear = Tuple[Dict[A.Expr, Fraction], Fraction]  # Σ coef·atom + const


# ---------------------------------------------------------------------------- recognising a guard


def _integral(e: A.Expr, types: Mapping[str, A.Type]) -> bool:
    """Whether ``e`` is integer-valued by its shape: integer variables and literals under
    ``+ - * div mod`` and unary minus."""
    if isinstance(e, A.Num):
        return e.value.denominator == 1
    if isinstance(e, A.Var):
        t = types.get(e.name)
        return t is not None and t.name == "int"
    if isinstance(e, A.Unary) and e.op == "-":
        return _integral(e.operand, types)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "div", "mod"):
        return _integral(e.left, types) and _integral(e.right, types)
    return False


def _linear(e: A.Expr, counter: str) -> Optional[Linear]:
    """``e`` as a linear form whose atoms are the counter and counter-free sub-expressions
    (kept whole), or None when the counter occurs non-linearly."""
    if isinstance(e, A.Num):
        return {}, Fraction(e.value)
    if counter not in set(free_vars(e)):
        return {e: Fraction(1)}, Fraction(0)
    if isinstance(e, A.Var):
        return {e: Fraction(1)}, Fraction(0)
    if isinstance(e, A.Unary) and e.op == "-":
        inner = _linear(e.operand, counter)
        return None if inner is None else _scale(inner, Fraction(-1))
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        a, b = _linear(e.left, counter), _linear(e.right, counter)
        if a is None or b is None:
            return None
        return _add(a, _scale(b, Fraction(1 if e.op == "+" else -1)))
    if isinstance(e, A.Binary) and e.op == "*":
        for k, x in ((e.left, e.right), (e.right, e.left)):
            if isinstance(k, A.Num):
                inner = _linear(x, counter)
                return None if inner is None else _scale(inner, Fraction(k.value))
    return None


def _scale(f: Linear, k: Fraction) -> Linear:
    return {a: c * k for a, c in f[0].items()}, f[1] * k


def _add(f: Linear, g: Linear) -> Linear:
    out = dict(f[0])
    for a, c in g[0].items():
        out[a] = out.get(a, Fraction(0)) + c
    return {a: c for a, c in out.items() if c != 0}, f[1] + g[1]


def _expr(f: Linear) -> A.Expr:
    """The linear form as an expression (``w - 1``, not ``1 * w + -1``)."""
    out: Optional[A.Expr] = None
    for atom, c in list(f[0].items()) + ([(None, f[1])] if f[1] != 0 or not f[0] else []):
        mag = abs(c)
        term: A.Expr = A.num(int(mag)) if atom is None else atom if mag == 1 else A.Binary("*", A.num(int(mag)), atom)
        if out is None:
            out = term if c >= 0 else A.Unary("-", term)
        else:
            out = A.Binary("+" if c >= 0 else "-", out, term)
    assert out is not None
    return out


def threshold(g: A.Expr, counter: str, types: Mapping[str, A.Type]) -> Optional[Tuple[A.Expr, bool]]:
    """``(c, True)`` when guard ``g`` holds exactly when ``counter >= c``, ``(c, False)`` when
    exactly when ``counter < c`` (c an integer expression free of the counter); None when ``g``
    is not such a comparison."""
    if isinstance(g, A.Unary) and g.op == "!":
        inner = threshold(g.operand, counter, types)
        return None if inner is None else (inner[0], not inner[1])
    if not (isinstance(g, A.Binary) and g.op in ("<", "<=", ">", ">=")):
        return None
    left, right = _linear(g.left, counter), _linear(g.right, counter)
    if left is None or right is None:
        return None
    # normalise to d >= 0 over the integers: a > b is a - b - 1 >= 0, a <= b is b - a >= 0
    d = _add(left, _scale(right, Fraction(-1))) if g.op in (">", ">=") else _add(right, _scale(left, Fraction(-1)))
    if g.op in ("<", ">"):
        d = (d[0], d[1] - 1)
    s = d[0].pop(A.Var(counter), Fraction(0))
    if abs(s) != 1 or d[1].denominator != 1:
        return None
    if any(c.denominator != 1 or not _integral(a, types) for a, c in d[0].items()):
        return None
    if s == 1:  # counter + r >= 0: counter >= -r
        return _expr(_scale(d, Fraction(-1))), True
    return _expr((d[0], d[1] + 1)), False  # r - counter >= 0: counter < r + 1


# ---------------------------------------------------------------------------- summing a guarded cost


def summands(e: A.Expr) -> List[A.Expr]:
    """The terms of a sum ``a + b + …`` (left-nested, as κ is built)."""
    out: List[A.Expr] = []
    while isinstance(e, A.Binary) and e.op == "+":
        out.append(e.right)
        e = e.left
    out.append(e)
    return out[::-1]


def has_guard(per: A.Expr, counter: str) -> bool:
    """Whether ``per`` has a conditional on a condition reading the counter (anywhere in it)."""
    return any(isinstance(t, A.Cond) and counter in set(free_vars(t.cond)) for t in A.walk(per))


def _max(a: A.Expr, b: A.Expr) -> A.Expr:
    if isinstance(a, A.Num) and isinstance(b, A.Num):
        return a if a.value >= b.value else b
    if a == b:
        return a
    return A.Call("max", (a, b))


def _minus(a: A.Expr, b: A.Expr) -> A.Expr:
    if b == ZERO:
        return a
    if isinstance(a, A.Num) and isinstance(b, A.Num):
        return A.Num(a.value - b.value, a.is_int and b.is_int)
    return A.Binary("-", a, b)


def _times(k: A.Expr, n: A.Expr) -> A.Expr:
    if k == ZERO or n == ZERO:
        return ZERO
    if k == A.num(1):
        return n
    return A.Binary("*", k, n)


def guarded_sum(per: A.Expr, counter, types: Mapping[str, A.Type], inputs) -> Optional[A.Expr]:
    """The loop's term of κ at its head when one iteration costs ``per`` (read at the back edge,
    after the body moved the counter by its step ±1): each term ``g ? A : B`` of ``per`` (g a
    counter guard) adds A times the number of iterations done whose counter value satisfied g,
    and B times the others; each counter-free term adds itself times the iterations done. None
    when ``per`` has another shape (a term reading the counter outside a guard, or ``A``, ``B``
    reading anything but inputs).

    Counting up from ``lo``, the iterations done had counter values ``lo … i-1``; counting down
    from ``lo``, ``i+1 … lo``: of the values in ``[a, b)``, ``max(0, b - max(a, c))`` are ``>= c``."""
    if abs(counter.step) != 1:
        return None
    name = counter.name
    i: A.Expr = A.Var(name)
    if counter.step > 0:
        a, b = counter.init, i
    else:
        a, b = plus(i, A.num(1)), plus(counter.init, A.num(1))
    done = iterations_done(i, counter.init, counter.step)
    head = {name: A.Binary("+" if counter.step > 0 else "-", A.Var("j$"), A.num(1))}  # head value j at the back edge
    total: A.Expr = ZERO
    for t in summands(per):
        if set(free_vars(t)) <= set(inputs):
            total = plus(total, _times(t, done))
            continue
        if not isinstance(t, A.Cond) or not (set(free_vars(t.then)) | set(free_vars(t.other))) <= set(inputs):
            return None
        if not set(free_vars(t.cond)) <= set(inputs) | {name}:
            return None
        th = threshold(subst(t.cond, head), "j$", types)
        if th is None:
            return None
        c, at_least = th
        above = A.Call("max", (ZERO, _minus(b, _max(a, c))))  # iterations with counter >= c
        below = _minus(done, above)
        yes, no = (above, below) if at_least else (below, above)
        total = plus(plus(total, _times(t.then, yes)), _times(t.other, no))
    return total
