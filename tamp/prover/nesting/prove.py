"""Nested loops and stages: prove one iteration by any method, then compose over the iterations.

For a *flag loop* (:mod:`tamp.cfa.nesting`: ``P; for c in lo..hi { B }`` with the claim
``ensures !v`` or ``ensures v`` on a flag the body only raises), the claim's bound β is split
into a per-iteration bound ``u``: for the union bound (``!v``) the factor ``N`` (the trip
count) is taken out of β's product, else ``u = β / N``; for the product (``v``, β = exp(E)) the
exponent per iteration is E with ``N`` divided out, and ``u`` is ``x`` for ``E = N·log(x)``,
``1 - s`` for a per-iteration exponent ``-s``, or ``exp(e)``. The iteration program (the body
with the state it starts from as inputs, :func:`tamp.cfa.nesting.iteration_program`) is then
proved with the bound ``u`` by the whole portfolio — the union bound, expected failure,
concentration, the product rule, or this rule again for a loop nested in the body.

Why this is sound: a candidate ``u`` is only a proposal. The rule proves the claim only when
the composition's side conditions (:func:`tamp.cfa.nesting.composition`: N·u <= β, or
N·e <= E, when the loop runs, and β >= 0 or E >= 0 when it does not) are valid under
``requires`` and the iteration program is proved with bound ``u``; the argument that these
give the claim is :mod:`tamp.cfa.nesting`'s, and ``tamp check-proof`` re-checks both parts
from the source (:mod:`tamp.certificate.nest_checker`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional

import z3

from lang import ast as A
from lang.errors import TampError
from lang.speckind import FAILURE_BOUND, clause_kind
from lang.walk import free_vars, operands
from tamp.cfa import CFA, build_cfa
from tamp.cfa.nesting import composition, flag_loop, iteration_program, trip_count
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid
from tamp.prover.trace.result import ProofResult
from tamp.show import show_expr

__all__ = ["NestResult", "try_nesting", "candidates"]


@dataclass(repr=False)
class NestResult(ProofResult):
    """A failure bound proved by composing a per-iteration bound over a flag loop: ``form``
    ("union" or "product"), the per-iteration bound ``per_iteration`` and the iteration
    program's proof ``inner`` (a proved result of any method)."""

    form: str = ""
    per_iteration: Any = None
    inner: Optional[ProofResult] = field(default=None)


def _product(factors: List[A.Expr]) -> A.Expr:
    if not factors:
        return A.num(1)
    out = factors[0]
    for f in factors[1:]:
        out = A.Binary("*", out, f)
    return out


def _divide_out(e: A.Expr, n: A.Expr) -> Optional[A.Expr]:
    """``e / n`` when ``n`` is a factor of ``e`` written as such (in a product, a quotient's
    numerator or under a minus), else None."""
    if e == n:
        return A.num(1)
    if isinstance(e, A.Unary) and e.op == "-":
        inner = _divide_out(e.operand, n)
        return None if inner is None else A.Unary("-", inner)
    if isinstance(e, A.Binary) and e.op == "/":
        top = _divide_out(e.left, n)
        return None if top is None else A.Binary("/", top, e.right)
    if isinstance(e, A.Binary) and e.op == "*":
        factors = operands(e, "*")
        for i, f in enumerate(factors):
            rest = _divide_out(f, n)
            if rest is not None:
                if rest == A.Unary("-", A.num(1)):  # -n · a / n = -a
                    return A.Unary("-", _product(factors[:i] + factors[i + 1 :]))
                kept = factors[:i] + ([] if rest == A.num(1) else [rest]) + factors[i + 1 :]
                return _product(kept)
    return None


def _negated(e: A.Expr) -> Optional[A.Expr]:
    """``s`` when ``e`` is written ``-s`` (``-a / b``, ``-a * b``), else None."""
    if isinstance(e, A.Unary) and e.op == "-":
        return e.operand
    if isinstance(e, A.Binary) and e.op in ("/", "*"):
        left = _negated(e.left)
        if left is not None:
            return e.right if left == A.num(1) and e.op == "*" else A.Binary(e.op, left, e.right)
    return None


def candidates(form: str, bound: A.Expr, n: A.Expr) -> List[A.Expr]:
    """Per-iteration bounds to try for a loop of ``n`` iterations and the claim's ``bound``."""
    if form == "union":
        split = _divide_out(bound, n)
        out = [split] if split is not None else []
        return out + [A.Binary("/", bound, n)]
    if not (isinstance(bound, A.Call) and bound.func == "exp" and len(bound.args) == 1):
        return []
    big = bound.args[0]
    e = _divide_out(big, n)
    if e is None:
        e = A.Binary("/", big, n)
    if isinstance(e, A.Call) and e.func == "log" and len(e.args) == 1:
        return [e.args[0]]
    s = _negated(e)
    return ([A.Binary("-", A.num(1), s)] if s is not None else []) + [A.Call("exp", (e,))]


def _holds(cfa: CFA, formulas) -> bool:
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in cfa.requires]
    return all(is_valid(enc.expr(f, env), enc, Stats(), 5000, hyps) == VALID for _rule, f in formulas)


def try_nesting(
    program: A.Program, cfa: CFA, t0: float, deadline: Optional[float], prove: Callable[[A.Program, CFA], ProofResult]
):
    """``(NestResult or None, why)`` (why '' when the program is not a flag loop). ``prove``: the
    portfolio on the iteration program and its CFA."""
    ensures = tuple(e for e in program.ensures if clause_kind(e) == FAILURE_BOUND)
    fl = flag_loop(program, ensures, cfa.types)
    if fl is None:
        return None, ""
    n = trip_count(fl.loop)
    params = {p.name for p in program.params}
    why = ""
    for u in candidates(fl.form, cfa.bound, n):
        if deadline is not None and time.monotonic() > deadline:
            break
        if not set(free_vars(u)) <= params:
            continue
        side = composition(fl, cfa.bound, u)
        it = iteration_program(program, fl, cfa.types, u)
        if side is None or it is None:
            continue
        try:
            if not _holds(cfa, side):
                continue
            it_cfa = build_cfa(it, None, cfa.path)
        except (TampError, z3.Z3Exception):
            continue
        inner = prove(it, it_cfa)
        if inner.verdict == "proved":
            how = "summed over" if fl.form == "union" else "multiplied over"
            return NestResult(
                cfa.name,
                "failure-bound",
                "proved",
                time.monotonic() - t0,
                show_expr(cfa.bound),
                f"one iteration of the loop at line {_line(fl.loop)} fails with probability at most "
                f"{show_expr(u)} (proved by {inner_method(inner)}), {how} its {show_expr(n)} iterations",
                cfa=cfa,
                stats={**inner.stats, "method": "nesting"},
                form=fl.form,
                per_iteration=u,
                inner=inner,
            ), ""
        if not why:
            lines = [ln.strip() for ln in (inner.message or "").splitlines()]
            # the inner method's own reason (its first line that is not the "not proved (...)" coda)
            first = next((ln for ln in lines if ln and not ln.startswith("not proved")), "")
            why = (
                f"one iteration of the loop at line {_line(fl.loop)} was not proved to fail with probability "
                f"at most {show_expr(u)}" + (f": {first}" if first and len(first) < 200 else "")
            )
    return None, why


def _line(s) -> str:
    return str(s.pos.line) if s.pos is not None else "?"


#: how a message names the method that proved the iteration program, by its result's class
_METHODS = {
    "ProofResult": "the union bound",
    "ExpectationResult": "expected failure",
    "ConcentrationResult": "concentration",
    "ProductResult": "the product rule",
    "NestResult": "this rule, on the loop inside it",
}


def inner_method(r: ProofResult) -> str:
    return _METHODS.get(type(r).__name__, "another method")
