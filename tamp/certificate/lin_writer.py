"""Certificates of failure bounds proved by Markov or Chebyshev on moments computed by linearity
of expectation (:mod:`tamp.prover.linearity`).

    LIN = {"program": NAME, "method": "linearity", "bound": AST, "bound_text": TEXT,
           "rule": "markov" | "chebyshev" | "markov2" | "pairs",  # markov2: Markov on X * X,
                                                         # pairs: Markov on X * (X - 1), X an integer
           "threshold": AST,                     # t of X < t (or X * X < t), a of |X - E| < a
           "mean": AST, "variance": AST | null,                  # the moments the prover computed
           "linear_sums": [INT],   # optional: the obligations (indices) asked with their array
                                   # sums by linearity (tamp.cfa.sum_linear: constants out, terms apart)
           "conditioned": [NAME],  # optional: the leading uniform draws read as inputs
                                   # (tamp.cfa.conditioned: the claim given each of their values)
           "obligations": [{"rule", "where", "status"}]}         # what the prover checked

The checker (:mod:`.lin_checker`) derives the moments again from the source, requires them to be
the certificate's, rebuilds every obligation from the rule and the threshold and decides each.
"""

from __future__ import annotations

from typing import Any

from lang.serialize import to_json

from .format import CertificateError


def lin_certificate(result) -> dict[str, Any]:
    proof = getattr(result, "proof", None)
    if result.verdict != "proved" or proof is None:
        raise CertificateError(f"program '{result.name}' is not proved: nothing to certify")
    b = proof.claim.base
    out: dict[str, Any] = {
        "program": result.name,
        "method": "linearity",
        "bound": to_json(proof.beta),
        "bound_text": result.bound,
        "rule": proof.rule,
        "threshold": to_json(proof.threshold),
        "mean": to_json(b.mean),
        "variance": to_json(b.var) if b.var is not None else None,
        "obligations": [{"rule": k, "where": w, "status": "valid"} for k, w, _f in proof.obligations],
    }
    if getattr(proof, "sums", ()):
        out["linear_sums"] = list(proof.sums)
    if getattr(proof, "conditioned", ()):
        out["conditioned"] = list(proof.conditioned)
    return out
