"""Checks of the claim itself, before any proof search: is the bound well defined, is the claim
vacuous or trivial, can it be met at all?

These never turn a claim into "proved"; they turn confusing outcomes into clear messages:

* a bound that divides by zero (or takes the log of a non-positive number) for some input
  allowed by ``requires`` is an input error, located at the offending sub-expression;
* ``requires`` that no input satisfies makes every claim hold *vacuously* — said in a note;
* a bound that is at least 1 for every input makes the claim hold *trivially* — said in a note;
* a bound that is negative for some allowed input cannot be met there — said in a note.
"""

from __future__ import annotations

from typing import List, Optional

import z3

from lang import ast as A
from lang.errors import TampError, UnsupportedError, error_at

from ..show import show_expr
from .smt import INVALID, VALID, Encoder, Stats, is_valid, to_real

_TIMEOUT_MS = 2000


def _partial_points(e: A.Expr):
    """Sub-expressions of ``e`` that are undefined somewhere: (node, condition that must hold)."""
    for node in A.walk(e):
        if isinstance(node, A.Binary) and node.op in ("/", "div", "mod"):
            yield node, ("nonzero", node.right)
        elif isinstance(node, A.Call) and node.func == "log" and node.args:
            yield node, ("positive", node.args[0])
        elif isinstance(node, A.Call) and node.func == "sqrt" and node.args:
            yield node, ("nonnegative", node.args[0])


def check_claim(cfa, path: str = "<string>", source: Optional[str] = None,
                bound_from_option: bool = False) -> List[str]:
    """Raise :class:`UnsupportedError` for an ill-defined bound; return notes about the claim."""
    enc = Encoder(cfa.types)
    stats = Stats()
    env = enc.initial_env()
    req = [enc.expr(r, env) for r in cfa.requires]

    def valid(f):
        return is_valid(f, enc, stats, _TIMEOUT_MS, req)

    for node, (kind, arg) in _partial_points(cfa.bound):
        t = to_real(enc.expr(arg, env))
        cond = {"nonzero": t != 0, "positive": t > 0, "nonnegative": t >= 0}[kind]
        if valid(cond) == INVALID:
            what = {"nonzero": f"divides by `{show_expr(arg)}`, which is zero",
                    "positive": f"takes log(`{show_expr(arg)}`), which is not positive",
                    "nonnegative": f"takes sqrt(`{show_expr(arg)}`), which is negative"}[kind]
            msg = f"the failure bound {what} for some inputs satisfying `requires`"
            if bound_from_option:
                raise TampError(msg + f" (bound: {show_expr(cfa.bound)})", "--bound")
            raise error_at(UnsupportedError, msg, node.pos, path, source)

    notes = []
    if valid(z3.BoolVal(False)) == VALID:
        notes.append("no input satisfies `requires`: the claim holds vacuously")
        return notes
    beta = to_real(enc.expr(cfa.bound, env))
    if valid(beta >= 1) == VALID:
        notes.append(f"the bound {show_expr(cfa.bound)} is at least 1 for every input: the claim holds trivially")
    elif valid(beta >= 0) == INVALID:
        notes.append(f"the bound {show_expr(cfa.bound)} is negative for some inputs satisfying `requires`: "
                     "no program can meet it there")
    return notes
