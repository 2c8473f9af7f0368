"""Text of expressions and basic CFA statements for output (the prover, the CFA, certificates, reports).

Expressions are printed by the language printer (``lang.printer``), which also prints the
prover's internal names (``$t1``, ``j$``) as they are.
"""

from __future__ import annotations

from lang import ast as A
from lang.printer import print_expr


def show_expr(e) -> str:
    """Source-like text of an expression."""
    if e is None:
        return "none"
    return print_expr(e)


def show_stmt(s) -> str:
    """One basic CFA statement as text (``x := e``, ``x ~ D``, ``assume(c)``)."""
    if isinstance(s, A.Assign):
        lhs = ", ".join(show_expr(t) for t in s.targets)
        if len(s.targets) > 1:
            lhs = f"({lhs})"
        return f"{lhs} := {show_expr(s.value)}"
    if isinstance(s, A.Sample):
        lhs = ", ".join(show_expr(t) for t in s.targets)
        if len(s.targets) > 1:
            lhs = f"({lhs})"
        return f"{lhs} ~ {show_expr(s.dist)}"
    if isinstance(s, A.Assume):
        return f"assume({show_expr(s.cond)})"
    return type(s).__name__
