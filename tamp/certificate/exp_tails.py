"""The checker's own chance of a tail test of an exponential draw (the expected-failure rules).

``x ~ exp(k, s)`` (density ``exp(-(x - k)/s)/s`` on x >= k, s > 0) has the exact survival
function ``Pr[x > e] = exp(-(e - k)/s)`` for e >= k and 1 for e < k (all its mass is at or
above k). x is continuous, so ``x >= e`` has the same chance (a tie has probability 0), and
``x < e`` / ``x <= e`` has one minus it. The value is exact, so the checker may use it in the
upper and in the lower pre-expectation alike. Any other test reading x (``abs``, x on both
sides, a parameter reading x) is refused. Written apart from the search's copy
(:mod:`tamp.prover.expectation.tails`): the checker shares nothing with the search but the
language.
"""

from __future__ import annotations

from typing import Optional

from lang import ast as A
from lang.walk import free_vars

_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def exp_tail(phi: A.Expr, x: str, k: A.Expr, sc: A.Expr) -> Optional[A.Expr]:
    """Pr[φ(x)] for x ~ exp(k, sc), sc > 0; None for a test outside the rule."""
    if not isinstance(phi, A.Binary) or phi.op not in _MIRROR:
        return None
    op, a, b = phi.op, phi.left, phi.right
    if x in set(free_vars(b)):
        op, a, b = _MIRROR[op], b, a
    if a != A.Var(x):
        return None
    if x in set(free_vars(b)) | set(free_vars(k)) | set(free_vars(sc)):
        return None
    d = A.Binary("-", b, k)
    survive = A.Cond(A.Binary(">=", d, A.num(0)), A.Call("exp", (A.Unary("-", A.Binary("/", d, sc)),)), A.num(1))
    return survive if op in (">", ">=") else A.Binary("-", A.num(1), survive)
