"""Exit chances of flag loops, read off the body's lower pre-expectation.

A loop that runs until a flag is set — ``while (!won) { x ~ unif(1, T); if (x <= a) { won :=
true; } }``, ``while (!done) { x ~ unif(0, 1); if (x < p) { done := true; } }`` — has no rank,
but every iteration that starts with the guard true ends the loop with a chance at least δ > 0
that does not depend on the state (McIver & Morgan's zero-one law: a constant-probability exit
makes the loop end almost surely, the iterations at most geometric with mean 1/δ). The
expected-failure engine proves this with its exit-chance / variant rule (TERM: ``g ⇒ Pr[¬g
after one iteration] >= δ``, the probability a *lower* pre-expectation of the body); this
module turns that lower pre-expectation into a proposal for δ over the inputs:

* a count of a uniform draw's values passing threshold tests, ``sum(u in 1..=T: u <= a ? 1 :
  0)``, becomes its exact value ``max(0, min(T, a) - 1 + 1)`` (:func:`closed_counts`, by
  :func:`tamp.core.counts.closed_count`);
* ``min``/``max`` whose order the caller's ``le`` decides (under ``requires`` and the guard) are
  replaced by the smaller / larger side (:func:`settle_extrema`): ``a`` for ``min(T, a)`` when
  ``a <= T`` is required.

Why this is sound: nothing here is trusted. δ is only a proposal; the TERM obligations (δ > 0,
and the lower pre-expectation at least δ in every state where the guard holds) are decided by
the solver, and ``tamp check-proof`` rebuilds them from the source and the certificate's δ. The
rewriting steps are identities (the count's closed form) or choices the solver confirmed.
"""

from __future__ import annotations

from typing import Callable, Dict

from lang import ast as A
from lang.walk import Transformer
from tamp.core.counts import closed_count


def int_expr(e: A.Expr, types: Dict[str, A.Type]) -> bool:
    """``e`` is an integer expression by its syntax: integer literals and variables of type int
    combined by ``+``, ``-``, ``*``, unary minus, ``min``, ``max``, ``abs``."""
    if isinstance(e, A.Num):
        return e.value.denominator == 1 and e.is_int
    if isinstance(e, A.Var):
        return types.get(e.name) == A.INT
    if isinstance(e, A.Unary) and e.op == "-":
        return int_expr(e.operand, types)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
        return int_expr(e.left, types) and int_expr(e.right, types)
    if isinstance(e, A.Call) and e.func in ("min", "max", "abs"):
        return all(int_expr(a, types) for a in e.args)
    return False


def closed_counts(e: A.Expr, types: Dict[str, A.Type]) -> A.Expr:
    """``e`` with every threshold count ``sum(u in lo..hi: φ(u) ? 1 : 0)`` (integer ends) replaced
    by its exact value (:func:`tamp.core.counts.closed_count`)."""

    class _Counts(Transformer):
        def default(self, node, kids):
            out = super().default(node, kids)
            if isinstance(out, A.Sum):
                closed = closed_count(out, lambda x: int_expr(x, types))
                if closed is not None:
                    return closed
            return out

    return _Counts().walk(e)


def settle_extrema(e: A.Expr, le: Callable[[A.Expr, A.Expr], bool]) -> A.Expr:
    """``e`` with ``min(a, b)`` replaced by ``a`` when ``le(a, b)`` (by ``b`` when ``le(b, a)``),
    ``max`` the other way round; ``le`` must only answer True when the order holds wherever the
    result is used (the caller's solver, under ``requires`` and the loop's guard)."""

    class _Settle(Transformer):
        def default(self, node, kids):
            out = super().default(node, kids)
            if isinstance(out, A.Call) and out.func in ("min", "max") and len(out.args) == 2:
                a, b = out.args
                small, large = (a, b) if le(a, b) else (b, a) if le(b, a) else (None, None)
                if small is not None:
                    return small if out.func == "min" else large
            return out

    return _Settle().walk(e)
