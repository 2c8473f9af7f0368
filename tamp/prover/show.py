"""Text of expressions and basic statements for the prover's output.

Uses the language printer (``lang.printer``) when it is installed; otherwise a small
fully-parenthesising fallback so that CFAs and automata can always be shown.
"""

from __future__ import annotations

from lang import ast as A


def show_expr(e) -> str:
    """Source-like text of an expression."""
    if e is None:
        return "none"
    try:
        from lang.printer import print_expr  # type: ignore

        return print_expr(e)
    except ImportError:
        return _fallback(e)
    except Exception:  # printer not ready for an internal node (e.g. a temporary's name)
        return _fallback(e)


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


def _fallback(e) -> str:
    f = _fallback
    if isinstance(e, A.Num):
        v = e.value
        return str(v.numerator) if v.denominator == 1 else (e.text or f"{v.numerator}/{v.denominator}")
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.Var):
        return e.name
    if isinstance(e, A.Index):
        return f"{f(e.base)}[{f(e.index)}]"
    if isinstance(e, A.Unary):
        return f"{e.op}{_atom(e.operand)}"
    if isinstance(e, A.Binary):
        return f"{_atom(e.left)} {e.op} {_atom(e.right)}"
    if isinstance(e, A.Cond):
        return f"{_atom(e.cond)} ? {_atom(e.then)} : {_atom(e.other)}"
    if isinstance(e, A.Call):
        return f"{e.func}({', '.join(f(a) for a in e.args)})"
    if isinstance(e, A.TupleExpr):
        return "(" + ", ".join(f(a) for a in e.items) + ")"
    if isinstance(e, A.SetLit):
        return "{" + ", ".join(f(a) for a in e.items) + "}"
    if isinstance(e, A.ListLit):
        return "[" + ", ".join(f(a) for a in e.items) + "]"
    if isinstance(e, A.Quant):
        return f"({e.kind} {e.var} in {f(e.lo)}{'..=' if e.inclusive else '..'}{f(e.hi)}: {f(e.body)})"
    if isinstance(e, A.Sum):
        return f"sum({e.var} in {f(e.lo)}{'..=' if e.inclusive else '..'}{f(e.hi)}: {f(e.body)})"
    return type(e).__name__


def _atom(e) -> str:
    s = _fallback(e)
    if isinstance(e, (A.Binary, A.Cond)) or (isinstance(e, A.Num) and e.value < 0):
        return f"({s})"
    return s
