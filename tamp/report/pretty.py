"""Formulas as people read them: a lang expression simplified with sympy, printed in tamp's syntax.

>>> simplify_text("p / n * (i - 0)")
'p * i / n'
>>> simplify_text("log(1 / (p / n))")
'log(n / p)'
>>> simplify_text("1 - (1 - 3 * r)")
'3 * r'
>>> simplify_text("forall j in 0..n: a[j] >= 0")
'forall j in 0..n: a[j] >= 0'

Only the arithmetic (``+ - * /``, ``abs min max log exp sqrt``, numbers, variables) goes through
sympy, exactly: numbers become sympy rationals, never floats. Everything else keeps its structure
(comparisons and Boolean connectives are rebuilt around their simplified operands), and a part
sympy cannot stand for (an array element, ``div``/``mod``, a quantifier, a sum, a probability)
is carried through as an opaque name and printed as it was written. When anything goes wrong the
original text is shown. This is for display only: the prover never reads these strings back.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Dict, List, Optional

from lang import ast as A
from lang.evaluate import constant_value
from lang.parser import parse_expr
from lang.printer import print_expr

_ARITH = {"+", "-", "*", "/"}
_FUNCS = {"abs", "log", "exp", "sqrt", "min", "max"}
_MAX_OPS = 60  # larger arithmetic is shown after sympy's automatic evaluation only (simplify is slow)


class _Unrepresentable(Exception):
    """A sympy result with no tamp syntax (a symbolic power, pi, infinity …)."""


def simplify_text(text: Optional[str]) -> Optional[str]:
    """``text`` (a tamp expression) simplified; the text itself when it does not parse or convert."""
    if not text:
        return text
    try:
        return simplify_expr(parse_expr(text))
    except Exception:  # noqa: BLE001 - display only: any failure shows the text as written
        return text


def simplify_expr(e: A.Expr) -> str:
    """The text of ``e`` with its arithmetic simplified (see the module's docstring)."""
    try:
        return print_expr(_simplified(e))
    except Exception:  # noqa: BLE001 - display only
        return print_expr(e)


def _is_arith(e: A.Expr) -> bool:
    if isinstance(e, (A.Num, A.Var)):
        return True
    if isinstance(e, A.Binary):
        return e.op in _ARITH
    if isinstance(e, A.Unary):
        return e.op == "-"
    if isinstance(e, A.Call):
        return e.func in _FUNCS
    return False


def _simplified(e: A.Expr) -> A.Expr:
    """``e`` with every maximal arithmetic part replaced by its simplified form."""
    if _is_arith(e):
        value = _constant(e)
        if value is not None:  # numbers only: folded exactly, as sympy would
            out = _Arith.number(value)
        elif _read_once(e):  # nothing to cancel or fold: sympy could not make it shorter
            return e
        else:
            out = _Arith().simplify(e)
        return out if _size(out) < _size(e) else e  # not shorter: as written (`p*n` stays `p*n`)
    if isinstance(e, A.Binary):
        return replace(e, left=_simplified(e.left), right=_simplified(e.right))
    if isinstance(e, A.Unary):
        return replace(e, operand=_simplified(e.operand))
    if isinstance(e, A.Cond):
        return replace(e, cond=_simplified(e.cond), then=_simplified(e.then), other=_simplified(e.other))
    if isinstance(e, A.Call):
        return replace(e, args=tuple(_simplified(a) for a in e.args))
    if isinstance(e, A.TupleExpr):
        return replace(e, items=tuple(_simplified(a) for a in e.items))
    return e  # quantifiers, sums, probabilities, literals of sets and lists: as written


def _constant(e: A.Expr) -> Optional[Fraction]:
    """The exact value of ``e`` when it reads no variable and its value is rational (the
    evaluator's exact arithmetic: ``1 / 4`` is 1/4), else None (``log(2)`` is a float: sympy
    keeps it symbolic)."""
    v = constant_value(e)
    return Fraction(v) if type(v) in (int, Fraction) else None


def _read_once(e: A.Expr) -> bool:
    """``e`` is ``+ - * /`` over distinct variables and at most one number (not 0 or 1): it
    depends on each of its variables, so every equal expression has at least as many leaves and
    operators (sympy's result would never be shorter, and loading sympy takes a second).

    >>> _read_once(parse_expr("p * n")), _read_once(parse_expr("n / eps * log(n / p)"))
    (True, False)
    """
    seen: set = set()
    numbers = 0

    def ok(x: A.Expr) -> bool:
        nonlocal numbers
        if isinstance(x, A.Var):
            if x.name in seen:
                return False
            seen.add(x.name)
            return True
        if isinstance(x, A.Num):
            numbers += 1
            return numbers == 1 and Fraction(x.value) not in (0, 1)
        return isinstance(x, A.Binary) and x.op in _ARITH and ok(x.left) and ok(x.right)

    return ok(e)


def _size(e: A.Expr) -> int:
    return sum(1 for _ in A.walk(e))


def _negate_first(e: A.Expr) -> A.Expr:
    """``-e`` for a product or quotient ``e``, the sign on its first factor: ``-x * y / 3``."""
    if isinstance(e, A.Binary) and e.op in ("*", "/"):
        return replace(e, left=_negate_first(e.left))
    return A.Unary("-", e)


class _Arith:
    """One arithmetic expression to sympy and back; opaque parts become fresh symbols."""

    def __init__(self) -> None:
        self.opaque: Dict[str, A.Expr] = {}
        self.names: Dict[str, str] = {}  # sympy symbol name -> tamp variable name
        self.order: Dict[str, int] = {}  # sympy symbol name -> rank of its first appearance

    def simplify(self, e: A.Expr) -> A.Expr:
        # deferred on purpose: sympy takes ~1 s to load; only this step needs it
        import sympy

        s = self.to_sympy(e)
        if sympy.count_ops(s) <= _MAX_OPS:
            t = sympy.simplify(s, ratio=1)
            if sympy.count_ops(t) < sympy.count_ops(s):
                s = t
        if s.has(sympy.Float):
            raise _Unrepresentable("a float")
        return self.back(s)

    # ---------------------------------------------------------------- to sympy
    def to_sympy(self, e: A.Expr):
        # deferred on purpose: sympy takes ~1 s to load; only this step needs it
        import sympy

        if isinstance(e, A.Num):
            return sympy.Rational(Fraction(e.value).numerator, Fraction(e.value).denominator)
        if isinstance(e, A.Var):
            key = "v_" + e.name.replace("$", "_S_")
            self.names[key] = e.name
            self.order.setdefault(key, len(self.order))
            return sympy.Symbol(key)
        if isinstance(e, A.Unary) and e.op == "-":
            return -self.to_sympy(e.operand)
        if isinstance(e, A.Binary) and e.op in _ARITH:
            a, b = self.to_sympy(e.left), self.to_sympy(e.right)
            return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b}[e.op]()
        if isinstance(e, A.Call) and e.func in _FUNCS:
            args = [self.to_sympy(x) for x in e.args]
            fn = {
                "abs": sympy.Abs,
                "log": sympy.log,
                "exp": sympy.exp,
                "sqrt": sympy.sqrt,
                "min": sympy.Min,
                "max": sympy.Max,
            }[e.func]
            return fn(*args)
        return self.atom(_simplified(e))

    def atom(self, e: A.Expr):
        # deferred on purpose: sympy takes ~1 s to load; only this step needs it
        import sympy

        for key, known in self.opaque.items():
            if known == e:
                return sympy.Symbol(key)
        key = f"opaque_{len(self.opaque)}"
        self.opaque[key] = e
        self.order.setdefault(key, len(self.order))
        return sympy.Symbol(key)

    # ---------------------------------------------------------------- back to tamp
    def back(self, s) -> A.Expr:
        # deferred on purpose: sympy takes ~1 s to load; only this step needs it
        import sympy

        if s.is_Integer:
            return self.number(Fraction(int(s)))
        if s.is_Rational:
            return self.number(Fraction(int(s.p), int(s.q)))
        if s.is_Symbol:
            if s.name in self.opaque:
                return self.opaque[s.name]
            return A.Var(self.names[s.name])
        if s is sympy.E:
            return A.Call("exp", (A.num(1),))
        if s.is_Add:
            return self.sum(s)
        if s.is_Mul or s.is_Pow:
            return self.product(s)
        funcs = {sympy.Abs: "abs", sympy.log: "log", sympy.exp: "exp", sympy.Min: "min", sympy.Max: "max"}
        for cls, name in funcs.items():
            if isinstance(s, cls):
                args = [self.back(a) for a in s.args]
                if name in ("min", "max"):  # sympy's are n-ary; tamp's take two
                    out = args[0]
                    for a in args[1:]:
                        out = A.Call(name, (out, a))
                    return out
                return A.Call(name, tuple(args))
        raise _Unrepresentable(type(s).__name__)

    def first_seen(self, s) -> int:
        """Where the first of ``s``'s symbols appeared in the original expression."""
        return min((self.order.get(x.name, len(self.order)) for x in s.free_symbols), default=-1)

    @staticmethod
    def number(v: Fraction) -> A.Expr:
        if v < 0:
            return A.Unary("-", _Arith.number(-v))
        if v.denominator == 1:
            return A.Num(v, True)
        d = v.denominator
        while d % 2 == 0:
            d //= 2
        while d % 5 == 0:
            d //= 5
        if d == 1 and len(str(float(v))) <= 8:  # a short decimal: 0.25
            return A.Num(v)
        return A.Binary("/", A.Num(Fraction(v.numerator), True), A.Num(Fraction(v.denominator), True))

    def sum(self, s) -> A.Expr:
        terms = list(s.as_ordered_terms())
        # a positive term first reads better: `n - k`, not `-k + n`
        terms.sort(key=lambda t: t.could_extract_minus_sign())
        out = self.back(terms[0])
        for t in terms[1:]:
            if t.could_extract_minus_sign():
                out = A.Binary("-", out, self.back(-t))
            else:
                out = A.Binary("+", out, self.back(t))
        return out

    def product(self, s) -> A.Expr:
        # deferred on purpose: sympy takes ~1 s to load; only this step needs it
        import sympy

        if s.could_extract_minus_sign():
            return _negate_first(self.back(-s))
        coeff, factors = s.as_coeff_mul()
        num: List[A.Expr] = []
        den: List[A.Expr] = []
        coeff = sympy.Rational(coeff)
        if coeff.p != 1:
            num.append(self.number(Fraction(int(coeff.p))))
        if coeff.q != 1:
            den.append(self.number(Fraction(int(coeff.q))))
        for f in sorted(factors, key=self.first_seen):  # the factors in the order the user wrote them
            base, exp = f.as_base_exp()
            target = num
            if exp.is_Rational and exp < 0:
                target, exp = den, -exp
            if exp == 1:
                target.append(self.back(base))
            elif exp == sympy.Rational(1, 2):
                target.append(A.Call("sqrt", (self.back(base),)))
            elif exp.is_Integer and 2 <= exp <= 4:
                target.extend([self.back(base)] * int(exp))
            else:
                raise _Unrepresentable(f"power {exp}")
        out = num[0] if num else A.num(1)
        for f in num[1:]:
            out = A.Binary("*", out, f)
        if den:
            d = den[0]
            for f in den[1:]:
                d = A.Binary("*", d, f)
            out = A.Binary("/", out, d)
        return out
