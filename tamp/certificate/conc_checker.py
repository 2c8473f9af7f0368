"""Re-checking a concentration certificate (:mod:`.conc_writer`) from scratch.

1. CLAIM   the claim is rebuilt from the source: its bound is ``--bound``, else the ``fails``
           clause (which must equal the certificate's), except that ``fails ?`` accepts the
           certificate's bound as the answer; an ``ensures`` with ``?`` gets the certificate's
           margin in its place (and only then may the certificate carry one);
2. SHAPE   the program's sums are recognised again (:mod:`tamp.prover.concentration.shapes`) and must be
           the certificate's (family, blocks);
3. SMT     every obligation is rebuilt from the rule library (:mod:`axioms.concentration`) and
           the certificate's applications — never read from it — and must be valid under
           ``requires`` (z3 ``unsat`` of the negation, a fresh solver each; ``unknown`` rejects).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import z3

from axioms.concentration import Block
from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.cfa.loops import NotCounted, counted_loop
from tamp.prover.base.smt import Encoder
from tamp.prover.concentration.proof import Application, claim_of, obligations
from tamp.prover.concentration.shapes import NotApplicable

from .claim import checked_claim
from .format import ProgramCheck, Rejected
from .solver import check_obligations


class MalformedConc(ValueError):
    pass


@dataclass
class ConcCert:
    name: str
    bound: A.Expr
    margin: A.Expr | None
    sums: list[Any]  # [(family, [Block…])]
    applications: list[Any]  # [tamp.prover.concentration.proof.Application]
    loops: list[Any] = dataclasses.field(default_factory=list)  # [(head, counter, lo, hi)]


def decode_conc(c: Any, where: str) -> ConcCert:
    def ast(x, w):
        try:
            return expr_from_json(x)
        except SerializeError as exc:
            raise MalformedConc(f"{w}: {exc}") from None

    def keys(d, allowed, w):  # a key the format does not have: a typo or a tampered file
        extra = sorted(k for k in d if k not in allowed) if isinstance(d, dict) else []
        if extra:
            raise MalformedConc(f"{w}.{extra[0]}: unknown field (expected only {', '.join(sorted(allowed))})")

    if not isinstance(c, dict) or not isinstance(c.get("program"), str):
        raise MalformedConc(f"{where}: expected an object with a 'program'")
    keys(
        c,
        ("program", "method", "bound", "bound_text", "margin", "sums", "applications", "loops", "obligations"),
        where,
    )
    for i, lp in enumerate(c.get("loops") or []):
        keys(lp, ("head", "counter", "lo", "hi", "obligations"), f"{where}.loops[{i}]")
    for i, s in enumerate(c.get("sums") or []):
        keys(s, ("family", "lines", "blocks"), f"{where}.sums[{i}]")
        for j, b in enumerate(s.get("blocks") or [] if isinstance(s, dict) else []):
            keys(b, ("count", "param"), f"{where}.sums[{i}].blocks[{j}]")
    for i, a in enumerate(c.get("applications") or []):
        keys(a, ("sum", "rule", "mode", "u", "f"), f"{where}.applications[{i}]")
    try:
        sums = [
            (
                str(s["family"]),
                [
                    Block(ast(b["count"], f"{where}.sums[{i}]"), ast(b["param"], f"{where}.sums[{i}]"))
                    for b in s["blocks"]
                ],
            )
            for i, s in enumerate(c["sums"])
        ]
        apps = [
            Application(
                int(a["sum"]),
                str(a["rule"]),
                str(a["mode"]),
                ast(a["u"], f"{where}.applications[{i}].u"),
                ast(a["f"], f"{where}.applications[{i}].f"),
            )
            for i, a in enumerate(c["applications"])
        ]
        margin = ast(c["margin"], f"{where}.margin") if c.get("margin") is not None else None
        loops = [
            (
                int(lp["head"]),
                str(lp["counter"]),
                ast(lp["lo"], f"{where}.loops[{i}].lo"),
                ast(lp["hi"], f"{where}.loops[{i}].hi"),
            )
            for i, lp in enumerate(c.get("loops") or [])
        ]
        return ConcCert(c["program"], ast(c["bound"], f"{where}.bound"), margin, sums, apps, loops)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, MalformedConc):
            raise
        raise MalformedConc(f"{where}: malformed concentration proof ({exc})") from None


def check_conc(cc: ConcCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline):
    t0 = time.monotonic()
    out = ProgramCheck(f"{cc.name} (concentration)", False)
    try:
        has_hole = any(A.contains(e, A.Hole) for e in prog.ensures)
        if has_hole != (cc.margin is not None):
            raise Rejected(
                "the certificate's margin does not match the source (an `ensures` with `?` needs "
                "exactly one inferred margin)"
            )
        if cc.margin is not None:  # the source has a hole (checked just above)
            # deferred on purpose: it loads sympy (~1 s); only this step needs it
            from tamp.prover.infer.search import fill_hole

            margin = cc.margin
            prog = dataclasses.replace(prog, ensures=tuple(fill_hole(e, margin) for e in prog.ensures))
        claim_bound, sub, cfa = checked_claim(src, prog, cc.bound, bound, inputs)
        try:
            claim = claim_of(sub, cfa)
        except NotApplicable as exc:
            raise Rejected(f"SHAPE: the program is not a sum of independent draws: {exc}") from None
        loops = [(cl.head, cl.counter, cl.lo, cl.hi) for cl in claim.loops]
        for head, counter, lo, hi in cc.loops:
            try:  # the certificate's loop, derived again from the program's CFA
                cl = counted_loop(cfa, head)
            except (NotCounted, KeyError) as exc:
                raise Rejected(f"LOOP: node {head} is not a counted loop: {exc}") from None
            if (cl.counter, cl.lo, cl.hi) != (counter, lo, hi):
                raise Rejected(f"LOOP: {counter} at node {head}: the certificate's range is not the loop's")
        if loops != cc.loops:
            raise Rejected("LOOP: the certificate's loops are not the loops the program's sums run over")
        out.obligations += len(loops)
        mine = [(s.family, list(s.blocks)) for s in claim.sums]
        if mine != [(f, list(b)) for f, b in cc.sums]:
            raise Rejected("SHAPE: the certificate's sums are not the ones recognised in the program")
        out.obligations += 2
        try:
            obs = obligations(claim, cc.applications, cfa.bound)
        except ValueError as exc:
            raise Rejected(f"RULE: {exc}") from None
        enc = Encoder(claim.types)
        env = enc.initial_env()
        hyps = [enc.expr(r, env) for r in claim.requires]
        check_obligations(obs, enc, env, hyps, out, timeout_ms, deadline)
        out.ok = True
    except Rejected as exc:
        out.reason = str(exc)
    except z3.Z3Exception as exc:
        out.reason = f"a formula of the certificate cannot be built: {exc}"
    out.seconds = time.monotonic() - t0
    return out
