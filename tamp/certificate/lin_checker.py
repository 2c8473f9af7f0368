"""Re-checking a linearity certificate (:mod:`.lin_writer`) from scratch.

1. CLAIM    the claim is rebuilt from the source (:func:`.claim.checked_claim`): its bound is
            ``--bound``, else the ``fails`` clause, which must equal the certificate's;
2. MOMENTS  the mean, the variance and the non-negativity condition of the value the claim
            reads are derived again from the program (:mod:`tamp.cfa.expected`, whose loops are
            the CFA's counted loops) and must be the certificate's: the moments are what the
            program computes, never what the certificate says (a postcondition reading several
            accumulators through one linear form ``Σ v_j·x_j`` is read over that form, whose
            variance has the covariances of increments sharing a draw: derived here again);
3. SMT      the obligations are rebuilt from the rule (``markov``, ``chebyshev``, ``markov2``,
            Markov on the square with ``E[X²] = Var + E²``, or ``pairs``, Markov on ``X(X-1)``
            of an integer with ``E[X(X-1)] = Var + E² - E``; an integer accumulator is an integer
            in the obligations, as the analysis derives from the program's types) and the
            certificate's threshold (:func:`tamp.cfa.expected.obligations`: the analysis' side
            conditions, non-negativity, the postcondition outside the tail, the budget) and each
            must be valid under ``requires`` (z3 ``unsat`` of the negation, a fresh solver each,
            with the shared lemmas and the sum lemmas; ``unknown`` rejects). The obligations
            ``linear_sums`` names are rebuilt in the form of :func:`tamp.cfa.sum_linear.linear_sums`
            (array sums by linearity; divisors taken out must be non-zero; a valid form implies
            the obligation).

With ``conditioned`` (names of the program's leading uniform draws) rules 2 and 3 are of the
program with those draws read as inputs in their supports (CONDITION, :mod:`tamp.cfa.conditioned`,
rebuilt here; SUPPORT: each integer range ``lo <= hi`` under the program's ``requires``).

The threshold is not trusted: POST checks that the postcondition holds outside the tail it
bounds. Nothing here comes from the prover (no import of :mod:`tamp.prover`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import z3

from axioms.lemmas import pointwise_lemmas, sum_order_lemmas
from axioms.terms import transcendental_apps
from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.cfa import build_cfa
from tamp.cfa.conditioned import conditioned_program, support_obligations
from tamp.cfa.expected import RULES, NotApplicable, claim_of, obligations
from tamp.core.encode import Encoder

from .claim import checked_claim, well_formed_claim
from .format import ProgramCheck, Rejected, judging
from .solver import check_obligations


class MalformedLin(ValueError):
    pass


@dataclass
class LinCert:
    name: str
    bound: A.Expr
    rule: str
    threshold: A.Expr
    mean: A.Expr
    variance: A.Expr | None
    sums: tuple[int, ...] = ()
    conditioned: tuple[str, ...] = ()


FIELDS = (
    "program",
    "method",
    "bound",
    "bound_text",
    "rule",
    "threshold",
    "mean",
    "variance",
    "obligations",
    "linear_sums",
    "conditioned",
)


def decode_lin(c: Any, where: str) -> LinCert:
    if not isinstance(c, dict) or not isinstance(c.get("program"), str):
        raise MalformedLin(f"{where}: expected an object with a 'program'")
    extra = sorted(k for k in c if k not in FIELDS)
    if extra:
        raise MalformedLin(f"{where}.{extra[0]}: unknown field (expected only {', '.join(sorted(FIELDS))})")

    def ast(key):
        try:
            return expr_from_json(c[key])
        except (SerializeError, KeyError) as exc:
            raise MalformedLin(f"{where}.{key}: {exc}") from None

    rule = c.get("rule")
    if rule not in RULES:
        raise MalformedLin(f"{where}.rule: expected one of {', '.join(RULES)}")
    var = ast("variance") if c.get("variance") is not None else None
    sums = c.get("linear_sums", [])
    if not isinstance(sums, list) or not all(type(n) is int for n in sums):
        raise MalformedLin(f"{where}.linear_sums: expected a list of obligation indices")
    cond = c.get("conditioned", [])
    if not isinstance(cond, list) or not all(isinstance(n, str) for n in cond):
        raise MalformedLin(f"{where}.conditioned: expected a list of variable names")
    return LinCert(
        c["program"], ast("bound"), rule, ast("threshold"), ast("mean"), var, tuple(sorted(set(sums))), tuple(cond)
    )


def check_lin(lc: LinCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    t0 = time.monotonic()
    out = ProgramCheck(f"{lc.name} (linearity)", False)
    with judging(out, t0):
        claim_bound, sub, cfa = checked_claim(src, prog, lc.bound, bound, inputs)
        if lc.conditioned:
            sub, cfa = _conditioned(lc, src, sub, cfa, claim_bound, out, timeout_ms, deadline)
        try:
            claim = claim_of(sub, cfa)
        except NotApplicable as exc:
            raise Rejected(
                f"MOMENTS: the moments of the claim's value are not derived from the program: {exc}"
            ) from None
        if claim.base.mean != lc.mean:
            raise Rejected("MOMENTS: the certificate's mean is not the one derived from the program")
        if claim.base.var != lc.variance:
            raise Rejected("MOMENTS: the certificate's variance is not the one derived from the program")
        out.obligations += 1
        try:
            obs = obligations(claim, lc.rule, lc.threshold, cfa.bound, sums=lc.sums)
        except NotApplicable as exc:
            raise Rejected(f"RULE: {exc}") from None
        enc = Encoder(claim.types)
        env = enc.initial_env()
        hyps = [enc.expr(r, env) for r in claim.requires]

        def sums(hs, f):
            apps = transcendental_apps(z3.And(*hs, f) if hs else f)
            return [lem for _n, lem in pointwise_lemmas(apps, enc) + sum_order_lemmas(apps, enc)] if apps else []

        check_obligations(obs, enc, env, hyps, out, timeout_ms, deadline, sums)
        out.ok = True
    return out


def _conditioned(lc: LinCert, src: A.SourceFile, sub: A.Program, cfa, claim_bound, out, timeout_ms, deadline):
    """CONDITION: the program with its leading uniform draws read as inputs, rebuilt here
    (:func:`tamp.cfa.conditioned.conditioned_program`): they must be the certificate's, and each
    integer range non-empty under the program's ``requires`` (SUPPORT); the rest of the check is
    of that program (the claim given every value of those draws: total probability)."""
    got = conditioned_program(sub, cfa.types)
    if got is None or got[1] != lc.conditioned:
        raise Rejected("CONDITION: the certificate's conditioned draws are not the program's leading uniform draws")
    enc = Encoder(dict(cfa.types))
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in cfa.requires]
    check_obligations(support_obligations(sub, cfa.types), enc, env, hyps, out, timeout_ms, deadline)
    cond = got[0]
    cond_cfa = build_cfa(cond, claim_bound, src.path, src.text)
    problem = well_formed_claim(cond_cfa)
    if problem:
        raise Rejected(f"CONDITION: the conditioned claim is outside the proof rules: {problem}")
    return cond, cond_cfa
