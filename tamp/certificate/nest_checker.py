"""Re-checking a per-iteration composition certificate (a flag loop, :mod:`tamp.cfa.nesting`).

A nesting certificate (:mod:`.writer`)::

    NESTING = {"method": "nesting", "program": NAME, "bound": AST, "form": "union" | "product",
               "per_iteration": AST, "inner": CERT}   # CERT: a proof of any method, or NESTING

The rule (the argument is :mod:`tamp.cfa.nesting`'s):

1. CLAIM    the claim is rebuilt from the source (:func:`.claim.checked_claim`) and must equal the
            certificate's bound; the program must be a flag loop again
            (:func:`tamp.cfa.nesting.flag_loop`: a prefix that ends and sets the flag once to a
            literal, a loop whose iterations only move the flag or stop once it moved, no
            ``while`` that need not end (:mod:`tamp.cfa.ending`) in the body of a product without an
            early exit, a deterministic epilogue
            that carries the claim back to "the flag moved" or "it did not"; a counter read as
            ``k > 0`` or as "every iteration raised it" is rewritten into such a flag) of the
            certificate's ``form``;
2. COMPOSE  the composition's side conditions (:func:`tamp.cfa.nesting.composition`: N·u <= β
            or N·e <= E, or ``sum(c in lo..hi: u) <= β`` / ``sum(c in lo..hi: e) <= E`` for a
            bound that reads the counter ``c``, when the loop runs, β >= 0 or E >= 0 when it does
            not, u > 0 when e = log u; for a literal trip count and β not ``exp(E)``, the
            product written out, ``u(lo)·…·u(hi-1) <= β`` with factors >= 0) are valid under
            ``requires``, by z3;
3. INNER    the iteration program is rebuilt here (:func:`tamp.cfa.nesting.iteration_program`:
            the body with every variable it can find in the state as an input, the flag at its
            start value first, the bound ``per_iteration``, which may read parameters and the
            counter only; in the union form a Gaussian accumulator — a real sum of the
            iteration's fresh ``gauss`` draws with coefficients read from parameters — is drawn
            from its exact law instead, :func:`tamp.cfa.nesting.gaussian_accumulator`, whose
            conditions are re-derived here from the source) and the inner
            certificate, whatever its method, must prove it: its own rules, against that
            program as if it were a program of the source file. With ``"fold": K`` (``K >= 1``)
            the inner certificate proves the iteration program with its last ``K`` statements
            folded into its claim (:func:`tamp.cfa.epilogue.fold_epilogue`: deterministic
            assignments and branches, whose weakest precondition becomes the claim; the same
            failure probability), rebuilt here from ``K`` alone.

With ``"period": K`` (``K`` in 2..4), rules 2 and 3 are of the flag loop taken in blocks of ``K``
iterations (PERIOD, :mod:`tamp.cfa.periods`: the loop must run over ``0..K·M``, ``M`` an integer
expression, as written; the block loop is rebuilt here from ``K`` and the source, each block the
body written out ``K`` times at the counters ``K·j + r`` with ``(K·j + r) mod d`` read as
``r mod d``): the composition is over its ``M`` blocks and the iteration program is one block.

With ``"shared": true`` (union form, single iterations, no facts) the iteration program of rule 3
is the one that makes the prefix's draws itself (SHARED, :func:`tamp.cfa.shared_rows.shared_iteration_program`:
the prefix, the flag at its start value, the body, a draw vector of the prefix fused into the
loop that reads it), rebuilt here from the source; it must apply (rows that read only the
prefix's values, which the loop never writes).

With ``"facts": [AST, …]`` (union/product) the iteration program of rule 3 also assumes these
loop facts as ``requires``; FACTS re-checks first that they are initiated by the prefix and
inductive over the iteration (:mod:`.loop_facts_check`, z3 over this checker's own weakest
preconditions), and rejects the certificate otherwise; with ``"always": [AST, …]`` (a product
without an early exit, whose ``facts`` hold while the flag is unmoved) it also checks that these
hold on every path and make every iteration well-defined.

A stage product (form ``stages``, :mod:`tamp.cfa.stages`) adds ``"second": AST`` (the second
stage's chance ``b``; ``per_iteration`` is the first's, ``a``), ``"cut": INT`` (the top-level loop
cut after its first iteration) and ``"parts": {"first": CERT}`` (``inner`` proves the second
stage). Its rules: CLAIM as above (the bound is the claim's); COMPOSE the loop runs at least once,
``b >= 0`` or ``a >= 0``, and ``1 - a·b <= β`` under ``requires`` (z3); INNER both stages, rebuilt here by
:func:`tamp.cfa.stages.stage_programs`, are proved by their certificates.

Nothing of ``tamp.prover`` is imported: the transformation lives in :mod:`tamp.cfa.nesting`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict

import z3

from lang import ast as A
from lang.serialize import SerializeError, expr_from_json
from tamp.cfa.epilogue import fold_epilogue
from tamp.cfa.nesting import (
    LV_PARTS,
    composition,
    exit_program,
    flag_loop,
    iteration_program,
    lasvegas_composition,
    lasvegas_loop,
    lasvegas_programs,
)
from tamp.cfa.periods import periodic
from tamp.cfa.shared_rows import shared_iteration_program
from tamp.cfa.stages import stage_composition, stage_programs
from tamp.core.encode import Encoder
from tamp.show import show_expr

from .claim import checked_claim
from .format import ProgramCheck, Rejected
from .loop_facts_check import check_facts
from .solver import VALID, decide


class MalformedNest(ValueError):
    pass


@dataclass
class NestCert:
    name: str
    bound: A.Expr
    form: str
    per_iteration: A.Expr
    inner: Any  # a certificate of any method (reader.ProgramCert, ExpCert, ConcCert, ProductCert, NestCert)
    lead: bool = False  # lasvegas: the prefix's test of the loop condition is a factor
    parts: Dict[str, Any] = field(default_factory=dict)  # lasvegas: the other parts' proofs, by role
    second: Any = None  # stages: the second stage's chance b (per_iteration is the first's, a)
    cut: int = -1  # stages: the index of the top-level loop cut after its first iteration
    fold: int = 0  # union/product: the iteration program's last statements folded into its claim
    period: int = 0  # union/product: composed over blocks of this many iterations (tamp.cfa.periods)
    facts: tuple = ()  # union/product: loop facts the iteration program assumes (.loop_facts_check)
    always: Any = None  # product without early exit: the every-path facts (.loop_facts_check)
    shared: bool = False  # union: the iteration program makes the prefix's draws (tamp.cfa.shared_rows)


def decode_nest(d: Any, where: str, decode_any: Callable[[Any, str], Any]) -> NestCert:
    if not isinstance(d, dict):
        raise MalformedNest(f"{where}: expected an object")
    extra = set(d) - {"method", "program", "bound", "bound_text", "form", "per_iteration", "inner", "lead", "parts"}
    extra -= {"fold", "period", "facts", "always", "shared"} if d.get("form") in ("union", "product") else set()
    extra -= {"second", "cut"} if d.get("form") == "stages" else set()
    if extra:
        raise MalformedNest(f"{where}: unknown field(s) {sorted(extra)}")
    if d.get("method") != "nesting":
        raise MalformedNest(f'{where}.method: expected "nesting"')
    for key in ("program", "bound", "form", "per_iteration", "inner"):
        if key not in d:
            raise MalformedNest(f"{where}: missing field '{key}'")
    if d["form"] == "stages":
        return _decode_stages(d, where, decode_any)
    if not isinstance(d["program"], str) or d["form"] not in ("union", "product", "lasvegas"):
        raise MalformedNest(f'{where}: "program" must be a name and "form" "union", "product" or "lasvegas"')
    try:
        bound, per = expr_from_json(d["bound"]), expr_from_json(d["per_iteration"])
    except SerializeError as exc:
        raise MalformedNest(f"{where}: {exc}") from None
    lead, parts = d.get("lead", False), d.get("parts", {})
    if d["form"] != "lasvegas" and ("lead" in d or set(parts) - {"exit"}):
        raise MalformedNest(f'{where}: "lead" and parts other than "exit" belong to a "lasvegas" certificate')
    if not isinstance(lead, bool) or not isinstance(parts, dict) or set(parts) - set(LV_PARTS):
        raise MalformedNest(f'{where}: "lead" must be true or false and "parts" an object of {list(LV_PARTS[1:])}')
    fold = d.get("fold", 0)
    if not isinstance(fold, int) or isinstance(fold, bool) or fold < 0:
        raise MalformedNest(f"{where}.fold: expected a number of statements (an integer >= 0)")
    period = d.get("period", 0)
    if not isinstance(period, int) or isinstance(period, bool) or period < 0:
        raise MalformedNest(f"{where}.period: expected a number of iterations per block (an integer >= 0)")
    raw_facts, raw_always = d.get("facts", []), d.get("always")
    if not isinstance(raw_facts, list) or not isinstance(raw_always, (list, type(None))):
        raise MalformedNest(f"{where}.facts: expected a list of formulas")
    try:
        facts = tuple(expr_from_json(f) for f in raw_facts)
        always = None if raw_always is None else tuple(expr_from_json(f) for f in raw_always)
    except SerializeError as exc:
        raise MalformedNest(f"{where}.facts: {exc}") from None
    shared = d.get("shared", False)
    if not isinstance(shared, bool):
        raise MalformedNest(f"{where}.shared: expected true or false")
    decoded = {role: decode_any(c, f"{where}.parts.{role}") for role, c in parts.items() if role != "iter"}
    inner = decode_any(d["inner"], f"{where}.inner")
    return NestCert(
        d["program"],
        bound,
        d["form"],
        per,
        inner,
        lead,
        decoded,
        fold=fold,
        period=period,
        facts=facts,
        always=always,
        shared=shared,
    )


#: ``check_inner(cert, src, program, timeout_ms, deadline) -> ProgramCheck``: the checker of the
#: inner certificate's method on the rebuilt iteration program
InnerCheck = Callable[[Any, A.SourceFile, A.Program, int, Any], ProgramCheck]


def check_nest(
    nc: NestCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline, check_inner: InnerCheck
) -> ProgramCheck:
    """Rules 1–3 (never raises :class:`Rejected`; reports it)."""
    t0 = time.monotonic()
    out = ProgramCheck(f"{nc.name} (per-iteration composition)", False)
    try:
        _claim_bound, sub, cfa = checked_claim(src, prog, nc.bound, bound, inputs)
        if nc.form == "stages":
            _check_stages(nc, src, sub, cfa, out, timeout_ms, deadline, check_inner)
            out.ok = True
            raise _Done
        if nc.form == "lasvegas":
            _check_lasvegas(nc, src, sub, cfa, out, timeout_ms, deadline, check_inner)
            out.ok = True
            raise _Done
        fl = flag_loop(sub, tuple(sub.ensures), cfa.types)
        if fl is None:
            raise Rejected("CLAIM: the program is not a loop raising the claim's flag (see tamp.cfa.nesting)")
        if fl.form != nc.form:
            raise Rejected(f"CLAIM: the certificate composes by {nc.form}, the loop's claim needs {fl.form}")
        if nc.period:
            if nc.facts or nc.always is not None:  # loop facts are of single iterations only
                raise Rejected("FACTS: loop facts are checked for single iterations, not for blocks of iterations")
            fl = _blocks(sub, fl, cfa.types, nc.period)
        side = composition(fl, cfa.bound, nc.per_iteration)
        # FACTS: the loop facts the iteration program assumes are inductive (its own encoding)
        out.obligations += check_facts(sub, fl, cfa.types, nc.facts, nc.always, timeout_ms)
        if nc.shared and (nc.period or nc.facts or nc.always is not None):
            raise Rejected("SHARED: rows that make the prefix's draws take single iterations and no loop facts")
        if nc.shared:  # SHARED: the prefix's draws made by the iteration program (tamp.cfa.shared_rows)
            it = shared_iteration_program(sub, fl, cfa.types, nc.per_iteration)
        else:
            it = iteration_program(sub, fl, cfa.types, nc.per_iteration, facts=nc.facts)
        if side is None or it is None:
            raise Rejected(
                f"COMPOSE: the bound {show_expr(cfa.bound)} cannot be composed from {show_expr(nc.per_iteration)}"
            )
        _side_conditions(out, cfa, side, timeout_ms)
        if nc.fold:  # the iteration's deterministic epilogue folded into its claim (tamp.cfa.epilogue)
            folded = fold_epilogue(it, nc.fold)
            if folded is None:
                raise Rejected(
                    f"INNER: the iteration program's last {nc.fold} statement(s) cannot be folded into its claim"
                )
            it = folded
        _check_part(out, "INNER", nc.inner, it, src, timeout_ms, deadline, check_inner)
        # EXIT: a claim with a rest Q next to the flag needs Q proved after an iteration that moves it
        ex = exit_program(sub, fl, cfa.types)
        if set(nc.parts) != ({"exit"} if ex is not None else set()):
            raise Rejected(
                "EXIT: the claim's rest needs exactly one proof of the exit part" if ex else "EXIT: unexpected parts"
            )
        if ex is not None:
            _check_part(out, "EXIT", nc.parts["exit"], ex, src, timeout_ms, deadline, check_inner)
        out.ok = True
    except _Done:
        pass
    except Rejected as exc:
        out.reason = str(exc)
    except z3.Z3Exception as exc:
        out.reason = f"a formula of the certificate cannot be built: {exc}"
    out.seconds = time.monotonic() - t0
    return out


def _blocks(sub: A.Program, fl, types, k: int):
    """PERIOD: the flag loop in blocks of ``k`` iterations, rebuilt here from ``k`` alone
    (:func:`tamp.cfa.periods.periodic`: the loop's range is ``0..k·M`` as written, each block the
    body written out ``k`` times at the counters ``k·j + r``); raises :class:`Rejected`."""
    got = periodic(sub, fl, types, k)
    if got is None:
        raise Rejected(
            f"PERIOD: the loop at line {fl.loop.pos.line if fl.loop.pos else '?'} cannot be taken in blocks of {k}"
        )
    return got


class _Done(Exception):
    """The Las Vegas rules passed (leaves :func:`check_nest`'s flag-loop rules)."""


def _side_conditions(out: ProgramCheck, cfa, side, timeout_ms) -> None:
    """Every side condition ``(rule, formula)`` of a composition is valid under ``requires``; raises
    :class:`Rejected` naming the first that is not."""
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in cfa.requires]
    for rule, f in side:
        out.obligations += 1
        if decide(enc.expr(f, env), enc, hyps, timeout_ms)[0] != VALID:
            raise Rejected(f"COMPOSE {rule}: `{show_expr(f)}` does not follow from `requires`")


def _check_part(
    out: ProgramCheck, label: str, cert, it: A.Program, src, timeout_ms, deadline, check_inner: InnerCheck
) -> None:
    """A part's proof is of the rebuilt program ``it`` (by name) and its own method's rules accept it
    against that program; its obligations and log join ``out``; raises :class:`Rejected` otherwise."""
    if getattr(cert, "name", None) != it.name:
        raise Rejected(f"{label}: the proof is of '{getattr(cert, 'name', '?')}', not of '{it.name}'")
    got = check_inner(cert, A.SourceFile((it,), src.path, src.text), it, timeout_ms, deadline)
    out.obligations += got.obligations
    out.log += got.log
    if not got.ok:
        raise Rejected(f"{label}: {got.reason}")


def _check_lasvegas(
    nc: NestCert, src, sub, cfa, out: ProgramCheck, timeout_ms, deadline, check_inner: InnerCheck
) -> None:
    """Rules 1–3 for a Las Vegas loop (:func:`tamp.cfa.nesting.lasvegas_loop`): the program is one
    again; the composition's side conditions (:func:`tamp.cfa.nesting.lasvegas_composition`) are
    valid under ``requires``; every part the rebuilt loop needs
    (:func:`tamp.cfa.nesting.lasvegas_programs`: the iteration's continue bound, the prefix's
    when ``lead``, and the surely-proved exits when the claim has more than the counter) has its
    proof, which its own method's rules accept against the rebuilt part; raises
    :class:`Rejected`."""
    lv = lasvegas_loop(sub, tuple(sub.ensures), cfa.types)
    if lv is None:
        raise Rejected(
            "CLAIM: the program is not a loop whose claim bounds an iteration counter (see tamp.cfa.nesting)"
        )
    side = lasvegas_composition(lv, cfa.bound, nc.per_iteration, nc.lead)
    progs = lasvegas_programs(sub, lv, cfa.types, nc.per_iteration, nc.lead)
    if side is None or progs is None:
        raise Rejected(
            f"COMPOSE: the bound {show_expr(cfa.bound)} cannot be composed from {show_expr(nc.per_iteration)}"
        )
    _side_conditions(out, cfa, side, timeout_ms)
    certs = {"iter": nc.inner, **nc.parts}
    if set(certs) != set(progs):
        raise Rejected(f"INNER: the loop needs proofs of {sorted(progs)}, the certificate has {sorted(certs)}")
    for role, it in progs.items():
        _check_part(out, f"INNER {role}", certs[role], it, src, timeout_ms, deadline, check_inner)


def _decode_stages(d: Dict[str, Any], where: str, decode_any: Callable[[Any, str], Any]) -> NestCert:
    """A stage-product certificate (see the module docstring)."""
    for key in ("second", "cut", "parts"):
        if key not in d:
            raise MalformedNest(f"{where}: missing field '{key}'")
    if not isinstance(d["program"], str) or not isinstance(d["cut"], int) or isinstance(d["cut"], bool):
        raise MalformedNest(f'{where}: "program" must be a name and "cut" an integer')
    if "lead" in d or not isinstance(d["parts"], dict) or set(d["parts"]) != {"first"}:
        raise MalformedNest(f'{where}: a "stages" certificate has the one part "first" and no "lead"')
    try:
        bound, a, b = (expr_from_json(d[k]) for k in ("bound", "per_iteration", "second"))
    except SerializeError as exc:
        raise MalformedNest(f"{where}: {exc}") from None
    first = decode_any(d["parts"]["first"], f"{where}.parts.first")
    inner = decode_any(d["inner"], f"{where}.inner")
    return NestCert(d["program"], bound, "stages", a, inner, False, {"first": first}, b, d["cut"])


def _check_stages(
    nc: NestCert, src, sub, cfa, out: ProgramCheck, timeout_ms, deadline, check_inner: InnerCheck
) -> None:
    """The stage product's rules (see the module docstring); raises :class:`Rejected`."""
    if len(sub.ensures) != 1:
        raise Rejected("CLAIM: the stage product proves one claim")
    got = stage_programs(sub, cfa.types, nc.cut, nc.per_iteration, nc.second)
    if got is None:
        raise Rejected(f"COMPOSE: the program cannot be cut in stages at its statement {nc.cut}")
    _side_conditions(out, cfa, stage_composition(sub, cfa.bound, nc.cut, nc.per_iteration, nc.second), timeout_ms)
    one, two = got
    for role, cert, it in (("first", nc.parts["first"], one), ("second", nc.inner, two)):
        _check_part(out, f"INNER {role}", cert, it, src, timeout_ms, deadline, check_inner)
