"""Translation of :mod:`lang.ast` expressions to z3, and validity checks.

Variables are looked up in an *environment* (name → z3 term), so the same encoder serves
SSA trace formulas (fresh versions per assignment) and state-predicate obligations.
``log``, ``exp`` and ``sqrt`` are uninterpreted functions; every application that occurs
in a formula is recorded so that :mod:`axioms.lemmas` can add true facts about it.
``sum`` with literal bounds is unrolled; otherwise it is an uninterpreted function of its
bounds and free variables (sound: nothing is assumed about its value).

:func:`is_valid` is the only place a solver answer becomes a fact: ``unsat`` of the negation
is "valid"; ``sat`` is "invalid"; ``unknown`` (including timeouts) is "unknown" — never valid.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from fractions import Fraction
from types import SimpleNamespace
from typing import Dict, List, Optional

import z3
from z3 import z3core
from z3.z3 import _to_expr_ref

from axioms.lemmas import lemma_instances
from lang import ast as A
from lang.errors import UnsupportedError

from .exprs import subst

VALID, INVALID, UNKNOWN = "valid", "invalid", "unknown"


def sort_of(t: A.Type) -> z3.SortRef:
    """The z3 sort of a language type."""
    if t.name == "bool":
        return z3.BoolSort()
    if t.name == "int":
        return z3.IntSort()
    if t.name == "real":
        return z3.RealSort()
    if t.name == "array":
        return z3.ArraySort(z3.IntSort(), sort_of(t.elem[0]))
    raise UnsupportedError(f"values of type {t} are not supported by the prover")


@dataclass
class Stats:
    """Counters shared by one proof attempt."""

    solver_calls: int = 0
    solver_time: float = 0.0
    lemma_instances: int = 0
    unknowns: int = 0


class Encoder:
    """Expressions → z3 terms over an environment; collects transcendental applications."""

    def __init__(self, types: Dict[str, A.Type]):
        self.types = types
        self.log = z3.Function("log", z3.RealSort(), z3.RealSort())
        self.exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
        self.sqrt = z3.Function("sqrt", z3.RealSort(), z3.RealSort())
        self._fresh = 0
        self._sums: Dict[A.Expr, z3.FuncDeclRef] = {}
        # set once this encoder has built a log/exp/sqrt or opaque sum application: until then
        # no formula of it can contain one, and the search for lemma terms is skipped
        self.has_apps = False
        self._env0: Optional[Dict[str, z3.ExprRef]] = None
        self._memo: Dict[int, tuple] = {}
        self._sum_defs: Dict[str, tuple] = {}

    def sum_info(self, decl: z3.FuncDeclRef):
        """(the ``Sum`` expression, the names of its free variables in argument order) for one of
        this encoder's opaque sum functions, else None (used by the ``sum-*`` lemmas)."""
        return self._sum_defs.get(decl.name())

    # ------------------------------------------------------------------ variables
    def const(self, name: str, version=0) -> z3.ExprRef:
        """The z3 constant for version ``version`` of variable ``name``."""
        t = self.types.get(name)
        if t is None:
            raise UnsupportedError(f"the prover does not know the type of '{name}'")
        return z3.Const(f"{name}@{version}" if version is not None else name, sort_of(t))

    def fresh(self, name: str) -> z3.ExprRef:
        self._fresh += 1
        return self.const(name, f"s{self._fresh}")

    def initial_env(self, suffix="0") -> Dict[str, z3.ExprRef]:
        return {n: self.const(n, suffix) for n, t in self.types.items() if t.name != "tuple"}

    @property
    def env0(self) -> Dict[str, z3.ExprRef]:
        """The initial environment, one shared dict (callers must not change it): expressions
        encoded over it are remembered, since the prover encodes the same candidate invariants
        and labels over it again and again."""
        if self._env0 is None:
            self._env0 = self.initial_env()
        return self._env0

    # ------------------------------------------------------------------ expressions
    def expr(self, e: A.Expr, env: Dict[str, z3.ExprRef]) -> z3.ExprRef:
        shared = env is self._env0 and env is not None
        if shared:
            hit = self._memo.get(id(e))
            if hit is not None and hit[0] is e:
                return hit[1]
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            raise UnsupportedError(f"the prover cannot encode {type(e).__name__} expressions")
        out = m(e, env)
        if shared:
            self._memo[id(e)] = (e, out)  # the node is kept, so its id stays its own
        return out

    def _Num(self, e, env):
        v = e.value
        if e.is_int and v.denominator == 1:
            return z3.IntVal(v.numerator)
        return z3.RealVal(Fraction(v))

    def _BoolLit(self, e, env):
        return z3.BoolVal(e.value)

    def _Var(self, e, env):
        if e.name not in env:
            raise UnsupportedError(f"the prover does not know the variable '{e.name}'")
        return env[e.name]

    def _Index(self, e, env):
        base = self.expr(e.base, env)
        idx = to_int(self.expr(e.index, env))
        return z3.Select(base, idx)

    def _Unary(self, e, env):
        x = self.expr(e.operand, env)
        if e.op == "!":
            return z3.Not(x)
        return -x

    def _Binary(self, e, env):
        op = e.op
        a, b = self.expr(e.left, env), self.expr(e.right, env)
        if op == "&&":
            return conj(a, b)
        if op == "||":
            return z3.Or(a, b)
        if op == "==>":
            return z3.Implies(a, b)
        if op == "<==>":
            return a == b
        if op in ("==", "!="):
            if z3.is_bool(a) or z3.is_bool(b):
                r = a == b
            else:
                a, b = unify(a, b)
                r = a == b
            return r if op == "==" else z3.Not(r)
        if op in ("div", "mod"):
            a, b = to_int(a), to_int(b)
            return a / b if op == "div" else a % b
        if op == "/":
            return to_real(a) / to_real(b)
        a, b = unify(a, b)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "<": lambda: a < b,
                "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[op]() \
            if op in ("+", "-", "*", "<", "<=", ">", ">=") else _bad_op(op)

    def _Cond(self, e, env):
        a, b = unify(self.expr(e.then, env), self.expr(e.other, env))
        return z3.If(self.expr(e.cond, env), a, b)

    def _Call(self, e, env):
        args = [self.expr(a, env) for a in e.args]
        f = e.func
        if f == "abs":
            x = args[0]
            return z3.If(x >= 0, x, -x)
        if f in ("min", "max"):
            a, b = unify(args[0], args[1])
            return z3.If(a <= b, a, b) if f == "min" else z3.If(a >= b, a, b)
        if f in ("log", "exp", "sqrt"):
            self.has_apps = True
        if f == "log":
            return self.log(to_real(args[0]))
        if f == "exp":
            return self.exp(to_real(args[0]))
        if f == "sqrt":
            return self.sqrt(to_real(args[0]))
        raise UnsupportedError(f"the prover cannot encode the call '{f}(…)'")

    def _TupleExpr(self, e, env):
        raise UnsupportedError("tuple values are supported only in tuple assignment and sampling")

    def _Quant(self, e, env):
        j = z3.Int(f"{e.var}!q{self._next()}")
        lo, hi = to_int(self.expr(e.lo, env)), to_int(self.expr(e.hi, env))
        inner = dict(env)
        inner[e.var] = j
        body = self.expr(e.body, inner)
        rng = z3.And(lo <= j, j <= hi if e.inclusive else j < hi)
        if e.kind == "forall":
            return z3.ForAll([j], z3.Implies(rng, body))
        return z3.Exists([j], z3.And(rng, body))

    def _Sum(self, e, env):
        lo, hi = z3.simplify(to_int(self.expr(e.lo, env))), z3.simplify(to_int(self.expr(e.hi, env)))
        if z3.is_int_value(lo) and z3.is_int_value(hi):
            a, b = lo.as_long(), hi.as_long() + (1 if e.inclusive else 0)
            if b - a <= 64:
                total = z3.RealVal(0)
                for k in range(a, b):
                    inner = dict(env)
                    inner[e.var] = z3.IntVal(k)
                    total = total + to_real(self.expr(e.body, inner))
                return total
        # opaque: a function of the bounds and of the free variables' values
        self.has_apps = True
        names = sorted(A.free_vars(e.body) - {e.var})
        key = subst(e.body, {e.var: A.Var("$sum")})  # one function per body, bounds are arguments
        if key not in self._sums:
            sorts = [z3.IntSort(), z3.IntSort()] + [env[n].sort() for n in names]
            fname = f"sum{len(self._sums)}"
            self._sums[key] = z3.Function(fname, *sorts, z3.RealSort())
            self._sum_defs[fname] = (e, names)
        hi2 = hi + 1 if e.inclusive else hi
        return self._sums[key](lo, hi2, *[env[n] for n in names])

    def _next(self):
        self._fresh += 1
        return self._fresh


def _bad_op(op):
    raise UnsupportedError(f"the prover cannot encode the operator '{op}'")


def substitute_all(terms: List[z3.ExprRef], pairs) -> List[z3.ExprRef]:
    """``[z3.substitute(t, *pairs) for t in terms]``, with the (from, to) arrays built once and
    one C call per term (``z3.substitute`` re-checks every pair's sorts on every call). The
    pairs must have equal sorts, as the prover's (pre-state constant, post-state value) do."""
    if not pairs or not terms:
        return list(terms)
    n = len(pairs)
    src, dst = (z3.Ast * n)(), (z3.Ast * n)()
    for i, (a, b) in enumerate(pairs):
        src[i], dst[i] = a.as_ast(), b.as_ast()
    ctx = terms[0].ctx
    return [_to_expr_ref(z3.Z3_substitute(ctx.ref(), t.as_ast(), n, src, dst), ctx) for t in terms]


def conj(*args: z3.BoolRef) -> z3.BoolRef:
    """``z3.And(*args)`` for Boolean terms, built with one C call (``z3.And`` re-derives and
    coerces the sort of every argument, which dominates on the prover's long conjunctions).
    Falls back to ``z3.And`` for anything but z3 Boolean terms of one context."""
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


def _sort_kind(x: z3.ExprRef) -> int:
    """z3's sort kind of ``x`` (``Z3_INT_SORT``, ``Z3_REAL_SORT`` …) straight from the C API:
    ``z3.is_int`` builds two wrapper objects per call, and the encoder asks on every operator."""
    if not isinstance(x, z3.ExprRef):
        return -1
    api = _raw_api()
    ctx = x.ctx_ref()
    return api.Z3_get_sort_kind(ctx, api.Z3_get_sort(ctx, x.as_ast()))


def to_real(x: z3.ExprRef) -> z3.ExprRef:
    return z3.ToReal(x) if _sort_kind(x) == z3.Z3_INT_SORT else x


def to_int(x: z3.ExprRef) -> z3.ExprRef:
    if _sort_kind(x) == z3.Z3_INT_SORT:
        return x
    if z3.is_rational_value(x) and x.denominator_as_long() == 1:
        return z3.IntVal(x.numerator_as_long())
    raise UnsupportedError("an array index or div/mod operand must be an integer")


def unify(a: z3.ExprRef, b: z3.ExprRef):
    """Promote int to real when the other side is real."""
    ka, kb = _sort_kind(a), _sort_kind(b)
    if ka == z3.Z3_INT_SORT and kb == z3.Z3_REAL_SORT:
        return z3.ToReal(a), b
    if ka == z3.Z3_REAL_SORT and kb == z3.Z3_INT_SORT:
        return a, z3.ToReal(b)
    return a, b


# ---------------------------------------------------------------------------- validity


_SUM_NAME = re.compile(r"sum[0-9]+")
_RAW = None


def _raw_api():
    """z3's C functions for walking terms, without the per-call error check of the ``z3core``
    wrappers (these getters cannot fail on a live term); the wrappers themselves when this z3
    version is laid out differently."""
    global _RAW
    if _RAW is None:
        names = ["Z3_get_sort", "Z3_get_sort_kind", "Z3_get_ast_id", "Z3_get_ast_kind", "Z3_get_app_num_args", "Z3_get_app_decl",
                 "Z3_get_decl_kind", "Z3_func_decl_to_ast", "Z3_get_symbol_string",
                 "Z3_get_decl_name", "Z3_get_app_arg", "Z3_get_quantifier_body"]
        funcs = {}
        for n in names:
            w = getattr(z3core, n)
            raw = getattr((w.__defaults__ or (None,))[-1], "f", None)
            funcs[n] = raw if raw is not None and n != "Z3_get_symbol_string" else w
        _RAW = SimpleNamespace(**funcs)
    return _RAW


def transcendental_apps(f: z3.ExprRef, names=("log", "exp", "sqrt")) -> List[z3.ExprRef]:
    """Every application of log/exp/sqrt (and of the encoder's opaque ``sumK`` functions) inside
    ``f`` (ground or not), without repeats.

    The walk runs on z3's C API directly (raw pointers, no Python wrapper per node: the terms
    are kept alive by ``f``); only the applications found are wrapped. Same result, in the same
    order, as walking ``children()``, about ten times faster on the prover's large queries."""
    lib, ctx = _raw_api(), f.ctx_ref()
    app_kind, quant_kind = z3.Z3_APP_AST, z3.Z3_QUANTIFIER_AST
    uninterpreted = z3.Z3_OP_UNINTERPRETED
    wanted: Dict[int, bool] = {}  # decl id -> is a log/exp/sqrt (True, unary) or a sumK (False)
    seen, out, stack = set(), [], [f.as_ast()]
    while stack:
        t = stack.pop()
        tid = lib.Z3_get_ast_id(ctx, t)
        if tid in seen:
            continue
        seen.add(tid)
        kind = lib.Z3_get_ast_kind(ctx, t)
        if kind == app_kind:
            n = lib.Z3_get_app_num_args(ctx, t)
            d = lib.Z3_get_app_decl(ctx, t)
            if lib.Z3_get_decl_kind(ctx, d) == uninterpreted:
                did = lib.Z3_get_ast_id(ctx, lib.Z3_func_decl_to_ast(ctx, d))
                w = wanted.get(did)
                if w is None and did not in wanted:
                    name = lib.Z3_get_symbol_string(ctx, lib.Z3_get_decl_name(ctx, d))
                    name = name.decode() if isinstance(name, bytes) else name
                    w = True if name in names else (False if _SUM_NAME.fullmatch(name) else None)
                    wanted[did] = w
                if (w is True and n == 1) or (w is False and n >= 2):
                    out.append(_to_expr_ref(t, f.ctx))
            stack.extend(lib.Z3_get_app_arg(ctx, t, k) for k in range(n))
        elif kind == quant_kind:
            stack.append(lib.Z3_get_quantifier_body(ctx, t))
    return out


def enc_has_apps(enc) -> bool:
    """Whether formulas built by ``enc`` may contain log/exp/sqrt/sum applications (True for
    encoders that do not say)."""
    return getattr(enc, "has_apps", True)


def lemmas_for(apps: List[z3.ExprRef], enc: Encoder) -> list:
    """:func:`axioms.lemmas.lemma_instances` for ``apps``, remembered per encoder: most queries
    of one proof mention the same few log/exp terms (the lemmas are facts about the terms
    alone, so the same set of terms always gets the same lemmas). The applications are kept
    with the entry, so their ids stay theirs."""
    if not apps:
        return []
    cache = enc.__dict__.setdefault("_lemmas", {})
    key = tuple(sorted(t.get_id() for t in apps))
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (list(apps), lemma_instances(apps, enc))
    return hit[1]


def _solver_for(enc: Encoder, hyps: List[z3.BoolRef]) -> z3.Solver:
    """One solver per set of hypotheses and encoder, with the hypotheses asserted once; each
    query runs in its own ``push``/``pop`` scope (creating a solver costs more than most of the
    prover's queries). The hypotheses are kept alive with the solver, so their ids stay theirs."""
    cache = enc.__dict__.setdefault("_solvers", {})
    key = tuple(h.get_id() for h in hyps)
    entry = cache.get(key)
    if entry is None:
        s = z3.Solver()
        for h in hyps:
            s.add(h)
        entry = cache[key] = (s, list(hyps))
    return entry[0]


LEMMA_FREE_MS = 200


def _check(s: z3.Solver, lemmas, formula, timeout_ms, stats: Stats):
    """z3's answer for ``lemmas ∧ ¬formula`` in a scope of ``s`` (popped afterwards)."""
    s.push()
    try:
        s.set("timeout", max(int(timeout_ms), 1))
        for _name, lem in lemmas:
            s.add(lem)
        s.add(z3.Not(formula))
        t0 = time.monotonic()
        r = s.check()
    finally:
        s.pop()
    stats.solver_calls += 1
    stats.solver_time += time.monotonic() - t0
    return r


def is_valid(formula: z3.BoolRef, enc: Encoder, stats: Stats, timeout_ms: int = 5000,
             hypotheses=()) -> str:
    """Decide ``hypotheses ⇒ formula`` with lemmas about log/exp/sqrt added as hypotheses.

    Returns VALID only when z3 answers ``unsat`` for the negation."""
    hyps = list(hypotheses)
    apps = transcendental_apps(conj(*hyps, formula) if hyps else formula) if enc_has_apps(enc) else []
    lemmas = lemmas_for(apps, enc)
    stats.lemma_instances += len(lemmas)
    s = _solver_for(enc, hyps)
    if lemmas:
        # most obligations do not need the lemmas (log is then an uninterpreted function): a
        # short query without them settles those; "unsat" without extra facts is "unsat" with
        # them, anything else is asked again with the lemmas
        if _check(s, [], formula, min(LEMMA_FREE_MS, timeout_ms), stats) == z3.unsat:
            return VALID
    r = _check(s, lemmas, formula, timeout_ms, stats)
    if r == z3.unsat:
        return VALID
    if r == z3.sat:
        return INVALID
    stats.unknowns += 1
    return UNKNOWN
