"""Certificates of failure bounds proved by concentration (:mod:`tamp.prover.concentration.proof`).

    CONC = {"program": NAME, "method": "concentration",
            "bound": AST, "bound_text": TEXT,          # the bound proved (inferred for `fails ?`)
            "margin": AST | null,                      # the inferred margin for an ensures `?`
            "sums": [{"family", "lines": [INT…], "blocks": [{"count": AST, "param": AST}]}],
            "applications": [{"sum": K, "rule": NAME, "mode": "both"|"upper"|"lower",
                              "u": AST, "f": AST}],    # one per sum: the rule, margin, probability
            "loops": [{"head": NODE, "counter": NAME, "lo": AST, "hi": AST,
                       "obligations": ["bound unchanged", "counter moved once", "loop runs"]}],
            "combination": [RATIONAL…],               # optional: S$1 = Σ a_k·R$k (see below)
            "caps": true,                             # optional: the queries get ``sum-cap`` (below)
            "obligations": [{"rule", "where", "status"}]}   # what the prover checked

``loops`` are the counted loops the sums run over (:func:`tamp.cfa.loops.counted_loop`): the
counter runs over [lo, hi) (over the state on entry), so the loop makes ``hi - lo`` iterations
and ends. The checker derives them again from the program's CFA and rejects a certificate whose
loops differ; their obligations are the graph checks (the bound reads nothing the loop writes;
the counter moves by one exactly once per iteration) and ``lo <= hi`` under ``requires``.

``combination`` (present only for a proof over a linear combination of the program's independent
sums, :func:`axioms.concentration.combined_blocks`): ``sums`` then holds the one combined sum,
and the checker recomputes it from the program's sums and these coefficients.

``caps`` (present only when true): every obligation is decided with ``sum-cap`` and ``sum-sign``
(:func:`axioms.lemmas.cap_lemmas`: a sum of terms each at most 1 is at most its number of
terms) for the sums it reads, as the prover's last pass decided them.

The checker (:mod:`.conc_checker`) re-recognises the sums from the source, rebuilds every
obligation (shape, each rule's side conditions, postcondition, budget) from the rule library
and the applications, and decides each with a fresh solver.
"""

from __future__ import annotations

from typing import Any

from lang.serialize import to_json

from .format import CertificateError


def conc_certificate(result) -> dict[str, Any]:

    proof = getattr(result, "proof", None)
    if result.verdict != "proved" or proof is None:
        raise CertificateError(f"program '{result.name}' is not proved: nothing to certify")
    return {
        "program": result.name,
        "method": "concentration",
        "bound": to_json(proof.beta),
        "bound_text": result.bound,
        "margin": to_json(result.margin) if result.margin is not None else None,
        "sums": [
            {
                "family": s.family,
                "lines": list(s.lines),
                "blocks": [{"count": to_json(b.count), "param": to_json(b.param)} for b in s.blocks],
            }
            for s in proof.claim.sums
        ],
        "applications": [
            {"sum": a.sum, "rule": a.rule, "mode": a.mode, "u": to_json(a.u), "f": to_json(a.f)} for a in proof.apps
        ],
        "loops": [loop_json(cl) for cl in proof.claim.loops],
        **combination_json(proof.claim),
        **({"caps": True} if getattr(proof, "caps", False) else {}),
        "obligations": [{"rule": k, "where": w, "status": "valid"} for k, w, _f in proof.obligations],
    }


def combination_json(claim) -> dict[str, Any]:
    """``{"combination": [TEXT…]}`` (the rational coefficients a_k of ``S$1 = Σ a_k·R$k``, the
    program's sums ``R$k`` in the order the checker recognises them) for a combined claim, else
    nothing: certificates of one-sum proofs are unchanged."""
    coefs = getattr(claim, "combination", None)
    return {} if coefs is None else {"combination": [str(a) for a in coefs]}


LOOP_OBLIGATIONS = ["bound unchanged", "counter moved once", "loop runs"]


def loop_json(cl) -> dict[str, Any]:
    """One counted loop (:class:`tamp.cfa.loops.CountedLoop`) as the certificate states it."""
    return {
        "head": cl.head,
        "counter": cl.counter,
        "lo": to_json(cl.lo),
        "hi": to_json(cl.hi),
        "obligations": list(LOOP_OBLIGATIONS),
    }
