"""The conjunct split: a postcondition ``A && B`` whose ``B`` holds on every run.

Idea. Programs often claim a chance fact and, beside it, a fact about the loop's other
bookkeeping that holds on every run (``c <= n * o + t && busy == c * len``). A method that proves
the chance fact may have no rule for the other conjunct, and one that proves the bookkeeping
(the loop prover's invariants) may not bound the chance. The split proves them apart: the
postcondition is broken into its conjuncts (:func:`tamp.cfa.conjuncts.conjuncts`); each conjunct
``c`` is tried as the claim ``ensures c fails 0`` of the same program (same body, same
``requires``, inputs fixed alike) by the whole portfolio; the conjuncts proved so form ``S``,
and the others ``R`` are then proved together with the claim's bound β.

Soundness. A run fails the claim when it violates a conjunct, fails an ``assert`` or does not
end; such a run fails ``ensures c`` for a violated ``c`` in ``S`` or fails ``ensures R`` (every
sub-claim is the same program, so a failed ``assert`` or a run without end fails every one of
them). Hence Pr[fail] <= Σ_{c∈S} Pr[fail c] + Pr[fail R] <= 0 + β. Every sub-proof is a proof of
its own claim by a method whose own soundness argument counts a run that never ends as failing
(a bound 0 therefore also proves termination with probability 1: nontermination never gives a
"surely" for free). ``S`` and ``R`` must be nonempty and together hold every conjunct; the
certificate (``method: "conjuncts"``, :mod:`tamp.certificate.conj_checker`) records ``S`` with a
proof per conjunct and ``R`` with its proof, and ``tamp check-proof`` rebuilds every sub-claim
from the source and checks the proofs by their own methods' rules.

Cost. The split is tried only when the other methods did not prove the whole claim, never on a
single conjunct, in two phases (:func:`tamp.prover.portfolio._walk`). The first (the sure
conjuncts, then the rest with the claim's bound) comes before expected failure (which may search
until the deadline), with half the time left (concentration, which may search until the deadline
on a conjunct it has no rule for, gets half the time then); the conjuncts tried with bound 0
share half of that time, the rest gets what remains. The second (:func:`try_shares`: every
conjunct left proved apart with a share of the bound, a walk of the portfolio per conjunct and
share) comes after expected failure, which proves many such claims whole in a fraction of the
time (two hashes of a window, three pushes colliding), and then gets half the time left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import z3

from lang import ast as A
from lang.errors import TampError
from tamp.cfa import CFA, build_cfa
from tamp.cfa.conjuncts import conjuncts, part_program, shares_fit, splittable
from tamp.prover.base.smt import VALID, Encoder, Stats, is_valid
from tamp.prover.trace.result import ProofResult
from tamp.show import show_expr

from .shares import share_proposals

__all__ = ["ConjResult", "try_conjuncts", "try_shares"]

#: the portfolio on a sub-claim: ``prove(program, cfa, deadline) -> (result, other methods' reasons)``
Prove = Callable[[A.Program, CFA, Optional[float]], Tuple[ProofResult, List[str]]]


@dataclass(repr=False)
class ConjResult(ProofResult):
    """A failure bound proved by the conjunct split: the conjuncts that hold on every run with
    their proofs (bound 0), the rest and its proof (the claim's bound)."""

    sure: List[Tuple[A.Expr, ProofResult]] = field(default_factory=list)
    rest: List[A.Expr] = field(default_factory=list)
    rest_proof: Optional[ProofResult] = None
    #: the bounds the ``sure`` parts are proved with (empty: all 0) and the rest's (None: the
    #: claim's); set when the conjuncts are proved apart with shares of the bound (:mod:`.shares`)
    sure_bounds: List[A.Expr] = field(default_factory=list)
    rest_bound: Optional[A.Expr] = None


def _left(deadline: Optional[float]) -> Optional[float]:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


#: the sure conjuncts (with their bound-0 proofs) and the rest, as the first phase found them
Split = Tuple[List[Tuple[A.Expr, ProofResult]], List[A.Expr]]


def try_conjuncts(
    program: A.Program,
    cfa: CFA,
    t0: float,
    deadline: Optional[float],
    prove: Prove,
    shares: bool = True,
    memo: Optional[Dict[str, Split]] = None,
) -> Tuple[Optional[ConjResult], str]:
    """``(ConjResult or None, why)``; why is '' when the claim is not split (one conjunct, a
    reliability claim). The first phase: the conjuncts that hold on every run, and the rest with
    the claim's bound; with ``shares`` also the second (:func:`try_shares`). The split the first
    phase found is kept in ``memo`` for a second phase tried later."""
    if not splittable(program):
        return None, ""
    conj = conjuncts(program.ensures)
    sure: List[Tuple[A.Expr, ProofResult]] = []
    left = _left(deadline)
    share = None if left is None else left / (2 * len(conj))
    for c in conj:
        if deadline is not None and time.monotonic() >= deadline:
            return None, "the time limit was reached while proving the conjuncts apart"
        sub = _sub(program, [c], A.num(0), cfa)
        if sub is None:
            continue
        sub_deadline = None if share is None or deadline is None else min(deadline, time.monotonic() + share)
        result, _ = prove(sub[0], sub[1], sub_deadline)
        if result.verdict == "proved":
            sure.append((c, result))
    if len(sure) == len(conj):  # every conjunct is sure: the last one is the rest, with the bound
        sure = sure[:-1]
    names = [c for c, _ in sure]
    rest = [c for c in conj if c not in names]
    if memo is not None:
        memo["split"] = (sure, rest)
    why = "no conjunct of the postcondition was proved to hold on every run"
    if sure:
        got, why = _sure_and_rest(program, cfa, t0, deadline, prove, sure, rest)
        if got is not None:
            return got, ""
    if not shares or len(rest) < 2:
        return None, why
    shared, why_shared = _shared(program, cfa, t0, deadline, prove, sure, rest)
    if shared is not None:
        return shared, ""
    return None, f"{why}; {why_shared}"


def try_shares(
    program: A.Program,
    cfa: CFA,
    t0: float,
    deadline: Optional[float],
    prove: Prove,
    memo: Optional[Dict[str, Split]] = None,
) -> Tuple[Optional[ConjResult], str]:
    """The second phase: the conjuncts not proved to hold on every run, each proved apart with a
    share of the claim's bound (:func:`_shared`), beside the sure ones of the first phase (read
    from ``memo``; without it the first phase runs here, without its own second phase)."""
    if not splittable(program):
        return None, ""
    split = None if memo is None else memo.get("split")
    if split is None:
        got, why = try_conjuncts(program, cfa, t0, deadline, prove, shares=False, memo=(memo := {}))
        if got is not None:
            return got, ""
        split = memo.get("split")
        if split is None:
            return None, why
    sure, rest = split
    if len(rest) < 2:
        return None, ""
    shared, why = _shared(program, cfa, t0, deadline, prove, sure, rest)
    return shared, "" if shared is not None else why


def _sure_and_rest(
    program: A.Program,
    cfa: CFA,
    t0: float,
    deadline: Optional[float],
    prove: Prove,
    sure: List[Tuple[A.Expr, ProofResult]],
    rest: List[A.Expr],
) -> Tuple[Optional[ConjResult], str]:
    """The rest proved together with the claim's bound, beside the sure conjuncts."""
    bound = cfa.bound
    names = [c for c, _ in sure]
    sub = _sub(program, rest, bound, cfa)
    shown_sure = " and ".join(f"`{show_expr(c)}`" for c in names) + (" holds" if len(names) == 1 else " hold")
    shown_rest = show_expr(_conj(rest))
    if sub is None:
        return None, f"{shown_sure} on every run, but the claim `{shown_rest}` could not be built"
    result, reasons = prove(sub[0], sub[1], deadline)
    if result.verdict != "proved":
        trace = (result.failed_trace or "").strip().splitlines()[:1]  # the union bound's stuck point
        lines = trace + [ln.strip() for ln in (result.message or "").splitlines()] + reasons
        said = [ln for ln in lines if ln and not ln.startswith("not proved (")]
        return None, (
            f"{shown_sure} on every run, but the rest `{shown_rest}` was not proved with the bound "
            f"{show_expr(bound)}" + (": " + "; ".join(said) if said else "")
        )
    return ConjResult(
        cfa.name,
        "failure-bound",
        "proved",
        time.monotonic() - t0,
        show_expr(bound),
        f"{shown_sure} on every run (proved with bound 0); the rest `{shown_rest}` fails with "
        f"probability at most {show_expr(bound)}",
        cfa=cfa,
        stats={**result.stats, "method": "conjuncts"},
        sure=sure,
        rest=rest,
        rest_proof=result,
    ), ""


def _fits(cfa: CFA, shares: List[A.Expr]) -> bool:
    """``Σ shares <= β`` valid under ``requires`` (:func:`tamp.cfa.conjuncts.shares_fit`)."""
    enc = Encoder(cfa.types)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in cfa.requires]
    try:
        formula = enc.expr(shares_fit(shares, cfa.bound), env)
    except (TampError, z3.Z3Exception):
        return False
    return is_valid(formula, enc, Stats(), 5000, hyps) == VALID


#: seconds for one conjunct's proof with a proposed share when the claim has no time limit (the
#: split is one proposal among others; an unbounded search on it would hold up the rest)
SHARE_S = 10.0


def _shared(
    program: A.Program,
    cfa: CFA,
    t0: float,
    deadline: Optional[float],
    prove: Prove,
    sure: List[Tuple[A.Expr, ProofResult]],
    rest: List[A.Expr],
) -> Tuple[Optional[ConjResult], str]:
    """Each conjunct of ``rest`` proved apart, with its share of the claim's bound
    (:mod:`.shares`), by the whole portfolio; the sure conjuncts keep bound 0."""
    bound = cfa.bound
    proposals = [p for p in share_proposals(bound, len(rest)) if _fits(cfa, p)]
    if not proposals:
        return None, f"no split of the bound {show_expr(bound)} among the conjuncts apart fits it"
    done: Dict[Tuple[A.Expr, A.Expr], ProofResult] = {}
    why = ""
    for shares in proposals:
        left = _left(deadline)
        per = None if left is None else left / (len(rest) * len(proposals))
        proofs: List[ProofResult] = []
        for c, s in zip(rest, shares):
            if deadline is not None and time.monotonic() >= deadline:
                return None, "the time limit was reached while proving the conjuncts apart with shares of the bound"
            result = done.get((c, s))
            if result is None:
                sub = _sub(program, [c], s, cfa)
                if sub is None:
                    why = f"the claim `{show_expr(c)}` could not be built"
                    break
                # without a time limit a share is still only a proposal: its search gets SHARE_S
                sub_deadline = (
                    time.monotonic() + SHARE_S
                    if per is None or deadline is None
                    else min(deadline, time.monotonic() + per)
                )
                result, _ = prove(sub[0], sub[1], sub_deadline)
                if result.verdict != "proved":
                    why = f"`{show_expr(c)}` was not proved apart with the share {show_expr(s)} of the bound"
                    break
                done[(c, s)] = result
            proofs.append(result)
        else:
            parts = [*sure, *zip(rest[:-1], proofs[:-1])]
            shown = ", ".join(f"`{show_expr(c)}` with {show_expr(s)}" for c, s in zip(rest, shares))
            return ConjResult(
                cfa.name,
                "failure-bound",
                "proved",
                time.monotonic() - t0,
                show_expr(bound),
                f"the conjuncts proved apart ({shown}"
                + (", the others on every run" if sure else "")
                + f"); their bounds add up to at most {show_expr(bound)}",
                cfa=cfa,
                stats={**proofs[-1].stats, "method": "conjuncts"},
                sure=parts,
                rest=[rest[-1]],
                rest_proof=proofs[-1],
                sure_bounds=[A.num(0)] * len(sure) + list(shares[:-1]),
                rest_bound=shares[-1],
            ), ""
    return None, why


def _sub(program: A.Program, part: List[A.Expr], bound: A.Expr, cfa: CFA) -> Optional[Tuple[A.Program, CFA]]:
    prog = part_program(program, part, bound)
    try:
        return prog, build_cfa(prog, None, cfa.path)
    except (TampError, z3.Z3Exception):
        return None


def _conj(parts: List[A.Expr]) -> A.Expr:
    out = parts[0]
    for p in parts[1:]:
        out = A.Binary("&&", out, p)
    return out
