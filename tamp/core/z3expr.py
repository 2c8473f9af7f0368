"""The one translation of :mod:`lang.ast` expressions to z3, and the z3 meaning of each operator.

:data:`BINARY`, :data:`UNARY` and :data:`FUNCTIONS` give, for every operator and built-in
function of :mod:`lang.ops`, the z3 term it denotes (integers are promoted to reals where the
other operand is real; ``div``/``mod`` are z3's integer division, Euclidean like
:mod:`lang.ops`; ``abs``/``min``/``max`` and ``c ? a : b`` are ``If`` terms). Every z3 term
built from the language's operators — by the prover, the certificate checker's replay, the
causal engine — takes them from here.

:class:`Z3Translation` walks an expression (with :class:`lang.walk.Walker`) and builds its
term over an *environment* (variable name → z3 term). What differs between callers is a
method to override, not a copy of the translation:

* :meth:`~Z3Translation.transcendental` — ``log``/``exp``/``sqrt`` (default: uninterpreted
  functions ``log``, ``exp``, ``sqrt`` from reals to reals, one of each per translation);
* :meth:`~Z3Translation.opaque_sum` — a ``sum`` whose bounds are not literals or span more than
  :data:`UNROLL` terms (default: an error; the prover makes it an uninterpreted function);
* :meth:`~Z3Translation.bound_variable` — the z3 variable of a quantifier (default: a fresh
  integer constant ``j!qK``);
* ``error``/``who`` — the exception raised for what cannot be translated, and who says so.

Small helpers on z3 terms live here too: :func:`rational` (an exact constant),
:func:`to_real`, :func:`to_int`, :func:`unify`, :func:`conj`, :func:`sort_of`.

>>> import z3
>>> from lang.parser import parse_expr
>>> x, n = z3.Real("x"), z3.Int("n")
>>> t = Z3Translation().translate(parse_expr("n div 2 + abs(x) <= 3 / 2"), {"x": x, "n": n})
>>> t
ToReal(n/2) + If(x >= 0, x, -x) <= ToReal(3)/ToReal(2)
>>> z3.simplify(z3.substitute(t, (x, z3.RealVal(-1)), (n, z3.IntVal(-1))))
True
>>> Z3Translation().translate(parse_expr("forall j in 0..n: j < n"), {"n": n})
ForAll(j!q1, Implies(And(0 <= j!q1, j!q1 < n), j!q1 < n))
>>> rational(Fraction(-3, 4))
-3/4
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import z3  # type: ignore[import-untyped,unused-ignore]  # z3 ships no type information
from z3 import z3core

from lang import ast as A
from lang import ops
from lang.errors import UnsupportedError
from lang.walk import DESCEND, Walker

__all__ = [
    "BINARY",
    "UNARY",
    "FUNCTIONS",
    "UNROLL",
    "Z3Translation",
    "rational",
    "fraction",
    "ite",
    "to_real",
    "to_int",
    "unify",
    "conj",
    "sort_of",
    "sort_kind",
]

Term = Any  # a z3.ExprRef (z3's Python API is untyped)
Env = Mapping[str, Term]

#: sums with literal bounds and at most this many terms are unrolled
UNROLL = 64


# ---------------------------------------------------------------------------- terms and sorts


def rational(x: int | Fraction | str) -> Term:
    """The exact z3 real constant ``x``.

    >>> rational(5), rational("1/3")
    (5, 1/3)
    """
    f = Fraction(x)
    return z3.RealVal(f"{f.numerator}/{f.denominator}") if f.denominator != 1 else z3.RealVal(f.numerator)


def fraction(t: Term) -> Fraction | None:
    """The exact value of a z3 integer or rational numeral, else None (an algebraic number, or
    not a numeral). Digits go through gmpy2, so a model value longer than Python's limit for
    ``int(str)`` (4,300 digits) converts without lifting that limit.

    >>> fraction(rational(Fraction(-7, 3))), fraction(z3.IntVal("1" + "0" * 5000)) == 10**5000
    (Fraction(-7, 3), True)
    >>> fraction(z3.Real("x")) is None
    True
    """
    if z3.is_int_value(t):
        return Fraction(_integer(t.as_string()))
    if z3.is_rational_value(t):
        return Fraction(_integer(t.numerator().as_string()), _integer(t.denominator().as_string()))
    return None


def _integer(digits: str) -> int:
    if len(digits) < 4000:
        return int(digits)
    import gmpy2  # type: ignore[import-untyped,unused-ignore]  # deferred on purpose: only huge model values need it

    return int(gmpy2.mpz(digits))


def sort_of(t: A.Type) -> Term:
    """The z3 sort of a language type (booleans, integers, reals, arrays indexed by integers)."""
    if t.name == "bool":
        return z3.BoolSort()
    if t.name == "int":
        return z3.IntSort()
    if t.name == "real":
        return z3.RealSort()
    if t.name == "array":
        return z3.ArraySort(z3.IntSort(), sort_of(t.elem[0]))
    raise UnsupportedError(f"values of type {t} are not supported by the prover")


_RAW: Any = None


def raw_api() -> Any:
    """z3's C functions for inspecting terms, without the per-call error check of the
    ``z3core`` wrappers (these getters cannot fail on a live term); the wrappers themselves when
    this z3 version is laid out differently."""
    global _RAW
    if _RAW is None:
        names = [
            "Z3_get_sort",
            "Z3_get_sort_kind",
            "Z3_get_ast_id",
            "Z3_get_ast_kind",
            "Z3_get_app_num_args",
            "Z3_get_app_decl",
            "Z3_get_decl_kind",
            "Z3_func_decl_to_ast",
            "Z3_get_symbol_string",
            "Z3_get_decl_name",
            "Z3_get_app_arg",
            "Z3_get_quantifier_body",
        ]
        funcs = {}
        for n in names:
            w = getattr(z3core, n)
            raw = getattr((w.__defaults__ or (None,))[-1], "f", None)
            funcs[n] = raw if raw is not None and n != "Z3_get_symbol_string" else w
        _RAW = SimpleNamespace(**funcs)
    return _RAW


def sort_kind(x: Term) -> int:
    """z3's sort kind of ``x`` (``Z3_INT_SORT``, ``Z3_REAL_SORT`` …) straight from the C API
    (``z3.is_int`` builds two wrapper objects per call; the translation asks on every
    operator); -1 for anything but a z3 term."""
    if not isinstance(x, z3.ExprRef):
        return -1
    api = raw_api()
    ctx = x.ctx_ref()
    kind: int = api.Z3_get_sort_kind(ctx, api.Z3_get_sort(ctx, x.as_ast()))
    return kind


def to_real(x: Term) -> Term:
    """``x`` as a real term (integers converted)."""
    return z3.ToReal(x) if sort_kind(x) == z3.Z3_INT_SORT else x


def to_int(x: Term) -> Term:
    """``x`` as an integer term: integer terms and integral real literals; else an error."""
    if sort_kind(x) == z3.Z3_INT_SORT:
        return x
    if z3.is_rational_value(x) and x.denominator_as_long() == 1:
        return z3.IntVal(x.numerator_as_long())
    raise UnsupportedError("an array index or div/mod operand must be an integer")


def unify(a: Term, b: Term) -> tuple[Term, Term]:
    """Promote an integer operand to real when the other one is real."""
    ka, kb = sort_kind(a), sort_kind(b)
    if ka == z3.Z3_INT_SORT and kb == z3.Z3_REAL_SORT:
        return z3.ToReal(a), b
    if ka == z3.Z3_REAL_SORT and kb == z3.Z3_INT_SORT:
        return a, z3.ToReal(b)
    return a, b


def conj(*args: Term) -> Term:
    """``z3.And(*args)`` for Boolean terms, built with one C call (``z3.And`` re-derives and
    coerces the sort of every argument, which dominates on the prover's long conjunctions).
    Falls back to ``z3.And`` for anything but z3 Boolean terms of one context.

    >>> conj(), conj(z3.Bool("p"), z3.Bool("q"))
    (True, And(p, q))
    """
    if not args:
        return z3.BoolVal(True)
    if len(args) == 1 and isinstance(args[0], z3.BoolRef):
        return args[0]
    ctx = args[0].ctx if isinstance(args[0], z3.BoolRef) else None
    if ctx is None or not all(isinstance(a, z3.BoolRef) and a.ctx is ctx for a in args):
        return z3.And(*args)
    arr = (z3.Ast * len(args))()
    for i, a in enumerate(args):
        arr[i] = a.as_ast()
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(args), arr), ctx)


# ---------------------------------------------------------------------------- operators


def ite(c: Term, a: Term, b: Term) -> Term:
    """``c ? a : b`` (branches promoted to a common sort)."""
    a, b = unify(a, b)
    return z3.If(c, a, b)


def _equal(a: Term, b: Term) -> Term:
    if z3.is_bool(a) or z3.is_bool(b):
        return a == b
    a, b = unify(a, b)
    return a == b


def _arith(f: Callable[[Term, Term], Term]) -> Callable[[Term, Term], Term]:
    def op(a: Term, b: Term) -> Term:
        a, b = unify(a, b)
        return f(a, b)

    return op


#: the z3 term of ``a op b``, for every binary operator of :data:`lang.ops.BINARY`
BINARY: dict[str, Callable[[Term, Term], Term]] = {
    "+": _arith(lambda a, b: a + b),
    "-": _arith(lambda a, b: a - b),
    "*": _arith(lambda a, b: a * b),
    "/": lambda a, b: to_real(a) / to_real(b),
    "div": lambda a, b: to_int(a) / to_int(b),  # z3's integer division is Euclidean
    "mod": lambda a, b: to_int(a) % to_int(b),
    "<": _arith(lambda a, b: a < b),
    "<=": _arith(lambda a, b: a <= b),
    ">": _arith(lambda a, b: a > b),
    ">=": _arith(lambda a, b: a >= b),
    "==": _equal,
    "!=": lambda a, b: z3.Not(_equal(a, b)),
    "&&": lambda a, b: conj(a, b),
    "||": lambda a, b: z3.Or(a, b),
    "==>": lambda a, b: z3.Implies(a, b),
    "<==>": lambda a, b: a == b,
}

#: the z3 term of a unary operator
UNARY: dict[str, Callable[[Term], Term]] = {"-": lambda x: -x, "!": lambda x: z3.Not(x)}


def _abs(x: Term) -> Term:
    return z3.If(x >= 0, x, -x)


def _min(a: Term, b: Term) -> Term:
    a, b = unify(a, b)
    return z3.If(a <= b, a, b)


def _max(a: Term, b: Term) -> Term:
    a, b = unify(a, b)
    return z3.If(a >= b, a, b)


#: the z3 term of ``abs``/``min``/``max`` (``log``/``exp``/``sqrt`` are the translation's choice)
FUNCTIONS: dict[str, Callable[..., Term]] = {"abs": _abs, "min": _min, "max": _max}

assert set(BINARY) == set(ops.BINARY) and set(UNARY) == set(ops.UNARY), "one z3 meaning per operator"


# ---------------------------------------------------------------------------- the translation


class Z3Translation(Walker[Term]):
    """Expressions → z3 terms over an environment (see the module docstring for what a
    subclass may change). One object may translate many expressions; :meth:`translate` takes
    the environment."""

    TRANSCENDENTAL = ("log", "exp", "sqrt")

    def __init__(self, error: type[Exception] = UnsupportedError, who: str = "the translation"):
        self.error, self.who = error, who
        self.env: Env = {}
        self.memo: dict[int, Term] | None = None
        self._functions: dict[str, Term] = {}
        self._counter = 0

    def translate(self, e: A.Expr, env: Env, memo: dict[int, Term] | None = None) -> Term:
        """The z3 term of ``e`` with the variables of ``env``. ``memo`` (results by node
        identity) may be kept by the caller across calls with the same environment, as long as
        the caller also keeps the nodes alive."""
        saved = self.env, self.memo
        self.env, self.memo = env, memo
        try:
            return self.walk(e, memo)
        finally:
            self.env, self.memo = saved

    # ------------------------------------------------------------------ what callers change
    def transcendental(self, name: str, arg: Term) -> Term:
        """``log``/``exp``/``sqrt`` of ``arg`` (a real term): an uninterpreted function."""
        f = self._functions.get(name)
        if f is None:
            f = self._functions[name] = z3.Function(name, z3.RealSort(), z3.RealSort())
        return f(arg)

    def opaque_sum(self, e: A.Sum, lo: Term, hi: Term) -> Term:
        """``sum(j in lo..hi: body)`` that is not unrolled (``hi`` exclusive here)."""
        raise self.error(f"{self.who} cannot encode a sum whose bounds are not literals")

    def bound_variable(self, name: str) -> Term:
        """The z3 variable bound by a quantifier over ``name``."""
        self._counter += 1
        return z3.Int(f"{name}!q{self._counter}")

    # ------------------------------------------------------------------ scoped nodes
    def enter(self, node: A.Node) -> Any:
        if isinstance(node, A.Quant):
            return self._quant(node)
        if isinstance(node, A.Sum):
            return self._sum(node)
        return DESCEND

    def _inner(self, body: A.Expr, var: str, value: Term) -> Term:
        inner = dict(self.env)
        inner[var] = value
        return self.translate(body, inner)

    def _quant(self, e: A.Quant) -> Term:
        lo, hi = to_int(self.walk(e.lo, self.memo)), to_int(self.walk(e.hi, self.memo))
        slo, shi = z3.simplify(lo), z3.simplify(hi)
        if z3.is_int_value(slo) and z3.is_int_value(shi):  # a literal range: one term per value
            a, b = slo.as_long(), shi.as_long() + (1 if e.inclusive else 0)
            if b - a <= UNROLL:
                terms = [self._inner(e.body, e.var, z3.IntVal(k)) for k in range(a, b)]
                if e.kind == "forall":
                    return z3.And(*terms) if terms else z3.BoolVal(True)
                return z3.Or(*terms) if terms else z3.BoolVal(False)
        j = self.bound_variable(e.var)
        body = self._inner(e.body, e.var, j)
        rng = z3.And(lo <= j, j <= hi if e.inclusive else j < hi)
        if e.kind == "forall":
            return z3.ForAll([j], z3.Implies(rng, body))
        return z3.Exists([j], z3.And(rng, body))

    def _sum(self, e: A.Sum) -> Term:
        lo = z3.simplify(to_int(self.walk(e.lo, self.memo)))
        hi = z3.simplify(to_int(self.walk(e.hi, self.memo)))
        if z3.is_int_value(lo) and z3.is_int_value(hi):
            a, b = lo.as_long(), hi.as_long() + (1 if e.inclusive else 0)
            if b - a <= UNROLL:
                total = z3.RealVal(0)
                for k in range(a, b):
                    total = total + to_real(self._inner(e.body, e.var, z3.IntVal(k)))
                return total
        return self.opaque_sum(e, lo, hi + 1 if e.inclusive else hi)

    # ------------------------------------------------------------------ one method per node class
    def Num(self, e: A.Num, kids: Sequence[Term]) -> Term:
        v = e.value
        if e.is_int and v.denominator == 1:
            return z3.IntVal(v.numerator)
        return z3.RealVal(Fraction(v))

    def BoolLit(self, e: A.BoolLit, kids: Sequence[Term]) -> Term:
        return z3.BoolVal(e.value)

    def Var(self, e: A.Var, kids: Sequence[Term]) -> Term:
        t = self.env.get(e.name)
        if t is None:
            raise self.error(f"{self.who} does not know the variable '{e.name}'")
        return t

    def Index(self, e: A.Index, kids: Sequence[Term]) -> Term:
        return z3.Select(kids[0], to_int(kids[1]))

    def Unary(self, e: A.Unary, kids: Sequence[Term]) -> Term:
        f = UNARY.get(e.op)
        if f is None:
            raise self.error(f"{self.who} cannot encode the operator '{e.op}'")
        return f(kids[0])

    def Binary(self, e: A.Binary, kids: Sequence[Term]) -> Term:
        f = BINARY.get(e.op)
        if f is None:
            raise self.error(f"{self.who} cannot encode the operator '{e.op}'")
        return f(kids[0], kids[1])

    def Cond(self, e: A.Cond, kids: Sequence[Term]) -> Term:
        return ite(kids[0], kids[1], kids[2])

    def Call(self, e: A.Call, kids: Sequence[Term]) -> Term:
        f = FUNCTIONS.get(e.func)
        if f is not None:
            return f(*kids)
        if e.func in self.TRANSCENDENTAL:
            return self.transcendental(e.func, to_real(kids[0]))
        raise self.error(f"{self.who} cannot encode the call '{e.func}(…)'")

    def TupleExpr(self, e: A.TupleExpr, kids: Sequence[Term]) -> Term:
        raise self.error("tuple values are supported only in tuple assignment and sampling")

    def default(self, node: A.Node, kids: Sequence[Term]) -> Term:
        raise self.error(f"{self.who} cannot encode {type(node).__name__} expressions")
