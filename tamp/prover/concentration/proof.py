"""Failure bounds by concentration: proofs, and the obligations they rest on.

A program whose postcondition reads sums of independent draws (:mod:`.concentration`) is
proved by one rule application per sum (:mod:`axioms.concentration`): sum ``k`` with rule R,
mode (``upper`` ``S_k < u``, ``lower`` ``-S_k < u``, ``both`` ``|S_k| < u``), margin ``u_k`` and
probability ``f_k``. The proof rests on these obligations, each valid under ``requires``
(z3 ``unsat`` of the negation; ``unknown`` is failure):

* SHAPE  the deterministic facts the recognised shape needs (loops run ``H - lo >= 0`` times …);
* LOOP   (graph checks, no solver) every loop is a counted loop of the CFA
         (:func:`tamp.cfa.loops.counted_loop`): its bound reads nothing the loop writes and its
         counter moves by one toward it exactly once per iteration — so it makes exactly the
         iterations the sum counts, and ends (the termination argument; no nested loops);
* RULE   every side condition of every application (scale > 0, 0 <= r <= 1, Bernstein's range,
         the tail condition ``G(u) >= log(c/f)`` or ``f >= c·exp(-G(u))``);
* POST   ``⋀_k good_k(S_k) ⇒ ensures[x := d_x + c_x·S_x]`` for all values of the S_k;
* BUDGET ``Σ_k f_k <= β``.

Soundness: the postcondition at exit is exactly the substituted one with S_k the centred sums
(the shape); it fails only if some good_k fails, which has probability at most f_k (the rule);
the union over k is at most Σ f_k <= β. The loops are counted (LOOP), so every run ends.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypedDict

from axioms import concentration as C
from axioms.concentration import Block
from axioms.lemmas import cap_lemmas
from axioms.terms import transcendental_apps
from lang import ast as A
from lang.walk import free_vars
from tamp.cfa.loops import CountedLoop
from tamp.core.z3context import load_in_proof
from tamp.prover.base.exprs import and_all, subst
from tamp.prover.base.points import Refuter
from tamp.prover.base.simplify import simplify
from tamp.prover.base.smt import INVALID, UNKNOWN, VALID, Encoder, Stats, is_valid
from tamp.prover.concentration.shapes import Block as SumBlock
from tamp.prover.concentration.shapes import NoiseSum, NotApplicable, exit_value, recognise
from tamp.prover.trace.check import Obligation
from tamp.prover.trace.result import ProofResult
from tamp.prover.trace.synthesis import Timeout
from tamp.show import show_expr

ONE = A.num(1)
QUERY_MS = 4000
SEARCH_MS = 1500  # per query while searching: a timeout only drops a candidate


def s_name(k: int) -> str:
    return f"S${k + 1}"


def rule_blocks(rule: str, s: NoiseSum) -> tuple[Block, ...]:
    """The blocks a rule reads: Hoeffding sees a 0/1 indicator as a draw of width 1."""
    if rule == "hoeffding" and s.family == "bernoulli":
        return tuple(Block(b.count, ONE) for b in s.blocks)
    return tuple(Block(b.count, b.param) for b in s.blocks)


@dataclass(frozen=True)
class Application:
    sum: int
    rule: str
    mode: str
    u: A.Expr
    f: A.Expr


@dataclass
class ConcClaim:
    """What the program and its specification say, in the terms of the rules."""

    requires: list[A.Expr]
    post: A.Expr  # the ensures with every variable replaced by its exit value
    sums: list[NoiseSum]
    side: list[tuple[str, A.Expr]]
    types: dict[str, A.Type]
    params: list[str]
    loops: list[CountedLoop] = field(default_factory=list)  # the loops the sums run over (the CFA's)
    #: the coefficients a_k when the one sum S$1 is the combination Σ a_k·R$k of the program's
    #: sums R$k (:func:`combined_claim`), else None
    combination: tuple[Fraction, ...] | None = None


def claim_of(program: A.Program, cfa, ensures: list[A.Expr] | None = None) -> ConcClaim:
    """The claim of ``program`` (requires and ensures of ``cfa``) over its noise sums; raises
    :class:`NotApplicable` unless the postcondition reads only deterministic values and sums."""
    shape = recognise(program, cfa)
    post = and_all(list(cfa.ensures if ensures is None else ensures))
    params = [p.name for p in cfa.params]
    m: dict[str, A.Expr] = {}
    sums: list[NoiseSum] = []
    for x in sorted(set(free_vars(post)) - set(params)):
        if x.endswith("$"):  # an unknown being inferred (tamp.prover.infer.search), not a program variable
            continue
        v = shape.env.get(x)
        val = exit_value(v, sums, s_name)
        if val is not None:
            m[x] = val
        else:
            why = getattr(v, "why", "") or "not computed by the program"
            detail = "" if why == "not a sum of independent draws" else f" ({why})"  # not said twice
            raise NotApplicable(f"the postcondition reads '{x}', which is not a sum of independent draws{detail}")
    if not sums:
        raise NotApplicable("the postcondition reads no sum of random draws")
    types = dict(cfa.types)
    for k in range(len(sums)):
        types[s_name(k)] = A.REAL
    for hname in {n.name for n in A.walk(post) if isinstance(n, A.Var) and n.name not in types}:
        types[hname] = A.REAL
    return ConcClaim(list(cfa.requires), subst(post, m), sums, list(shape.side), types, params, list(shape.loops))


def good(app: Application) -> A.Expr:
    S = A.Var(s_name(app.sum))
    dev = {"both": A.Call("abs", (S,)), "upper": S, "lower": A.Unary("-", S)}[app.mode]
    return A.Binary("<", dev, app.u)  # every rule bounds Pr[dev >= u] (axioms.concentration)


def obligations(claim: ConcClaim, apps: list[Application], beta: A.Expr) -> list[tuple[str, str, A.Expr]]:
    """(kind, where, formula) — everything the proof rests on (see the module docstring).
    Raises ValueError for applications that do not fit the claim (wrong sum, rule or mode)."""
    used = sorted(a.sum for a in apps)
    if used != list(range(len(claim.sums))):
        raise ValueError("each sum the postcondition reads needs exactly one rule application")
    out = [("SHAPE", name, cond) for name, cond in claim.side]
    total: A.Expr | None = None
    for a in apps:
        s = claim.sums[a.sum]
        if a.rule not in C.RULES_FOR.get(s.family, ()):
            raise ValueError(f"rule {a.rule} does not apply to draws of family {s.family}")
        if a.mode not in C.MODES:
            raise ValueError(f"unknown mode {a.mode}")
        for name, c in C.conditions(a.rule, a.mode, rule_blocks(a.rule, s), a.u, a.f):
            out.append(("RULE", f"{a.rule} ({a.mode}) on {s_name(a.sum)}: {name}", c))
        total = a.f if total is None else A.Binary("+", total, a.f)
    out.append(
        (
            "POST",
            "good deviations imply the postcondition",
            A.Binary("==>", and_all([good(a) for a in apps]), claim.post),
        )
    )
    spent = total if total is not None else A.Num(Fraction(0))  # no sum: no failure probability
    out.append(("BUDGET", "the failure probabilities sum to at most the bound", A.Binary("<=", spent, beta)))
    return out


class Checker:
    """Decides obligations under ``requires`` with the prover's encoder and lemmas (a claim
    with ``types`` and ``requires``: this engine's, and the expected-failure engine's, whose
    checker adds its product lemmas through :meth:`extra_hyps`)."""

    def __init__(self, claim, deadline: float | None = None, ms: int = QUERY_MS):
        self.enc = Encoder(claim.types)
        self.stats = Stats()
        self.env = self.enc.initial_env()
        self.hyps = [self.enc.expr(r, self.env) for r in claim.requires]
        self.deadline = deadline
        self.ms = ms
        # false obligations are first looked for a counterexample at concrete points
        self.refuter = Refuter(claim.types, claim.requires)
        self._required = len(self.hyps)

    def extra_hyps(self, f) -> list:
        """More hypotheses for the query of the encoded formula ``f`` (none here)."""
        return []

    def point_against(self, formula: A.Expr) -> dict | None:
        """A concrete point where ``requires`` holds and ``formula`` fails (certified), or None
        (:mod:`tamp.prover.base.points`; none is looked for under hypotheses added since)."""
        if len(self.hyps) != self._required:
            return None
        return self.refuter.refute(formula)

    def valid(self, formula: A.Expr, ms: int | None = None) -> str:
        ms = self.ms if ms is None else ms
        clock = None
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Timeout()
            clock = left * 1000
        try:
            f = self.enc.expr(formula, self.env)
        except Exception:  # noqa: BLE001 - not encodable: not provable
            return UNKNOWN
        if self.point_against(formula) is not None:
            return INVALID  # a point where requires holds and the formula fails
        return is_valid(f, self.enc, self.stats, max(ms, 1), self.hyps + self.extra_hyps(f), clock_ms=clock)

    def first_failure(self, obs) -> tuple[str, str, A.Expr, str] | None:
        order = {"POST": 0, "BUDGET": 1, "RULE": 2, "SHAPE": 3}
        for kind, where, f in sorted(obs, key=lambda o: order[o[0]]):
            st = self.valid(f)
            if st != VALID:
                return kind, where, f, st
        return None


def candidates(claim: ConcClaim, beta: A.Expr) -> list[list[Application]]:
    """Rule applications for a given bound β (split evenly over the sums), one-sided first."""
    m = len(claim.sums)
    f = beta if m == 1 else A.Binary("/", beta, A.num(m))
    per_sum = []
    two_sided = _two_sided(claim.post)
    for k, s in enumerate(claim.sums):
        opts = []
        for mode in ("both",) if s_name(k) in two_sided else ("upper", "lower", "both"):
            for rule in C.RULES_FOR[s.family]:
                opts.append(Application(k, rule, mode, C.threshold(rule, mode, rule_blocks(rule, s), f), f))
        per_sum.append(opts)
    return [list(c) for c in itertools.islice(itertools.product(*per_sum), 40)]


def simplified(claim: ConcClaim, cands: list[list[Application]]) -> list[list[Application]]:
    """The candidates again with every margin simplified (sympy, inputs read as positive):
    ``sqrt(k·log(1/exp(-k/8))/2)`` is ``k/4``, which the solver compares with the claim where
    it cannot compare the closed form. Tried only after the closed forms fail, so proofs found
    before are found as fast. Sound whatever sympy returns: a candidate is only a proposal, and
    its margin is checked by the RULE obligations (the tail condition at that margin) like any
    other."""
    out: list[list[Application]] = []
    for apps in cands:
        new = [dataclasses.replace(a, u=simplify(a.u, claim.params)) for a in apps]
        if new != apps and new not in out:
            out.append(new)
    return out


def _search_both(chk: Checker, claim: ConcClaim, beta: A.Expr) -> tuple[ConcProof | None, str]:
    """:func:`search` over the closed-form margins, then over the simplified ones; then, for a
    claim over several sums, over their linear combinations (:func:`combined_claim`)."""
    proof, why = _search_one(chk, claim, beta)
    if proof is None and len(claim.sums) > 1:
        for coefs in combinations(claim):
            comb = combined_claim(claim, coefs)
            if comb is None:
                continue
            chk2 = Checker(comb, chk.deadline, chk.ms)
            proof2, _why = _search_one(chk2, comb, beta)
            chk.stats.solver_calls += chk2.stats.solver_calls
            chk.stats.solver_time += chk2.stats.solver_time
            if proof2 is not None:
                return proof2, ""
    return proof, why


def _search_one(chk: Checker, claim: ConcClaim, beta: A.Expr) -> tuple[ConcProof | None, str]:
    cands = candidates(claim, beta)
    proof, why = search(chk, claim, cands, beta)
    if proof is None:
        again = simplified(claim, cands)
        if again:
            proof, why2 = search(chk, claim, again, beta)
            why = why if proof is None else why2
    if proof is None:
        proof = _search_capped(chk, claim, beta)
    return proof, why


class CapChecker(Checker):
    """A :class:`Checker` whose queries also get ``sum-cap`` (:func:`axioms.lemmas.cap_lemmas`):
    a sum of terms each at most 1 is at most its number of terms."""

    def extra_hyps(self, f) -> list:
        apps = transcendental_apps(f)
        return [lem for _n, lem in cap_lemmas(apps, self.enc)] if apps else []


def post_margins(claim: ConcClaim) -> list[A.Expr]:
    """The thresholds ``R`` the postcondition compares a sum with (``abs(… S$1 …) < R``, ``S$1 >=
    R`` under a negation, ``R > S$1``, ``R`` free of the sums): margins to try at the claim's own threshold, where
    the closed-form margin of the rule (:func:`axioms.concentration.threshold`) is a worse one
    (``sqrt(Σ a²)·t/sqrt(m)`` for a row of signs weighted by 0/1 entries) or degenerate (0 for a
    row of zeros). Only a search order: each margin is checked like any other."""
    sums = {s_name(k) for k in range(len(claim.sums))}
    out: list[A.Expr] = []
    for n in A.walk(claim.post):
        if not (isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=")):
            continue
        for lhs, rhs in ((n.left, n.right), (n.right, n.left)):  # either side (a test may be negated)
            if set(free_vars(lhs)) & sums and not set(free_vars(rhs)) & sums and rhs not in out:
                out.append(rhs)
    return out


def _search_capped(chk: Checker, claim: ConcClaim, beta: A.Expr) -> ConcProof | None:
    """Last pass: every rule at the margins the postcondition states (:func:`post_margins`), its
    queries with ``sum-cap`` (:class:`CapChecker`; the certificate says ``caps`` so that the
    checker adds them too). After the other passes, so the proofs they find keep their history."""
    margins = post_margins(claim)
    if not margins:
        return None
    m = len(claim.sums)
    f = beta if m == 1 else A.Binary("/", beta, A.num(m))
    two_sided = _two_sided(claim.post)
    per_sum = []
    for k, s in enumerate(claim.sums):
        opts = [
            Application(k, rule, mode, u, f)
            for u in margins
            for mode in (("both",) if s_name(k) in two_sided else ("upper", "lower", "both"))
            for rule in C.RULES_FOR[s.family]
        ]
        per_sum.append(opts)
    cands = [list(c) for c in itertools.islice(itertools.product(*per_sum), 40)]
    capped = CapChecker(claim, chk.deadline, chk.ms)
    try:
        proof, _why = search(capped, claim, cands, beta)
    finally:
        chk.stats.solver_calls += capped.stats.solver_calls
        chk.stats.solver_time += capped.stats.solver_time
    if proof is not None:
        proof.caps = True
    return proof


def r_name(k: int) -> str:
    """The name of the program's k-th sum in a combined claim (S$1 is the combination there)."""
    return f"R${k + 1}"


def combined_claim(claim: ConcClaim, coefs: tuple[Fraction, ...]) -> ConcClaim | None:
    """The claim over the one sum ``T = Σ_k a_k·S_k`` of the program's independent sums (the
    rule :func:`axioms.concentration.combined_blocks`), or None when no rule covers it or two
    sums share a draw (``y1 - y1`` is one sum already; two sums reading one draw are not
    independent).

    The program's sums are renamed ``R$k`` and the postcondition becomes ``S$1 == Σ a_k·R$k ==>
    post[S$k := R$k]``: the POST obligation ``good(S$1) ⇒ that`` is valid for all values iff
    ``good(Σ a_k·R$k) ⇒ post`` is, so a proof bounds the failure by the rule's tail of T (the
    same obligations, checker and certificate as for one sum, plus the coefficients)."""
    if len(coefs) != len(claim.sums):
        return None
    seen: frozenset[int] = frozenset()
    for s in claim.sums:
        if seen & s.draws:
            return None
        seen |= s.draws
    got = C.combined_blocks([(s.family, tuple(s.blocks), a) for s, a in zip(claim.sums, coefs)])
    if got is None:
        return None
    fam, blocks = got
    used = [s for s, a in zip(claim.sums, coefs) if a != 0]
    lines = tuple(sorted({ln for s in used for ln in s.lines}))
    total = NoiseSum(fam, tuple(SumBlock(b.count, b.param) for b in blocks), seen, lines)
    ren = {s_name(k): A.Var(r_name(k)) for k in range(len(claim.sums))}
    comb: A.Expr | None = None
    for k, a in enumerate(coefs):
        if a == 0:
            continue
        term: A.Expr = A.Var(r_name(k)) if a == 1 else A.Binary("*", A.Num(a, a.denominator == 1), A.Var(r_name(k)))
        comb = term if comb is None else A.Binary("+", comb, term)
    if comb is None:
        return None
    post = A.Binary("==>", A.Binary("==", A.Var(s_name(0)), comb), subst(claim.post, ren))
    types = {n: t for n, t in claim.types.items() if not n.startswith("S$")}
    types[s_name(0)] = A.REAL
    for k in range(len(claim.sums)):
        types[r_name(k)] = A.REAL
    return dataclasses.replace(claim, post=post, sums=[total], types=types, combination=tuple(coefs))


def _linear(e: A.Expr, names: set[str]) -> dict[str, Fraction] | None:
    """The rational coefficients of the variables ``names`` in ``e`` when ``e`` is linear in them
    (a part without them counts as a constant), else None."""
    if not (set(free_vars(e)) & names):
        return {}
    if isinstance(e, A.Var):
        return {e.name: Fraction(1)}
    if isinstance(e, A.Unary) and e.op == "-":
        inner = _linear(e.operand, names)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(e, A.Binary) and e.op in ("+", "-"):
        left, right = _linear(e.left, names), _linear(e.right, names)
        if left is None or right is None:
            return None
        out = dict(left)
        for k, v in right.items():
            out[k] = out.get(k, Fraction(0)) + (v if e.op == "+" else -v)
        return out
    if isinstance(e, A.Binary) and e.op in ("*", "/"):
        pairs = ((e.left, e.right), (e.right, e.left)) if e.op == "*" else ((e.left, e.right),)
        for lin, other in pairs:
            if isinstance(other, A.Num) and other.value != 0:
                inner = _linear(lin, names)
                if inner is None:
                    return None
                c = Fraction(other.value) if e.op == "*" else 1 / Fraction(other.value)
                return {k: v * c for k, v in inner.items()}
    return None


#: linear combinations tried per claim
MAX_COMBINATIONS = 4


def combinations(claim: ConcClaim) -> list[tuple[Fraction, ...]]:
    """Coefficient vectors ``(a_1 … a_r)`` of the linear forms in the sums the postcondition
    compares (``honest > adv`` reads ``S$1 - S$2``; ``abs(y2 - y1 - …)`` reads ``S$2 - S$1``),
    scaled so the first non-zero one is 1, each reading every sum. Only a search order: every
    vector is checked like any other (:func:`combined_claim` and the obligations)."""
    names = {s_name(k) for k in range(len(claim.sums))}
    out: list[tuple[Fraction, ...]] = []
    for n in A.walk(claim.post):
        exprs: list[A.Expr] = []
        if isinstance(n, A.Binary) and n.op in ("<", "<=", ">", ">=", "==", "!="):
            exprs.append(A.Binary("-", n.left, n.right))
        elif isinstance(n, A.Call) and n.func == "abs" and len(n.args) == 1:
            exprs.append(n.args[0])
        for e in exprs:
            lin = _linear(e, names)
            if not lin:
                continue
            vec = [lin.get(s_name(k), Fraction(0)) for k in range(len(claim.sums))]
            if any(v == 0 for v in vec):
                continue
            vec = [v / vec[0] for v in vec]
            if tuple(vec) not in out:
                out.append(tuple(vec))
    return out[:MAX_COMBINATIONS]


def _two_sided(post: A.Expr) -> set[str]:
    """The sums ``S$k`` that ``post`` reads inside an ``abs(…)``: a deviation bounded on one side
    leaves the other unbounded (the POST obligation leaves ``S$k`` free), so for these only the
    two-sided mode is worth a query. A search order, not a proof step: dropping a candidate can
    only lose a proof."""
    out: set[str] = set()
    for n in A.walk(post):
        if isinstance(n, A.Call) and n.func == "abs":
            out |= {v for v in set(free_vars(n)) if v.startswith("S$")}
    return out


@dataclass
class ConcProof:
    claim: ConcClaim
    apps: list[Application]
    beta: A.Expr
    obligations: list[tuple[str, str, A.Expr]]
    #: the obligations were decided with ``sum-cap`` (:func:`axioms.lemmas.cap_lemmas`) added
    caps: bool = False


def prove_with_bound(
    program: A.Program, cfa, beta: A.Expr, deadline=None, ensures: list[A.Expr] | None = None
) -> tuple[ConcProof | None, str]:
    """A concentration proof of the claim with bound β, or (None, why not)."""
    claim = claim_of(program, cfa, ensures)
    chk = Checker(claim, deadline)
    return _search_both(chk, claim, beta)


def search(chk: Checker, claim: ConcClaim, cands, beta) -> tuple[ConcProof | None, str]:
    """The first candidate whose obligations are all valid: quick queries first, then the
    candidates that only timed out (answer unknown) again with patient ones."""
    why = ""
    slow: list[list[Application]] = []
    for patient in (False, True):
        if patient:
            if not slow:
                break
            cands, chk.ms = slow, max(chk.ms, QUERY_MS * 2)
        for apps in cands:
            obs = obligations(claim, apps, beta)
            bad = chk.first_failure(obs)
            if bad is None:
                return ConcProof(claim, apps, beta, obs), ""
            if bad[3] != "invalid" and not patient:
                slow.append(apps)
                continue
            why = why or _why(apps, bad, claim, _advice(chk, obs, bad))
    if not why:
        why = (
            "no concentration rule gives a margin within the postcondition's at this bound "
            "(the postcondition does not follow from the rules' deviation bounds)"
        )
    return None, why


def _why(apps, bad, claim, advice: str = "") -> str:
    kind, where, f, st = bad
    if kind == "POST":
        return ""
    f = _pretty(f)
    desc = ", ".join(f"{a.rule} ({a.mode})" for a in apps)
    ratio = _ratio(f, claim.params)
    text = f"`{ratio}` (for positive inputs; exactly: `{show_expr(f)}`)" if ratio else f"`{show_expr(f)}`"
    if advice == CONTRADICTS:
        return (
            f"{desc}: the side condition {text} ({where.split(': ')[-1]}) contradicts `requires`: the rule cannot apply"
        )
    return f"{desc}: the side condition {text} ({where.split(': ')[-1]}) does not follow from `requires` ({st}){advice}"


#: :func:`_advice`'s answer when the failed side condition contradicts ``requires``.
CONTRADICTS = "contradicts"


def _advice(chk: Checker, obs, bad) -> str:
    """What the message may say of a failed side condition ``f`` (a message only: the proof
    search has already given up on this candidate). It is a useful suggestion only if adding it
    to ``requires`` would give the proof: :data:`CONTRADICTS` when ``requires`` implies ``!f``
    (adding it leaves no input: a vacuous claim); the suffix naming it as the fix when every
    obligation of the candidate is valid under ``requires && f``; else a suffix saying that it
    would not be enough, or nothing when the solver does not answer."""
    kind, _, f, st = bad
    if kind != "RULE" or st != INVALID:
        return ""
    try:
        if chk.valid(A.Unary("!", f)) == VALID:
            return CONTRADICTS
        hyp = chk.enc.expr(f, chk.env)
    except Timeout:
        return ""
    except Exception:  # noqa: BLE001 - not encodable: no advice
        return ""
    chk.hyps.append(hyp)
    try:
        still = chk.first_failure(obs)
    except Timeout:
        return ""
    finally:
        chk.hyps.pop()
    if still is None:
        return "; with it added to `requires` every obligation of this rule holds"
    if still[3] == INVALID:
        return f"; adding it to `requires` would not be enough (the {still[0]} obligation still fails)"
    return ""


def _ratio(f: A.Expr, params) -> str:
    """``lhs/rhs <= 1`` simplified (sympy, inputs taken positive): a readable form of a failed
    side condition for the message (never used in a proof)."""
    # deferred on purpose: it loads sympy (~1 s); only this step needs it
    load_in_proof("sympy")
    if not (isinstance(f, A.Binary) and f.op in ("<=", "<", ">=", ">")):
        return ""
    lhs, rhs = (f.left, f.right) if f.op in ("<=", "<") else (f.right, f.left)
    r = simplify(A.Binary("/", lhs, rhs), params)
    text = show_expr(r) + (" <= 1" if f.op in ("<=", ">=") else " < 1")
    return text if len(text) < len(show_expr(f)) else ""


def try_concentration(program, cfa, deadline, t0, ensures=None):
    """(a proved :class:`ConcentrationResult`, "") or (None, why not) for the claim of ``cfa``."""
    try:
        claim = claim_of(program, cfa, ensures)
    except NotApplicable:
        return None, ""  # not a sum of independent draws: nothing to say next to the union bound
    chk = Checker(claim, deadline, SEARCH_MS)
    try:
        proof, why = _search_both(chk, claim, cfa.bound)
    except Timeout:
        return None, "timeout"
    except ValueError as exc:
        return None, str(exc)
    if proof is None:
        return None, why
    return conc_result(program, cfa, proof, t0, chk=chk), ""


def _pretty(f: A.Expr) -> A.Expr:
    """The tail condition's log form only (the disjunction is an implementation detail)."""
    if isinstance(f, A.Binary) and f.op == "||":
        return f.left
    return f


# ---------------------------------------------------------------------------- results


class ApplicationJson(TypedDict):
    """One rule application of a concentration proof, as JSON shows it."""

    sum: str
    family: str
    lines: list[int]
    rule: str
    mode: str
    statement: str
    blocks: list[dict[str, str]]
    margin: str
    probability: str


@dataclass(repr=False)  # the one-line repr of ProgramResult
class ConcentrationResult(ProofResult):
    """A failure bound proved by concentration (no failure automaton)."""

    proof: ConcProof | None = None
    margin: A.Expr | None = None  # the inferred margin (ensures `?`), if any
    inferred: str | None = None  # "bound" | "margin" when a `?` was inferred
    value: float | None = None  # the inferred value at the fixed inputs
    alternatives: list[dict[str, object]] = field(default_factory=list)

    def applications_json(self) -> list[ApplicationJson]:
        out: list[ApplicationJson] = []
        if self.proof is None:
            return out
        for a in self.proof.apps:
            s = self.proof.claim.sums[a.sum]
            out.append(
                {
                    "sum": s_name(a.sum),
                    "family": s.family,
                    "lines": list(s.lines),
                    "rule": a.rule,
                    "mode": a.mode,
                    "statement": C.statement(a.rule, a.mode),
                    "blocks": [{"count": show_expr(b.count), "param": show_expr(b.param)} for b in s.blocks],
                    "margin": show_expr(a.u),
                    "probability": show_expr(a.f),
                }
            )
        return out

    def to_json(self):
        out = super().to_json()
        out["method"] = "concentration"
        out["concentration"] = self.applications_json()
        if self.inferred == "bound":
            out["bound_value"] = self.value
        if self.inferred == "margin":
            out["margin"] = show_expr(self.margin)
            out["margin_value"] = self.value
        if self.alternatives:
            out["alternatives"] = self.alternatives
        return out

    def render_text(self) -> str:
        lines = [ProofResult.render_text(self).split("\n  axioms:")[0]]
        if self.inferred == "bound":
            val = f" = {self.value:.6g}" if self.value is not None else ""
            lines.append(f"  inferred failure bound: {self.bound}{val}")
        elif self.inferred == "margin":
            val = f" = {self.value:.6g}" if self.value is not None else ""
            lines.append(f"  inferred margin: ? = {show_expr(self.margin)}{val}")
        for a in self.applications_json():
            blocks = " + ".join(f"{b['count']} draw(s) of parameter {b['param']}" for b in a["blocks"])
            lines.append(
                f"  concentration: {a['sum']} = sum of {a['family']} draws (lines "
                f"{', '.join(map(str, a['lines']))}; {blocks})"
            )
            lines.append(f"    {a['rule']}: {a['statement']}")
            lines.append(f"    margin u = {a['margin']}, probability f = {a['probability']}")
        if self.proof is not None:
            for cl in self.proof.claim.loops:
                line = self.cfa.graph.nodes[cl.head].get("line") if self.cfa is not None else None
                lines.append(
                    f"  loop{f' at line {line}' if line else ''}: {cl.counter} runs over "
                    f"[{show_expr(cl.lo)}, {show_expr(cl.hi)}), {show_expr(cl.trips)} iterations (its bound is "
                    f"not written in the loop, {cl.counter} moves by one on every iteration: the loop ends)"
                )
            lines.append(
                f"  obligations: {len(self.proof.obligations)} valid under `requires` "
                "(shape, rule side conditions, postcondition, budget)"
            )
        return "\n".join(lines)


def checker_stats(method: str, obligations: int, chk: Checker | None) -> dict:
    """A whole-program engine's statistics: its method, obligations and (given its checker) the
    solver's calls and time."""
    st: dict = {"method": method, "obligations": obligations}
    if chk is not None:
        st.update({"solver_calls": chk.stats.solver_calls, "solver_time": round(chk.stats.solver_time, 3)})
    return st


def conc_result(program, cfa, proof: ConcProof, t0: float, message: str = "", chk=None) -> ConcentrationResult:
    st = checker_stats("concentration", len(proof.obligations), chk)
    return ConcentrationResult(
        program.name,
        "failure-bound",
        "proved",
        time.monotonic() - t0,
        show_expr(proof.beta),
        message,
        cfa=cfa,
        stats=st,
        obligations=[Obligation(k, w, "valid") for k, w, _f in proof.obligations],
        proof=proof,
    )
