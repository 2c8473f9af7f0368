"""The checker's own rule for tests of a running minimum or maximum with a uniform sample.

Before ``x ~ unif(lo, hi)`` is averaged, a comparison of ``min(a, x)`` or ``max(a, x)`` (x one
argument, neither ``a`` nor the other side reading x) with ``c`` is written as tests of ``a``
and of ``x``: ``min(a, x) > c`` ⇔ ``a > c ∧ x > c``, ``min(a, x) >= c`` ⇔ ``a >= c ∧ x >= c``,
``min(a, x) <= c`` ⇔ ``¬(a > c ∧ x > c)``, ``min(a, x) < c`` ⇔ ``¬(a >= c ∧ x >= c)``, and
dually ``max(a, x) < c`` ⇔ ``a < c ∧ x < c`` (``<=``), ``max(a, x) >= c`` ⇔ ``¬(a < c ∧ x <
c)`` (``>``). The argument reading x may also be a nested ``min``/``max``, whose test is split
again (``min(a, min(b, x)) > c`` ⇔ ``a > c ∧ b > c ∧ x > c``: the minimum of several draws).
Sound: identities of a total order; the expectation is unchanged. Written apart
from the prover's copy (:mod:`tamp.prover.expectation.powers`), which it must agree with only
in the expression it builds for the checker to accept a certificate.
"""

from __future__ import annotations

from lang import ast as A
from lang.walk import free_vars

_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_RULES = {  # (function, comparison) -> (comparison of each argument, negated)
    "min": {">": (">", False), ">=": (">=", False), "<=": (">", True), "<": (">=", True)},
    "max": {"<": ("<", False), "<=": ("<=", False), ">=": ("<", True), ">": ("<=", True)},
}


def _split(m: A.Expr, op: str, c: A.Expr, x: str):
    if not (isinstance(m, A.Call) and m.func in _RULES and len(m.args) == 2) or x in set(free_vars(c)):
        return None
    first, second = (x in set(free_vars(arg)) for arg in m.args)
    if first == second:
        return None
    a, b = (m.args[1], m.args[0]) if first else (m.args[0], m.args[1])
    nested = isinstance(b, A.Call) and b.func in _RULES and len(b.args) == 2
    if b != A.Var(x) and not nested:
        return None
    op2, negated = _RULES[m.func][op]
    both = A.Binary("&&", split_extrema(A.Binary(op2, a, c), x), split_extrema(A.Binary(op2, b, c), x))
    return A.Unary("!", both) if negated else both


def split_extrema(e: A.Expr, x: str) -> A.Expr:
    """``e`` with the tests of ``min``/``max`` with ``x`` rewritten (see the module docstring);
    sums, quantifiers and array indices are left alone."""
    if isinstance(e, A.Binary):
        if e.op in _MIRROR:
            out = _split(e.left, e.op, e.right, x)
            if out is None:
                out = _split(e.right, _MIRROR[e.op], e.left, x)
            if out is not None:
                return out
        return A.Binary(e.op, split_extrema(e.left, x), split_extrema(e.right, x))
    if isinstance(e, A.Unary):
        return A.Unary(e.op, split_extrema(e.operand, x))
    if isinstance(e, A.Cond):
        return A.Cond(split_extrema(e.cond, x), split_extrema(e.then, x), split_extrema(e.other, x))
    if isinstance(e, A.Call):
        return A.Call(e.func, tuple(split_extrema(a, x) for a in e.args))
    return e
