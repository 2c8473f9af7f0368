"""Re-checking a conjunct-split certificate (:mod:`tamp.prover.conjuncts`).

A conjunct-split certificate (:mod:`.writer`)::

    CONJUNCTS = {"method": "conjuncts", "program": NAME, "bound": AST, "bound_text": TEXT,
                 "sure": [{"conjunct": AST, "proof": CERT}, …],   # each with bound 0
                 "rest": [AST, …], "proof": CERT}                 # with the claim's bound
    # CERT: a failure-bound proof of any method but the product rule and this one

The rules (the argument is :mod:`tamp.prover.conjuncts.prove`'s):

1. CLAIM  the claim is rebuilt from the source (:func:`.claim.checked_claim`) and must equal the
          certificate's bound; the program is a plain failure bound (no ``reliability``,
          :func:`tamp.cfa.conjuncts.splittable`);
2. SPLIT  ``sure`` and ``rest`` are nonempty, every conjunct they name is a conjunct of the
          postcondition (:func:`tamp.cfa.conjuncts.conjuncts`, rebuilt here) and together they
          name every one of them: the runs that fail the claim fail one of the sub-claims;
3. SURE   for each sure conjunct ``c``, the program with ``ensures c fails 0`` (inputs fixed
          alike, :func:`tamp.cfa.conjuncts.part_program`) is proved by its certificate, by its own
          method's rules, against that program rebuilt here;
4. REST   the program with ``ensures R`` (the rest, one clause each) and the claim's bound is
          proved by the certificate's ``proof``.

Then Pr[fail] <= Σ 0 + β. Nothing of ``tamp.prover`` is imported.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, List, Tuple

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.cfa.conjuncts import conjuncts, part_program, splittable
from tamp.show import show_expr

from .claim import checked_claim
from .format import ProgramCheck, Rejected, judging


class MalformedConj(ValueError):
    pass


@dataclass
class ConjCert:
    name: str
    bound: A.Expr
    sure: List[Tuple[A.Expr, Any]] = field(default_factory=list)  # (conjunct, certificate of any method)
    rest: List[A.Expr] = field(default_factory=list)
    proof: Any = None


def decode_conj(d: Any, where: str, decode_any: Callable[[Any, str], Any]) -> ConjCert:
    if not isinstance(d, dict):
        raise MalformedConj(f"{where}: expected an object")
    extra = set(d) - {"method", "program", "bound", "bound_text", "sure", "rest", "proof"}
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
        for i, s in enumerate(d["sure"]):
            if not isinstance(s, dict) or set(s) != {"conjunct", "proof"}:
                raise MalformedConj(f'{where}.sure[{i}]: expected an object with "conjunct" and "proof"')
            sure.append((expr_from_json(s["conjunct"]), decode_any(s["proof"], f"{where}.sure[{i}].proof")))
    except SerializeError as exc:
        raise MalformedConj(f"{where}: {exc}") from None
    return ConjCert(d["program"], bound, sure, rest, decode_any(d["proof"], f"{where}.proof"))


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
        claim_bound, sub, _cfa = checked_claim(src, prog, cc.bound, bound, inputs)
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
        parts = [(f"SURE `{show_expr(c)}`", part_program(sub, [c], A.num(0)), p) for c, p in cc.sure]
        parts.append(
            (f"REST `{' && '.join(show_expr(c) for c in cc.rest)}`", part_program(sub, cc.rest, claim_bound), cc.proof)
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
