"""Writing proof certificates: everything a "proved" failure bound rests on, as JSON.

A certificate file (``tamp prove FILE --certificate OUT.json``)::

    {"format": "tamp-certificate", "version": 1,
     "file": PATH, "source_sha256": HEX,            # the exact source bytes proved
     "claim": {"bound": TEXT or null, "inputs": {…}},  # --bound / --input used when proving
     "programs": [PROGRAM, …],                       # one per proved failure-bound program
     "probability": [PROB, …],                       # one per decided probability spec (prob_writer)
     "privacy": [PRIV, …],                           # one per decided `private` claim (privacy_writer)
     "product": [PRODUCT, …],   # failure bounds proved by the product rule (product_checker)
     "inputs_free": [NAME, …]}    # failure bounds proved with the --input values free (optional):
                                  # their proofs are of the claim for every input satisfying
                                  # `requires`, which the fixed claim instantiates

    PROGRAM = {"program": NAME, "bound": AST, "bound_text": TEXT,
               "cfa": CFA,                 # see cfa_form.cfa_form
               "automata": [{"root": ID, "exits": [ID…],
                             "nodes": [{"id", "cfa_node", "lambda": AST, "kappa": AST}],
                             "edges": [{"src", "dst", "kind": "cfa"|"split", "stmt": AST,
                                        "cfa_edge": [u, v, key] | null,
                                        "axiom": null | {"family", "param", "parts": TREE,
                                                         "bad": AST, "cost": AST, "side": [AST…]}}]}],
               "facts": [AST…],     # lemmas over the state, each valid under `requires` (re-proved)
               "termination": [{"head": ID, "kind": "rank", "rank": AST, "decreasing": [[u, v, key]…]}
                               | {"head": ID, "kind": "geometric", "sample": [u, v, key]}],
                                    # a termination argument per CFA loop head (tamp.prover.loops.termination)
               "obligations": [{"rule", "where", "status"}]}   # what the prover checked

ASTs are :mod:`lang.serialize` JSON; TREE is an axiom derivation (:mod:`.axiom_tree`).
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, Dict, List, Optional

from lang.parser import parse
from lang.serialize import to_json
from tamp.privacy import PrivacyResult
from tamp.prover.concentration.proof import ConcentrationResult
from tamp.prover.conjuncts.prove import ConjResult
from tamp.prover.expectation.prove import ExpectationResult
from tamp.prover.linearity.prove import LinearityResult
from tamp.prover.nesting.prove import NestResult
from tamp.prover.reliability.product import ProductResult
from tamp.prover.trace.result import ProofResult

from .axiom_tree import derive
from .cfa_form import cfa_form
from .conc_writer import conc_certificate
from .exp_writer import exp_certificate
from .format import FORMAT, VERSION, CertificateError, source_digest
from .lin_writer import lin_certificate
from .params import param_to_json
from .privacy_writer import privacy_certificate
from .prob_writer import program_prob_certificate


def program_certificate(result) -> Dict[str, Any]:
    """The certificate of one proved failure-bound :class:`tamp.prover.ProofResult`."""
    if result.verdict != "proved" or not result.automata or result.cfa is None:
        raise CertificateError(f"program '{result.name}' is not proved: nothing to certify")
    cfa, aut = result.cfa, result.automata[0]
    return {
        "program": result.name,
        "bound": to_json(cfa.bound),
        "bound_text": result.bound,
        "cfa": cfa_form(cfa),
        "automata": [automaton_form(aut)],
        "facts": [to_json(f) for f in result.facts],
        "termination": [r.to_json() for r in result.rankings],
        "obligations": [{"rule": o.rule, "where": o.where, "status": o.status} for o in result.obligations],
    }


def product_certificate(result) -> Dict[str, Any]:
    """The certificate of a failure bound proved by the product rule: the claim's rate and count
    and the proof of the counting claim (:mod:`.product_checker`)."""
    return {
        "method": "product",
        "program": result.name,
        "bound": to_json(result.cfa.bound),
        "bound_text": result.bound,
        "rate": to_json(result.rate),
        "count": to_json(result.count),
        "form": result.form,
        "counting": program_certificate(result.counting),
    }


def nest_certificate(result) -> Dict[str, Any]:
    """The certificate of a failure bound composed over a flag loop's iterations: the form, the
    per-iteration bound and the iteration program's proof, of any method (:mod:`.nest_checker`)."""
    return (
        {
            "method": "nesting",
            "program": result.name,
            "bound": to_json(result.cfa.bound),
            "bound_text": result.bound,
            "form": result.form,
            "per_iteration": to_json(result.per_iteration),
            "inner": failure_certificate(result.inner),
        }
        | ({"fold": result.fold} if getattr(result, "fold", 0) else {})
        | ({"period": result.period} if getattr(result, "period", 0) else {})
        | ({"shared": True} if getattr(result, "shared", False) else {})
        | ({"facts": [to_json(f) for f in result.iteration_facts]} if getattr(result, "iteration_facts", ()) else {})
        | ({"always": [to_json(f) for f in result.always]} if getattr(result, "always", None) is not None else {})
        | (
            {
                "lead": result.lead,
                "parts": {role: failure_certificate(r) for role, r in result.pieces.items() if role != "iter"},
            }
            if result.form == "lasvegas"
            else {
                "second": to_json(result.second),
                "cut": result.cut,
                "parts": {"first": failure_certificate(result.pieces["first"])},
            }
            if result.form == "stages"
            else {"parts": {"exit": failure_certificate(result.pieces["exit"])}}
            if "exit" in result.pieces
            else {}
        )
    )


def conj_certificate(result) -> Dict[str, Any]:
    """The certificate of a failure bound proved by the conjunct split: each sure conjunct with
    its proof (bound 0, or its share ``bound``), the rest and its proof (the claim's bound, or
    its share ``rest_bound``) (:mod:`.conj_checker`)."""
    return {
        "method": "conjuncts",
        "program": result.name,
        "bound": to_json(result.cfa.bound),
        "bound_text": result.bound,
        "sure": [
            {"conjunct": to_json(c), "proof": failure_certificate(p)}
            | ({"bound": to_json(result.sure_bounds[i])} if result.sure_bounds else {})
            for i, (c, p) in enumerate(result.sure)
        ],
        "rest": [to_json(c) for c in result.rest],
        "proof": failure_certificate(result.rest_proof),
    } | ({"rest_bound": to_json(result.rest_bound)} if result.rest_bound is not None else {})


def failure_certificate(p) -> Dict[str, Any]:
    """The certificate of a proved failure bound, by the method that proved it."""
    if isinstance(p, ConjResult):
        return conj_certificate(p)
    if isinstance(p, NestResult):
        return nest_certificate(p)
    if isinstance(p, ProductResult):
        return product_certificate(p)
    if isinstance(p, ConcentrationResult):
        return conc_certificate(p)
    if isinstance(p, LinearityResult):
        return lin_certificate(p)
    if isinstance(p, ExpectationResult):
        return exp_certificate(p)
    return program_certificate(p)


def automaton_form(aut) -> Dict[str, Any]:
    """The labelled failure automaton with exact ASTs and axiom derivations."""
    return {
        "root": aut.root,
        "exits": list(aut.exits),
        "nodes": [
            {"id": n.id, "cfa_node": n.cfa_node, "lambda": to_json(n.lam), "kappa": to_json(n.kappa)}
            for n in aut.nodes.values()
        ],
        "edges": [edge_form(e) for e in aut.edges],
    }


def edge_form(e) -> Dict[str, Any]:
    out = {
        "src": e.src,
        "dst": e.dst,
        "kind": e.kind,
        "stmt": to_json(e.stmt),
        "cfa_edge": list(e.cfa_edge) if e.cfa_edge is not None else None,
        "axiom": None,
    }
    if e.axiom is not None:
        ax = e.axiom
        try:
            param = param_to_json(ax.param)
        except ValueError:
            param = None
        out["axiom"] = {
            "family": ax.family,
            "param": param,
            "parts": derive(e.stmt, ax),
            "bad": to_json(ax.bad),
            "cost": to_json(ax.cost),
            "side": [to_json(s) for s in ax.side],
        }
    return out


def proved_parts(file_result) -> List[Any]:
    """The proved failure-bound results of a :class:`tamp.results.FileResult` (mixed programs
    contribute their failure-bound part)."""
    out = []
    for r in file_result.programs:
        for part in r.parts:
            if isinstance(part, ProofResult) and part.verdict == "proved":
                out.append(part)
    return out


def file_certificate(
    file_result, source: bytes, bound: Optional[str] = None, inputs: Optional[Dict[str, Any]] = None
) -> Dict[str, Any]:
    """The whole certificate file for a ``tamp prove`` run over ``source`` (the file's bytes)."""
    out = {
        "format": FORMAT,
        "version": VERSION,
        "file": file_result.file,
        "source_sha256": source_digest(source),
        "claim": {"bound": bound, "inputs": _jsonable(inputs or {})},
    }
    certs = [failure_certificate(p) for p in proved_parts(file_result)]
    out["programs"] = [
        c
        for c in certs
        if c.get("method") not in ("concentration", "expectation", "product", "nesting", "linearity", "conjuncts")
    ]
    product = [c for c in certs if c.get("method") == "product"]
    if product:  # failure bounds proved by the product rule (see .product_checker)
        out["product"] = product
    conj = [c for c in certs if c.get("method") == "conjuncts"]
    if conj:  # sure conjuncts and the rest proved apart (see .conj_checker)
        out["conjuncts"] = conj
    nesting = [c for c in certs if c.get("method") == "nesting"]
    if nesting:  # failure bounds composed over a loop's iterations (see .nest_checker)
        out["nesting"] = nesting
    conc = [c for c in certs if c.get("method") == "concentration"]
    if conc:  # failure bounds proved by concentration (see .conc_writer)
        out["concentration"] = conc
    lin = [c for c in certs if c.get("method") == "linearity"]
    if lin:  # failure bounds proved by Markov or Chebyshev by linearity (see .lin_writer)
        out["linearity"] = lin
    expect = [c for c in certs if c.get("method") == "expectation"]
    if expect:  # failure bounds proved by expected failure (see .exp_writer)
        out["expectation"] = expect
    free = sorted({p.name for p in proved_parts(file_result) if p.inputs_free}) if inputs else []
    if free:  # proofs of the claim with the inputs free: the fixed claim follows by instantiation
        out["inputs_free"] = free
    out["probability"], out["not_certified"] = probability_certificates(file_result, source, inputs)
    out["not_certified"] += uncertified_failure_parts(file_result)
    priv, skipped = privacy_certificates(file_result, source, inputs)
    if priv:  # privacy claims proved or refuted (see .privacy_writer)
        out["privacy"] = priv
    out["not_certified"] += skipped
    return out


def privacy_certificates(file_result, source: bytes, inputs: Optional[Dict[str, Any]] = None):
    """The certificates of the run's decided privacy claims (a proof with ``--input`` records the
    public inputs it fixes, see :mod:`.privacy_writer`), and a note for each one not certified."""
    parts = [
        p
        for r in file_result.programs
        for p in r.parts
        if isinstance(p, PrivacyResult) and p.verdict in ("proved", "violated")
    ]
    if not parts:
        return [], []
    src = parse(source.decode("utf-8"), file_result.file)
    done, skipped = [], []
    for p in parts:
        prog = src.program(p.name)
        try:
            if prog is None:
                raise CertificateError(f"program '{p.name}' is not in {file_result.file}")
            done.append(privacy_certificate(p, prog))
        except CertificateError as exc:
            skipped.append({"program": p.name, "reason": str(exc)})
    return done, skipped


def uncertified_failure_parts(file_result) -> List[Dict[str, str]]:
    """A note for each proved failure bound that has no certificate: one decided exactly as a
    conditional probability (a conditioning ``assume`` at fixed inputs, :func:`tamp.api.decide_conditional`)."""
    out = []
    for r in file_result.programs:
        for part in r.parts:
            if part.kind == "failure-bound" and part.verdict == "proved" and not isinstance(part, ProofResult):
                out.append(
                    {
                        "program": part.name,
                        "reason": f"{part.name}: its failure bound has a conditioning `assume` and was "
                        "decided exactly as a conditional probability, which has no certificate format",
                    }
                )
    return out


def decided_probability_parts(file_result) -> List[Any]:
    """The decided (proved or violated) probability results of a :class:`tamp.results.FileResult`."""
    out = []
    for r in file_result.programs:
        for part in r.parts:
            if part.kind == "probability" and part.verdict in ("proved", "violated"):
                out.append(part)
    return out


def probability_certificates(file_result, source: bytes, inputs: Optional[Dict[str, Any]] = None):
    """The probability certificates (:mod:`.prob_writer`) of the run's decided probability results,
    and a note for each decided result that could not be certified (``[{"program", "reason"}]``)."""
    parts = decided_probability_parts(file_result)
    if not parts:
        return [], []

    text = source.decode("utf-8")
    src = parse(text, file_result.file)
    done, skipped = [], []
    for p in parts:
        try:
            prog = src.program(p.name)
            if prog is None:
                raise CertificateError(f"program '{p.name}' is not in {file_result.file}")
            done.append(program_prob_certificate(prog, p.verdict, inputs, file_result.file, text))
        except CertificateError as exc:
            skipped.append({"program": p.name, "reason": str(exc)})
    return done, skipped


def _jsonable(inputs: Dict[str, Any]) -> Dict[str, Any]:
    def conv(v):
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, Fraction):
            return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
        return v

    return {k: conv(v) for k, v in inputs.items()}


def write_certificate(path: str, cert: Dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(cert, fh, indent=1)
        fh.write("\n")
