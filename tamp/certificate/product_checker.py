"""Re-checking a product-rule certificate (Rely's ``Pr[no fault] >= (1 - r)^N``) from scratch.

A product certificate (:mod:`.writer`)::

    PRODUCT = {"method": "product", "program": NAME, "bound": AST, "rate": AST, "count": AST,
               "form": "exp" | "pow", "counting": PROGRAM}   # PROGRAM: a failure-bound proof

The rule (the argument is :mod:`tamp.cfa.reliable`'s):

1. CLAIM    the claim is rebuilt from the source (:func:`.claim.claim_cfa`): its postcondition is
            ``!failed`` alone, its bound is ``1 - (1 - r)^N`` in one of the spellings of
            :func:`tamp.cfa.reliable.product_claim`, equal to the certificate's rate and count,
            every fault flip of the rebuilt CFA has the rate ``r``, and the claim has the shape
            the rules assume (:func:`.claim.well_formed_claim`);
2. RATE     ``requires`` implies ``0 <= r < 1`` (``<= 1`` for the power form), by z3;
3. COUNT    the counting CFA (:func:`tamp.cfa.reliable.counting_cfa`, rebuilt here: every flip's
            rate a fresh input ``ρ in (0, 1]``, the claim ``!failed`` with bound ``ρ * N``) has the
            proof ``counting``: rules 2–6 of :mod:`.checker` (termination included).

Nothing of ``tamp.prover`` is imported: the transformation lives in :mod:`tamp.cfa`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.cfa.reliable import counting_cfa, flip_edges, flip_rate, only_not_failed, product_claim
from tamp.core.encode import Encoder
from tamp.core.z3expr import to_real
from tamp.show import show_expr

from .claim import claim_cfa, well_formed_claim
from .format import Rejected
from .solver import VALID, decide


class MalformedProduct(ValueError):
    pass


@dataclass
class ProductCert:
    name: str
    bound: A.Expr
    rate: A.Expr
    count: A.Expr
    form: str
    counting: Any  # reader.ProgramCert


def decode_product(d: Any, where: str, decode_program) -> ProductCert:
    if not isinstance(d, dict):
        raise MalformedProduct(f"{where}: expected an object")
    extra = set(d) - {"method", "program", "bound", "bound_text", "rate", "count", "form", "counting"}
    if extra:
        raise MalformedProduct(f"{where}: unknown field(s) {sorted(extra)}")
    if d.get("method") != "product":
        raise MalformedProduct(f'{where}.method: expected "product"')
    for key in ("program", "bound", "rate", "count", "form", "counting"):
        if key not in d:
            raise MalformedProduct(f"{where}: missing field '{key}'")
    if not isinstance(d["program"], str) or d["form"] not in ("exp", "pow"):
        raise MalformedProduct(f'{where}: "program" must be a name and "form" "exp" or "pow"')
    try:
        bound, rate, count = (expr_from_json(d[k]) for k in ("bound", "rate", "count"))
    except SerializeError as exc:
        raise MalformedProduct(f"{where}: {exc}") from None
    return ProductCert(d["program"], bound, rate, count, d["form"], decode_program(d["counting"], f"{where}.counting"))


def counting_claim(pc: ProductCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms: int):
    """Rules 1 and 2; the counting CFA whose proof rule 3 checks. Raises :class:`Rejected`."""
    cfa = claim_cfa(src, prog, bound, inputs)
    claim = product_claim(cfa)
    if claim is None:
        raise Rejected(f"CLAIM: the bound {show_expr(cfa.bound)} is not of the form 1 - (1 - r)^N")
    if (claim.rate, claim.count, claim.form) != (pc.rate, pc.count, pc.form) or pc.bound != cfa.bound:
        raise Rejected(
            f"CLAIM: the certificate proves (1 - {show_expr(pc.rate)})^({show_expr(pc.count)}), the claim "
            f"checked is {show_expr(cfa.bound)}"
        )
    if not only_not_failed(cfa):
        raise Rejected("CLAIM: the product rule proves the postcondition `!failed` alone")
    for u, v, _k, st in flip_edges(cfa):
        if flip_rate(st) != claim.rate:
            raise Rejected(f"CLAIM: the unreliable operation at CFA edge {u}->{v} does not fail with the rate r")
    problem = well_formed_claim(cfa)
    if problem:
        raise Rejected(f"CLAIM: the claim is outside the proof rules: {problem}")
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in cfa.requires]
    r = to_real(enc.expr(claim.rate, env))
    upper = r < 1 if claim.form == "exp" else r <= 1
    if decide(z3.And(r >= 0, upper), enc, hyps, timeout_ms)[0] != VALID:
        raise Rejected(f"RATE: `requires` does not imply 0 <= {show_expr(claim.rate)} < 1")
    return counting_cfa(cfa, claim.count)
