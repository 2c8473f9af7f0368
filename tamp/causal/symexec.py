"""Symbolic execution of a deterministic, loop-free (after constant folding) program.

:func:`execute` runs a program body on an environment mapping each input to a
:class:`~tamp.causal.terms.Term` (an :class:`Input`, or a constant when the
input is fixed) and returns the final environment: every variable's value as a
term over the free inputs, with ``if`` merged into ``ite`` terms. Loops run as
long as their guard folds to a constant (so ``for i in 0..n`` with ``n`` fixed
is fine); ``assume(c)`` conditions are collected, and so is, for every division, the
condition under which it is reached with a zero divisor (:mod:`tamp.causal.division` makes a
reachable one a located error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from lang import ast as A
from lang.errors import UnsupportedError, error_at
from lang.walk import DESCEND, Walker

from . import terms as T

MAX_ITERATIONS = 100_000

_BINOPS = {
    "+": "+",
    "-": "-",
    "*": "*",
    "/": "/",
    "div": "div",
    "mod": "mod",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
    "==": "==",
    "!=": "!=",
    "&&": "and",
    "||": "or",
}


@dataclass
class Context:
    """Where errors point: the file and its text."""

    path: str = "<string>"
    source: Optional[str] = None

    def error(self, msg: str, node) -> UnsupportedError:
        return error_at(UnsupportedError, msg, getattr(node, "pos", None), self.path, self.source)


@dataclass
class Final:
    """The result of executing a program: final values and the collected ``assume`` conditions."""

    env: Dict[str, T.Term]
    assumptions: List[T.Term] = field(default_factory=list)
    # (condition under which this division is reached with divisor 0, the division)
    divisions: List[Tuple[T.Term, A.Expr]] = field(default_factory=list)
    path: List[T.Term] = field(default_factory=list)  # the enclosing branch conditions, while executing

    def assumption(self) -> T.Term:
        return T.op("and", *self.assumptions) if self.assumptions else T.TRUE


def sort_of_type(t: A.Type, ctx: Context, node) -> str:
    """The term sort of a scalar parameter type."""
    if t.name in ("bool", "int", "real"):
        return t.name
    raise ctx.error(f"causal analysis handles scalar inputs only (this one has type {t})", node)


class _Terms(Walker):
    """An expression as a term over ``env`` (a :class:`lang.walk.Walker`: long operator chains
    are translated without recursion)."""

    SUPPORTED = (A.Num, A.BoolLit, A.Var, A.Unary, A.Binary, A.Cond)

    def __init__(self, env: Dict[str, T.Term], ctx: Context):
        self.env, self.ctx = env, ctx

    def enter(self, e):
        if isinstance(e, self.SUPPORTED) or (isinstance(e, A.Call) and e.func in ("abs", "min", "max")):
            return DESCEND
        what = type(e).__name__ if not isinstance(e, A.Call) else f"'{e.func}(…)'"
        raise self.ctx.error(
            f"{what} is not supported by the causal analysis (linear/piecewise-linear "
            "arithmetic, comparisons, min/max/abs and conditionals are)",
            e,
        )

    def Num(self, e, kids):
        return T.const(int(e.value), "int") if e.is_int else T.Const(e.value, "real")

    def BoolLit(self, e, kids):
        return T.const(e.value)

    def Var(self, e, kids):
        if e.name not in self.env:
            raise self.ctx.error(f"'{e.name}' is read before it is assigned (on some path)", e)
        return self.env[e.name]

    def Unary(self, e, kids):
        return T.op("neg" if e.op == "-" else "not", kids[0])

    def Binary(self, e, kids):
        a, b = kids
        if e.op == "==>":
            return T.op("or", T.op("not", a), b)
        if e.op == "<==>":
            return T.op("==", a, b)
        if e.op not in _BINOPS:
            raise self.ctx.error(f"operator '{e.op}' is not supported by the causal analysis", e)
        if e.op in _DIVISIONS and isinstance(b, T.Const) and b.value == 0:
            # not folded: the division may sit in a branch that is never taken; a reachable one is
            # reported by tamp.causal.division, and evaluating it raises ZeroDivisionError
            return T.Op(_BINOPS[e.op], (a, b), "real" if e.op == "/" else "int")
        return T.op(_BINOPS[e.op], a, b)

    def Cond(self, e, kids):
        return T.op("ite", *kids)

    def Call(self, e, kids):
        want = 1 if e.func == "abs" else 2
        if len(kids) != want:
            raise self.ctx.error(f"{e.func} takes {want} argument(s)", e)
        return T.op(e.func, *kids)


def expr_term(e: A.Expr, env: Dict[str, T.Term], ctx: Context) -> T.Term:
    """Translate an expression to a term, reading variables from ``env``."""
    return _Terms(env, ctx).walk(e)


_DIVISIONS = ("/", "div", "mod")


def _zero(t: T.Term) -> T.Term:
    return T.const(0, "int") if t.sort == "int" else T.Const(Fraction(0), "real")


def _term(e: A.Expr, env: Dict[str, T.Term], fin: "Final", ctx: Context) -> T.Term:
    """``expr_term``, noting every division of ``e`` with the condition under which its divisor is
    0 on this path (conditional operands: only where they are evaluated)."""
    stack: List[Tuple[A.Expr, Tuple[T.Term, ...]]] = [(e, ())]
    while stack:
        x, guard = stack.pop()
        if isinstance(x, A.Binary) and x.op in _DIVISIONS:
            d = expr_term(x.right, env, ctx)
            bad = T.op("and", *fin.path, *fin.assumptions, *guard, T.op("==", d, _zero(d)))
            if bad is not T.FALSE:
                fin.divisions.append((bad, x))
        if isinstance(x, A.Cond):
            c = expr_term(x.cond, env, ctx)
            stack += [(x.cond, guard), (x.then, guard + (c,)), (x.other, guard + (T.op("not", c),))]
        elif isinstance(x, A.Binary) and x.op in ("&&", "||", "==>"):
            left = expr_term(x.left, env, ctx)
            stack += [(x.left, guard), (x.right, guard + ((T.op("not", left),) if x.op == "||" else (left,)))]
        else:
            stack += [(c, guard) for c in A.children(x) if isinstance(c, A.Expr)]
    return expr_term(e, env, ctx)


def _merge(c: T.Term, a: Dict[str, T.Term], b: Dict[str, T.Term]) -> Dict[str, T.Term]:
    """Join the environments of the two branches of ``if (c)``; a variable set on one side only is dropped."""
    out = {}
    for name in a.keys() & b.keys():
        out[name] = a[name] if a[name] is b[name] else T.op("ite", c, a[name], b[name])
    return out


def _exec(s: A.Stmt, env: Dict[str, T.Term], fin: Final, ctx: Context, readonly: set) -> Dict[str, T.Term]:
    if isinstance(s, A.Block):
        for sub in s.stmts:
            env = _exec(sub, env, fin, ctx, readonly)
        return env
    if isinstance(s, A.Assign):
        if len(s.targets) == 1:
            values = [_term(s.value, env, fin, ctx)]
        elif isinstance(s.value, A.TupleExpr) and len(s.value.items) == len(s.targets):
            values = [_term(v, env, fin, ctx) for v in s.value.items]
        else:
            raise ctx.error("tuple assignment needs a tuple of the same length on the right", s)
        env = dict(env)
        for t, v in zip(s.targets, values):
            if not isinstance(t, A.Var):
                raise ctx.error("arrays are not supported by the causal analysis", t)
            if t.name in readonly:
                raise ctx.error(f"'{t.name}' is an input (or a loop variable) and cannot be assigned", t)
            env[t.name] = v
        return env
    if isinstance(s, A.If):
        c = _term(s.cond, env, fin, ctx)
        if isinstance(c, T.Const):
            branch = s.then if c.value else s.other
            return _exec(branch, env, fin, ctx, readonly) if branch is not None else env
        before = len(fin.assumptions)
        fin.path.append(c)
        a = _exec(s.then, env, fin, ctx, readonly)
        fin.path.pop()
        then_assume = fin.assumptions[before:]
        del fin.assumptions[before:]
        fin.path.append(T.op("not", c))
        b = _exec(s.other, env, fin, ctx, readonly) if s.other is not None else env
        fin.path.pop()
        else_assume = fin.assumptions[before:]
        del fin.assumptions[before:]
        for x in then_assume:
            fin.assumptions.append(T.op("or", T.op("not", c), x))
        for x in else_assume:
            fin.assumptions.append(T.op("or", c, x))
        return _merge(c, a, b)
    if isinstance(s, A.While):
        for _ in range(MAX_ITERATIONS):
            c = _term(s.cond, env, fin, ctx)
            if not isinstance(c, T.Const):
                raise ctx.error(
                    "this loop's guard depends on a free input; the causal analysis needs "
                    "loops whose iteration count is fixed",
                    s.cond,
                )
            if not c.value:
                return env
            env = _exec(s.body, env, fin, ctx, readonly)
        raise ctx.error(f"loop did not stop within {MAX_ITERATIONS} iterations", s)
    if isinstance(s, A.For):
        lo, hi = _term(s.lo, env, fin, ctx), _term(s.hi, env, fin, ctx)
        if not (isinstance(lo, T.Const) and isinstance(hi, T.Const)):
            raise ctx.error("the loop bounds must be fixed numbers for the causal analysis", s)
        end = int(hi.value) + (1 if s.inclusive else 0)
        if end - int(lo.value) > MAX_ITERATIONS:
            raise ctx.error(f"loop runs more than {MAX_ITERATIONS} iterations", s)
        for i in range(int(lo.value), end):
            env = dict(env)
            env[s.var] = T.const(i, "int")
            env = _exec(s.body, env, fin, ctx, readonly | {s.var})
        return env
    if isinstance(s, A.Assume):
        fin.assumptions.append(_term(s.cond, env, fin, ctx))
        return env
    if isinstance(s, (A.Skip, A.VarDecl)):
        return env
    if isinstance(s, A.Sample):
        raise ctx.error(
            "this program samples; the causal analysis needs a deterministic program "
            "(use --probably with `tamp query` for sampling programs)",
            s,
        )
    raise ctx.error(f"{type(s).__name__} is not supported by the causal analysis", s)


def input_env(prog: A.Program, fixed: Dict[str, T.Term], ctx: Context) -> Dict[str, T.Term]:
    """The initial environment: each parameter is its fixed term, or a free :class:`Input`."""
    env = {}
    for p in prog.params:
        env[p.name] = fixed[p.name] if p.name in fixed else T.Input(p.name, sort_of_type(p.type, ctx, p))
    return env


def execute(prog: A.Program, fixed: Dict[str, T.Term], ctx: Context) -> Final:
    """Run ``prog`` symbolically with some inputs fixed; return its final environment."""
    env = input_env(prog, fixed, ctx)
    fin = Final({})
    readonly = {p.name for p in prog.params}
    fin.env = _exec(prog.body, env, fin, ctx, readonly)
    return fin
