"""Re-checking a concentration certificate (:mod:`.conc_writer`) from scratch.

1. CLAIM   the claim is rebuilt from the source: its bound is ``--bound``, else the ``fails``
           clause (which must equal the certificate's), except that ``fails ?`` accepts the
           certificate's bound as the answer; an ``ensures`` with ``?`` gets the certificate's
           margin in its place (and only then may the certificate carry one);
2. LOOP    every loop the sums run over is derived again from the program's CFA
           (:func:`tamp.cfa.loops.counted_loop`: the bound reads nothing the loop writes, the
           counter moves by one once per iteration) and must be the certificate's (counter,
           range): the trip counts are what the loops do, never what the certificate says;
3. SHAPE   the program's sums are derived again from the program (:mod:`tamp.cfa.sums`, whose
           loops are those of step 2) and must be the certificate's (family, blocks);
   COMBINATION  a certificate with ``combination`` (coefficients a_k) proves the claim over
           the one sum ``S$1 = Σ a_k·R$k`` of the program's sums: that sum is built here
           (:func:`_combined`) from the sums of step 3 and the coefficients only;
4. SMT     (with ``caps``: each query also gets ``sum-cap``/``sum-sign``, :func:`axioms.lemmas.cap_lemmas`)
           every obligation is rebuilt here from the rule library (:mod:`axioms.concentration`)
           and the certificate's applications — never read from it — and must be valid under
           ``requires`` (z3 ``unsat`` of the negation, a fresh solver each; ``unknown`` rejects).
           Among them SHAPE: each loop runs ``lo <= hi`` (its trip count is ``hi - lo``).

Nothing here comes from the prover (no import of :mod:`tamp.prover`): the claim and the
obligations are the checker's own, encoded by the one encoding of the language
(:mod:`tamp.core.encode`), so a mistake in the prover's concentration engine is not repeated in
its check.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from axioms import concentration as C
from axioms.concentration import Block
from axioms.lemmas import cap_lemmas
from axioms.terms import transcendental_apps
from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from lang.walk import DESCEND, Transformer, free_vars, substitute
from tamp.cfa.loops import CountedLoop, NotCounted, counted_loop
from tamp.cfa.sums import Block as SumBlock
from tamp.cfa.sums import NoiseSum, NotApplicable, exit_value, recognise
from tamp.core.encode import Encoder

from .claim import checked_claim
from .format import ProgramCheck, Rejected, judging
from .solver import check_obligations


class MalformedConc(ValueError):
    pass


ONE = A.num(1)


@dataclass(frozen=True)
class Application:
    """One rule application of the certificate: sum ``sum`` by ``rule`` in ``mode`` (``upper``
    ``S < u``, ``lower`` ``-S < u``, ``both`` ``|S| < u``), margin ``u``, probability ``f``."""

    sum: int
    rule: str
    mode: str
    u: A.Expr
    f: A.Expr


@dataclass
class _Claim:
    requires: list[A.Expr]
    post: A.Expr  # the ensures over the inputs and the centred sums S$k
    sums: list[NoiseSum]
    side: list[tuple[str, A.Expr]]
    types: dict[str, A.Type]
    loops: list[CountedLoop]


def _s(k: int) -> str:
    return f"S${k + 1}"


def _and(es: list[A.Expr]) -> A.Expr:
    out: A.Expr | None = None
    for e in es:
        out = e if out is None else A.Binary("&&", out, e)
    return out if out is not None else A.BoolLit(True)


def _claim(prog: A.Program, cfa) -> _Claim:
    """The claim over the program's sums: every variable the postcondition reads replaced by its
    exit value ``d + c·S$k`` (:mod:`tamp.cfa.sums`)."""
    shape = recognise(prog, cfa)
    post = _and(list(cfa.ensures))
    params = {p.name for p in cfa.params}
    m: dict[str, A.Expr] = {}
    sums: list[NoiseSum] = []
    for x in sorted(set(free_vars(post)) - params):
        val = exit_value(shape.env.get(x), sums, _s)
        if val is not None:
            m[x] = val
        else:
            raise NotApplicable(f"the postcondition reads '{x}', which is not a sum of independent draws")
    if not sums:
        raise NotApplicable("the postcondition reads no sum of random draws")
    types = dict(cfa.types)
    for k in range(len(sums)):
        types[_s(k)] = A.REAL
    return _Claim(list(cfa.requires), substitute(post, m), sums, list(shape.side), types, list(shape.loops))


def _combined(claim: _Claim, coefs: tuple[Fraction, ...]) -> _Claim:
    """The claim over the one sum ``S$1 = Σ a_k·R$k`` of the program's sums (renamed ``R$k``),
    built here from the program's sums and the certificate's coefficients: the combined sum's
    blocks by the rule library (:func:`axioms.concentration.combined_blocks`), which must apply;
    the sums must share no draw (independence); the postcondition becomes ``S$1 == Σ a_k·R$k
    ==> post[S$k := R$k]``, so POST is valid iff the good deviation of the combination implies
    the postcondition for every value of the program's sums."""
    if len(coefs) != len(claim.sums) or not any(a != 0 for a in coefs):
        raise Rejected("SHAPE: the combination needs one coefficient per sum, not all 0")
    seen: frozenset[int] = frozenset()
    for s in claim.sums:
        if seen & s.draws:
            raise Rejected("SHAPE: the combined sums share a draw (they are not independent)")
        seen |= s.draws
    got = C.combined_blocks([(s.family, tuple(s.blocks), a) for s, a in zip(claim.sums, coefs)])
    if got is None:
        raise Rejected("RULE: no rule covers a linear combination of these families")
    fam, blocks = got
    lines = tuple(sorted({ln for s, a in zip(claim.sums, coefs) if a != 0 for ln in s.lines}))
    total = NoiseSum(fam, tuple(SumBlock(b.count, b.param) for b in blocks), seen, lines)
    comb: A.Expr | None = None
    for k, a in enumerate(coefs):
        if a != 0:
            term = A.Binary("*", A.Num(a, a.denominator == 1), A.Var(f"R${k + 1}"))
            comb = term if comb is None else A.Binary("+", comb, term)
    assert comb is not None
    ren: dict[str, A.Expr] = {_s(k): A.Var(f"R${k + 1}") for k in range(len(claim.sums))}
    post = A.Binary("==>", A.Binary("==", A.Var(_s(0)), comb), substitute(claim.post, ren))
    types = {n: t for n, t in claim.types.items() if not n.startswith("S$")}
    types[_s(0)] = A.REAL
    for k in range(len(claim.sums)):
        types[f"R${k + 1}"] = A.REAL
    return _Claim(claim.requires, post, [total], claim.side, types, claim.loops)


def _rule_blocks(rule: str, s: NoiseSum) -> tuple[Block, ...]:
    """The blocks a rule reads: Hoeffding sees a 0/1 indicator as a draw of width 1."""
    if rule == "hoeffding" and s.family == "bernoulli":
        return tuple(Block(b.count, ONE) for b in s.blocks)
    return tuple(Block(b.count, b.param) for b in s.blocks)


def _obligations(claim: _Claim, apps: list[Application], beta: A.Expr) -> list[tuple[str, str, A.Expr]]:
    """SHAPE (the analysis' side conditions, the loops' ``lo <= hi`` among them), RULE (each
    application's side conditions), POST (good deviations imply the postcondition), BUDGET
    (the probabilities sum to at most β). :class:`Rejected` for applications that do not fit."""
    if sorted(a.sum for a in apps) != list(range(len(claim.sums))):
        raise Rejected("RULE: each sum the postcondition reads needs exactly one rule application")
    out = [("SHAPE", name, cond) for name, cond in claim.side]
    goods: list[A.Expr] = []
    total: A.Expr | None = None
    for a in apps:
        s = claim.sums[a.sum]
        if a.rule not in C.RULES_FOR.get(s.family, ()):
            raise Rejected(f"RULE: rule {a.rule} does not apply to draws of family {s.family}")
        if a.mode not in C.MODES:
            raise Rejected(f"RULE: unknown mode {a.mode}")
        for name, c in C.conditions(a.rule, a.mode, _rule_blocks(a.rule, s), a.u, a.f):
            out.append(("RULE", f"{a.rule} ({a.mode}) on {_s(a.sum)}: {name}", c))
        S = A.Var(_s(a.sum))
        dev = {"both": A.Call("abs", (S,)), "upper": S, "lower": A.Unary("-", S)}[a.mode]
        goods.append(A.Binary("<", dev, a.u))  # each rule bounds Pr[dev >= u]
        total = a.f if total is None else A.Binary("+", total, a.f)
    out.append(("POST", "good deviations imply the postcondition", A.Binary("==>", _and(goods), claim.post)))
    assert total is not None  # at least one sum, one application each
    out.append(("BUDGET", "the failure probabilities sum to at most the bound", A.Binary("<=", total, beta)))
    return out


class _FillHole(Transformer):
    def __init__(self, value: A.Expr):
        self.value = value

    def enter(self, node: A.Node):
        return self.value if isinstance(node, A.Hole) else DESCEND


@dataclass
class ConcCert:
    name: str
    bound: A.Expr
    margin: A.Expr | None
    sums: list[Any]  # [(family, [Block…])]
    applications: list[Application]
    loops: list[Any] = dataclasses.field(default_factory=list)  # [(head, counter, lo, hi)]
    combination: tuple[Fraction, ...] | None = None  # S$1 = Σ a_k·R$k over the program's sums
    caps: bool = False  # the obligations get sum-cap (axioms.lemmas.cap_lemmas)


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
        (
            "program",
            "method",
            "bound",
            "bound_text",
            "margin",
            "sums",
            "applications",
            "loops",
            "obligations",
            "combination",
            "caps",
        ),
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
        comb = c.get("combination")
        combination = None if comb is None else tuple(Fraction(str(a)) for a in comb)
        caps = c.get("caps", False)
        if not isinstance(caps, bool):
            raise MalformedConc(f"{where}.caps: expected true or false")
        return ConcCert(c["program"], ast(c["bound"], f"{where}.bound"), margin, sums, apps, loops, combination, caps)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, MalformedConc):
            raise
        raise MalformedConc(f"{where}: malformed concentration proof ({exc})") from None


def check_conc(cc: ConcCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline):
    t0 = time.monotonic()
    out = ProgramCheck(f"{cc.name} (concentration)", False)
    with judging(out, t0):
        has_hole = any(A.contains(e, A.Hole) for e in prog.ensures)
        if has_hole != (cc.margin is not None):
            raise Rejected(
                "the certificate's margin does not match the source (an `ensures` with `?` needs "
                "exactly one inferred margin)"
            )
        if cc.margin is not None:  # the source has a hole (checked just above)
            fill = _FillHole(cc.margin)
            prog = dataclasses.replace(prog, ensures=tuple(fill.walk(e) for e in prog.ensures))
        claim_bound, sub, cfa = checked_claim(src, prog, cc.bound, bound, inputs)
        try:
            claim = _claim(sub, cfa)
        except NotApplicable as exc:
            raise Rejected(f"SHAPE: the program is not a sum of independent draws: {exc}") from None
        if cc.combination is not None:
            claim = _combined(claim, cc.combination)
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
        mine = [(s.family, [(b.count, b.param) for b in s.blocks]) for s in claim.sums]
        if mine != [(f, [(b.count, b.param) for b in bs]) for f, bs in cc.sums]:
            raise Rejected("SHAPE: the certificate's sums are not the ones recognised in the program")
        out.obligations += 2
        obs = _obligations(claim, cc.applications, cfa.bound)
        enc = Encoder(claim.types)
        env = enc.initial_env()
        hyps = [enc.expr(r, env) for r in claim.requires]

        def caps(hs, f):  # sum-cap and sum-sign for the sums the obligation reads, when the certificate says so
            apps = transcendental_apps(f)
            return [lem for _n, lem in cap_lemmas(apps, enc)] if apps else []

        check_obligations(obs, enc, env, hyps, out, timeout_ms, deadline, caps if cc.caps else None)
        out.ok = True
    return out
