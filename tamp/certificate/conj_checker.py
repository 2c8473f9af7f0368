"""Re-checking a conjunct-split certificate (:mod:`tamp.prover.conjuncts`).

A conjunct-split certificate (:mod:`.writer`)::

    CONJUNCTS = {"method": "conjuncts", "program": NAME, "bound": AST, "bound_text": TEXT,
                 "sure": [{"conjunct": AST, "proof": CERT, "bound"?: AST}, …],  # bound 0 if absent
                 "rest": [AST, …], "proof": CERT,                 # with the claim's bound, or
                 "rest_bound"?: AST}                              # with this share of it
    # CERT: a failure-bound proof of any method but the product rule and this one

The rules (the argument is :mod:`tamp.prover.conjuncts.prove`'s):

1. CLAIM  the claim is rebuilt from the source (:func:`.claim.checked_claim`) and must equal the
          certificate's bound; the program is a plain failure bound (no ``reliability``,
          :func:`tamp.cfa.conjuncts.splittable`);
2. SPLIT  ``sure`` and ``rest`` are nonempty, every conjunct they name is a conjunct of the
          postcondition (:func:`tamp.cfa.conjuncts.conjuncts`, rebuilt here) and together they
          name every one of them: the runs that fail the claim fail one of the sub-claims;
3. SURE   for each sure conjunct ``c``, the program with ``ensures c fails s_c`` (``s_c`` its
          ``bound``, 0 when absent; inputs fixed alike, :func:`tamp.cfa.conjuncts.part_program`)
          is proved by its certificate, by its own method's rules, against that program rebuilt here;
4. REST   the program with ``ensures R`` (the rest, one clause each) and the bound ``s_R``
          (``rest_bound``, the claim's bound β when absent) is proved by the certificate's ``proof``;
5. SHARES when a share is given, ``Σ s_c + s_R <= β`` (:func:`tamp.cfa.conjuncts.shares_fit`) is
          valid under ``requires`` (z3).

Then Pr[fail] <= Σ s_c + s_R <= β (without shares: Σ 0 + β). Nothing of ``tamp.prover`` is imported.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.cfa.conjuncts import conjuncts, part_program, shares_fit, splittable
from tamp.core.encode import Encoder
from tamp.show import show_expr

from .claim import checked_claim
from .format import ProgramCheck, Rejected, judging
from .solver import VALID, decide


class MalformedConj(ValueError):
    pass


@dataclass
class ConjCert:
    name: str
    bound: A.Expr
    sure: List[Tuple[A.Expr, Any]] = field(default_factory=list)  # (conjunct, certificate of any method)
    rest: List[A.Expr] = field(default_factory=list)
    proof: Any = None
    #: the sure parts' shares (None: 0) and the rest's (None: the claim's bound)
    sure_bounds: List[Optional[A.Expr]] = field(default_factory=list)
    rest_bound: Optional[A.Expr] = None


def decode_conj(d: Any, where: str, decode_any: Callable[[Any, str], Any]) -> ConjCert:
    if not isinstance(d, dict):
        raise MalformedConj(f"{where}: expected an object")
    extra = set(d) - {"method", "program", "bound", "bound_text", "sure", "rest", "proof", "rest_bound"}
    if extra:
        raise MalformedConj(f"{where}: unknown field(s) {sorted(extra)}")
    if d.get("method") != "conjuncts":
        raise MalformedConj(f'{where}.method: expected "conjuncts"')
    for key in ("program", "bound", "sure", "rest", "proof"):
        if key not in d:
            raise MalformedConj(f"{where}: missing field '{key}'")
    if not isinstance(d["program"], str) or not isinstance(d["sure"], list) or not isinstance(d["rest"], list):
        raise MalformedConj(f'{where}: "program" must be a name, "sure" and "rest" lists')
    try:
        bound = expr_from_json(d["bound"])
        rest = [expr_from_json(e) for e in d["rest"]]
        sure = []
        shares: List[Optional[A.Expr]] = []
        for i, s in enumerate(d["sure"]):
            if not isinstance(s, dict) or set(s) - {"bound"} != {"conjunct", "proof"}:
                raise MalformedConj(f'{where}.sure[{i}]: expected an object with "conjunct" and "proof"')
            sure.append((expr_from_json(s["conjunct"]), decode_any(s["proof"], f"{where}.sure[{i}].proof")))
            shares.append(expr_from_json(s["bound"]) if "bound" in s else None)
        rest_bound = expr_from_json(d["rest_bound"]) if "rest_bound" in d else None
    except SerializeError as exc:
        raise MalformedConj(f"{where}: {exc}") from None
    return ConjCert(d["program"], bound, sure, rest, decode_any(d["proof"], f"{where}.proof"), shares, rest_bound)


#: ``check_part(cert, src, program, timeout_ms, deadline) -> ProgramCheck``: the checker of a
#: sub-proof's method on the rebuilt sub-claim (None: a method not allowed here)
PartCheck = Callable[[Any, A.SourceFile, A.Program, int, Any], ProgramCheck]


def check_conj(
    cc: ConjCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline, check_part: PartCheck
) -> ProgramCheck:
    """Rules 1–4 (never raises :class:`Rejected`; reports it)."""
    t0 = time.monotonic()
    out = ProgramCheck(f"{cc.name} (conjunct split)", False)
    with judging(out, t0):
        claim_bound, sub, cfa = checked_claim(src, prog, cc.bound, bound, inputs)
        if not splittable(sub):
            raise Rejected("CLAIM: the claim is not a plain failure bound of several conjuncts")
        conj = conjuncts(sub.ensures)
        named = [c for c, _ in cc.sure]
        if not named or not cc.rest:
            raise Rejected("SPLIT: both the sure conjuncts and the rest must be nonempty")
        for c in named + cc.rest:
            if c not in conj:
                raise Rejected(f"SPLIT: `{show_expr(c)}` is not a conjunct of the postcondition")
        missing = [c for c in conj if c not in named and c not in cc.rest]
        if missing:
            raise Rejected(f"SPLIT: the conjunct `{show_expr(missing[0])}` is in neither part")
        shares = [s if s is not None else A.num(0) for s in (cc.sure_bounds or [None] * len(cc.sure))]
        rest_bound = cc.rest_bound if cc.rest_bound is not None else claim_bound
        if len(shares) != len(cc.sure):
            raise Rejected("SPLIT: the sure conjuncts and their bounds do not match")
        if cc.rest_bound is not None or any(s is not None for s in cc.sure_bounds):
            _shares_fit(out, cfa, [*shares, rest_bound], timeout_ms)
        parts = [(f"SURE `{show_expr(c)}`", part_program(sub, [c], s), p) for (c, p), s in zip(cc.sure, shares)]
        parts.append(
            (f"REST `{' && '.join(show_expr(c) for c in cc.rest)}`", part_program(sub, cc.rest, rest_bound), cc.proof)
        )
        for role, part, proof in parts:
            res = check_part(proof, src, part, timeout_ms, deadline)
            out.obligations += res.obligations
            out.log.extend(res.log)
            if not res.ok:
                raise Rejected(f"{role}: {res.reason}")
        out.obligations += 1
        out.ok = True
    return out


def _shares_fit(out: ProgramCheck, cfa, shares: List[A.Expr], timeout_ms) -> None:
    """Rule SHARES: the parts' bounds add up to at most the claim's, under ``requires``."""
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in cfa.requires]
    formula = shares_fit(shares, cfa.bound)
    out.obligations += 1
    if decide(enc.expr(formula, env), enc, hyps, timeout_ms)[0] != VALID:
        raise Rejected(f"SHARES: `{show_expr(formula)}` does not follow from `requires`")
