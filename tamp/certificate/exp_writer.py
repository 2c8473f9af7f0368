"""Certificates of failure bounds proved by expected failure (:mod:`tamp.prover.expectation.prove`).

    EXP = {"program": NAME, "method": "expectation",
           "bound": AST, "bound_text": TEXT,               # the bound proved
           "loops": [{"loop": K,                           # the loop's number in pre-order
                      "core": AST,                         # its invariant expectation
                      "termination": "rank" | "exit" | "variant",  # the termination argument
                      "measure": AST,                      # the rank r, the exit chance δ, or the variant V
                      "chance": AST}],                     # (variant only) its progress chance ε
           "obligations": [{"rule", "where", "status"}]}   # what the prover checked

The checker (:mod:`.exp_checker`) recomputes the pre-expectation of the program from the
source with these loop proofs, rebuilds every obligation (each loop's INDUCT and TERM, the
BUDGET) and decides each with a fresh solver; nothing else is read from the file.
"""

from __future__ import annotations

from typing import Any

from lang.serialize import to_json

from .format import CertificateError


def exp_certificate(result) -> dict[str, Any]:
    proof = getattr(result, "proof", None)
    if result.verdict != "proved" or proof is None:
        raise CertificateError(f"program '{result.name}' is not proved: nothing to certify")
    return {
        "program": result.name,
        "method": "expectation",
        "bound": to_json(proof.beta),
        "bound_text": result.bound,
        "loops": [_loop(k, a) for k, a in sorted(proof.annots.items())],
        "obligations": [{"rule": k, "where": w, "status": "valid"} for k, w, _f in proof.obligations],
    }


def _loop(k: int, a) -> dict[str, Any]:
    out = {"loop": k, "core": to_json(a.core), "termination": a.term, "measure": to_json(a.measure)}
    if getattr(a, "chance", None) is not None:  # a probabilistic variant's progress chance
        out["chance"] = to_json(a.chance)
    return out
