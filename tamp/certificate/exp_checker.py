"""Re-checking an expected-failure certificate (:mod:`.exp_writer`) from scratch.

1. CLAIM   the claim is rebuilt from the source: its bound is ``--bound``, else the ``fails``
           clause (``1 - E`` for ``reliability E``), which must equal the certificate's;
2. SHAPE   the program must be inside the engine's rules again (discrete samples only, no
           tuple writes, unreliable operators only where their coins can be written before
           the statement, :mod:`tamp.cfa.unreliable`, no conditioning);
3. SMT     the pre-expectation of the program is recomputed with the certificate's loop proofs
           by the checker's own rules (:mod:`.exp_rules`), and every obligation — each loop's
           INDUCT and TERM, the BUDGET — must be valid under ``requires`` (z3 ``unsat`` of the
           negation with the log/exp and product lemmas, a fresh solver each; ``unknown``
           rejects). A loop without a proof, or a proof for no loop, rejects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Dict

import z3

from axioms.exp_split import split_lemmas
from axioms.lemmas import product_lemmas
from axioms.terms import transcendental_apps
from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.core.encode import Encoder

from .claim import checked_claim
from .exp_rules import LoopAnnot, Outside, claim_of, obligations
from .format import ProgramCheck, Rejected, judging
from .solver import check_obligations


class MalformedExp(ValueError):
    pass


@dataclass
class ExpCert:
    name: str
    bound: A.Expr
    loops: Dict[int, LoopAnnot]


def decode_exp(c: Any, where: str) -> ExpCert:
    def ast(x, w):
        try:
            return expr_from_json(x)
        except SerializeError as exc:
            raise MalformedExp(f"{w}: {exc}") from None

    def keys(d, allowed, w):
        extra = sorted(k for k in d if k not in allowed) if isinstance(d, dict) else []
        if extra:
            raise MalformedExp(f"{w}.{extra[0]}: unknown field (expected only {', '.join(sorted(allowed))})")

    if not isinstance(c, dict) or not isinstance(c.get("program"), str):
        raise MalformedExp(f"{where}: expected an object with a 'program'")
    keys(c, ("program", "method", "bound", "bound_text", "loops", "obligations"), where)
    loops: Dict[int, LoopAnnot] = {}
    try:
        for i, lp in enumerate(c.get("loops") or []):
            w = f"{where}.loops[{i}]"
            keys(lp, ("loop", "core", "termination", "measure", "chance"), w)
            k = lp["loop"]
            if isinstance(k, bool) or not isinstance(k, int) or k in loops:
                raise MalformedExp(f"{w}.loop: expected a loop number given once")
            if lp["termination"] not in ("rank", "exit", "variant"):
                raise MalformedExp(f'{w}.termination: expected "rank", "exit" or "variant"')
            if ("chance" in lp) != (lp["termination"] == "variant"):
                raise MalformedExp(f"{w}.chance: given exactly for a variant")
            chance = ast(lp["chance"], f"{w}.chance") if "chance" in lp else None
            loops[k] = LoopAnnot(
                ast(lp["core"], f"{w}.core"), str(lp["termination"]), ast(lp["measure"], f"{w}.measure"), chance
            )
        return ExpCert(c["program"], ast(c["bound"], f"{where}.bound"), loops)
    except (KeyError, TypeError) as exc:
        raise MalformedExp(f"{where}: malformed expected-failure proof ({exc})") from None


def check_exp(ec: ExpCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline):
    t0 = time.monotonic()
    out = ProgramCheck(f"{ec.name} (expected failure)", False)
    with judging(out, t0):
        claim_bound, sub, cfa = checked_claim(src, prog, ec.bound, bound, inputs)
        if any(A.contains(e, A.Hole) for e in prog.ensures):
            raise Rejected("an `ensures` with `?` has no expected-failure certificate")
        try:
            claim = claim_of(sub, cfa)
        except Outside as exc:
            raise Rejected(f"SHAPE: the program is outside the expected-failure rules: {exc}") from None
        try:
            used, obs = obligations(claim, cfa.bound, ec.loops)
        except Outside as exc:
            raise Rejected(f"SHAPE: {exc}") from None
        if set(ec.loops) != set(used):  # a proof of a loop that is unrolled, or of no loop
            raise Rejected("SHAPE: the certificate's loop proofs are not those of the program's loops")
        out.obligations += 1
        enc = Encoder(claim.types)
        env = enc.initial_env()
        hyps = [enc.expr(r, env) for r in claim.requires]

        def lemmas(hs, fz):  # the product lemmas (exp(a) = exp(b)·exp(a-b), 1 + d <= exp(d)) for this formula
            apps = transcendental_apps(z3.And(*hs, fz)) if enc.has_apps else []
            return [lem for _n, lem in product_lemmas(apps, enc)]

        try:
            check_obligations(obs, enc, env, hyps, out, timeout_ms, deadline, lemmas)
        except Rejected:
            if ec.loops:
                raise
            # loop-free: a second round with exp(a + b) = exp(a)·exp(b) (axioms.exp_split), as the prover asks it
            out.obligations, out.log = 1, []

            def split(hs, fz):
                apps = transcendental_apps(z3.And(*hs, fz)) if enc.has_apps else []
                return lemmas(hs, fz) + [lem for _n, lem in split_lemmas(apps, enc)]

            check_obligations(obs, enc, env, hyps, out, timeout_ms, deadline, split)
        out.ok = True
    return out
