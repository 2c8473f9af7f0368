"""Re-checking a certificate from scratch: no search, a fresh solver per obligation.

For each program of the certificate, against the claim rebuilt from the source file
(:mod:`.claim`), in this order — the first failure rejects, naming its place:

1. SOURCE   the file's SHA-256 is the one the certificate was written for;
2. CLAIM    the certificate's bound β and CFA equal the rebuilt ones exactly
            (statements, specification, graph) and the claim has the shape the rules assume;
3. COVER    (structure) the root sits at the CFA entry; every non-split node follows each
            out-edge of its CFA node exactly once, with that edge's statement, to a node at the
            edge's target; split nodes stay at their CFA node, use ``assume`` guards, and split
            edges form no cycle (each split must lead on to a real CFA step);
4. AXIOM    each sampling edge's axiom is re-derived from the axiom library
            (:mod:`.axiom_tree`) and must equal the stated bad/cost/side exactly;
5. SMT      under ``requires``, each valid (z3 ``unsat`` of the negation, else rejected):
            FACT   each lemma the certificate offers (e.g. the prover's loop budget hints) follows
                   from ``requires``; proven facts are then hypotheses of the obligations below;
            INIT   λ(root) ∧ κ(root) = 0;
            COVER  λ(q) ⇒ ∨ guards at each split node q;
            BUDGET λ(root) ⇒ κ(root) <= β (β >= 0; every sampling bounds κ + cost by β itself);
            EXIT   λ(q) ⇒ ensures at every node at the CFA exit;
            STEP   per sampling edge λ(q) ⇒ side ∧ κ(q) + cost <= β, and per edge
                   λ(q) ∧ stmt (∧ ¬bad) ⇒ λ(q') ∧ κ(q) + cost <= κ(q');
6. TERMINATION  every loop head of the rebuilt CFA has one termination argument — a ranking
            function (BOUNDED, NONINC, DECREASE, PROGRESS) or a geometric retry (structure and
            EXITPROB) of :mod:`.termination`, its obligations rebuilt from the rebuilt CFA — which
            all hold: a failure bound counts a run that never ends as failing, and
            rules 1–5 bound only the runs that end.

The claim check (2) also re-runs the sample-dependence analysis (:mod:`tamp.cfa.dependence`) on the
rebuilt CFA: a program with a conditioning ``assume`` is rejected, since rules 1–5 read a run
stopped by an ``assume`` as not failing, which proves nothing about a conditional bound.

Why these suffice is the argument of :mod:`tamp.prover.trace.check` (induction on run length:
the failure probability from (q, σ) with σ ⊨ λ(q) is at most max(0, β − κ(q)(σ))); this module
re-implements the checks without using the prover's automaton classes or its checker.
"""

from __future__ import annotations

import time
from typing import Dict, List, Optional

import z3

from axioms.base import AxiomInstance
from lang import ast as A
from lang.serialize import to_json
from tamp.cfa.places import edge_place, node_line, node_place
from tamp.core.encode import Encoder
from tamp.core.step import StepState, step
from tamp.core.z3context import proof_context
from tamp.core.z3expr import to_real
from tamp.show import show_expr, show_stmt

from .axiom_tree import TreeError, instances, same_axiom
from .cfa_form import cfa_form, first_difference
from .claim import claim_cfa, well_formed_claim
from .conc_checker import ConcCert, check_conc
from .conj_checker import ConjCert, check_conj
from .exp_checker import ExpCert, check_exp
from .format import CheckReport, ProgramCheck, Rejected, judging, source_digest
from .lin_checker import LinCert, check_lin
from .nest_checker import NestCert, check_nest
from .privacy_checker import check_privacy
from .prob_checker import check_prob
from .product_checker import ProductCert, counting_claim
from .reader import CertAutomaton, CertEdge, Certificate, ProgramCert
from .solver import VALID, decide
from .termination import check_arguments


def _show(e) -> str:
    return show_expr(e)


@proof_context()  # a fresh z3 context: the verdict does not depend on the process's history
def _plan_parts(plan: List[tuple], src, sections, twice: str) -> None:
    """Append to ``plan`` one ``(job, part)`` per part of ``sections`` (pairs of the certificate's
    parts and the job that checks them), in order. A part whose program was already certified in
    these sections, or is not in the source, ends the plan with ``("reject", why)``; nothing is
    added after a reject."""
    seen = set()
    for parts, job in sections:
        for part in parts or ():
            if plan and plan[-1][0] == "reject":
                return
            if part.name in seen:
                plan.append(("reject", twice.format(part.name)))
                return
            seen.add(part.name)
            if src.program(part.name) is None:
                plan.append(("reject", f"program '{part.name}' is not in {src.path}"))
                return
            plan.append((job, part))


def check_certificate(
    cert: Certificate,
    src: A.SourceFile,
    source_bytes: bytes,
    bound: Optional[A.Expr] = None,
    inputs: Optional[Dict[str, object]] = None,
    timeout_ms: int = 10000,
    deadline: Optional[float] = None,
    executor=None,
) -> CheckReport:
    """Re-check every program proof in ``cert`` against ``src`` (parsed and type-checked) and
    the claim given by ``bound`` / ``inputs`` (as on the ``tamp prove`` command line).

    ``executor`` (a :class:`tamp.executor.Executor`): the proofs of the programs are
    independent, and are then checked as its parallel jobs; the report is the same as one
    after the other (the first failure in the certificate's order rejects)."""
    t0 = time.monotonic()
    results: List[ProgramCheck] = []

    def reject(reason):
        return CheckReport(False, results, time.monotonic() - t0, reason)

    digest = source_digest(source_bytes)
    if cert.source_sha256 != digest:
        return reject(
            f"the certificate is for different source text (sha256 {cert.source_sha256[:12]}… "
            f"recorded, {src.path} has {digest[:12]}…)"
        )
    if not (
        cert.programs
        or cert.probability
        or cert.concentration
        or cert.expectation
        or cert.privacy
        or cert.product
        or cert.nesting
        or cert.linearity
        or cert.conjuncts
    ):
        return reject("the certificate contains no proof")
    plan: List[tuple] = []  # (job, certificate part) in the order of the checks, or ("reject", reason)
    failure_bounds = [  # one proof per program, whichever method found it
        (cert.programs, _program_job),  # the union bound's automata
        (cert.concentration, _conc_job),  # concentration rules (see .conc_checker)
        (cert.linearity, _lin_job),  # Markov or Chebyshev by linearity (see .lin_checker)
        (cert.expectation, _exp_job),  # expected failure (see .exp_checker)
        (cert.product, _product_job),  # the product rule (see .product_checker)
        (cert.nesting, _nest_job),  # composed over a loop's iterations (see .nest_checker)
        (cert.conjuncts, _conj_job),  # sure conjuncts and the rest proved apart (see .conj_checker)
    ]
    _plan_parts(plan, src, failure_bounds, "program '{}' is certified twice")
    _plan_parts(plan, src, [(cert.privacy, _privacy_job)], "the privacy claim of '{}' is certified twice")
    _plan_parts(plan, src, [(cert.probability, _prob_job)], "the probability specification of '{}' is certified twice")
    if cert.inputs_free and inputs:
        # a failure bound proved with the inputs free is checked as that claim (for every input
        # satisfying `requires`); the claim at the fixed values is the same program and bound
        # under a stronger `requires`, so it follows by instantiation
        plan = [
            (_free_job(job), part) if _failure_part(job, part, cert.inputs_free) else (job, part) for job, part in plan
        ]
    for i, res in _run_plan(plan, src, bound, inputs, timeout_ms, deadline, executor):
        job, part = plan[i]
        if job == "reject":
            return reject(part)
        if res is None:
            return reject(f"{part.name}: time limit reached before it was checked")
        results.append(res)
        if not res.ok:
            return reject(f"{part.name}: {res.reason}")
    return CheckReport(True, results, time.monotonic() - t0)


def _run_plan(plan, src, bound, inputs, timeout_ms, deadline, executor):
    """``(index, ProgramCheck or None)`` for the entries of ``plan`` in order (None: not checked
    by the deadline; a ``reject`` entry's result is None). One after the other here, stopping
    at the first failure, or all at once as jobs of ``executor``."""
    jobs = [(i, (job, part)) for i, (job, part) in enumerate(plan) if job != "reject"]
    if executor is None or len(jobs) < 2:
        for i, (job, part) in enumerate(plan):
            if job == "reject":
                yield i, None
                return
            if job is _prob_job and deadline is not None and time.monotonic() > deadline:
                yield i, None
                return
            res = job(part, src, bound, inputs, timeout_ms, deadline)
            yield i, res
            if not res.ok:
                return
        return
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    shared = executor.share(src)  # the parsed source file, sent once
    got = dict(
        executor.map(
            _remote_job,
            [(i, (job, part, shared, bound, inputs, timeout_ms, left)) for i, (job, part) in jobs],
            deadline,
        )
    )
    for i in range(len(plan)):
        yield i, got.get(i)


def _remote_job(job, part, src, bound, inputs, timeout_ms, seconds):
    """A check as a job of :mod:`tamp.executor`: the time left travels as seconds (a deadline
    is a reading of this machine's clock)."""
    return job(part, src, bound, inputs, timeout_ms, None if seconds is None else time.monotonic() + seconds)


def _failure_part(job, part, names) -> bool:
    return (
        job in (_program_job, _conc_job, _exp_job, _product_job, _nest_job, _lin_job, _conj_job) and part.name in names
    )


def _free_job(job):
    return {
        _program_job: _free_program_job,
        _conc_job: _free_conc_job,
        _lin_job: _free_lin_job,
        _exp_job: _free_exp_job,
        _product_job: _free_product_job,
        _nest_job: _free_nest_job,
        _conj_job: _free_conj_job,
    }[job]


def _free_conj_job(cc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return _instantiated(_conj_job(cc, src, bound, None, timeout_ms, deadline), inputs)


def _conj_job(cc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    """The conjunct split (:mod:`.conj_checker`): the claim and split rules, then each part's
    proof, of its own method, against the sub-claim rebuilt from the source."""
    return check_conj(cc, src, src.program(cc.name), bound, inputs, timeout_ms, deadline, _check_part)


def _check_part(cert, src, prog, timeout_ms, deadline) -> ProgramCheck:
    """A part of a conjunct split: any method's proof of the sub-claim ``prog`` but the product
    rule's (it is checked against the source's program, not ``prog``) and another split."""
    if isinstance(cert, (ProductCert, ConjCert)):
        return ProgramCheck(getattr(cert, "name", "?"), False, reason="a proof method not allowed in a conjunct split")
    return _check_inner(cert, src, prog, timeout_ms, deadline)


def _free_nest_job(nc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return _instantiated(_nest_job(nc, src, bound, None, timeout_ms, deadline), inputs)


def _free_product_job(pc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return _instantiated(_product_job(pc, src, bound, None, timeout_ms, deadline), inputs)


def _free_program_job(pc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return _instantiated(_program_job(pc, src, bound, None, timeout_ms, deadline), inputs)


def _free_conc_job(cc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return _instantiated(_conc_job(cc, src, bound, None, timeout_ms, deadline), inputs)


def _free_lin_job(lc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return _instantiated(_lin_job(lc, src, bound, None, timeout_ms, deadline), inputs)


def _free_exp_job(ec, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return _instantiated(_exp_job(ec, src, bound, None, timeout_ms, deadline), inputs)


def _instantiated(res: ProgramCheck, inputs) -> ProgramCheck:
    if res.ok:
        shown = ", ".join(f"{k}={v}" for k, v in (inputs or {}).items())
        res.notes = list(res.notes) + [
            f"checked for every input satisfying `requires` (the inputs {shown} free): the claim at "
            "the fixed values follows by instantiation"
        ]
    return res


def _product_job(pc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    """The product rule (:mod:`.product_checker`): the claim and rate rules, then the counting
    proof checked by rules 2–6 against the counting CFA rebuilt from the source."""
    t0 = time.monotonic()
    out = ProgramCheck(f"{pc.name} (product rule)", False)
    with judging(out, t0):
        counting = counting_claim(pc, src, src.program(pc.name), bound, inputs, timeout_ms)
        out.obligations += 2 + check_proof_on(pc.counting, counting, timeout_ms, deadline, out.log)
        out.ok = True
    return out


def _nest_job(nc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    """The per-iteration composition (:mod:`.nest_checker`): the claim and composition rules, then
    the inner proof, of whatever method, against the iteration program rebuilt from the source."""
    return check_nest(nc, src, src.program(nc.name), bound, inputs, timeout_ms, deadline, _check_inner)


def _check_inner(cert, src, prog, timeout_ms, deadline) -> ProgramCheck:
    """The inner proof of a nesting certificate, by its own method's rules, of ``prog`` (the
    iteration program, the one program of ``src``) with its own bound."""
    if isinstance(cert, NestCert):
        return check_nest(cert, src, prog, None, None, timeout_ms, deadline, _check_inner)
    if isinstance(cert, ProductCert):
        return _product_job(cert, src, None, None, timeout_ms, deadline)
    if isinstance(cert, ProgramCert):
        return check_program(cert, src, prog, None, None, timeout_ms, deadline)
    if isinstance(cert, ConcCert):
        return check_conc(cert, src, prog, None, None, timeout_ms, deadline)
    if isinstance(cert, ExpCert):
        return check_exp(cert, src, prog, None, None, timeout_ms, deadline)
    if isinstance(cert, LinCert):
        return check_lin(cert, src, prog, None, None, timeout_ms, deadline)
    return ProgramCheck(getattr(cert, "name", "?"), False, reason="INNER: a proof of no known method")


def _program_job(pc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return check_program(pc, src, src.program(pc.name), bound, inputs, timeout_ms, deadline)


def _conc_job(cc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return check_conc(cc, src, src.program(cc.name), bound, inputs, timeout_ms, deadline)


def _lin_job(lc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return check_lin(lc, src, src.program(lc.name), bound, inputs, timeout_ms, deadline)


def _exp_job(ec, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return check_exp(ec, src, src.program(ec.name), bound, inputs, timeout_ms, deadline)


def _privacy_job(vc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    return check_privacy(vc, src, src.program(vc.name), timeout_ms, deadline, inputs)


def _prob_job(pc, src, bound, inputs, timeout_ms, deadline) -> ProgramCheck:
    res = check_prob(pc, src.program(pc.name), inputs, timeout_ms, deadline)
    res.name = f"{pc.name} (probability, {pc.verdict})"
    return res


def check_program(
    pc: ProgramCert, src: A.SourceFile, prog: A.Program, bound, inputs, timeout_ms, deadline
) -> ProgramCheck:
    """Re-check one program's proof (never raises :class:`Rejected`; reports it)."""
    t0 = time.monotonic()
    out = ProgramCheck(pc.name, False)
    with judging(out, t0):
        if bound is None and isinstance(prog.fails, A.Hole):
            bound = pc.bound  # `fails ?`: the certificate's bound is the answer it proves
        cfa = claim_cfa(src, prog, bound, inputs)
        out.obligations += check_proof_on(pc, cfa, timeout_ms, deadline, out.log)
        out.ok = True
        out.notes = claim_notes(cfa, timeout_ms)
    return out


def check_proof_on(pc: ProgramCert, cfa, timeout_ms, deadline, log) -> int:
    """Rules 2–6 for the proof ``pc`` of the claim ``cfa`` (built by the checker); the number of
    obligations checked. Raises :class:`Rejected`."""
    n = check_claim(pc, cfa)
    n += check_cover(pc.automaton, cfa)
    axioms = check_axioms(pc.automaton, cfa)
    n += len(axioms)
    n += check_smt(pc.automaton, cfa, axioms, timeout_ms, deadline, log, pc.facts)
    n += check_termination_rule(pc.termination, cfa, timeout_ms, deadline, log)
    return n


# ---------------------------------------------------------------------------- 2. claim


def check_claim(pc: ProgramCert, cfa) -> int:
    if pc.bound != cfa.bound:
        raise Rejected(
            f"the certificate proves the bound {_show(pc.bound)}, but the claim checked is "
            f"{_show(cfa.bound)} (the file's `fails` clause, or --bound)"
        )
    mine = cfa_form(cfa)
    diff = first_difference(pc.cfa, mine)
    if diff:
        raise Rejected(f"the certificate's CFA differs from the one built from the source at {diff}")
    problem = well_formed_claim(cfa)
    if problem:
        raise Rejected(f"the claim is outside the proof rules: {problem}")
    return 1


def claim_notes(cfa, timeout_ms: int) -> List[str]:
    """Warnings about a claim that holds for a trivial reason (not part of the proof): no input
    satisfies ``requires`` (vacuous), or β >= 1 (every probability is at most 1)."""
    notes = []
    try:
        enc = Encoder(cfa.types)
        env0 = enc.initial_env()
        hyps = [enc.expr(r, env0) for r in cfa.requires]
        if hyps and decide(z3.BoolVal(False), enc, hyps, timeout_ms)[0] == VALID:
            notes.append("no input satisfies `requires`: the claim holds vacuously")
        elif decide(to_real(enc.expr(cfa.bound, env0)) >= 1, enc, hyps, timeout_ms)[0] == VALID:
            notes.append("the bound is at least 1 for every input: the claim holds trivially")
    except Exception:  # noqa: BLE001 - notes are advisory
        pass
    return notes


# ---------------------------------------------------------------------------- 3. cover


def check_cover(aut: CertAutomaton, cfa) -> int:
    """Rule COVER, structurally: every CFA run from the entry is a run of the automaton."""
    nodes = set(cfa.graph.nodes)
    if aut.nodes[aut.root].cfa_node != cfa.entry:
        raise Rejected(f"COVER: the proof starts at {_at(aut, cfa, aut.root)}, not at the start of the program")
    for nid, n in aut.nodes.items():
        if n.cfa_node not in nodes:
            raise Rejected("COVER: a state of the proof is at a place the program does not have")
        outs = aut.out(nid)
        here = _at(aut, cfa, nid)
        if outs and all(e.kind == "split" for e in outs):
            for e in outs:
                if aut.nodes[e.dst].cfa_node != n.cfa_node:
                    raise Rejected(
                        f"COVER: the case split on `{_case(e.stmt)}` at {here} moves to {_at(aut, cfa, e.dst)}"
                    )
                if not isinstance(e.stmt, A.Assume):
                    raise Rejected(f"COVER: the case split at {here} is `{_stmt_text(e.stmt)}`, not a condition")
            continue
        if any(e.kind == "split" for e in outs):
            raise Rejected(f"COVER: at {here} the proof mixes a case split with the program's statements")
        want = {(u, v, k): d["stmt"] for u, v, k, d in cfa.out_edges(n.cfa_node)}
        have = set()
        for e in outs:
            key = e.cfa_edge
            if key is None or key not in want:
                raise Rejected(
                    f"COVER: at {here} the proof takes `{_stmt_text(e.stmt)}`, which is no statement of the "
                    "program there"
                )
            if key in have:
                raise Rejected(f"COVER: at {here} the proof follows {_edge_at(cfa, key, want[key])} twice")
            have.add(key)
            if e.stmt != want[key]:
                raise Rejected(
                    f"COVER: at {here} the proof has `{_stmt_text(e.stmt)}` where the program has "
                    f"{_edge_at(cfa, key, want[key])}"
                )
            if aut.nodes[e.dst].cfa_node != key[1]:
                raise Rejected(
                    f"COVER: {_edge_at(cfa, key, want[key])} leads the proof to {_at(aut, cfa, e.dst)}, not to "
                    f"{node_place(cfa, key[1])}"
                )
        for key in want:
            if key not in have:
                raise Rejected(
                    f"COVER: at {here} the proof does not follow {_edge_at(cfa, key, want[key])} "
                    "(a run taking it is not covered)"
                )
    cycle = split_cycle(aut)
    if cycle is not None:
        raise Rejected(
            f"COVER: case splits form a cycle at {_at(aut, cfa, cycle)} (a split must make progress "
            "towards a statement of the program, or the induction on run length has no base)"
        )
    return 1


def split_cycle(aut: CertAutomaton) -> Optional[int]:
    """A node on a cycle made only of split edges, or None. Split edges do not move in the CFA,
    so such a cycle would let a node 'justify' itself without ever following a statement."""
    succ: Dict[int, List[int]] = {}
    for e in aut.edges:
        if e.kind == "split":
            succ.setdefault(e.src, []).append(e.dst)
    state: Dict[int, int] = {}  # 1 = on the stack, 2 = done
    for start in succ:
        if state.get(start):
            continue
        stack = [(start, iter(succ.get(start, ())))]
        state[start] = 1
        while stack:
            n, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[n] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return nxt
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(succ.get(nxt, ()))))
    return None


def _stmt_text(st) -> str:
    return show_stmt(st)


def _case(st) -> str:
    return show_expr(st.cond) if isinstance(st, A.Assume) else show_stmt(st)


def _at(aut: CertAutomaton, cfa, nid: int) -> str:
    """A state of the certificate's automaton in the user's terms: its place in the program
    (node numbers are identifiers, never shown in a rejection)."""
    n = aut.nodes.get(nid)
    return node_place(cfa, n.cfa_node) if n is not None else "a state the certificate does not have"


def _edge_at(cfa, key, stmt) -> str:
    """CFA edge ``key`` (src, dst, k) as its statement and line."""
    line = cfa.graph.edges[key].get("line") if cfa.graph.has_edge(*key) else None
    return edge_place(stmt, line if line is not None else node_line(cfa, key[0]))


def _edge_where(aut: CertAutomaton, cfa, e) -> str:
    """An edge of the certificate's automaton: its statement and line, or the case split."""
    if e.kind == "split":
        return f"the case `{_case(e.stmt)}` at {_at(aut, cfa, e.src)}"
    if e.cfa_edge is not None and cfa.graph.has_edge(*e.cfa_edge):
        return _edge_at(cfa, e.cfa_edge, e.stmt)
    n = aut.nodes.get(e.src)
    return edge_place(e.stmt, node_line(cfa, n.cfa_node) if n is not None else None)


# ---------------------------------------------------------------------------- 4. axioms


def check_axioms(aut: CertAutomaton, cfa) -> Dict[int, AxiomInstance]:
    """The re-derived axiom instance of every sampling edge (by edge index)."""
    out = {}
    for e in aut.edges:
        if not isinstance(e.stmt, A.Sample):
            if e.axiom is not None:
                raise Rejected(f"AXIOM: {_edge_where(aut, cfa, e)} is not a sampling but carries an axiom")
            continue
        where = _edge_where(aut, cfa, e)
        if e.axiom is None:
            raise Rejected(f"AXIOM: {where} has no axiom")
        if e.axiom.parts is None:
            raise Rejected(f"AXIOM: {where}: the axiom has no derivation from the axiom library")
        try:
            cands = instances(e.axiom.parts, e.stmt)
        except TreeError as exc:
            raise Rejected(f"AXIOM: {where}: {exc}") from None
        except ValueError as exc:
            raise Rejected(f"AXIOM: {where}: malformed derivation: {exc}") from None
        match = next((c for c in cands if same_axiom(c, e.axiom)), None)
        if match is None:
            c = cands[0]
            raise Rejected(
                f"AXIOM: {where}: the stated axiom Pr[{_show(e.axiom.bad)}] <= {_show(e.axiom.cost)} "
                f"is not the library's instantiation Pr[{_show(c.bad)}] <= {_show(c.cost)}"
                + ("" if tuple(c.side) == e.axiom.side else " (side conditions differ)")
            )
        out[e.index] = match
    return out


# ---------------------------------------------------------------------------- 5. SMT


def _split_guard(e: CertEdge) -> A.Expr:
    """The guard of a split edge (check_cover has rejected a split edge that is no assume)."""
    if not isinstance(e.stmt, A.Assume):
        raise Rejected(f"COVER: split edge q{e.src}->q{e.dst} is not an assume guard")
    return e.stmt.cond


GROUP = 16  # obligations asked together (see flush() in check_smt)
GROUP_MS = 2000  # time limit for a group; a group that fails is halved


def check_smt(
    aut: CertAutomaton, cfa, axioms: Dict[int, AxiomInstance], timeout_ms: int, deadline, log, facts=()
) -> int:
    try:
        enc = Encoder(cfa.types)
        env0 = enc.initial_env()
        hyps = [enc.expr(r, env0) for r in cfa.requires]
        beta = enc.expr(cfa.bound, env0)
        if not z3.is_arith(beta):
            raise Rejected("the bound is not a number")
        beta = to_real(beta)
    except Rejected:
        raise
    except Exception as exc:  # noqa: BLE001 - an unencodable claim cannot be checked
        raise Rejected(f"the claim cannot be encoded for the solver: {exc}") from None
    count = 0

    def encode(e, env, what):
        try:
            return enc.expr(e, env)
        except Exception as exc:  # noqa: BLE001 - a label the encoder refuses is not checkable
            raise Rejected(f"{what}: cannot encode {_show(e)}: {exc}") from None

    def E(e, env=env0, what=""):
        """A formula (λ, guard, side condition, ensures): must be Boolean."""
        t = encode(e, env, what)
        if not z3.is_bool(t):
            raise Rejected(f"{what}: {_show(e)} is not a formula")
        return t

    def R(e, env=env0, what=""):
        """A number (κ, cost, β): must be arithmetic."""
        t = encode(e, env, what)
        if not z3.is_arith(t):
            raise Rejected(f"{what}: {_show(e)} is not a number")
        return to_real(t)

    def limit(rule, where, ms):
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Rejected(f"{rule} at {where}: time limit reached before it was checked")
            ms = min(ms, int(left * 1000))
        return ms

    def decide_now(rule, where, formula):
        nonlocal count
        status, dt = decide(formula, enc, hyps, limit(rule, where, timeout_ms))
        log.append(f"{rule} {where}: {status} ({dt:.3f} s)")
        if status != VALID:
            why = "the solver answered unknown or timed out" if status != "invalid" else "it does not hold"
            raise Rejected(f"{rule} fails at {where}: {why}")
        count += 1

    pending = []  # (rule, where, formula): decided in groups by flush()

    def ob(rule, where, formula):
        pending.append((rule, where, formula))

    def flush():
        """Decide the pending obligations: a group of up to GROUP is first asked as one
        conjunction (valid exactly when each member is); a group that does not come back valid
        is halved, down to single obligations decided with the full time limit — so a failure is
        reported for the first failing obligation, exactly as when each is asked alone."""

        def go(group):
            nonlocal count
            if len(group) == 1:
                decide_now(*group[0])
                return
            rule, where, _f = group[0]
            status, dt = decide(
                z3.And(*[f for _r, _w, f in group]), enc, hyps, limit(rule, where, min(timeout_ms, GROUP_MS))
            )
            if status == VALID:
                for r, w, _f in group:
                    log.append(f"{r} {w}: valid (one of {len(group)} asked together, {dt:.3f} s)")
                count += len(group)
                return
            half = len(group) // 2
            go(group[:half])
            go(group[half:])

        for k in range(0, len(pending), GROUP):
            go(pending[k : k + GROUP])
        pending.clear()

    # each label and bound over the pre-state, encoded once
    lam0 = {nid: E(n.lam, what=f"the label at {_at(aut, cfa, nid)}") for nid, n in aut.nodes.items()}
    kap0 = {nid: R(n.kappa, what=f"the failure spent at {_at(aut, cfa, nid)}") for nid, n in aut.nodes.items()}
    # FACT: each lemma the certificate offers must follow from `requires` alone (for every value of
    # its free variables); it is then a sound extra hypothesis of every obligation below
    proven = []
    for i, f in enumerate(facts):
        fz = E(f, what=f"fact {i}")
        decide_now("FACT", f"fact {i} `{_show(f)}`", fz)
        proven.append(fz)
    hyps.extend(proven)
    root = aut.nodes[aut.root]
    ob("INIT", _at(aut, cfa, root.id), z3.And(lam0[root.id], kap0[root.id] == 0))
    post_parts = [E(e, what="ensures") for e in cfa.ensures]
    post = z3.And(*post_parts) if post_parts else z3.BoolVal(True)
    for nid, n in aut.nodes.items():
        w = _at(aut, cfa, nid)
        lam = lam0[nid]
        outs = aut.out(nid)
        if outs and all(e.kind == "split" for e in outs):
            ob("COVER", f"split at {w}", z3.Implies(lam, z3.Or(*[E(_split_guard(e), what=w) for e in outs])))
        if nid == root.id:
            ob("BUDGET", w, z3.Implies(lam, kap0[nid] <= beta))
        if n.cfa_node == cfa.exit:
            ob("EXIT", w, z3.Implies(lam, post))
    for e in aut.edges:
        dst = aut.nodes[e.dst]
        w = _edge_where(aut, cfa, e)
        lam = lam0[e.src]
        ax = axioms.get(e.index)
        cost = z3.RealVal(0)
        if ax is not None:
            cost = R(ax.cost, what=w)
            side = [E(s, what=w) for s in ax.side]
            ob(
                "STEP",
                w + " (side conditions, cost within β)",
                z3.Implies(lam, z3.And(*side, kap0[e.src] + cost <= beta)),
            )
        try:
            st2 = step(enc, StepState(dict(env0), [lam], [], z3.RealVal(0), []), e.stmt, ax)
        except Exception as exc:  # noqa: BLE001
            raise Rejected(f"STEP at {w}: cannot encode the statement: {exc}") from None
        goal = z3.And(E(dst.lam, st2.env, w), kap0[e.src] + cost <= R(dst.kappa, st2.env, w))
        ob("STEP", w, z3.Implies(st2.context(), goal))
    flush()
    return count


# ---------------------------------------------------------------------------- 6. termination


def check_termination_rule(rankings, cfa, timeout_ms: int, deadline, log) -> int:
    """Rule TERMINATION: every loop of the rebuilt CFA terminates by the certificate's rankings."""
    if not cfa.loop_heads and not rankings:
        return 0
    enc = Encoder(cfa.types)
    hyps = [enc.expr(r, enc.initial_env()) for r in cfa.requires]

    def valid(formula):
        ms = timeout_ms
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ms = min(ms, int(left * 1000))
        status, dt = decide(formula, enc, hyps, ms)
        return status

    count = 0
    for rule, where, status in check_arguments(cfa, rankings, enc, valid):
        log.append(f"TERMINATION {rule} {where}: {status}")
        if status != VALID:
            why = "the solver answered unknown or timed out" if status != "invalid" else "it does not hold"
            what = where if rule == "RANKING" else f"{rule} fails at {where}: {why}"
            raise Rejected(
                f"TERMINATION: {what} (a run that never ends counts as failing, so every loop "
                "needs a termination argument)"
            )
        count += 1
    return count


__all__ = ["check_certificate", "CheckReport", "ProgramCheck", "Rejected", "to_json"]
