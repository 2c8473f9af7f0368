"""Re-checking a per-iteration composition certificate (a flag loop, :mod:`tamp.cfa.nesting`).

A nesting certificate (:mod:`.writer`)::

    NESTING = {"method": "nesting", "program": NAME, "bound": AST, "form": "union" | "product",
               "per_iteration": AST, "inner": CERT}   # CERT: a proof of any method, or NESTING

The rule (the argument is :mod:`tamp.cfa.nesting`'s):

1. CLAIM    the claim is rebuilt from the source (:func:`.claim.checked_claim`) and must equal the
            certificate's bound; the program must be a flag loop again
            (:func:`tamp.cfa.nesting.flag_loop`: a prefix that ends and sets the flag once to a
            literal, a loop whose iterations only move the flag or stop once it moved, no
            ``while`` in the body of a product without an early exit, a deterministic epilogue
            that carries the claim back to "the flag moved" or "it did not"; a counter read as
            ``k > 0`` or as "every iteration raised it" is rewritten into such a flag) of the
            certificate's ``form``;
2. COMPOSE  the composition's side conditions (:func:`tamp.cfa.nesting.composition`: N·u <= β
            or N·e <= E, or ``sum(c in lo..hi: u) <= β`` / ``sum(c in lo..hi: e) <= E`` for a
            bound that reads the counter ``c``, when the loop runs, β >= 0 or E >= 0 when it does
            not, u > 0 when e = log u) are valid under ``requires``, by z3;
3. INNER    the iteration program is rebuilt here (:func:`tamp.cfa.nesting.iteration_program`:
            the body with every variable it can find in the state as an input, the flag at its
            start value first, the bound ``per_iteration``, which may read parameters and the
            counter only) and the inner
            certificate, whatever its method, must prove it: its own rules, against that
            program as if it were a program of the source file.

Nothing of ``tamp.prover`` is imported: the transformation lives in :mod:`tamp.cfa.nesting`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import z3

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.cfa.nesting import composition, flag_loop, iteration_program
from tamp.core.encode import Encoder
from tamp.show import show_expr

from .claim import checked_claim
from .format import ProgramCheck, Rejected
from .solver import VALID, decide


class MalformedNest(ValueError):
    pass


@dataclass
class NestCert:
    name: str
    bound: A.Expr
    form: str
    per_iteration: A.Expr
    inner: Any  # a certificate of any method (reader.ProgramCert, ExpCert, ConcCert, ProductCert, NestCert)


def decode_nest(d: Any, where: str, decode_any: Callable[[Any, str], Any]) -> NestCert:
    if not isinstance(d, dict):
        raise MalformedNest(f"{where}: expected an object")
    extra = set(d) - {"method", "program", "bound", "bound_text", "form", "per_iteration", "inner"}
    if extra:
        raise MalformedNest(f"{where}: unknown field(s) {sorted(extra)}")
    if d.get("method") != "nesting":
        raise MalformedNest(f'{where}.method: expected "nesting"')
    for key in ("program", "bound", "form", "per_iteration", "inner"):
        if key not in d:
            raise MalformedNest(f"{where}: missing field '{key}'")
    if not isinstance(d["program"], str) or d["form"] not in ("union", "product"):
        raise MalformedNest(f'{where}: "program" must be a name and "form" "union" or "product"')
    try:
        bound, per = expr_from_json(d["bound"]), expr_from_json(d["per_iteration"])
    except SerializeError as exc:
        raise MalformedNest(f"{where}: {exc}") from None
    return NestCert(d["program"], bound, d["form"], per, decode_any(d["inner"], f"{where}.inner"))


#: ``check_inner(cert, src, program, timeout_ms, deadline) -> ProgramCheck``: the checker of the
#: inner certificate's method on the rebuilt iteration program
InnerCheck = Callable[[Any, A.SourceFile, A.Program, int, Any], ProgramCheck]


def check_nest(
    nc: NestCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline, check_inner: InnerCheck
) -> ProgramCheck:
    """Rules 1–3 (never raises :class:`Rejected`; reports it)."""
    t0 = time.monotonic()
    out = ProgramCheck(f"{nc.name} (per-iteration composition)", False)
    try:
        _claim_bound, sub, cfa = checked_claim(src, prog, nc.bound, bound, inputs)
        fl = flag_loop(sub, tuple(sub.ensures), cfa.types)
        if fl is None:
            raise Rejected("CLAIM: the program is not a loop raising the claim's flag (see tamp.cfa.nesting)")
        if fl.form != nc.form:
            raise Rejected(f"CLAIM: the certificate composes by {nc.form}, the loop's claim needs {fl.form}")
        side = composition(fl, cfa.bound, nc.per_iteration)
        it = iteration_program(sub, fl, cfa.types, nc.per_iteration)
        if side is None or it is None:
            raise Rejected(
                f"COMPOSE: the bound {show_expr(cfa.bound)} cannot be composed from {show_expr(nc.per_iteration)}"
            )
        enc = Encoder(cfa.types)
        env = enc.initial_env()
        hyps = [enc.expr(r, env) for r in cfa.requires]
        for rule, f in side:
            out.obligations += 1
            if decide(enc.expr(f, env), enc, hyps, timeout_ms)[0] != VALID:
                raise Rejected(f"COMPOSE {rule}: `{show_expr(f)}` does not follow from `requires`")
        if getattr(nc.inner, "name", None) != it.name:
            raise Rejected(f"INNER: the inner proof is of '{getattr(nc.inner, 'name', '?')}', not of '{it.name}'")
        inner = check_inner(nc.inner, A.SourceFile((it,), src.path, src.text), it, timeout_ms, deadline)
        out.obligations += inner.obligations
        out.log += inner.log
        if not inner.ok:
            raise Rejected(f"INNER: {inner.reason}")
        out.ok = True
    except Rejected as exc:
        out.reason = str(exc)
    except z3.Z3Exception as exc:
        out.reason = f"a formula of the certificate cannot be built: {exc}"
    out.seconds = time.monotonic() - t0
    return out
