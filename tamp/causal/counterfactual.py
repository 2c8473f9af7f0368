"""Counterfactual queries: *would* / *might* a behaviour happen if some inputs had been different?

A scenario fixes every input to its factual value from ``given`` except the
varied ones, which range over their ``requires`` range (or an explicit
``lo..hi`` / ``lo..=hi``); the factual point itself is excluded.

* ``would B``: does every execution of the scenario satisfy B? "no" comes with a
  counterexample.
* ``might B``: does some execution satisfy B? "yes" comes with a witness.
* ``probably θ`` (programs that sample): the same questions about
  "P(B) >= θ", asked of every point of a finite scenario, with probabilities from
  :func:`tamp.probability.probability`.

Deterministic programs are executed symbolically over the varied inputs and
decided by z3; every model is re-checked by exact evaluation before it is shown.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple, Union

import z3

from lang import ast as A
from lang.errors import TampError, UnsupportedError
from lang.parser import parse_expr
from lang.walk import free_vars
from tamp.probability import probability

from . import terms as T
from .dag import compile_dag, evaluate
from .division import check_divisions
from .region import box_bounds, conjuncts
from .result import QueryResult, show
from .smt import model_value, translate, z3_const, z3_var
from .symexec import Context, execute, expr_term, input_env, sort_of_type

_WRAP = len("program __e__() ensures ")
MAX_POINTS = 10_000


@dataclass(frozen=True)
class Vary:
    """A varied input and its explicit range (None = its ``requires`` range)."""

    name: str
    lo: Optional[object] = None
    hi: Optional[object] = None
    inclusive: bool = False
    text: str = ""


def option_error(opt: str, text: str, msg: str, node=None, col: int = 1) -> TampError:
    """An error located in the text of a command-line option."""
    if node is not None and getattr(node, "pos", None) is not None:
        col = max(node.pos.col - _WRAP, 1)
    return TampError(msg, opt, 1, col, text)


def parse_option_expr(text: str, opt: str) -> A.Expr:
    """Parse an option's expression; errors point into the option text."""
    if not text or not text.strip():
        raise TampError("expected an expression", opt)
    e = parse_expr(text, opt)
    if e is None:
        raise TampError("expected an expression", opt)
    return e


def _const_value(e: A.Expr, opt: str, text: str):
    if isinstance(e, A.BoolLit):
        return e.value
    try:
        t = expr_term(e, {}, Context(opt, text))
    except TampError:
        t = None
    if not isinstance(t, T.Const):
        raise option_error(opt, text, "expected a constant value here", e)
    return t.value


_VARY = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\bin\b\s*(.+?)\s*(\.\.=?)\s*(.+?)\s*)?$")


def parse_vary(text: str) -> Vary:
    """``"sex"`` or ``"x2 in 0..10"`` (half-open) / ``"x2 in 0..=10"`` (closed)."""
    m = _VARY.match(text)
    if not m:
        raise TampError("expected NAME or NAME in LO..HI", "--vary", 1, 1, text)
    name, lo_t, dots, hi_t = m.groups()
    if lo_t is None:
        return Vary(name, text=text)
    vals = []
    for part in (lo_t, hi_t):
        col = text.index(part) + 1
        try:
            e = parse_expr(part, "--vary")
            vals.append(_const_value(e, "--vary", part))
        except TampError as err:
            raise TampError(err.message, "--vary", 1, col + max(err.col, 1) - 1, text) from None
    return Vary(name, vals[0], vals[1], dots == "..=", text)


def factual_values(given: A.Expr, prog: A.Program, text: str) -> Dict[str, object]:
    """``x1 == 0.3 && sex == 1`` → {"x1": 3/10, "sex": 1} (each name a parameter)."""
    out: Dict[str, object] = {}
    for c in conjuncts(given):
        if isinstance(c, A.Binary) and c.op == "==" and isinstance(c.left, A.Var):
            var, val = c.left, c.right
        elif isinstance(c, A.Binary) and c.op == "==" and isinstance(c.right, A.Var):
            var, val = c.right, c.left
        else:
            raise option_error("--given", text, "--given must be a conjunction of NAME == VALUE", c)
        p = prog.param(var.name)
        if p is None:
            raise option_error("--given", text, f"'{var.name}' is not an input of program '{prog.name}'", var)
        v = _const_value(val, "--given", text)
        if p.type.name == "int":
            if Fraction(v).denominator != 1:
                raise option_error("--given", text, f"'{var.name}' is an int; {show(v)} is not", val)
            v = int(v)
        elif p.type.name == "bool" and not isinstance(v, bool):
            raise option_error("--given", text, f"'{var.name}' is a bool", val)
        elif p.type.name == "real":
            v = Fraction(v)
        if var.name in out and out[var.name] != v:
            raise option_error("--given", text, f"'{var.name}' is given two values", c)
        out[var.name] = v
    return out


def _to_expr(x, default: str, opt: str) -> Tuple[Optional[A.Expr], str]:
    if x is None:
        return None, ""
    if isinstance(x, A.Expr):
        return x, default
    return parse_option_expr(str(x), opt), str(x)


def _const_term(v, sort: str) -> T.Term:
    if sort == "bool":
        return T.const(bool(v))
    return T.const(int(v), "int") if sort == "int" else T.Const(Fraction(v), "real")


def ask(
    program: A.Program,
    given,
    vary: Sequence[Union[str, Vary]],
    would=None,
    might=None,
    probably=None,
    path: str = "<string>",
    source: Optional[str] = None,
    timeout: float = 60.0,
) -> QueryResult:
    """Answer one counterfactual query about ``program`` (see the module docstring)."""
    t0 = time.monotonic()
    ctx = Context(path, source)
    if (would is None) == (might is None):
        raise TampError("ask exactly one of --would / --might")
    mode = "would" if would is not None else "might"
    beh, beh_text = _to_expr(would if would is not None else might, "behaviour", f"--{mode}")
    given_e, given_text = _to_expr(given if given is not None else "true", "given", "--given")
    fact = (
        factual_values(given_e, program, given_text)
        if given_e is not None and not isinstance(given_e, A.BoolLit)  # (never None: "true" by default)
        else {}
    )
    varies = [v if isinstance(v, Vary) else parse_vary(v) for v in vary]
    if not varies:
        raise TampError("--vary: name at least one input to vary")
    sorts = {p.name: sort_of_type(p.type, ctx, p) for p in program.params}
    for v in varies:
        if v.name not in sorts:
            raise TampError(f"'{v.name}' is not an input of program '{program.name}'", "--vary", 1, 1, v.text)
    varied = {v.name for v in varies}
    missing = [n for n in sorts if n not in fact and n not in varied]
    if missing:
        raise TampError(f"input(s) {', '.join(missing)} are neither fixed by --given nor varied by --vary", "--given")
    theta = None
    if probably is not None:
        theta = (
            Fraction(_const_value(parse_option_expr(str(probably), "--probably"), "--probably", str(probably)))
            if not isinstance(probably, (int, Fraction))
            else Fraction(probably)
        )
        if not 0 <= theta <= 1:
            raise TampError("--probably: THETA must be between 0 and 1", "--probably", 1, 1, str(probably))
    question = (
        f"{mode} {beh_text or 'behaviour'}"
        + (f" with probability >= {show(theta)}" if theta is not None else "")
        + f" if {', '.join(v.text or v.name for v in varies)} varied"
        + (f" from {given_text}" if given_text else "")
    )
    samples = any(isinstance(s, A.Sample) for s in A.walk(program.body))
    if samples:
        if theta is None:
            raise UnsupportedError(f"program '{program.name}' samples: ask with --probably THETA", path)
        res = _ask_probably(program, fact, varies, sorts, beh, mode, theta, ctx, timeout)
    else:
        if theta is not None and theta == 0:
            res = QueryResult(question, True, message="P(behaviour) >= 0 always holds")
        else:
            res = _ask_exact(program, fact, varies, sorts, beh, mode, ctx, timeout)
    res.question = question
    res.time_s = time.monotonic() - t0
    return res


def _scenario(program, fact, varies, sorts, ctx):
    """z3 variables and constraints of the varied inputs (ranges, and not the factual point)."""
    bounds = box_bounds(program, ctx)
    zv, cs = {}, []
    for v in varies:
        x = z3_var(v.name, sorts[v.name])
        zv[v.name] = x
        if v.lo is not None:
            lo, hi = z3_const(v.lo, sorts[v.name]), z3_const(v.hi, sorts[v.name])
            cs.append(x >= lo)
            cs.append(x <= hi if v.inclusive else x < hi)
    diff = [zv[v.name] != z3_const(fact[v.name], sorts[v.name]) for v in varies if v.name in fact]
    if diff:
        cs.append(z3.Or(diff))
    return zv, cs, bounds


def _final_values(program, point: Dict[str, object], names, sorts, ctx) -> Dict[str, object]:
    """Exact values of ``names`` after running the program at the concrete ``point``."""
    fixed = {n: _const_term(v, sorts[n]) for n, v in point.items()}
    fin = execute(program, fixed, ctx)
    out: Dict[str, object] = {}
    for n in names:
        t = fin.env.get(n)
        if isinstance(t, T.Const):
            out[n] = t.value
    return out


def _ask_exact(program, fact, varies, sorts, beh, mode, ctx, timeout) -> QueryResult:
    fixed = {n: _const_term(v, sorts[n]) for n, v in fact.items() if n not in {x.name for x in varies}}
    fin = execute(program, fixed, ctx)
    init = input_env(program, fixed, ctx)
    requires = [expr_term(r, init, ctx) for r in program.requires]
    valid = T.op("and", *requires, fin.assumption())
    for name in set(free_vars(beh)):
        if name not in fin.env:
            raise option_error(
                f"--{mode}",
                "",
                f"'{name}' is not a variable of program '{program.name}' (or is not assigned on every path)",
            )
    b = expr_term(beh, fin.env, ctx)
    if b.sort != "bool":
        raise TampError(f"--{mode}: the behaviour must be a condition (true/false), not a number", f"--{mode}")
    zv, cs, _ = _scenario(program, fact, varies, sorts, ctx)
    varied = {v.name for v in varies}
    check_divisions(
        fin, requires, {n: sorts[n] for n in varied}, {n: v for n, v in fact.items() if n not in varied}, ctx, extra=cs
    )
    dag = compile_dag([valid, b])
    zvalid, zb = translate(dag, zv)
    s = z3.Solver()
    s.set("timeout", int(timeout * 1000))
    s.add(*cs, zvalid, z3.Not(zb) if mode == "would" else zb)
    r = s.check()
    shown = sorted(set(free_vars(beh)) - set(sorts))
    if r == z3.unsat:
        empty = z3.Solver()
        empty.set("timeout", int(timeout * 1000))
        empty.add(*cs, zvalid)
        e = empty.check()
        if e == z3.unsat:
            return _vacuous(varies)
        if e != z3.sat:
            return QueryResult(
                "",
                None,
                None,
                message="the solver could not decide whether the scenario has "
                f"any execution at all ({empty.reason_unknown()})",
            )
        if mode == "would":
            return QueryResult("", True, None, message="every execution of the scenario satisfies the behaviour")
        return QueryResult("", False, None, message="no execution of the scenario satisfies the behaviour")
    if r != z3.sat:
        return QueryResult("", None, None, message=f"the solver could not decide ({s.reason_unknown()})")
    m = s.model()
    point = dict(fact)
    for v in varies:
        val = model_value(m, zv[v.name], sorts[v.name])
        if val is None:
            return QueryResult("", None, None, message="the solver's model is irrational; cannot show it exactly")
        point[v.name] = val
    ok_valid, ok_b = evaluate(dag, point)
    if not ok_valid or ok_b != (mode == "might"):  # re-check the model exactly
        return QueryResult("", None, None, message="the solver's model did not check out exactly")
    model = {n: point[n] for n in sorts}
    model.update(_final_values(program, point, shown, sorts, ctx))
    label = "counterexample" if mode == "would" else "witness"
    res = QueryResult("", mode == "might", model, details={"model_label": label})
    res.message = (
        "this execution of the scenario does not satisfy the behaviour"
        if mode == "would"
        else "this execution of the scenario satisfies the behaviour"
    )
    return res


def _vacuous(varies) -> QueryResult:
    """The answer for a scenario without any execution: no yes/no, a clear reason instead."""
    reversed_ = [v.text for v in varies if v.lo is not None and not (v.lo <= v.hi if v.inclusive else v.lo < v.hi)]
    why = (
        f"the range of {', '.join(reversed_)} is empty"
        if reversed_
        else "no value of the varied inputs satisfies the program's requires clauses (other than the factual point)"
    )
    return QueryResult(
        "",
        None,
        None,
        vacuous=True,
        message=f"no execution of the scenario exists: {why}; "
        "the question is vacuous (any answer would hold trivially)",
    )


def _points(program, fact, varies, sorts, ctx) -> List[Dict[str, object]]:
    """Every point of a finite scenario (varied inputs enumerated, factual point excluded)."""
    bounds = box_bounds(program, ctx)
    axes = []
    for v in varies:
        sort = sorts[v.name]
        vals: List[object]
        if sort == "bool":
            vals = [False, True]
        elif sort == "int":
            lo, hi = (v.lo, v.hi) if v.lo is not None else tuple(bounds[v.name])
            if lo is None or hi is None:
                raise TampError(
                    f"--vary {v.name}: give a finite range (e.g. {v.name} in 0..10) for --probably",
                    "--vary",
                    1,
                    1,
                    v.text,
                )
            a = math.ceil(lo)
            b = math.floor(hi) if (v.lo is None or v.inclusive) else math.ceil(hi) - 1
            vals = list(range(a, b + 1))
        else:
            raise TampError(
                f"--vary {v.name}: --probably needs integer or Boolean varied inputs "
                "(a real one ranges over infinitely many scenarios)",
                "--vary",
                1,
                1,
                v.text,
            )
        axes.append((v.name, vals))
    pts = [dict(fact)]
    for name, vals in axes:
        pts = [dict(p, **{name: x}) for p in pts for x in vals]
        if len(pts) > MAX_POINTS:
            raise TampError(f"the scenario has more than {MAX_POINTS} points; narrow the --vary ranges")
    varied = [n for n, _ in axes]
    return [p for p in pts if any(n not in fact or p[n] != fact[n] for n in varied)]


def _requires_hold(program, point, sorts, ctx) -> bool:
    env = {n: _const_term(v, sorts[n]) for n, v in point.items()}
    for r in program.requires:
        t = expr_term(r, env, ctx)
        if not (isinstance(t, T.Const) and t.value is True):
            return False
    return True


def _ask_probably(program, fact, varies, sorts, beh, mode, theta, ctx, timeout) -> QueryResult:
    deadline = time.monotonic() + timeout
    undecided = None
    points = [pt for pt in _points(program, fact, varies, sorts, ctx) if _requires_hold(program, pt, sorts, ctx)]
    if not points:
        return _vacuous(varies)
    for pt in points:
        inputs = {n: (v if not isinstance(v, Fraction) or v.denominator != 1 else int(v)) for n, v in pt.items()}
        left = max(deadline - time.monotonic(), 1.0)
        p = probability(program, beh, inputs=inputs, timeout=left)
        lo, hi = (p, p) if isinstance(p, Fraction) else (p.lo, p.hi)
        holds = True if lo >= theta else False if hi < theta else None
        prob = {"lower": lo, "upper": hi}
        if mode == "would" and holds is False:
            return QueryResult(
                "",
                False,
                dict(pt),
                probability=prob,
                message=(f"at this point P(behaviour) < {show(theta)}"),
                details={"model_label": "counterexample"},
            )
        if mode == "might" and holds is True:
            return QueryResult(
                "",
                True,
                dict(pt),
                probability=prob,
                message=(f"at this point P(behaviour) >= {show(theta)}"),
                details={"model_label": "witness"},
            )
        if holds is None and undecided is None:
            undecided = (pt, prob)
    if undecided is not None:
        return QueryResult(
            "",
            None,
            dict(undecided[0]),
            probability=undecided[1],
            message="the probability at this point could not be separated from the threshold",
            details={"model_label": "undecided at"},
        )
    if mode == "would":
        return QueryResult("", True, None, message=f"at every point of the scenario P(behaviour) >= {show(theta)}")
    return QueryResult("", False, None, message=f"at no point of the scenario P(behaviour) >= {show(theta)}")
