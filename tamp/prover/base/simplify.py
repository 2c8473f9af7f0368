"""Simplifying inferred bounds and margins with sympy, and back to :mod:`lang.ast`; and
:func:`user_form`, which gives an inferred bound the user's names (no engine-internal ``u$``).

Only for presentation: every simplified expression is proved again like any claimed bound
(:mod:`.conc_proof`), so a wrong rewrite can make a proof fail, never make a false claim
"proved". Sub-expressions sympy does not model (``sum(…)``, array elements, conditionals)
become opaque symbols and come back unchanged. Variables are assumed real (and inputs named in
``positive`` positive, which is what ``requires`` usually says; again, the result is re-proved).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from lang import ast as A
from lang.evaluate import evaluate
from lang.printer import print_expr
from lang.walk import Transformer, rebuild, substitute
from tamp.core.z3context import load_in_proof
from tamp.prover.base.exprs import sympy_translates

if TYPE_CHECKING:
    import sympy as sp
else:

    class _Sympy:
        """sympy, imported on first use through :func:`load_in_proof`: a proof that simplifies
        nothing does not pay sympy's start-up time, and one that does sees the same collector
        state in a fresh process and a warm one (:mod:`tamp.core.z3context`)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(load_in_proof("sympy"), name)

    sp = _Sympy()


class _ToSympy:
    def __init__(self, positive: Iterable[str] = ()):
        self.positive = set(positive)
        self.atoms: dict[sp.Symbol, A.Expr] = {}
        self.syms: dict[str, sp.Symbol] = {}

    def sym(self, name: str) -> sp.Symbol:
        if name not in self.syms:
            self.syms[name] = sp.Symbol(name, positive=True) if name in self.positive else sp.Symbol(name, real=True)
        return self.syms[name]

    def opaque(self, e: A.Expr) -> sp.Symbol:
        for s, x in self.atoms.items():
            if x == e:
                return s
        s = sp.Symbol(f"_atom{len(self.atoms)}", real=True)
        self.atoms[s] = e
        return s

    def conv(self, e: A.Expr):
        if isinstance(e, A.Num):
            return sp.Rational(e.value.numerator, e.value.denominator)
        if isinstance(e, A.Var):
            return self.sym(e.name)
        if isinstance(e, A.Unary) and e.op == "-":
            return -self.conv(e.operand)
        if isinstance(e, A.Binary) and e.op in ("+", "-", "*", "/"):
            a, b = self.conv(e.left), self.conv(e.right)
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[e.op]
        if isinstance(e, A.Call) and sympy_translates(e):  # the functions of exprs.SYMPY_FUNCS
            f = {"log": sp.log, "exp": sp.exp, "sqrt": sp.sqrt, "abs": sp.Abs, "min": sp.Min, "max": sp.Max}[e.func]
            return f(*(self.conv(a) for a in e.args))
        return self.opaque(e)


def to_sympy(e: A.Expr, positive: Iterable[str] = ()):
    t = _ToSympy(positive)
    return t.conv(e), t


def from_sympy(x, conv: _ToSympy | None = None) -> A.Expr:
    """A :mod:`lang.ast` expression for a sympy expression (rationals exact)."""
    atoms = conv.atoms if conv is not None else {}
    if x in atoms:
        return atoms[x]
    if isinstance(x, sp.Symbol):
        return A.Var(x.name)
    if x.is_Integer:
        return A.num(int(x))
    if x.is_Rational:
        return A.Num(Fraction(int(x.p), int(x.q)), False)
    if x == sp.E:
        return A.Call("exp", (A.num(1),))
    if isinstance(x, sp.Add):
        terms = list(x.as_ordered_terms())
        out = from_sympy(terms[0], conv)
        for t in terms[1:]:
            c, rest = t.as_coeff_Mul()
            if c.is_number and c < 0:
                out = A.Binary("-", out, from_sympy(-t, conv))
            else:
                out = A.Binary("+", out, from_sympy(t, conv))
        return out
    if isinstance(x, sp.Mul):
        c, rest = x.as_coeff_Mul()
        if c == -1 and isinstance(rest, sp.log):  # -log(p) is log(1/p)
            return A.Call("log", (A.Binary("/", A.num(1), from_sympy(rest.args[0], conv)),))
        roots = [f for f in x.args if isinstance(f, sp.Pow) and f.exp == sp.Rational(1, 2)]
        if len(roots) >= 2:  # sqrt(2)*sqrt(n) is sqrt(2*n)
            others = [f for f in x.args if f not in roots]
            inner = from_sympy(sp.Mul(*[r.base for r in roots], evaluate=False), conv)
            out = A.Call("sqrt", (inner,))
            if others:
                rest_x = sp.Mul(*others)
                if rest_x.is_Rational and rest_x.q != 1:
                    num = out if rest_x.p == 1 else A.Binary("*", from_sympy(sp.Integer(rest_x.p), conv), out)
                    return A.Binary("/", num, from_sympy(sp.Integer(rest_x.q), conv))
                n_, d_ = sp.fraction(rest_x)
                num = out if n_ == 1 else A.Binary("*", from_sympy(n_, conv), out)
                return num if d_ == 1 else A.Binary("/", num, from_sympy(d_, conv))
            return out
        if c.is_number and c < 0:
            return A.Unary("-", from_sympy(-x, conv))
        nums, dens = [], []
        for f in x.as_ordered_factors():
            if isinstance(f, sp.Pow) and f.exp.is_number and f.exp.is_negative:
                dens.append(f.base ** (-f.exp))
            elif f.is_Rational and f.q != 1:
                if f.p != 1:
                    nums.append(sp.Integer(f.p))
                dens.append(sp.Integer(f.q))
            else:
                nums.append(f)
        if dens:
            top = sp.Mul(*nums, evaluate=False) if len(nums) > 1 else (nums[0] if nums else sp.Integer(1))
            bot = sp.Mul(*dens, evaluate=False) if len(dens) > 1 else dens[0]
            return A.Binary("/", from_sympy(top, conv), from_sympy(bot, conv))
        factors = list(x.as_ordered_factors())
        out = from_sympy(factors[0], conv)
        for f in factors[1:]:
            out = A.Binary("*", out, from_sympy(f, conv))
        return out
    if isinstance(x, sp.Pow):
        base, ex = x.as_base_exp()
        if ex == sp.Rational(1, 2):
            return A.Call("sqrt", (from_sympy(base, conv),))
        if ex == -1:
            return A.Binary("/", A.num(1), from_sympy(base, conv))
        if ex.is_Integer and ex > 0:
            b = from_sympy(base, conv)
            out = b
            for _ in range(int(ex) - 1):
                out = A.Binary("*", out, b)
            return out
        if ex.is_Integer and ex < 0:
            return A.Binary("/", A.num(1), from_sympy(base ** (-ex), conv))
        if ex.is_Rational and ex.q == 2:
            return (
                from_sympy(sp.sqrt(base) ** ex.p, conv)
                if ex.p > 0
                else A.Binary("/", A.num(1), from_sympy(sp.sqrt(base) ** (-ex.p), conv))
            )
        raise ValueError(f"cannot express {x} in the language")
    if isinstance(x, sp.exp):
        return A.Call("exp", (from_sympy(x.args[0], conv),))
    if isinstance(x, sp.log):
        return A.Call("log", (from_sympy(x.args[0], conv),))
    if isinstance(x, sp.Abs):
        return A.Call("abs", (from_sympy(x.args[0], conv),))
    if isinstance(x, (sp.Min, sp.Max)) and len(x.args) == 2:
        return A.Call(
            "min" if isinstance(x, sp.Min) else "max", (from_sympy(x.args[0], conv), from_sympy(x.args[1], conv))
        )
    raise ValueError(f"cannot express {x} in the language")


def simplify(e: A.Expr, positive: Iterable[str] = ()) -> A.Expr:
    """A simpler equivalent of ``e`` (for the reals, inputs in ``positive`` positive), or ``e``
    itself when sympy cannot help or the result cannot be written in the language. Both readings
    (inputs positive, inputs merely real) are tried; the shorter text wins."""
    best, best_len = e, len(print_expr(e))
    for pos, full in ((tuple(positive), True), ((), True), ((), False)):
        try:
            x, conv = to_sympy(e, pos)
            y = sp.powsimp(sp.simplify(x), combine="base", force=True) if full else x
            out = from_sympy(y, conv)
        except (ValueError, TypeError, RecursionError, AttributeError):
            continue
        n = len(print_expr(out))
        if n < best_len:
            best, best_len = out, n
    return best


def numeric(e: A.Expr, env: dict[str, object]) -> float | None:
    """The value of ``e`` at ``env`` as a float, or None."""
    try:
        return float(evaluate(e, env))
    except Exception:  # noqa: BLE001 - undefined there (log of 0 …): no value
        return None


#: names tried, in order, for a sum or quantifier variable the engine named (``u$``)
_BINDER_NAMES = ("j", "k", "i", "t", "m")
_REFLEXIVE = {"==": True, "<=": True, ">=": True, "!=": False, "<": False, ">": False}


class _UserForm(Transformer):
    """Bottom-up: folds what is decided by the syntax alone and renames internal binders."""

    def __init__(self, taken: set[str]):
        self.taken = taken

    def fresh(self) -> str:
        k = 0
        while True:
            for base in _BINDER_NAMES:
                name = base if k == 0 else f"{base}{k}"
                if name not in self.taken:
                    self.taken.add(name)
                    return name
            k += 1

    def Binary(self, node: A.Binary, kids) -> A.Node:
        left, right = kids
        if node.op in _REFLEXIVE and left == right:  # e < e, e >= e: decided for every value of e
            return A.BoolLit(_REFLEXIVE[node.op])
        return rebuild(node, kids)

    def Unary(self, node: A.Unary, kids) -> A.Node:
        (x,) = kids
        if node.op == "!" and isinstance(x, A.BoolLit):
            return A.BoolLit(not x.value)
        return rebuild(node, kids)

    def Cond(self, node: A.Cond, kids) -> A.Node:
        c, a, b = kids
        if isinstance(c, A.BoolLit):
            return a if c.value else b
        if a == b:
            return a
        return rebuild(node, kids)

    def _binder(self, node, kids):
        lo, hi, body = kids
        var = node.var
        if "$" in var:  # the engine's own name: the user's language has none such
            new = self.fresh()
            body = substitute(body, {var: A.Var(new)})
            var = new
        return lo, hi, body, var

    def Sum(self, node: A.Sum, kids) -> A.Expr:
        lo, hi, body, var = self._binder(node, kids)
        if isinstance(body, A.Num) and body.value == 0:  # a sum of zeros, over any range
            return A.num(0)
        return dataclasses.replace(node, var=var, lo=lo, hi=hi, body=body)

    def Quant(self, node: A.Quant, kids) -> A.Expr:
        lo, hi, body, var = self._binder(node, kids)
        return dataclasses.replace(node, var=var, lo=lo, hi=hi, body=body)


def user_form(e: A.Expr, avoid: Iterable[str] = ()) -> A.Expr:
    """``e`` as a user writes it: every sum or quantifier variable the engine named (with a
    ``$``, which no identifier of the language has) renamed to a fresh ``j``, ``k``, … not in
    ``avoid`` nor anywhere in ``e``; comparisons of an expression with itself folded (``e >= e``
    is true, ``e < e`` false), conditionals on a constant condition or with equal branches
    folded, and sums of 0 made 0. Every step is an identity of the language's semantics
    (renaming a bound variable to a fresh name is alpha-conversion), and the result is proved
    again like any candidate bound anyway.

    >>> from lang.printer import print_expr
    >>> body = A.Cond(A.Binary("<", A.Var("u$"), A.Var("u$")), A.num(1), A.num(0))
    >>> print_expr(user_form(A.Sum("u$", A.num(0), A.Var("n"), True, body)))
    '0'
    >>> body = A.Cond(A.Binary(">=", A.Var("u$"), A.num(2)), A.num(1), A.num(0))
    >>> print_expr(user_form(A.Sum("u$", A.num(0), A.Var("j"), True, body)))
    'sum(k in 0..=j: k >= 2 ? 1 : 0)'
    """
    taken = set(avoid)
    for n in A.walk(e):
        if isinstance(n, A.Var):
            taken.add(n.name)
        elif isinstance(n, (A.Sum, A.Quant)):
            taken.add(n.var)
    out: A.Expr = _UserForm(taken).walk(e)
    return out
