"""The type checker of `.prob` programs.

>>> from lang.parser import parse
>>> f = parse("program p(n: int) { x := n / 2; }")
>>> check_file(f)["p"].vars["x"]
Type(name='real', elem=())

Rules (see docs/language.md): ``bool``, ``int``, ``real``, arrays of those,
and tuples (pairs); ``int`` promotes to ``real``. Parameters are read-only. A
local's type comes from its ``var`` declaration, else from its first assignment
or sampling in source order; later assignments must fit. Quantifiers and
``sum`` appear only in specifications, ``P``/``independent``/``fairness`` only
in ``ensures``. Every error is a :class:`TypeCheckError` (or an
:class:`UnsupportedError` for constructs that parse but make no sense) located
at the offending node.

Checking runs in two passes over the program: :class:`_LocalInference`
assigns every local its type, then :class:`_Checker` checks every statement
and clause against those types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple, Type, Union

from lang.walk import free_vars

from . import ast as A
from .errors import TampError, TypeCheckError, UnsupportedError, error_at
from .gcpause import paused_gc
from .recursion import deep_recursion

WRITTEN = "written"  # written(a, i) in privacy events
BUILTINS = ("abs", "min", "max", "log", "exp", "sqrt", "fst", "snd")
DISTRIBUTIONS = ("bern", "unif", "lap", "exp", "dlap", "dexp", "gauss", "uniform", "step", "density")
UNRELIABLE_OPS = ("+.", "-.", "*.", "/.", "<.", "<=.", ">.", ">=.", "==.")
#: candidate operators (``tamp place`` decides: reliable or unreliable), by their unreliable form
CANDIDATE_OPS = {
    "+?": "+.",
    "-?": "-.",
    "*?": "*.",
    "/?": "/.",
    "<?": "<.",
    "<=?": "<=.",
    ">?": ">.",
    ">=?": ">=.",
    "==?": "==.",
}
#: the reliable operator of each unreliable one
RELIABLE_OP = {u: u[:-1] for u in UNRELIABLE_OPS}
FAILED = "failed"
DENSITY_VAR = "_"

_ARITH = ("+", "-", "*", "+.", "-.", "*.")
_ORDER = ("<", "<=", ">", ">=")
_EQUALITY = ("==", "!=")
_LOGIC = ("&&", "||", "==>", "<==>")
_BUILTIN_ARITY = {"abs": 1, "min": 2, "max": 2, "log": 1, "exp": 1, "sqrt": 1, "fst": 1, "snd": 1}


@dataclass
class ProgramTypes:
    """The types of one program's variables.

    ``params`` and ``locals`` map names to :class:`lang.ast.Type`; ``vars`` is
    both together. ``arrays`` maps every array variable (parameter or local)
    to its element type. ``has_failed`` is true when the program has the
    implicit ``failed`` flag (unreliable operators, ``rate`` or
    ``reliability``); ``failed`` is then a ``bool`` local.
    """

    name: str
    params: Dict[str, A.Type] = field(default_factory=dict)
    locals: Dict[str, A.Type] = field(default_factory=dict)
    has_failed: bool = False

    @property
    def vars(self) -> Dict[str, A.Type]:
        return {**self.params, **self.locals}

    def var_type(self, name: str) -> Optional[A.Type]:
        """The type of parameter or local ``name`` (None if unknown), without building
        :attr:`vars` (the checker asks once per assignment)."""
        t = self.params.get(name)
        return t if t is not None else self.locals.get(name)

    @property
    def arrays(self) -> Dict[str, A.Type]:
        return {n: t.elem[0] for n, t in self.vars.items() if t.name == "array"}

    def type_of(self, expr: A.Expr, bound: Tuple[str, ...] = ()) -> A.Type:
        """The type of an (already checked) expression over this program's variables;
        ``bound`` names extra ``int`` variables (quantifier variables)."""
        chk = _Checker(self, "<expr>", None)
        with deep_recursion():
            return chk.expr(expr, _Ctx("any", frozenset(bound)))

    def sample_type(self, dist: A.Call) -> A.Type:
        """The type of a value sampled from the distribution ``dist`` (the right of ``~``)."""
        chk = _Checker(self, "<expr>", None)
        with deep_recursion():
            return chk.dist(dist, _Ctx("any"))


# --------------------------------------------------------------------------- type algebra


def fits(value: A.Type, target: A.Type) -> bool:
    """Whether a value of type ``value`` may be stored in a variable of type ``target``."""
    if value == target:
        return True
    if value == A.INT and target == A.REAL:
        return True
    if value.name == target.name == "tuple" and len(value.elem) == len(target.elem):
        return all(fits(v, t) for v, t in zip(value.elem, target.elem))
    return False


def join(a: A.Type, b: A.Type) -> Optional[A.Type]:
    """The least type both fit into (int ⊔ real = real), or None."""
    if fits(a, b):
        return b
    if fits(b, a):
        return a
    if a.name == b.name == "array":
        inner = join(a.elem[0], b.elem[0])
        return A.array_of(inner) if inner is not None else None
    if a.name == b.name == "tuple" and len(a.elem) == len(b.elem):
        parts = [join(x, y) for x, y in zip(a.elem, b.elem)]
        known = [p for p in parts if p is not None]
        if len(known) == len(parts):
            return A.tuple_of(*known)
    return None


def _numeric_join(a: A.Type, b: A.Type) -> A.Type:
    return A.INT if a == b == A.INT else A.REAL


def _is_base(t: A.Type) -> bool:
    return t.name in ("bool", "int", "real")


# --------------------------------------------------------------------------- contexts


@dataclass(frozen=True)
class _Ctx:
    """Where an expression occurs: ``body``, ``requires``, ``ensures``, ``bound``
    (fails/rate/reliability), ``invariant`` (a loop's ``invariant`` clause), or ``any`` (no restrictions: :meth:`ProgramTypes.type_of`); ``bound_vars`` are quantifier/sum/density names in scope;
    ``in_prob`` is true inside ``P(…)``."""

    where: str
    bound_vars: FrozenSet[str] = frozenset()
    in_prob: bool = False
    density: bool = False

    def bind(self, name: str) -> "_Ctx":
        return _Ctx(self.where, self.bound_vars | {name}, self.in_prob, self.density)


_CLAUSE_WORD = {
    "body": "a program statement",
    "requires": "'requires'",
    "ensures": "'ensures'",
    "bound": "a fails/rate/reliability clause",
    "invariant": "a loop invariant",
    "neighbours": "'neighbours'",
    "privacy": "a 'private' clause",
    "event": "a privacy event",
}


class _NotYetTyped(Exception):
    """Raised during local inference when an expression reads a local whose type is unknown."""

    def __init__(self, name: str):
        self.name = name


# --------------------------------------------------------------------------- the checker

_EXPR_METHODS: Dict[type, Callable[..., A.Type]] = {}  # expression class -> _Checker method


class _Checker:
    """Types expressions and checks statements against a :class:`ProgramTypes`."""

    def __init__(self, types: ProgramTypes, path: str, source: Optional[str], partial: bool = False):
        self.types = types
        self.path = path
        self.source = source
        self.partial = partial  # inference pass: unknown locals raise _NotYetTyped
        self.assigned: Set[str] = set()  # locals assigned somewhere (inference pass fills this)
        self.declared: Dict[str, A.VarDecl] = {}  # locals with a `var` declaration
        self.widened: Dict[str, A.Node] = {}  # locals widened int -> real: the widening definition
        self.for_vars: List[Tuple[str, Optional[A.Pos]]] = []
        self.has_rate = True  # set from the program header by check_program
        self.op_rates: Set[str] = set()  # operators with their own `rate(OP)` clause

    # ---------------------------------------------------------------- errors
    def error(self, msg: str, node: Any, cls: Type[TampError] = TypeCheckError) -> TampError:
        return error_at(cls, msg, getattr(node, "pos", None), self.path, self.source)

    def expect(self, e: A.Expr, ctx: _Ctx, want: str, what: str) -> A.Type:
        """Type ``e`` and require it to be ``bool`` or numeric (``want`` = "bool" | "num" | "int")."""
        t = self.expr(e, ctx)
        if want == "bool":
            ok = t == A.BOOL
        elif want == "num":
            ok = t.is_numeric
        else:
            ok = t == A.INT
        if not ok:
            noun = {"bool": "a bool", "num": "a number", "int": "an int"}[want]
            raise self.error(f"{what} must be {noun}, but this is {_describe(t)}{self.why(e)}", e)
        return t

    def why(self, e: A.Expr) -> str:
        """Why a variable has its type, when that is not obvious (it was widened to real)."""
        base = e.base if isinstance(e, A.Index) else e
        if isinstance(base, A.Var) and base.name in self.widened:
            pos = self.widened[base.name].pos
            at = f" at line {pos.line}" if pos is not None else ""
            return f" ('{base.name}' is real because of its assignment{at})"
        return ""

    # ---------------------------------------------------------------- expressions
    def expr(self, e: A.Expr, ctx: _Ctx) -> A.Type:
        """The type of ``e`` in context ``ctx``; raises on any type error."""
        meth = _EXPR_METHODS.get(type(e))
        if meth is None:
            meth = getattr(_Checker, "e_" + type(e).__name__, None)
            if meth is None:
                raise self.error(f"unexpected expression {type(e).__name__}", e, UnsupportedError)
            _EXPR_METHODS[type(e)] = meth
        return meth(self, e, ctx)

    def e_Num(self, e: A.Num, ctx: _Ctx) -> A.Type:
        return A.INT if e.is_int else A.REAL

    def e_BoolLit(self, e: A.BoolLit, ctx: _Ctx) -> A.Type:
        return A.BOOL

    def e_Var(self, e: A.Var, ctx: _Ctx, as_array: bool = False) -> A.Type:
        t = self.lookup(e, ctx)
        if t.name == "array" and not as_array:
            raise self.error(f"array '{e.name}' must be indexed: write {e.name}[i]", e)
        return t

    def lookup(self, e: A.Var, ctx: _Ctx) -> A.Type:
        name = e.name
        base = A.unprimed(name)
        if base is not None:
            if ctx.where != "neighbours":
                raise self.error(
                    f"'{name}' (the other run's '{base}') may only be used in a 'neighbours' clause, "
                    f"not in {_CLAUSE_WORD.get(ctx.where, 'a statement')}",
                    e,
                )
            if base not in self.types.params:
                raise self.error(f"only inputs can be primed, but '{base}' is not a parameter of the program", e)
            return self.types.params[base]
        if name in ctx.bound_vars:
            return A.REAL if (name == DENSITY_VAR and ctx.density) else A.INT
        if name == DENSITY_VAR:
            raise self.error("'_' is the variable of a density polynomial: use it only in density(lo, hi, POLY)", e)
        if name in self.types.params:
            return self.types.params[name]
        if name in self.types.locals:
            if ctx.where in ("requires", "bound", "neighbours", "privacy"):
                raise self.error(
                    f"{_CLAUSE_WORD[ctx.where]} may only mention parameters, but '{name}' is a local variable", e
                )
            return self.types.locals[name]
        if self.partial and name in self.assigned:
            raise _NotYetTyped(name)
        raise self.error(f"unknown variable '{name}'", e)

    def e_Index(self, e: A.Index, ctx: _Ctx) -> A.Type:
        if isinstance(e.base, A.Var):
            bt = self.e_Var(e.base, ctx, as_array=True)
        else:
            bt = self.expr(e.base, ctx)
        if bt.name != "array":
            raise self.error(f"only arrays can be indexed, but this is {_describe(bt)}", e.base)
        self.expect(e.index, ctx, "int", "an array index")
        return bt.elem[0]

    def e_Unary(self, e: A.Unary, ctx: _Ctx) -> A.Type:
        if e.op == "!":
            self.expect(e.operand, ctx, "bool", "the operand of '!'")
            return A.BOOL
        if e.op == "-":
            return self.expect(e.operand, ctx, "num", "the operand of unary '-'")
        raise self.error(f"unknown unary operator '{e.op}'", e)

    def e_Binary(self, e: A.Binary, ctx: _Ctx) -> A.Type:
        spine = A.left_spine(e)  # a chain a + b + … iteratively, left to right
        t = self.expr(spine[-1].left, ctx)
        for node in reversed(spine):
            t = self.binary(node, t, ctx)
        return t

    def want(self, t: A.Type, e: A.Expr, want: str, what: str) -> A.Type:
        """:meth:`expect` for an operand whose type ``t`` is already known."""
        if want == "bool":
            ok = t == A.BOOL
        else:
            ok = t.is_numeric
        if not ok:
            noun = {"bool": "a bool", "num": "a number"}[want]
            raise self.error(f"{what} must be {noun}, but this is {_describe(t)}{self.why(e)}", e)
        return t

    def binary(self, e: A.Binary, lt: A.Type, ctx: _Ctx) -> A.Type:
        """The type of ``e`` whose left operand has type ``lt``."""
        op = e.op
        if op in UNRELIABLE_OPS or op in CANDIDATE_OPS:
            what = "unreliable" if op in UNRELIABLE_OPS else "candidate"
            if ctx.where not in ("body", "any"):
                raise self.error(
                    f"the {what} operator '{op}' may only be used in program statements", e, UnsupportedError
                )
            kind = CANDIDATE_OPS.get(op, op)
            if not self.has_rate and kind not in self.op_rates:
                raise self.error(
                    f"the {what} operator '{op}' needs a 'rate' clause (or 'rate({kind})') in the program header", e
                )
            op = RELIABLE_OP[kind]
        if op in _ARITH:
            self.want(lt, e.left, "num", f"the left operand of '{op}'")
            rt = self.expect(e.right, ctx, "num", f"the right operand of '{op}'")
            return _numeric_join(lt, rt)
        if op == "/":
            self.want(lt, e.left, "num", "the left operand of '/'")
            self.expect(e.right, ctx, "num", "the right operand of '/'")
            return A.REAL
        if op in ("div", "mod"):
            for side, x in (("left", e.left), ("right", e.right)):
                t = lt if side == "left" else self.expr(x, ctx)
                if t != A.INT:
                    hint = " (use '/' for real division)" if t == A.REAL and op == "div" else ""
                    raise self.error(
                        f"the {side} operand of '{op}' must be an int, but this is {_describe(t)}{hint}", x
                    )
            return A.INT
        if op in _ORDER:
            self.want(lt, e.left, "num", f"the left operand of '{op}'")
            self.expect(e.right, ctx, "num", f"the right operand of '{op}'")
            return A.BOOL
        if op in _EQUALITY:
            rt = self.expr(e.right, ctx)
            if join(lt, rt) is None:
                raise self.error(f"cannot compare {_describe(lt)} with {_describe(rt)} using '{op}'", e.right)
            return A.BOOL
        if op in _LOGIC:
            self.want(lt, e.left, "bool", f"the left operand of '{op}'")
            self.expect(e.right, ctx, "bool", f"the right operand of '{op}'")
            return A.BOOL
        raise self.error(f"unknown operator '{op}'", e)

    def e_Cond(self, e: A.Cond, ctx: _Ctx) -> A.Type:
        self.expect(e.cond, ctx, "bool", "the condition of '?:'")
        a = self.expr(e.then, ctx)
        b = self.expr(e.other, ctx)
        t = join(a, b)
        if t is None or t.name == "array":
            raise self.error(f"the branches of '?:' have different types: {_describe(a)} and {_describe(b)}", e.other)
        return t

    def e_Call(self, e: A.Call, ctx: _Ctx) -> A.Type:
        f = e.func
        if f == WRITTEN and f not in self.types.vars:
            return self.written(e, ctx)
        if f in _BUILTIN_ARITY and not (f == "exp" and len(e.args) == 2):
            n = _BUILTIN_ARITY[f]
            if len(e.args) != n:
                raise self.error(
                    f"{f} takes {_count(n, 'argument')}, but {len(e.args)} {'is' if len(e.args) == 1 else 'are'} given",
                    e,
                )
            if f in ("fst", "snd"):
                t = self.expr(e.args[0], ctx)
                if t.name != "tuple" or len(t.elem) != 2:
                    raise self.error(f"{f} needs a pair, but this is {_describe(t)}", e.args[0])
                return t.elem[0 if f == "fst" else 1]
            types = [self.expect(a, ctx, "num", f"the argument of {f}") for a in e.args]
            if f in ("log", "exp", "sqrt"):
                return A.REAL
            return types[0] if f == "abs" else _numeric_join(*types)
        if f in DISTRIBUTIONS:
            raise self.error(
                f"{f}(…) is a distribution: it can only be sampled, as in `x ~ {f}(…);`", e, UnsupportedError
            )
        raise self.error(f"unknown function '{f}' (known: {', '.join(BUILTINS + ('pow',))})", e)

    def written(self, e: A.Call, ctx: _Ctx) -> A.Type:
        """``written(a, i)``: whether the run wrote ``a[i]`` (privacy events only)."""
        if ctx.where != "event":
            raise self.error(
                "written(a, i) may only be used in a privacy event (an output set of a counterexample), "
                f"not in {_CLAUSE_WORD.get(ctx.where, 'a program statement')}",
                e,
                UnsupportedError,
            )
        if len(e.args) != 2 or not isinstance(e.args[0], A.Var):
            raise self.error("written takes an array name and an index: written(a, i)", e)
        t = self.lookup(e.args[0], ctx)
        if t.name != "array":
            raise self.error(f"written(a, i) needs an array, but '{e.args[0].name}' is {_describe(t)}", e.args[0])
        self.expect(e.args[1], ctx, "int", "the index of written(a, i)")
        return A.BOOL

    def e_TupleExpr(self, e: A.TupleExpr, ctx: _Ctx) -> A.Type:
        types = []
        for x in e.items:
            t = self.expr(x, ctx)
            if t.name == "array":
                raise self.error("a tuple cannot hold an array", x)
            types.append(t)
        return A.tuple_of(*types)

    def e_SetLit(self, e: A.SetLit, ctx: _Ctx) -> A.Type:
        raise self.error(
            "a set {…} can only be the argument of unif, as in `x ~ unif({1, 2, 3});`", e, UnsupportedError
        )

    def e_ListLit(self, e: A.ListLit, ctx: _Ctx) -> A.Type:
        raise self.error(
            "a list […] can only be the argument of step, as in `x ~ step([(0, 1, 0.5), (1, 2, 0.5)]);`",
            e,
            UnsupportedError,
        )

    def _range(self, e: Union[A.Quant, A.Sum], ctx: _Ctx, what: str) -> None:
        if ctx.where == "body":
            raise self.error(
                f"{what} may only be used in specifications (requires, ensures, loop invariants)", e, UnsupportedError
            )
        self.expect(e.lo, ctx, "int", "the lower end of a range")
        self.expect(e.hi, ctx, "int", "the upper end of a range")

    def e_Quant(self, e: A.Quant, ctx: _Ctx) -> A.Type:
        self._range(e, ctx, f"'{e.kind}'")
        self.expect(e.body, ctx.bind(e.var), "bool", f"the body of '{e.kind}'")
        return A.BOOL

    def e_Sum(self, e: A.Sum, ctx: _Ctx) -> A.Type:
        self._range(e, ctx, "'sum'")
        return self.expect(e.body, ctx.bind(e.var), "num", "the body of 'sum'")

    def _ensures_only(self, e: A.Expr, ctx: _Ctx, what: str) -> None:
        if ctx.where not in ("ensures", "any"):
            raise self.error(
                f"{what} may only be used in 'ensures', not in {_CLAUSE_WORD[ctx.where]}", e, UnsupportedError
            )
        if ctx.in_prob:
            raise self.error(f"{what} cannot be nested inside P(…)", e, UnsupportedError)

    def e_Prob(self, e: A.Prob, ctx: _Ctx) -> A.Type:
        self._ensures_only(e, ctx, "P(…)")
        inner = _Ctx(ctx.where, ctx.bound_vars, True, ctx.density)
        self.expect(e.event, inner, "bool", "the event of P(…)")
        if e.given is not None:
            self.expect(e.given, inner, "bool", "the condition of P(… | …)")
        return A.REAL

    def e_Independent(self, e: A.Independent, ctx: _Ctx) -> A.Type:
        self._ensures_only(e, ctx, "independent(…)")
        t = self.expr(e.expr, ctx)
        if t.name == "array":
            raise self.error("independent(e, x) needs a value e, not an array", e.expr)
        if e.var not in self.types.params:
            raise self.error(f"independent(e, {e.var}): '{e.var}' must be a parameter of the program", e)
        pt = self.types.params[e.var]
        if pt.name == "array":
            raise self.error(f"independent(e, {e.var}): '{e.var}' is an array; name a bool, int or real parameter", e)
        for v in e.values or ():
            vt = self.expr(v, ctx)
            if not fits(vt, pt):
                raise self.error(f"this value is {_describe(vt)}, but '{e.var}' is {_describe(pt)}", v)
        return A.BOOL

    def e_Hole(self, e: A.Hole, ctx: _Ctx) -> A.Type:
        if ctx.where not in ("ensures", "bound", "any", "privacy") or ctx.in_prob:
            raise self.error(
                "'?' (a value for tamp to infer) may only stand for the whole 'fails' "
                "clause, for one constant of an 'ensures' clause, or for the ε of a 'private' clause",
                e,
                UnsupportedError,
            )
        return A.REAL

    def e_Fairness(self, e: A.Fairness, ctx: _Ctx) -> A.Type:
        self._ensures_only(e, ctx, f"'{e.kind}'")
        inner = _Ctx(ctx.where, ctx.bound_vars, True, ctx.density)
        self.expect(e.target, inner, "bool", f"the target of '{e.kind}'")
        self.expect(e.group, inner, "bool", f"the group of '{e.kind}'")
        if e.qual is not None:
            self.expect(e.qual, inner, "bool", f"the 'when' condition of '{e.kind}'")
        self.expect(e.threshold, ctx, "num", f"the threshold of '{e.kind}'")
        return A.BOOL

    # ---------------------------------------------------------------- distributions
    def dist(self, d: A.Call, ctx: _Ctx) -> A.Type:
        """The type of a value sampled from ``d`` (checking its arguments)."""
        f, args = d.func, d.args
        if f not in DISTRIBUTIONS:
            hint = f" ({f} is a function, not a distribution)" if f in BUILTINS else ""
            raise self.error(f"unknown distribution '{f}'{hint} (known: {', '.join(DISTRIBUTIONS)})", d)
        if f == "unif" and len(args) == 1:
            return self.finite_set(args[0], ctx)
        arity = {"bern": 1, "step": 1, "density": 3}.get(f, 2)
        if len(args) != arity:
            usage = _DIST_USAGE[f]
            raise self.error(f"{f} takes {_count(arity, 'argument')}: {usage}", d)
        if f == "bern":
            self.expect(args[0], ctx, "num", "the probability of bern")
            return A.BOOL
        if f == "unif":
            for a in args:
                t = self.expr(a, ctx)
                if t != A.INT:
                    raise self.error(
                        f"the bounds of unif(lo, hi) must be ints, but this is "
                        f"{_describe(t)} (for a real uniform use uniform(a, b))",
                        a,
                    )
            return A.INT
        if f in ("dlap", "dexp"):
            t = self.expr(args[0], ctx)
            if t != A.INT:
                raise self.error(
                    f"the first argument of {f} must be an int, but this is "
                    f"{_describe(t)} ({f} ranges over the integers)",
                    args[0],
                )
            self.expect(args[1], ctx, "num", f"the scale of {f}")
            return A.INT
        if f == "step":
            return self.step_bins(args[0], ctx)
        if f == "density":
            self.expect(args[0], ctx, "num", "the lower end of density")
            self.expect(args[1], ctx, "num", "the upper end of density")
            poly_ctx = _Ctx(ctx.where, ctx.bound_vars | {DENSITY_VAR}, ctx.in_prob, True)
            self.expect(args[2], poly_ctx, "num", "the polynomial of density")
            return A.REAL
        for a in args:  # lap, exp, gauss, uniform
            self.expect(a, ctx, "num", f"an argument of {f}")
        return A.REAL

    def finite_set(self, s: A.Expr, ctx: _Ctx) -> A.Type:
        """The element type of a finite set ``{…}`` or a product ``S1 * S2``."""
        if isinstance(s, A.SetLit):
            if not s.items:
                raise self.error("unif needs a non-empty set", s)
            t: Optional[A.Type] = None
            for x in s.items:
                xt = self.expr(x, ctx)
                if xt.name == "array":
                    raise self.error("a set cannot hold arrays", x)
                nt = xt if t is None else join(t, xt)
                if nt is None:
                    raise self.error(
                        f"the elements of a set must have one type, but this is "
                        f"{_describe(xt)} and an earlier one is {_describe(t)}",
                        x,
                    )
                t = nt
            assert t is not None  # the set is not empty
            return t
        if isinstance(s, A.Binary) and s.op == "*":
            return A.tuple_of(self.finite_set(s.left, ctx), self.finite_set(s.right, ctx))
        raise self.error(
            "unif(S) needs a set {c1, …, ck} or a product of sets S1 * S2; for a range use unif(lo, hi)", s
        )

    def step_bins(self, bins: A.Expr, ctx: _Ctx) -> A.Type:
        if not isinstance(bins, A.ListLit) or not bins.items:
            raise self.error("step needs a non-empty list of bins [(a1, b1, w1), …]", bins)
        for b in bins.items:
            if not (isinstance(b, A.TupleExpr) and len(b.items) == 3):
                raise self.error("a bin of step is a triple (a, b, w): interval [a, b] with weight w", b)
            for x, what in zip(b.items, ("the start of a bin", "the end of a bin", "the weight of a bin")):
                self.expect(x, ctx, "num", what)
        return A.REAL

    # ---------------------------------------------------------------- statements
    def stmt(self, s: A.Stmt) -> None:
        getattr(self, "s_" + type(s).__name__)(s)

    def s_Block(self, s: A.Block) -> None:
        for x in s.stmts:
            self.stmt(x)

    def s_Skip(self, s: A.Skip) -> None:
        pass

    def s_VarDecl(self, s: A.VarDecl) -> None:
        pass  # checked by local inference

    def s_Assume(self, s: A.Assume) -> None:
        self.expect(s.cond, _Ctx("body"), "bool", "the condition of assume")

    def s_If(self, s: A.If) -> None:
        self.expect(s.cond, _Ctx("body"), "bool", "the condition of if")
        self.stmt(s.then)
        if s.other is not None:
            self.stmt(s.other)

    def s_While(self, s: A.While) -> None:
        self.expect(s.cond, _Ctx("body"), "bool", "the condition of while")
        self.invariants(s.invariants)
        self.stmt(s.body)

    def invariants(self, invs: Tuple[A.Expr, ...]) -> None:
        """Loop invariants: bool expressions over inputs and program variables, where the
        specification constructs (``forall``, ``exists``, ``sum``) are allowed too."""
        for inv in invs:
            self.expect(inv, _Ctx("invariant"), "bool", "a loop invariant")

    def s_For(self, s: A.For) -> None:
        ctx = _Ctx("body")
        self.expect(s.lo, ctx, "int", "the lower end of a for range")
        self.expect(s.hi, ctx, "int", "the upper end of a for range")
        self.check_writable(A.Var(s.var, pos=s.pos), s.pos)
        t = self.types.var_type(s.var)
        if t != A.INT:
            raise self.error(
                f"the for variable '{s.var}' must be an int, but '{s.var}' is {_describe(t)}{self.why(A.Var(s.var))}", s
            )
        self.invariants(s.invariants)
        self.for_vars.append((s.var, s.pos))
        self.stmt(s.body)
        self.for_vars.pop()

    def s_Assign(self, s: A.Assign) -> None:
        ctx = _Ctx("body")
        vt = self.expr(s.value, ctx)
        self.store(s.targets, vt, s.value)

    def s_Sample(self, s: A.Sample) -> None:
        vt = self.dist(s.dist, _Ctx("body"))
        self.store(s.targets, vt, s.dist)

    def store(self, targets: Tuple[A.Expr, ...], vt: A.Type, value: A.Expr) -> None:
        """Check that a value of type ``vt`` can be stored into ``targets``."""
        if len(targets) > 1:
            if vt.name != "tuple" or len(vt.elem) != len(targets):
                raise self.error(
                    f"{len(targets)} targets need a {len(targets)}-tuple, but this is {_describe(vt)}", value
                )
            parts = vt.elem
        else:
            parts = (vt,)
        seen = set()
        for tgt, pt in zip(targets, parts):
            self.check_writable(tgt, tgt.pos)
            name = _target_name(tgt)
            if len(targets) > 1 and isinstance(tgt, A.Var):
                if name in seen:
                    raise self.error(f"'{name}' is assigned twice in one statement", tgt)
                seen.add(name)
            if isinstance(tgt, A.Index):
                self.expect(tgt.index, _Ctx("body"), "int", "an array index")
                want = self._known(name)
                if want.name != "array":
                    raise self.error(f"'{name}' is {_describe(want)}, not an array", tgt.base)
                want = want.elem[0]
            else:
                want = self._known(name)
                if want.name == "array":
                    raise self.error(f"'{name}' is an array: assign its elements, {name}[i] := …", tgt)
            if not fits(pt, want):
                where = "this value" if len(targets) == 1 else f"the value for '{name}'"
                decl = self.declared.get(name)
                how = f"declared {want} at line {decl.pos.line}" if decl is not None and decl.pos else _describe(want)
                raise self.error(f"{where} is {_describe(pt)}, but '{name}' is {how}", value)

    def _known(self, name: str) -> A.Type:
        """The type of a variable that local inference has typed (every assigned one)."""
        t = self.types.var_type(name)
        assert t is not None, name
        return t

    def check_writable(self, tgt: A.Expr, pos: Optional[A.Pos]) -> None:
        """Parameters, ``failed`` and the variables of enclosing for loops are read-only."""
        name = _target_name(tgt)
        if name in self.types.params:
            raise self.error(f"cannot assign to parameter '{name}' (parameters are read-only)", tgt)
        if name == FAILED and self.types.has_failed:
            raise self.error("'failed' is maintained by the unreliable operators and cannot be assigned", tgt)
        for v, p in self.for_vars:
            if v == name:
                line = f" at line {p.line}" if p is not None else ""
                raise self.error(
                    f"'{name}' is the variable of the enclosing for loop{line} and is read-only in its body", tgt
                )


_DIST_USAGE = {
    "bern": "bern(p)",
    "unif": "unif(lo, hi) or unif({c1, …, ck})",
    "lap": "lap(m, s)",
    "exp": "exp(k, s)",
    "dlap": "dlap(m, s)",
    "dexp": "dexp(k, s)",
    "gauss": "gauss(m, v)",
    "uniform": "uniform(a, b)",
    "step": "step([(a1, b1, w1), …])",
    "density": "density(lo, hi, POLY)",
}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _describe(t: Optional[A.Type]) -> str:
    if t is None:
        return "untyped"
    if t.name == "int":
        return "an int"
    if t.name == "array":
        return f"an array {t}"
    if t.name == "tuple":
        return f"a tuple {t}"
    return f"a {t}"


def _before(a: A.Node, b: A.Node) -> bool:
    pa, pb = a.pos, b.pos
    if pa is None or pb is None:
        return True
    return (pa.line, pa.col) <= (pb.line, pb.col)


def _target_name(tgt: A.Expr) -> str:
    """The variable a target writes: ``x`` for ``x`` and for ``x[i]``."""
    base = tgt.base if isinstance(tgt, A.Index) else tgt
    assert isinstance(base, A.Var), "targets are variables or their elements"
    return base.name


# --------------------------------------------------------------------------- local inference


@dataclass
class _Definition:
    """A statement that gives local ``name`` a value: its first one fixes the type."""

    name: str
    node: A.Node  # the target (for positions)
    stmt: A.Stmt
    part: Optional[int]  # component of a tuple target, or None
    element: bool  # an array element write


def _definitions(block: A.Block) -> List[_Definition]:
    """All definitions of variables in ``block``, in source order."""
    out: List[_Definition] = []

    def go(s: A.Stmt) -> None:
        if isinstance(s, A.Block):
            for x in s.stmts:
                go(x)
        elif isinstance(s, (A.Assign, A.Sample)):
            many = len(s.targets) > 1
            for i, t in enumerate(s.targets):
                out.append(_Definition(_target_name(t), t, s, i if many else None, isinstance(t, A.Index)))
        elif isinstance(s, A.VarDecl):
            out.append(_Definition(s.name, s, s, None, False))
        elif isinstance(s, A.For):
            out.append(_Definition(s.var, s, s, None, False))
            go(s.body)
        elif isinstance(s, A.If):
            go(s.then)
            if s.other is not None:
                go(s.other)
        elif isinstance(s, A.While):
            go(s.body)

    go(block)
    return out


class _LocalInference:
    """Gives every local its type (first pass).

    A declared local (``var x: T;``) has type ``T``. Any other local has the
    least type of all its definitions: the type of the first one, widened from
    ``int`` to ``real`` when some definition stores a real (``s := 0; …
    s := s + 0.5;`` makes ``s`` real). Definitions whose kinds differ (``bool``
    and ``int``, a scalar and an array) are an error. Computed as a fixed point,
    since a definition may read locals defined later in the text (in loops).
    """

    def __init__(self, prog: A.Program, types: ProgramTypes, chk: _Checker):
        self.prog = prog
        self.types = types
        self.chk = chk

    def run(self) -> None:
        all_defs = _definitions(self.prog.body)
        for d in all_defs:
            if isinstance(d.stmt, A.VarDecl) and d.name in self.types.params:
                raise self.chk.error(f"'{d.name}' is a parameter and cannot be declared again", d.stmt)
        defs = [d for d in all_defs if d.name not in self.types.params]
        decls = self.declarations(defs)
        if self.types.has_failed:
            for d in defs:
                if d.name == FAILED:
                    raise self.chk.error(
                        "'failed' is maintained by the unreliable operators and cannot be assigned or declared", d.node
                    )
        for d in defs:
            if d.name == DENSITY_VAR:
                raise self.chk.error("'_' is reserved for density polynomials and cannot be a variable", d.node)
        self.chk.assigned = {d.name for d in defs}
        for name, decl in decls.items():
            self.types.locals[name] = decl.type
            self.chk.declared[name] = decl
        inferred = [d for d in defs if d.name not in decls]
        typed: Dict[int, A.Type] = {}  # index in `inferred` -> type of that definition
        blocked: Dict[str, Tuple[_Definition, str]] = {}
        changed = True
        while changed:
            changed = False
            for i, d in enumerate(inferred):
                try:
                    t = self.type_of_definition(d)
                except _NotYetTyped as exc:
                    blocked.setdefault(d.name, (d, exc.name))
                    continue
                if typed.get(i) == t:
                    continue
                typed[i] = t
                changed |= self.widen(d, t, inferred, typed)
        for d in inferred:
            if d.name not in self.types.locals:
                d0, other = blocked[d.name]
                raise self.chk.error(
                    f"cannot tell the type of '{d.name}': it is only assigned values that read "
                    f"'{other}' before '{other}' has one; declare it, e.g. `var {d.name}: real;`",
                    d0.node,
                )

    def declarations(self, defs: List[_Definition]) -> Dict[str, A.VarDecl]:
        """The ``var`` declarations; each must come before the variable's other definitions."""
        decls: Dict[str, A.VarDecl] = {}
        seen: Set[str] = set()
        for d in defs:
            if isinstance(d.stmt, A.VarDecl):
                if d.name in decls:
                    first = decls[d.name].pos
                    line = first.line if first is not None else "?"
                    raise self.chk.error(f"'{d.name}' is already declared at line {line}", d.stmt)
                if d.name in seen:
                    raise self.chk.error(f"the declaration of '{d.name}' must come before its first assignment", d.stmt)
                if d.stmt.type.name == "array" and not _is_base(d.stmt.type.elem[0]):
                    raise self.chk.error("arrays hold bool, int or real values", d.stmt)
                decls[d.name] = d.stmt
            seen.add(d.name)
        return decls

    def widen(self, d: _Definition, t: A.Type, inferred: List[_Definition], typed: Dict[int, A.Type]) -> bool:
        """Join ``t`` into the type of ``d.name``; return whether that type changed."""
        old = self.types.locals.get(d.name)
        new = t if old is None else join(old, t)
        if new is None:
            first = next(
                x for i, x in enumerate(inferred) if x.name == d.name and i in typed and join(typed[i], t) is None
            )
            a, b = (first, d) if _before(first.node, d.node) else (d, first)
            ta = typed[inferred.index(a)]
            tb = typed[inferred.index(b)]
            line = a.node.pos.line if a.node.pos else "?"
            raise self.chk.error(
                f"'{d.name}' gets {_describe(tb)} here, but {_describe(ta)} at line {line}; a variable has one type",
                b.node,
            )
        if new == old:
            return False
        self.types.locals[d.name] = new
        if old is not None:
            self.chk.widened[d.name] = d.node
        return True

    def type_of_definition(self, d: _Definition) -> A.Type:
        s = d.stmt
        if isinstance(s, A.VarDecl):
            if s.type.name == "array" and not _is_base(s.type.elem[0]):
                raise self.chk.error("arrays hold bool, int or real values", s)
            return s.type
        if isinstance(s, A.For):
            return A.INT
        ctx = _Ctx("body")
        assert isinstance(s, (A.Assign, A.Sample))
        vt = self.chk.expr(s.value, ctx) if isinstance(s, A.Assign) else self.chk.dist(s.dist, ctx)
        if d.part is not None:
            if vt.name != "tuple" or len(vt.elem) != len(s.targets):
                val = s.value if isinstance(s, A.Assign) else s.dist
                raise self.chk.error(
                    f"{len(s.targets)} targets need a {len(s.targets)}-tuple, but this is {_describe(vt)}", val
                )
            vt = vt.elem[d.part]
        if d.element:
            if not _is_base(vt):
                raise self.chk.error(f"array elements must be bool, int or real, but this is {_describe(vt)}", d.node)
            return A.array_of(vt)
        if vt.name == "array":
            raise self.chk.error("arrays cannot be copied; assign elements one by one", d.node)
        return vt


# --------------------------------------------------------------------------- entry points


def check_program(prog: A.Program, path: str = "<string>", source: Optional[str] = None) -> ProgramTypes:
    """Type-check one program; return the types of its variables.

    Raises :class:`TypeCheckError` / :class:`UnsupportedError` located at the offending node."""
    with deep_recursion(), paused_gc():
        return _check_program(prog, path, source)


def _check_program(prog: A.Program, path: str, source: Optional[str]) -> ProgramTypes:
    types = ProgramTypes(prog.name)
    chk = _Checker(types, path, source, partial=True)
    for p in prog.params:
        if p.name in types.params:
            raise chk.error(f"duplicate parameter '{p.name}'", p)
        if p.name == DENSITY_VAR:
            raise chk.error("'_' is reserved for density polynomials and cannot be a parameter", p)
        types.params[p.name] = p.type
    body_nodes = list(A.walk(prog.body))
    unreliable = [
        n for n in body_nodes if isinstance(n, A.Binary) and (n.op in UNRELIABLE_OPS or n.op in CANDIDATE_OPS)
    ]
    chk.has_rate = prog.rate is not None
    chk.op_rates = {o.op for o in prog.op_rates}
    types.has_failed = (
        bool(unreliable)
        or prog.rate is not None
        or prog.reliability is not None
        or bool(prog.op_rates)
        or bool(prog.memory)
        or prog.value_reliability is not None
    )
    if types.has_failed and FAILED in types.params:
        raise chk.error(
            "'failed' is the flag of the unreliable operators and cannot be a parameter here", prog.param(FAILED)
        )
    _LocalInference(prog, types, chk).run()
    if types.has_failed:
        types.locals[FAILED] = A.BOOL
    chk.partial = False
    chk.stmt(prog.body)
    for c in prog.requires:
        chk.expect(c, _Ctx("requires"), "bool", "a 'requires' clause")
    for c in prog.ensures:
        chk.expect(c, _Ctx("ensures"), "bool", "an 'ensures' clause")
    for word, e in (("fails", prog.fails), ("rate", prog.rate), ("reliability", prog.reliability)):
        if e is not None:
            chk.expect(e, _Ctx("bound"), "num", f"the '{word}' clause")
    _check_reliability(prog, chk)
    _check_holes(prog, chk)
    _check_privacy(prog, chk)
    return types


#: Rely's reliability of inputs in a value-level bound: ``reliability(x) >= 0.99 * R(a, b)``
INPUT_RELIABILITY = "R"


def input_reliabilities(bound: A.Expr) -> Tuple[A.Expr, Tuple[A.Call, ...]]:
    """A value-level bound split into its hardware part and its top-level factors ``R(a, …)``
    (Rely's joint reliability of inputs): ``0.99 * R(a)`` → ``(0.99, (R(a),))``.

    Reading: an input named in some ``R(…)`` may arrive corrupted, with probability at most
    ``1 - R(…)`` jointly, independently of the hardware's faults; the other inputs are reliable.
    Then P(x correct) >= P(inputs correct and no fault x depends on) = R(…) * P(no such fault on
    the correct inputs) >= R(…) * E0, so proving ``reliability(x) >= E0`` on reliable inputs
    proves the product (for E0 < 0 the claim holds trivially)."""
    factors: List[A.Expr] = []
    stack = [bound]
    while stack:
        e = stack.pop()
        if isinstance(e, A.Binary) and e.op == "*":
            stack += [e.right, e.left]
        else:
            factors.append(e)
    rs = tuple(f for f in factors if isinstance(f, A.Call) and f.func == INPUT_RELIABILITY)
    if not rs:
        return bound, ()
    rest = [f for f in factors if not (isinstance(f, A.Call) and f.func == INPUT_RELIABILITY)]
    e0: A.Expr = A.num(1)
    for f in rest:
        e0 = f if e0 == A.num(1) else A.Binary("*", e0, f)
    return e0, rs


def _check_reliability(prog: A.Program, chk: "_Checker") -> None:
    """Rely's hardware model: ``rate(OP) E`` and the rates of unreliable memory are numbers over
    the parameters; a region names variables of the program, each at most once, and has a rate
    (its own or the program's); ``reliability(x) >= E`` names variables and bounds with a number."""
    for o in prog.op_rates:
        chk.expect(o.rate, _Ctx("bound"), "num", f"the 'rate({o.op})' clause")
    seen: Dict[str, A.Memory] = {}
    for m in prog.memory:
        if m.rate is not None:
            chk.expect(m.rate, _Ctx("bound"), "num", "the rate of an 'unreliable' region")
        elif prog.rate is None:
            raise chk.error(
                "an 'unreliable' region needs a rate: its own (`unreliable(r) a`) or the program's `rate` clause", m
            )
        for name in m.names:
            if name == FAILED:
                raise chk.error("'failed' is the flag of the unreliable operators, not memory", m)
            if name not in chk.types.vars:
                raise chk.error(f"'{name}' in an 'unreliable' region is not a variable of the program", m)
            if name in seen:
                raise chk.error(f"'{name}' is in two 'unreliable' regions", m)
            seen[name] = m
    v = prog.value_reliability
    if v is not None:
        e0, rs = input_reliabilities(v.bound)
        for r in rs:
            if not r.args or any(not (isinstance(a, A.Var) and a.name in chk.types.params) for a in r.args):
                raise chk.error("R(…) names inputs (parameters): `reliability(x) >= 0.99 * R(a, b)`", r)
        for n in A.walk(e0):
            if isinstance(n, A.Call) and n.func == INPUT_RELIABILITY:
                raise chk.error(
                    "R(…) may only be a factor of the whole bound (`0.99 * R(a)`): the union bound proves products "
                    "with the inputs' reliability, nothing else",
                    n,
                    UnsupportedError,
                )
        chk.expect(e0, _Ctx("bound"), "num", "the bound of 'reliability(…) >='")
        for name in v.names:
            if name == FAILED or name not in chk.types.vars:
                raise chk.error(f"'reliability({name})': '{name}' is not a variable of the program", v)


def _check_privacy(prog: A.Program, chk: "_Checker") -> None:
    """``neighbours R`` over the inputs and their primed copies; ``private E[, D] on x…`` with E
    and D over the public inputs (those never primed in R) and outputs that are variables of the
    program; each of the two clauses needs the other."""
    r, d = prog.neighbours, prog.private
    if r is not None:
        chk.expect(r, _Ctx("neighbours"), "bool", "the 'neighbours' clause")
        if d is None:
            raise chk.error("a 'neighbours' clause needs a 'private' clause (the claim it relates runs for)", r)
    if d is None:
        return
    if r is None:
        raise chk.error("a 'private' clause needs a 'neighbours' clause saying which inputs are neighbours", d)
    secret = {b for n in set(free_vars(r)) if (b := A.unprimed(n)) is not None}
    for word, e in (("ε", d.epsilon), ("δ", d.delta)):
        if e is None:
            continue
        if word == "δ" and A.contains(e, A.Hole):
            raise chk.error("'?' may only stand for the ε of a 'private' clause, not for δ", e, UnsupportedError)
        chk.expect(e, _Ctx("privacy"), "num", f"the {word} of the 'private' clause")
        for n in A.walk(e):
            if isinstance(n, A.Var) and n.name in secret:
                raise chk.error(
                    f"the {word} of a 'private' clause may only read public inputs, but '{n.name}' is "
                    "primed in the 'neighbours' clause",
                    n,
                )
    seen: Set[str] = set()
    for name in d.outputs:
        if name in seen:
            raise chk.error(f"the output '{name}' is named twice in the 'private' clause", d)
        seen.add(name)
        if name not in chk.types.locals:
            what = "an input" if name in chk.types.params else "not a variable of the program"
            raise chk.error(
                f"the output '{name}' of the 'private' clause is {what}; name a variable the program writes", d
            )


def check_event(
    prog: A.Program, types: ProgramTypes, event: A.Expr, path: str = "<event>", source: Optional[str] = None
) -> None:
    """Type-check a privacy event: a bool over the outputs of the ``private`` clause and the
    public inputs, which may use ``written(a, i)``."""
    chk = _Checker(types, path, source)
    outs = set(prog.private.outputs) if prog.private is not None else set()
    secret = (
        {b for n in set(free_vars(prog.neighbours)) if (b := A.unprimed(n)) is not None} if prog.neighbours else set()
    )
    for n in A.walk(event):
        if isinstance(n, A.Var) and n.name in types.vars:
            if n.name in types.locals and n.name not in outs:
                raise chk.error(
                    f"an event may read only the outputs and the public inputs, but '{n.name}' is not an output", n
                )
            if n.name in secret:
                raise chk.error(f"an event may read only the public inputs, but '{n.name}' differs between the runs", n)
    chk.expect(event, _Ctx("event"), "bool", "an event")


def _check_holes(prog: A.Program, chk: "_Checker") -> None:
    """``?`` asks tamp for one value: the whole ``fails`` clause, or one constant of one
    ``ensures`` clause (about a failure bound, not a probability or causal specification)."""
    holes = [
        (w, n)
        for w, es in (
            ("fails", (prog.fails,)),
            ("ensures", prog.ensures),
            ("rate", (prog.rate,)),
            ("reliability", (prog.reliability,)),
        )
        for e in es
        if e is not None
        for n in A.walk(e)
        if isinstance(n, A.Hole)
    ]
    for where, h in holes:
        if where in ("rate", "reliability"):
            raise chk.error(
                f"'?' cannot stand for the '{where}' clause (only 'fails ?' or one constant of an 'ensures')",
                h,
                UnsupportedError,
            )
        if where == "fails" and prog.fails is not h:
            raise chk.error("'?' must be the whole 'fails' clause (`fails ?`), not part of it", h, UnsupportedError)
    if len(holes) > 1:
        raise chk.error(
            "only one '?' per program: tamp infers either the failure bound or one "
            "margin of an 'ensures', not several values at once",
            holes[1][1],
            UnsupportedError,
        )
    for where, h in holes:
        if where == "ensures" and any(
            A.contains(e, (A.Prob, A.Fairness, A.Independent)) and A.contains(e, A.Hole) for e in prog.ensures
        ):
            raise chk.error(
                "'?' can only be inferred in a failure-bound 'ensures' clause, not in a "
                "probability or causal specification",
                h,
                UnsupportedError,
            )


def check_file(src: A.SourceFile) -> Dict[str, ProgramTypes]:
    """Type-check every program of a parsed file; return ``{program name: ProgramTypes}``."""
    out: Dict[str, ProgramTypes] = {}
    for prog in src.programs:
        out[prog.name] = check_program(prog, src.path, src.text or None)
    return out
