"""Writing a privacy certificate from a decided ``private`` claim (see :mod:`.privacy_checker`).

A proved claim's certificate holds its alignment (per sampling statement, by position: the
alignment's kind and constant, and the draw's cost term), the loop invariants (per loop, by
position, in the invariant language of :mod:`.privacy_checker`) and the number of obligations the
engine proved — or, for a proof by cases (``neighbours`` a disjunction), a list ``cases`` of such
proofs, each with the disjunct it assumes. A proof made with public inputs fixed by ``--input``
records them in ``inputs`` (numbers other than integers as exact ``"p/q"`` text): the checker
assumes them, and accepts the proof only for a claim that fixes them alike. A violated claim's
holds its counterexample (the two inputs, the event and the
probability intervals). This module takes the engine's results, so it is not on the checking
path: the checker trusts none of it and regenerates every obligation.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Dict

from lang import ast as A
from lang.parser import parse_expr
from lang.printer import print_expr
from tamp.privacy import PrivacyResult
from tamp.privacy.product import shear_shift

from .format import CertificateError
from .privacy_checker import cost_text

#: what a counterexample certificate holds (the checker accepts exactly these)
COUNTEREXAMPLE_FIELDS = ("inputs", "neighbour", "event", "probability", "neighbour_probability")


def privacy_certificate(result: PrivacyResult, prog: A.Program) -> Dict[str, Any]:
    """The certificate of one decided (proved or violated) privacy claim."""
    claim = prog.private
    if claim is None or result.verdict not in ("proved", "violated"):
        raise CertificateError(f"program '{result.name}' has no decided privacy claim: nothing to certify")
    out: Dict[str, Any] = {
        "program": result.name,
        "verdict": result.verdict,
        "epsilon": result.epsilon,
        "delta": None if claim.delta is None else print_expr(claim.delta),
    }
    if result.verdict == "violated":
        if result.counterexample is None:
            raise CertificateError(f"program '{result.name}': the violation has no counterexample")
        # the witness itself; the ε value it was found at is the inputs' own (``epsilon_value``
        # is for the report), so the certificate holds exactly what the checker recomputes
        out["counterexample"] = {k: v for k, v in result.counterexample.items() if k in COUNTEREXAMPLE_FIELDS}
        return out
    if result.cases:  # a proof by cases: one proof per disjunct of `neighbours`
        out["cases"] = [dict(neighbours=c.case, **_proof(c)) for c in result.cases]
    else:
        out.update(_proof(result))
    out["obligations"] = len(result.obligations)
    if result.fixed_inputs:  # a proof at these public inputs only (see .privacy_checker)
        out["inputs"] = {k: _json_value(v) for k, v in sorted(result.fixed_inputs.items())}
    return out


def _json_value(v: Any) -> Any:
    """An input value as JSON: exact (a non-integer number as ``"p/q"`` text)."""
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    return v


def _proof(result: PrivacyResult) -> Dict[str, Any]:
    """One proof's alignment, pointwise output and loop invariants."""
    steps = []
    for a in result.alignment:
        if a.pos is None:
            raise CertificateError(f"program '{result.name}': a draw without a source position")
        d = parse_expr(a.dist)
        assert isinstance(d, A.Call)
        m, s = (print_expr(d.args[0]), print_expr(d.args[1])) if len(d.args) == 2 else ("", "")
        steps.append(
            {
                "line": a.pos.line,
                "col": a.pos.col,
                "target": a.target,
                "dist": a.dist,
                "kind": a.kind,
                "c": a.c,
                "cost": cost_text(a.kind, m, s, d.func),
            }
        )
        if a.kind == "shear":  # the value shift on the output's iteration (the checker reads it)
            steps[-1]["shift"] = shear_shift(a.target)
    return {
        "pointwise": result.pointwise,
        "alignment": sorted(steps, key=lambda s: (s["line"], s["col"])),
        "loops": [
            {"line": line, "col": col, "invariants": list(invs)}
            for (line, col), invs in sorted(result.loop_invariants.items())
        ],
    }
