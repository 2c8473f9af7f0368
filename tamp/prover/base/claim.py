"""Checks of the claim itself, before any proof search: is the bound well defined, is the claim
vacuous or trivial, can it be met at all?

These never turn a claim into "proved"; they turn confusing outcomes into clear messages:

* a bound that divides by zero (or takes the log of a non-positive number) for some input
  allowed by ``requires`` is an input error, located at the offending sub-expression, when an
  input at which exact evaluation confirms it is found (it is named in the message); when the
  solver cannot rule it out but no such input is found (its ``log`` and ``exp`` are
  uninterpreted, so ``1 - exp(-1) > 0`` may be beyond it), a note says so and the search goes
  on: where an argument is out of range the bound has no value the solver is bound to, so no
  proof can rest on it;
* ``requires`` that no input satisfies makes every claim hold *vacuously* — said in a note;
* a bound that is at least 1 for every input makes the claim hold *trivially* — said in a note;
* a bound that is negative for some allowed input cannot be met there — said in a note, only
  with a witness: an input from a z3 model of ``requires ∧ bound < 0`` at which ``requires``
  and the bound, evaluated exactly by :mod:`lang.evaluate` (not by the solver, whose ``log``
  and ``sum`` are uninterpreted and may take any value in a model), are true and negative.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import List, Optional

import z3

from lang import ast as A
from lang import ops
from lang.errors import TampError, UnsupportedError, error_at
from lang.evaluate import evaluate
from tamp.cfa.dependence import precondition_assumes
from tamp.core import watchdog
from tamp.core import z3expr as Z
from tamp.prover.base.smt import INVALID, VALID, Encoder, Stats, is_valid, to_real
from tamp.show import show_expr

_TIMEOUT_MS = 2000
#: a witness input is first sought with every integer input in [-SMALL_INT, SMALL_INT]
SMALL_INT = 64

#: whether a value meets a condition of :data:`lang.ops.CONDITION` (``positive``: v > 0 …), exactly
_HOLDS = {k: (lambda v, op=op: bool(ops.BINARY[op].exact(v, 0))) for k, op in ops.CONDITION.items()}


def _partial_points(e: A.Node, binders: tuple = ()):
    """Sub-expressions of ``e`` that are undefined somewhere: (node, condition that must hold,
    the ``sum``/``forall``/``exists`` binders around it, outermost first, each a :class:`A.Quant`
    or :class:`A.Sum` whose body is to be replaced)."""
    if isinstance(e, A.Binary) and e.op in ops.PARTIAL:
        k, kind = ops.PARTIAL[e.op]
        yield e, (kind, (e.left, e.right)[k]), binders
    elif isinstance(e, A.Call) and e.func in ops.PARTIAL and e.args:
        k, kind = ops.PARTIAL[e.func]
        yield e, (kind, e.args[k]), binders
    for child in A.children(e):
        inner = binders + (e,) if isinstance(e, (A.Sum, A.Quant)) and child is e.body else binders
        yield from _partial_points(child, inner)


def _for_all_bound(cond: A.Expr, binders: tuple) -> A.Expr:
    """``cond`` for every value of the variables ``binders`` bind (their ranges as written)."""
    for b in reversed(binders):
        cond = A.Quant("forall", b.var, b.lo, b.hi, b.inclusive, cond)
    return cond


def check_claim(
    cfa, path: str = "<string>", source: Optional[str] = None, bound_from_option: bool = False
) -> List[str]:
    """Raise :class:`UnsupportedError` for an ill-defined bound; return notes about the claim."""
    enc = Encoder(cfa.types)
    stats = Stats()
    env = enc.initial_env()
    req = [enc.expr(r, env) for r in cfa.requires]

    def valid(f):
        return is_valid(f, enc, stats, _TIMEOUT_MS, req)

    notes = []
    for node, (kind, arg), binders in _partial_points(cfa.bound):
        if binders:  # inside a sum (or a quantifier): the condition for every index of its range
            cond = to_real(enc.expr(_for_all_bound(A.Binary(ops.CONDITION[kind], arg, A.num(0)), binders), env))
        else:
            t = to_real(enc.expr(arg, env))
            cond = Z.BINARY[ops.CONDITION[kind]](t, z3.RealVal(0))
        if valid(cond) != INVALID:
            continue
        what = {
            "nonzero": f"divides by `{show_expr(arg)}`, which is zero",
            "positive": f"takes log(`{show_expr(arg)}`), which is not positive",
            "nonnegative": f"takes sqrt(`{show_expr(arg)}`), which is negative",
        }[kind]
        # an index-dependent argument has no value at an input alone: no exact witness for it
        witness = None if binders else _witness(cfa, env, req, z3.Not(cond), lambda v, k=kind: not _HOLDS[k](v), arg)
        if witness is None:
            # z3's log and exp are uninterpreted: its counter-model may give them values they
            # never take (exp(-1) >= 1). Without an input at which exact evaluation confirms it,
            # this is a note, not an error; where the argument really is out of range the
            # bound has no value, and no proof can rest on it (the solver may pick any).
            notes.append(
                f"the solver could not show that the failure bound's {show_expr(arg)} is in range "
                f"for every input satisfying `requires` ({what.split(',')[0]})"
            )
            continue
        shown = ", ".join(f"{k} = {v}" for k, v in witness[0].items())
        msg = f"the failure bound {what} for some inputs satisfying `requires`" + (f" (at {shown})" if shown else "")
        if bound_from_option:
            raise TampError(msg + f" (bound: {show_expr(cfa.bound)})", "--bound")
        raise error_at(UnsupportedError, msg, node.pos, path, source)

    if valid(z3.BoolVal(False)) == VALID:
        notes.append("no input satisfies `requires`: the claim holds vacuously")
        return notes
    beta = to_real(enc.expr(cfa.bound, env))
    if valid(beta >= 1) == VALID:
        notes.append(f"the bound {show_expr(cfa.bound)} is at least 1 for every input: the claim holds trivially")
    elif valid(beta >= 0) == INVALID:
        witness = negative_witness(cfa, enc, env, req, beta)
        if witness is not None:
            shown = ", ".join(f"{k} = {v}" for k, v in witness[0].items())
            notes.append(
                f"the bound {show_expr(cfa.bound)} is negative for some inputs satisfying `requires` "
                f"(at {shown or 'every input'} it is {witness[1]}): no program can meet it there"
            )
    return notes


class _ModelArray(Mapping):
    """An input array as a z3 model gives it: ``a[i]`` is the model's value of the element."""

    def __init__(self, model: z3.ModelRef, term: z3.ExprRef):
        self.model, self.term = model, term

    def __getitem__(self, i):
        return _model_value(self.model, z3.Select(self.term, i))

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


def _model_value(model: z3.ModelRef, term: z3.ExprRef):
    """The exact value of ``term`` in ``model`` (int, Fraction, bool), or an array view."""
    if z3.is_array(term):
        return _ModelArray(model, term)
    v = model.eval(term, model_completion=True)
    if z3.is_true(v) or z3.is_false(v):
        return z3.is_true(v)
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    raise ValueError(f"no exact value for {v}")  # an algebraic number: not shown


def negative_witness(cfa, enc, env, req, beta) -> Optional[tuple]:
    """({input: value}, the bound's value) for an input satisfying ``requires`` at which the
    bound is negative, or None (:func:`_witness`)."""
    return _witness(cfa, env, req, beta < 0, lambda b: b < 0, cfa.bound)


def _witness(cfa, env, req, formula, bad, expr) -> Optional[tuple]:
    """({input: value}, the value of ``expr``) for an input satisfying ``requires`` at which
    ``bad(value)`` holds, or None. z3 proposes the input (a model of ``requires ∧ formula``);
    :mod:`lang.evaluate` confirms it exactly, since in the model an uninterpreted ``log``,
    ``exp`` or ``sum`` may have a value it never has. Only scalars are shown (an array is read
    through the model where the expression reads it)."""
    s = z3.Solver()
    s.set("timeout", _TIMEOUT_MS)
    for r in req:
        s.add(r)
    s.add(formula)
    small = [z3.And(v >= -SMALL_INT, v <= SMALL_INT) for p in cfa.params if z3.is_int(v := env.get(p.name))]
    try:
        # an input with small integers first: exact evaluation walks every index of a `forall` or
        # `sum` up to them (a model with n = 21238 took 10 s to confirm), and it reads better
        s.push()
        s.add(*small)
        if not small or watchdog.call(s.check, s.ctx, _TIMEOUT_MS / 1000) != z3.sat:
            s.pop()
            if watchdog.call(s.check, s.ctx, _TIMEOUT_MS / 1000) != z3.sat:
                return None
        m = s.model()
        values = {p.name: _model_value(m, env[p.name]) for p in cfa.params if p.name in env}
        if not all(evaluate(r, values) is True for r in cfa.requires):
            return None
        b = evaluate(expr, values)
        if isinstance(b, bool) or not bad(b):
            return None
    except (ValueError, ArithmeticError, TypeError, z3.Z3Exception):  # EvalError is a ValueError
        return None
    shown = {k: v for k, v in values.items() if not isinstance(v, _ModelArray)}
    return shown, b


def unreachable_exit_note(cfa, aut) -> str:
    """A note for a proved claim whose automaton reaches the program's end in no state allowed
    by ``requires``: every run is then stopped by a precondition ``assume`` (termination is
    proved, and conditioning assumes are refused), so the claim holds vacuously."""
    if aut is None or not aut.exits:
        return ""
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    req = [enc.expr(r, env) for r in cfa.requires]
    stats = Stats()
    try:
        for x in aut.exits:
            if is_valid(z3.Not(enc.expr(aut.nodes[x].lam, env)), enc, stats, _TIMEOUT_MS, req) != VALID:
                return ""
    except Exception:  # noqa: BLE001 - the note is advisory
        return ""
    where = ", ".join(
        f"{cfa.path}:{st.pos.line}:{st.pos.col}" for st in precondition_assumes(cfa) if st.pos is not None
    )
    return (
        "no run reaches the end of the program for any input satisfying `requires`: every run is "
        "stopped by a precondition `assume`" + (f" ({where})" if where else "") + ", so the claim holds "
        "vacuously"
    )
