"""Decide one program's ``private`` claim: search the alignments, prove the obligations.

For each choice of alignments (:func:`tamp.privacy.product.alignment_choices`) the two runs are
executed in the product (:class:`~tamp.privacy.product.Product`), whose steps are proved as they
are generated; then the outputs must agree at exit and the accumulated cost must be at most E
(for ``private ?``: at most some candidate expression, the smallest one proved is reported). The
first choice whose every obligation z3 proves is the proof; its obligations are kept in the
result as data. Sound for the reason given in :mod:`tamp.privacy.product`; a claim that no
choice proves is ``unknown`` with the first failed step of the most promising attempt, never
``proved``.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from fractions import Fraction
from typing import Any, Dict, Iterator, List, Optional, Tuple

import z3  # type: ignore[import-untyped,unused-ignore]

from lang import ast as A
from lang.errors import TampError
from lang.evaluate import constant_value
from lang.parser import parse_expr
from lang.printer import print_expr
from lang.typecheck import check_program
from lang.walk import free_vars, substitute
from tamp.core.z3context import proof_context

from .counterexample import Search
from .product import (
    LAPLACE,
    ONE_SIDED,
    Align,
    Interrupted,
    Obligation,
    Product,
    Unsupported,
    _Failed,
    alignment_choices,
    disjuncts,
    shear_draw,
    valid,
)
from .result import PrivacyResult

MAX_ATTEMPTS = 64
#: what an alignment attempt stopped at the end of its time slice yields
INTERRUPTED = "interrupted"
#: seconds spent looking for a counterexample in all
CX_BUDGET = 20.0
#: the first slices of counterexample search and of alignment attempts: the two alternate, each
#: proof slice and each search slice twice the last, so a broken mechanism is refuted without waiting for every alignment to
#: fail and a private one is proved without waiting for the search (each is sound on its own: a
#: counterexample is a proof of the negation, whatever the alignments would do). The first proof
#: slice is 2 s: an attempt cut short is run again from its start, and the suite's sparse vector
#: proofs take 1-3 s (with 1 s they took up to twice as long; svtLyu3's search waits less, though)
CX_SLICE = 1.0
PROOF_SLICE = 2.0
#: the very first search slice: short (the short inputs and first public values, where most broken
#: mechanisms fail, take a fraction of a second), so a one-attempt proof does not wait long
FIRST_CX_SLICE = 0.6


def prove_privacy(
    prog: A.Program,
    timeout: Optional[float] = None,
    path: str = "<string>",
    source: Optional[str] = None,
    inputs: Optional[Dict[str, object]] = None,
    counterexamples: bool = True,
) -> PrivacyResult:
    """The verdict on ``prog``'s ``private`` clause (proved, violated or unknown; see the module
    doc). It is decided in a fresh z3 context (:mod:`tamp.core.z3context`), so the answer does not
    depend on what the process proved before."""
    with proof_context():
        return _prove_privacy(prog, timeout, path, source, inputs, counterexamples)


def _prove_privacy(
    prog: A.Program,
    timeout: Optional[float],
    path: str,
    source: Optional[str],
    inputs: Optional[Dict[str, object]],
    counterexamples: bool,
) -> PrivacyResult:
    assert prog.private is not None and prog.neighbours is not None
    t0 = time.monotonic()
    claim = prog.private
    infer = isinstance(claim.epsilon, A.Hole)
    eps_text = "?" if infer else print_expr(claim.epsilon)
    types = check_program(prog, path, source)
    best: Optional[Tuple[int, Obligation]] = None
    deadline = t0 + timeout if timeout else None
    searched = infer or not counterexamples

    finder = Search(prog, types, dict(inputs or {}))

    def refuted(budget: float) -> Optional[PrivacyResult]:
        left = budget if deadline is None else min(budget, deadline - time.monotonic())
        cx = finder.run(left) if left > 0.1 else None
        if cx is None:
            return None
        return PrivacyResult(
            prog.name,
            "privacy",
            "violated",
            time.monotonic() - t0,
            bound=eps_text,
            message=f"ε = {eps_text} is exceeded: P[{cx['event']}] differs by more than exp(ε) between the inputs",
            epsilon=eps_text,
            counterexample=cx,
            epsilon_value=_value(eps_text, inputs) or cx.get("epsilon_value"),
        )

    until = [float("inf")]  # when the running attempt must stop (see _proofs)
    attempts = _case_proofs(_Job(prog, types, claim, eps_text, inputs, t0, until), infer)
    spent = 0.0  # seconds of counterexample search so far
    proof_slice, cx_slice = PROOF_SLICE, FIRST_CX_SLICE
    proofs_left = True
    stop: Optional[PrivacyResult] = None
    while True:
        if not searched and spent < CX_BUDGET:  # a slice of counterexample search
            t = time.monotonic()
            shown = refuted(min(cx_slice, CX_BUDGET - spent))
            spent += time.monotonic() - t
            if shown is not None:
                return shown
            searched = finder.done
        if not proofs_left:
            if searched or spent >= CX_BUDGET or (deadline is not None and time.monotonic() > deadline):
                break
            cx_slice = CX_BUDGET
            continue
        slice_end = time.monotonic() + proof_slice
        # an attempt may overrun its slice by one slice length; then it stops and is run again
        # in the next (twice as long) slice, so a slow attempt cannot hold the search up
        until[0] = slice_end + proof_slice if deadline is None else min(slice_end + proof_slice, deadline)
        while time.monotonic() < slice_end:  # a slice of alignment attempts
            if deadline is not None and time.monotonic() > deadline:
                proofs_left = False
                break
            step = next(attempts, None)
            if step is None:
                proofs_left = False
                break
            if step is INTERRUPTED:
                break
            if isinstance(step, PrivacyResult):
                if step.verdict == "proved":
                    return step
                stop, proofs_left = step, False  # the alignments cannot read the program: search on
                break
            if best is None or step[0] > best[0]:
                best = step
        proof_slice, cx_slice = proof_slice * 2, max(CX_SLICE, cx_slice * 2)  # the first one is short
    if stop is not None:
        return dataclasses.replace(stop, time_s=time.monotonic() - t0)
    if best is None:
        return _unknown(prog, eps_text, "no alignment was tried (time limit)", None, t0)
    ob = best[1]
    return _unknown(
        prog,
        eps_text,
        f"no alignment proves the claim: cannot prove that {ob.what}",
        ob.pos.line if ob.pos else None,
        t0,
    )


@dataclasses.dataclass(frozen=True)
class _Job:
    """What every alignment attempt for one claim reads: the program and its types, the claim
    and its ε as text, the fixed inputs (``--input``), the start time, and ``until`` (a one-cell
    list: when the running attempt must stop, moved by the caller between slices)."""

    prog: A.Program
    types: Any
    claim: A.Private
    eps_text: str
    inputs: Optional[Dict[str, object]]
    t0: float
    until: List[float]


def _case_proofs(job: _Job, infer: bool) -> Iterator[Any]:
    """:func:`_proofs`, case by case when ``neighbours`` is a disjunction ``R1 || R2 || …``:
    E-DP for the pairs of R is E-DP for the pairs of each Ri, so each case is proved on its own,
    with its own alignment (a monotone relation's "all up" and "all down" need different ones).
    The result is proved when every case is; its ``cases`` hold the proofs.

    ``private ?`` by cases: first each case's smallest ε is inferred on its own; the answer is
    their maximum, i.e. the one of them that every case's cost is proved to be at most — the
    cases are proved again with that ε as the claim, so the result's obligations are exactly
    those of ``private E`` with E the reported ε (sound: a pair in R is in some Ri). Cases whose
    ε are incomparable give no answer (unknown)."""
    assert job.prog.neighbours is not None
    cases = disjuncts(job.prog.neighbours)
    if len(cases) == 1:
        yield from _proofs(job, infer)
        return
    if not infer:
        yield from _by_cases(job, cases)
        return
    found: List[str] = []  # each case's smallest ε
    for case in cases:
        for step in _proofs(job, True, case):
            if isinstance(step, PrivacyResult):
                if step.verdict != "proved":
                    yield step
                    return
                found.append(step.epsilon)
                break
            yield step
        else:
            return  # a case without a proof: no proof
    for text in dict.fromkeys(found):  # the maximum is one of them: the one every case proves
        bound = dataclasses.replace(job.claim, epsilon=parse_expr(text))
        fixed = dataclasses.replace(job, prog=dataclasses.replace(job.prog, private=bound), claim=bound, eps_text=text)
        for step in _by_cases(fixed, cases):
            if isinstance(step, PrivacyResult) and step.verdict == "proved":
                yield step
                return
            if isinstance(step, PrivacyResult):
                break
            yield step


def _by_cases(job: _Job, cases: List[A.Expr]) -> Iterator[Any]:
    """The steps of proving ``private eps_text`` for every case in turn; the last is the proved
    result by cases (or a case's ``unknown``); ends without a result when a case has no proof."""
    done: List[PrivacyResult] = []
    for case in cases:
        for step in _proofs(job, False, case):
            if isinstance(step, PrivacyResult):
                if step.verdict != "proved":
                    yield step
                    return
                done.append(dataclasses.replace(step, case=print_expr(case)))
                break
            yield step
        else:
            return  # a case without a proof: no proof
    yield PrivacyResult(
        job.prog.name,
        "privacy",
        "proved",
        time.monotonic() - job.t0,
        bound=job.eps_text,
        epsilon=job.eps_text,
        alignment=[a for r in done for a in r.alignment],
        invariants=[f"case {r.case}: {i}" for r in done for i in r.invariants],
        obligations=[o for r in done for o in r.obligations],
        epsilon_value=_value(job.eps_text, job.inputs),
        cases=done,
    )


def _proofs(job: _Job, infer: bool, case: Optional[A.Expr] = None) -> Iterator[Any]:
    """The alignment attempts one by one: each yields ``(rank, failed obligation)`` when it fails,
    or a result (``proved``, or ``unknown`` when the product cannot read the program), and ends.
    ``case``: the disjunct of ``neighbours`` assumed (default: the whole relation). An attempt
    still running when ``until[0]`` passes yields :data:`INTERRUPTED` and is run again, from the
    start, when the generator is resumed."""
    prog, types, claim, inputs, t0, until = job.prog, job.types, job.claim, job.inputs, job.t0, job.until
    eps_text = job.eps_text  # replaced by the inferred ε under ``private ?``
    todo = itertools.islice(_attempts(prog, types), MAX_ATTEMPTS)
    retry: Optional[Tuple[Optional[str], Dict[int, Align]]] = None
    while True:
        item = retry if retry is not None else next(todo, None)
        retry = None
        if item is None:
            return
        point, choices = item
        prod = Product(prog, types, choices, point, case)
        prod.until = until
        try:
            st = prod.run()
            hyps = prod.final_hyps(st)
            cost = st.cost
            if prod.shear is not None:  # the prophecy fixed, ties removed, the winner's shift paid
                extra, paid = prod.shear_exit(st)
                assert point is not None
                # only the runs whose output is k are paired (the sum over k), so the rest is assumed
                hyps, cost = hyps + extra + [st.env1[point] == prod.k], cost + paid
            for name in claim.outputs:
                if point is not None and name == point:  # P[out = k | in] <= exp(E) P[out = k | in'] for every k
                    prod.oblige_final(
                        hyps,
                        z3.Implies(st.env1[name] == prod.k, st.env2[name] == prod.k),
                        f"the output {name} is k in the second run when it is k in the first",
                        claim,
                    )
                    continue
                if point is not None:  # another output, on the event out = k (the same sum over k)
                    prod.oblige_final(
                        hyps,
                        z3.Implies(st.env1[point] == prod.k, st.env1[name] == st.env2[name]),
                        f"the output {name} is the same in both runs when {point} is k in the first",
                        claim,
                    )
                    continue
                prod.oblige_final(
                    hyps, st.env1[name] == st.env2[name], f"the output {name} is the same in both runs", claim
                )
            if claim.delta is not None:
                d = prod.tr1(claim.delta, st)
                prod.oblige_final(prod.base, d >= 0, "δ is not negative", claim.delta)
            if infer:
                found = _infer(prod, hyps, cost)
                if found is None:
                    raise _Failed(
                        Obligation("no candidate ε bounds the privacy cost", claim.pos, hyps, z3.BoolVal(False))
                    )
                eps_text, _ = found
            else:
                e = prod.tr1(claim.epsilon, st)
                prod.oblige_final(hyps, cost <= e, f"the privacy cost is at most {eps_text}", claim)
        except Unsupported as exc:
            line = getattr(getattr(exc.node, "pos", None), "line", None)
            yield _unknown(prog, eps_text, str(exc), line, t0)
            return
        except Interrupted:  # its slice is over: the same attempt again in the next one
            retry = item
            yield INTERRUPTED
            continue
        except _Failed as f:
            yield (len(prod.obligations), f.ob)
            continue
        except TampError as exc:
            yield _unknown(prog, eps_text, str(exc), None, t0)
            return
        except z3.Z3Exception as exc:  # a term this engine builds wrongly: no proof, say why
            yield _unknown(prog, eps_text, f"the privacy engine cannot encode this program ({exc})", None, t0)
            return
        yield PrivacyResult(
            prog.name,
            "privacy",
            "proved",
            time.monotonic() - t0,
            bound=eps_text,
            epsilon=eps_text,
            alignment=prod.steps,
            invariants=prod.invariants,
            obligations=prod.obligations,
            loop_invariants=dict(prod.loop_invariants),
            pointwise=point,
            epsilon_value=_value(eps_text, inputs),
        )
        return


def _attempts(prog: A.Program, types: Any) -> Iterator[Tuple[Optional[str], Dict[int, Align]]]:
    """The alignments to try: for the outputs' equality first; then, when the output is one
    int variable, value by value (pointwise: out = k in the first run implies out = k in
    the second, which gives P[out ∈ S] <= exp(E) P'[out ∈ S] by summing over the k in S).
    The two searches share :data:`MAX_ATTEMPTS`, half each when both apply, and take turns
    (an attempt of one, then of the other), so neither waits for the other's failures. Before
    them, for a program of the shear's shape (:func:`~tamp.privacy.product.shear_draw`) whose
    claim has one int output among several (report-noisy-max releasing a gap), the shear,
    pointwise on that output (product module doc)."""
    claim = prog.private
    assert claim is not None
    outs = claim.outputs
    sheared = shear_draw(prog)
    ints = [o for o in outs if types.locals.get(o) == A.INT]
    if sheared is not None and len(outs) > 1 and len(ints) == 1:  # report-noisy-max with a gap: the shear first
        yield ints[0], {id(sheared): Align("shear", 1)}
    pointwise = len(outs) == 1 and types.locals.get(outs[0]) == A.INT
    limit = MAX_ATTEMPTS // 2 if pointwise else MAX_ATTEMPTS
    plain: Iterator[Tuple[Optional[str], Dict[int, Align]]] = (
        (None, c) for c in itertools.islice(alignment_choices(prog), limit)
    )
    if not pointwise:
        yield from plain
        return
    point = ((outs[0], c) for c in itertools.islice(alignment_choices(prog, pointwise=True), limit))
    for pair in itertools.zip_longest(point, plain):  # pointwise first: a discrete output is its case
        for a in pair:
            if a is not None:
                yield a


def _unknown(prog: A.Program, eps: str, reason: str, line: Optional[int], t0: float) -> PrivacyResult:
    return PrivacyResult(
        prog.name, "privacy", "unknown", time.monotonic() - t0, bound=eps, message=reason, epsilon=eps, line=line
    )


def _value(eps: str, inputs: Optional[Dict[str, object]]) -> Optional[str]:
    """The value of ε when ``--input`` fixes every input it reads (exact, as text)."""
    if not inputs or eps == "?":
        return None
    e = parse_expr(eps)
    if not set(free_vars(e)) <= set(inputs):
        return None
    try:
        v = constant_value(substitute(e, {k: _literal(v) for k, v in inputs.items() if k in set(free_vars(e))}))
    except Exception:  # noqa: BLE001 - a value that does not fold (log of a fraction) is left out
        return None
    return None if v is None else str(v)


def _literal(v: Any) -> A.Expr:
    return A.num(Fraction(v)) if not isinstance(v, bool) else A.BoolLit(v)


# ---------------------------------------------------------------------------- private ?


def _candidates(prog: A.Program) -> List[A.Expr]:
    """Candidate ε: k·(1/s) and k·(trip count)·(1/s) per draw of scale s, and their sum."""
    units: List[A.Expr] = []

    def visit(n: A.Node, trips: Optional[A.Expr]) -> None:
        if isinstance(n, A.Sample) and n.dist.func in LAPLACE + ONE_SIDED and len(n.dist.args) == 2:
            u: A.Expr = A.Binary("/", A.num(1), n.dist.args[1])
            units.append(u)  # one draw's cost (an L1 relation pays for all of a loop's draws once)
            if trips is not None:
                units.append(A.Binary("*", trips, u))
            return
        if isinstance(n, A.For):
            t: A.Expr = A.Binary("-", n.hi, n.lo)
            if n.inclusive:
                t = A.Binary("+", t, A.num(1))
            visit(n.body, t if trips is None else A.Binary("*", trips, t))
            return
        if isinstance(n, A.While) and isinstance(n.cond, A.Binary) and n.cond.op in ("<", "<="):
            visit(n.body, n.cond.right if trips is None else A.Binary("*", trips, n.cond.right))
            return
        for c in A.children(n):
            visit(c, trips)

    visit(prog.body, None)
    bases = list(dict.fromkeys(units))
    if len(bases) > 1:
        total = bases[0]
        for u in bases[1:]:
            total = A.Binary("+", total, u)
        bases.append(total)
    out = []
    for b in bases:
        for k in (Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2), Fraction(3), Fraction(4)):
            kn = A.num(int(k)) if k.denominator == 1 else A.Binary("/", A.num(k.numerator), A.num(k.denominator))
            out.append(_tidy(A.Binary("*", kn, b)))
    return out


def _tidy(e: A.Expr) -> A.Expr:
    """``e`` simplified by sympy when the result is again an expression of the language."""
    import sympy  # deferred: only `private ?` needs it

    names = sorted(set(free_vars(e)))
    try:
        syms = {n: sympy.Symbol(n, positive=True) for n in names}
        x = sympy.simplify(sympy.sympify(print_expr(e).replace("div", "//"), locals=syms))
        text = str(x)
        if "**" in text or "//" in text:
            return e
        return parse_expr(text)
    except Exception:  # noqa: BLE001 - sympy cannot read it: keep the expression as it is
        return e


def _infer(prod: Product, hyps: List[Any], cost: Any) -> Optional[Tuple[str, A.Expr]]:
    """The smallest candidate ε that bounds ``cost`` (compared under ``requires``)."""
    proved: List[Tuple[A.Expr, Any]] = []
    for c in _candidates(prod.prog):
        try:
            t = prod.tr.translate(c, prod.inputs1)
        except Exception:  # noqa: BLE001 - a candidate the translation cannot encode is skipped
            continue
        if valid(hyps, cost <= t):
            proved.append((c, t))
    if not proved:
        return None
    base = prod.base
    for c, t in proved:
        if all(valid(base, t <= u) for _, u in proved):
            return print_expr(c), c
    c, _ = proved[0]
    return print_expr(c), c
