"""Small pure helpers on :mod:`lang.ast` expressions: substitution, conjuncts, smart constructors."""

from __future__ import annotations

from fractions import Fraction
from typing import Iterator, List

from lang import ast as A
from lang.walk import operands
from lang.walk import substitute as subst  # noqa: F401  (the prover's name for it)

TRUE = A.BoolLit(True)
FALSE = A.BoolLit(False)
ZERO = A.num(0)


def conjuncts(e: A.Expr) -> List[A.Expr]:
    """``a && b && c`` → [a, b, c]; ``true`` → []."""
    return [x for x in operands(e, "&&") if not (isinstance(x, A.BoolLit) and x.value)]


def fold(op: str, es: List[A.Expr]) -> A.Expr:
    """``fold("+", [a, b, c])`` → ``(a + b) + c``: the left fold of a binary operator over a non-empty list."""
    out = es[0]
    for e in es[1:]:
        out = A.Binary(op, out, e)
    return out


def and_all(es) -> A.Expr:
    es = [e for e in es if not (isinstance(e, A.BoolLit) and e.value)]
    return fold("&&", es) if es else TRUE


def not_(e: A.Expr) -> A.Expr:
    if isinstance(e, A.Unary) and e.op == "!":
        return e.operand
    if isinstance(e, A.BoolLit):
        return A.BoolLit(not e.value)
    return A.Unary("!", e)


def is_zero(e: A.Expr) -> bool:
    return isinstance(e, A.Num) and e.value == 0


def plus(a: A.Expr, b: A.Expr) -> A.Expr:
    """``a + b`` with 0 folded and literal sums computed exactly."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, A.Num) and isinstance(b, A.Num):
        return A.Num(a.value + b.value, a.is_int and b.is_int)
    return A.Binary("+", a, b)


def divide(a: A.Expr, k: int) -> A.Expr:
    if k == 1:
        return a
    if isinstance(a, A.Num):
        return A.Num(Fraction(a.value) / k, False)
    # a literal factor cancels: (2 * X) / 2 is X (a share ``X`` whose log the lemmas then see whole)
    if isinstance(a, A.Binary) and a.op == "*":
        for lit, rest in ((a.left, a.right), (a.right, a.left)):
            if isinstance(lit, A.Num) and not isinstance(lit.value, bool):
                c = Fraction(lit.value) / k
                return rest if c == 1 else A.Binary("*", A.Num(c, False), rest)
    return A.Binary("/", a, A.num(k))


def reciprocal(e: A.Expr) -> A.Expr:
    """``1/e`` with ``1/(1/x)`` → x and ``1/(a/b)`` → b/a."""
    if isinstance(e, A.Binary) and e.op == "/":
        if isinstance(e.left, A.Num) and e.left.value == 1:
            return e.right
        return A.Binary("/", e.right, e.left)
    if isinstance(e, A.Num) and e.value != 0:
        return A.Num(1 / Fraction(e.value), False)
    return A.Binary("/", A.num(1), e)


def iterations_done(i: A.Expr, init: A.Expr, step: int) -> A.Expr:
    """Iterations a loop counter has completed when it reads ``i``, having started at ``init``
    and moved by ``step`` per iteration: ``i - init``, or ``init - i`` counting down; for a step
    k of more than 1, that difference ``div k``."""
    diff = A.Binary("-", i, init) if step > 0 else A.Binary("-", init, i)
    return diff if abs(step) == 1 else A.Binary("div", diff, A.num(abs(step)))


def assigned_names(stmt) -> set:
    """Variables (array names for element writes) written by a basic statement."""
    out = set()
    for t in getattr(stmt, "targets", ()):
        if isinstance(t, A.Var):
            out.add(t.name)
        elif isinstance(t, A.Index) and isinstance(t.base, A.Var):
            out.add(t.base.name)
    return out


#: the functions the sympy translation (:class:`.simplify._ToSympy`) represents, by arity
SYMPY_FUNCS = {"log": 1, "exp": 1, "sqrt": 1, "abs": 1, "min": 2, "max": 2}


def sympy_translates(e: A.Expr) -> bool:
    """``e``'s own node is one the sympy translation represents (a number, a variable, ``+ - *
    /``, unary ``-`` or a function of :data:`SYMPY_FUNCS`); any other node becomes an opaque
    symbol there."""
    if isinstance(e, (A.Num, A.Var)):
        return True
    if isinstance(e, A.Unary):
        return e.op == "-"
    if isinstance(e, A.Binary):
        return e.op in ("+", "-", "*", "/")
    return isinstance(e, A.Call) and SYMPY_FUNCS.get(e.func) == len(e.args)


def sympy_atoms(e: A.Expr) -> Iterator[A.Expr]:
    """The maximal parts of ``e`` that the sympy translation turns into opaque symbols (array
    elements, ``div``, quantifiers …), found without loading sympy."""
    if not sympy_translates(e):
        yield e
    elif isinstance(e, A.Unary):
        yield from sympy_atoms(e.operand)
    elif isinstance(e, A.Binary):
        yield from sympy_atoms(e.left)
        yield from sympy_atoms(e.right)
    elif isinstance(e, A.Call):
        for a in e.args:
            yield from sympy_atoms(a)
