"""Markov, Chebyshev and Hoeffding on sums, by linearity of expectation: no invariant search.

The moments of the value a claim reads are computed from the program by
:mod:`tamp.cfa.expected` (``E[x]`` by linearity over the iterations; ``Var[x]`` as the sum of
the iterations' variances when their increments are independent; a postcondition reading several
accumulators through one linear form ``Σ v_j·x_j``, such as ``H - F``, is about that form, whose
per-iteration increment merges the accumulators' and keeps the covariances of shared draws). A claim ``x < t`` (any
comparison affine in ``x``) with ``x >= 0`` is proved by Markov's inequality
``Pr[x >= t] <= E[x]/t``; a claim ``abs(x - m) < a`` (or a one-sided one) by Chebyshev's
``Pr[|x - E[x]| >= a] <= Var[x]/a²``; a claim on the square ``x * x < t`` by Markov on it,
``Pr[x² >= t] <= E[x²]/t = (Var[x] + E[x]²)/t`` (no sign condition: ``x²`` is never negative); a claim
``x < t`` on an integer ``x`` (``x <= 1``: at most one event) by Markov on the pair count
``x(x - 1)``: it is never negative at an integer and at least ``t(t - 1)`` when ``x >= t > 1``, so
``Pr[x >= t] <= E[x(x - 1)]/(t(t - 1))`` with ``E[x(x - 1)] = Var[x] + E[x]² - E[x]`` (for a
count of independent events, ``Σ_{i≠j} p_i·p_j``: the union bound over pairs). The thresholds are candidates read off the
postcondition (:func:`tamp.cfa.expected.candidates`) and the obligations
(:func:`tamp.cfa.expected.obligations`: the analysis' side conditions, non-negativity, the
postcondition outside the tail, the budget) are decided with the solver under ``requires``.

Sound: the inequalities are textbook facts about the exact moments the analysis computes (see
its docstring for why they are exact); every deterministic fact they rest on is an obligation
decided by z3 (``unsat`` of the negation; ``unknown`` and timeouts are failures), and
``tamp check-proof`` recomputes the moments from the source and decides every obligation again
(:mod:`tamp.certificate.lin_checker`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Optional, cast

import z3

from axioms.lemmas import lemma_instances, pointwise_lemmas, sum_order_lemmas
from axioms.terms import transcendental_apps
from lang import ast as A
from lang.errors import TampError
from tamp.cfa import build_cfa
from tamp.cfa.conditioned import conditioned_program, support_obligations
from tamp.cfa.expected import LinClaim, NotApplicable, candidates, claim_of, obligations
from tamp.core.encode import Encoder
from tamp.core.validity import UNKNOWN, VALID, check_fresh, verdict
from tamp.prover.trace.check import Obligation
from tamp.prover.trace.result import ProofResult
from tamp.show import show_expr

QUERY_MS = 5000
#: the first try of an obligation with its array sums by linearity (the rewritten queries of the
#: dev corpora that are valid take at most 0.1 s: measured on the 2913 files of benchmarks/)
REWRITE_FIRST_MS = 1000

STATEMENTS = {
    "markov": "Pr[X >= t] <= E[X] / t for X >= 0 and t > 0 (Markov)",
    "chebyshev": "Pr[|X - E[X]| >= a] <= Var[X] / a^2 for a > 0 (Chebyshev)",
    "chebyshev_ub": "Pr[|X - E[X]| >= a] <= Var[X] / a^2 <= V / a^2 for a > 0 (Chebyshev; V bounds the variance "
    "by Popoviciu, (Σ|step|)^2/4 per iteration)",
    "markov2": "Pr[X^2 >= t] <= E[X^2] / t = (Var[X] + E[X]^2) / t for t > 0 (Markov on the square)",
    "pairs": "Pr[X >= t] <= E[X(X-1)] / (t(t-1)) = (Var[X] + E[X]^2 - E[X]) / (t(t-1)) for an integer X and "
    "t > 1 (Markov on X(X-1), never negative for integers)",
}
_H = "for X a sum of independent increments, the i-th in an interval of width w_i, and a > 0 (Hoeffding; "
for _rule, _what in (
    ("hoeffding", "Pr[|X - E[X]| >= a] <= 2 exp(-2 a^2 / sum w_i^2) "),
    ("hoeffding_lower", "Pr[X - E[X] <= -a] <= exp(-2 a^2 / sum w_i^2) "),
    ("hoeffding_upper", "Pr[X - E[X] >= a] <= exp(-2 a^2 / sum w_i^2) "),
):
    STATEMENTS[_rule] = _what + _H + "w_i from the increments' values, each iteration's range proved)"
    STATEMENTS[_rule + "_p"] = _what + _H + "w_i the sum of the |steps| of an iteration)"


def lemmas_for(f: z3.BoolRef, hyps: list, enc) -> list:
    """The shared lemma instances and the sum lemmas (pointwise equality, sign, order) of a query."""
    apps = transcendental_apps(z3.And(*hyps, f) if hyps else f)
    if not apps:
        return []
    sums = pointwise_lemmas(apps, enc) + sum_order_lemmas(apps, enc)
    return [lem for _n, lem in lemma_instances(apps, enc)] + [lem for _n, lem in sums]


def decide(formula: A.Expr, claim: LinClaim, ms: int) -> str:
    enc = Encoder(claim.types)
    env = enc.initial_env()
    hyps = [enc.expr(r, env) for r in claim.requires]
    f = enc.expr(formula, env)
    return verdict(check_fresh(f, hyps, lemmas_for(f, hyps, enc), timeout_ms=ms))


@dataclass
class LinProof:
    claim: LinClaim
    rule: str
    threshold: A.Expr
    beta: A.Expr
    obligations: list[tuple[str, str, A.Expr]]
    sums: tuple[int, ...] = ()  #: obligations asked with their array sums by linearity (tamp.cfa.sum_linear)
    #: the leading draws read as inputs (:mod:`tamp.cfa.conditioned`: the moments given each of
    #: their values, the claim's bound for every one); () when none
    conditioned: tuple[str, ...] = ()


@dataclass(repr=False)
class LinearityResult(ProofResult):
    """A failure bound proved by Markov or Chebyshev on moments computed by linearity."""

    proof: Optional[LinProof] = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self):
        out = super().to_json()
        out["method"] = "linearity"
        if self.proof is not None:
            b = self.proof.claim.base
            out["linearity"] = {
                "rule": self.proof.rule,
                "statement": STATEMENTS[self.proof.rule],
                "threshold": show_expr(self.proof.threshold),
                "mean": show_expr(b.mean),
                "variance": show_expr(b.var) if b.var is not None else None,
                "linear_sums": list(self.proof.sums),
            }
        return out

    def render_text(self) -> str:
        lines = [ProofResult.render_text(self).split("\n  axioms:")[0]]
        if self.proof is not None:
            p, b = self.proof, self.proof.claim.base
            lines.append(f"  linearity: E[X] = {show_expr(b.mean)}")
            if p.rule in ("chebyshev", "chebyshev_ub", "markov2", "pairs") and b.var is not None:
                lines.append(f"    Var[X] = {show_expr(b.var)} (independent increments)")
            if p.rule == "chebyshev_ub" and b.var_ub is not None:
                lines.append(f"    Var[X] <= {show_expr(b.var_ub)} (Popoviciu: each step in an interval)")
            if p.rule in ("hoeffding", "hoeffding_lower", "hoeffding_upper") and b.width2 is not None:
                lines.append(f"    sum of the squared widths of the increments: {show_expr(b.width2)}")
            lines.append(f"    {STATEMENTS[p.rule]}, threshold {show_expr(p.threshold)}")
            if p.sums:
                lines.append("    array sums compared by linearity (constants out of each sum, terms apart)")
            lines.append(
                f"  obligations: {len(p.obligations)} valid under `requires` (side conditions, "
                "non-negativity, postcondition, budget)"
            )
        return "\n".join(lines)


def _decide_in_time(f: A.Expr, claim: LinClaim, deadline: Optional[float], ms: int = QUERY_MS) -> str:
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        ms = min(ms, int(left * 1000))
    try:
        return decide(f, claim, ms)
    except Exception as exc:  # noqa: BLE001 - a formula z3 cannot build: this candidate fails
        return f"not encodable ({exc})"


def try_linearity(program: A.Program, cfa, deadline: Optional[float], t0: float):
    """(a proved :class:`LinearityResult`, "") or (None, why not); last, the program with its
    leading uniform draws read as inputs (:func:`try_conditioned`)."""
    result, why = _try_linearity(program, cfa, deadline, t0)
    if result is None and why != "timeout":
        got = try_conditioned(program, cfa, deadline, t0)
        if got is not None:
            return got, ""
    return result, why


def try_conditioned(program: A.Program, cfa, deadline: Optional[float], t0: float):
    """A proof of the claim given every value of the program's leading uniform draws
    (:func:`tamp.cfa.conditioned.conditioned_program`: the moments are computed with those draws
    as inputs, each in its support, and the obligations hold for every value of them, so the bound
    holds given each: total probability), or None. The supports must be non-empty under
    ``requires`` (:func:`tamp.cfa.conditioned.support_obligations`)."""
    got = conditioned_program(program, cfa.types)
    if got is None:
        return None
    cond, names = got
    base = cast(LinClaim, SimpleNamespace(types=dict(cfa.types), requires=list(cfa.requires)))  # what decide reads
    if any(_decide_in_time(f, base, deadline) != VALID for _k, _w, f in support_obligations(program, cfa.types)):
        return None
    try:
        cond_cfa = build_cfa(cond, cfa.bound, cfa.path)
    except TampError:
        return None
    result, _why = _try_linearity(cond, cond_cfa, deadline, t0)
    if result is None or result.proof is None:
        return None
    result.proof.conditioned = names
    result.cfa = cfa
    result.message = (
        f"given each value of {', '.join(names)} (drawn first, read as input(s) in their support): "
        "the moments and the bound hold for every value"
    )
    return result


def _decide_plain_or_by_linearity(claim, rule, thr, beta, n: int, obligation, deadline):
    """(status, obligation) of the ``n``-th obligation: the obligation as given, or rewritten when
    it is valid with its array sums taken apart (:mod:`tamp.cfa.sum_linear`: constants out of
    each sum, terms apart; only true facts are added). A POST or BUDGET obligation whose rewrite differs is asked that way first:
    the rewritten question is the easy one when sums must be compared, and the plain one, on such
    an obligation, may run to its clock limit in nonlinear arithmetic (where z3 sometimes does not
    stop: :mod:`tamp.core.watchdog`). The rewrite is first given :data:`REWRITE_FIRST_MS`; when
    it is not valid then, the plain obligation, and when that is not valid either and the rewrite
    ran out of time, the rewrite again with the full time."""
    kind, _where, f = obligation
    alt = None
    if kind in ("POST", "BUDGET"):
        try:
            alt = obligations(claim, rule, thr, beta, sums=(n,))[n]
        except NotApplicable:
            alt = None
    if alt is None or alt[2] == f:
        return _decide_in_time(f, claim, deadline), obligation
    first = _decide_in_time(alt[2], claim, deadline, REWRITE_FIRST_MS)
    if first in ("timeout", VALID):
        return first, alt
    status = _decide_in_time(f, claim, deadline)
    if status not in ("timeout", VALID) and first == UNKNOWN:  # the rewrite with the full time
        if _decide_in_time(alt[2], claim, deadline) == VALID:
            return VALID, alt
    return status, obligation


def _try_linearity(program: A.Program, cfa, deadline: Optional[float], t0: float):
    try:
        claim = claim_of(program, cfa)
    except NotApplicable:
        return None, ""
    beta = cfa.bound
    why = ""
    for rule, thr in candidates(claim, beta):
        try:
            obs = obligations(claim, rule, thr, beta)
        except NotApplicable as exc:
            why = str(exc)
            continue
        bad = None
        sums: list[int] = []
        for n, ob in enumerate(obs):
            status, used = _decide_plain_or_by_linearity(claim, rule, thr, beta, n, ob, deadline)
            if status == "timeout":
                return None, "timeout"
            if used is not ob:
                obs[n] = used
                sums.append(n)
            kind, where, _f = ob
            if status != VALID:
                bad = (kind, where, status)
                break
        if bad is None:
            proof = LinProof(claim, rule, thr, beta, obs, tuple(sums))
            return (
                LinearityResult(
                    program.name,
                    "failure-bound",
                    "proved",
                    time.monotonic() - t0,
                    show_expr(beta),
                    "",
                    cfa=cfa,
                    stats={"method": "linearity", "obligations": len(obs)},
                    obligations=[Obligation(k, w, "valid") for k, w, _f in obs],
                    proof=proof,
                ),
                "",
            )
        if not why or bad[0] == "BUDGET":
            why = f"{rule} at threshold {show_expr(thr)}: {bad[0]} ({bad[1]}) is {bad[2]}"
    return None, why or "no threshold for Markov's or Chebyshev's inequality in the postcondition"
