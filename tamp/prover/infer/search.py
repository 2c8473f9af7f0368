"""Inferred bounds: ``fails ?`` (the smallest failure bound tamp can prove) and ``?`` in an
``ensures`` (the smallest margin, given ``fails``).

Candidates come from three places:

* concentration (:mod:`.conc_proof`): for ``fails ?`` the margin u of each sum is read off the
  postcondition (``abs(X) <= M``, ``X <= M``, ``X >= M`` with X linear in the sum) and the
  rule's tail ``c·exp(-G(u))`` is the probability; for a margin ``?`` the rule's threshold at
  the given probability is solved for ``?``;
* the exact failure probability (``fails ?`` only) of a program whose samples are all discrete
  and whose loops unroll: the expected-failure engine's pre-expectation (:mod:`.expectation`),
  proved by that engine — 1/8 for three fair coins all heads;
* the union bound (``fails ?`` only): the bounds ``k·f`` for ``f = 1/E, 2/E, 1/(2E)`` (``log(E)``
  in the postcondition) and k the number of real-valued samplings a run makes (each counted
  times the iteration counts of the counted loops around it), plus for every discrete
  distribution its count times one outcome's probability (``n·r`` for n unreliable operations
  at rate r, which are ``bern(r)`` draws), each proved by the ordinary prover.

Each candidate is simplified (sympy, :mod:`.simplify`) and then **proved** as an ordinary claim
(the unsimplified form is tried when the simplified one does not prove); only proved candidates
are reported, the smallest at the fixed inputs (``--input``) or, when inputs are free, the one
smallest at most sampled inputs satisfying ``requires``.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import time
from typing import Any, Sequence, TypeVar

from axioms import concentration as C
from lang import ast as A
from lang.errors import TampError, UnsupportedError, error_at
from lang.evaluate import evaluate
from lang.parser import parse_expr
from lang.walk import DESCEND, Transformer, free_vars
from tamp.cfa import build_cfa
from tamp.cfa import expected as LE
from tamp.cfa.loops import loop_body
from tamp.prover.base.exprs import conjuncts, reciprocal, subst
from tamp.prover.base.simplify import numeric, simplify, user_form
from tamp.prover.concentration.proof import (
    Application,
    Checker,
    ConcentrationResult,
    ConcProof,
    claim_of,
    conc_result,
    obligations,
    rule_blocks,
    s_name,
    try_concentration,
)
from tamp.prover.concentration.shapes import NotApplicable
from tamp.prover.expectation import prove as X
from tamp.prover.expectation.prove import try_expectation
from tamp.prover.linearity.prove import try_linearity
from tamp.prover.loops.prove import _loops
from tamp.prover.portfolio import STRATEGIES, load_modules, prove_claim
from tamp.prover.trace.candidates import log_arguments
from tamp.prover.trace.explain import explaining
from tamp.prover.trace.result import ProofResult
from tamp.prover.trace.synthesis import Timeout
from tamp.show import show_expr

HOLE = "h$"
R = TypeVar("R", bound=ProofResult)
ATTEMPT_S = 15.0  # seconds of one core for one union-bound attempt (scaled by the machine's load)


def attempt_budget() -> float:
    """Wall seconds for one union-bound attempt: :data:`ATTEMPT_S` seconds of a core, so a loaded
    machine (load average above its core count) gets proportionally more wall time and the
    inferred bound does not depend on what else the machine is running."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform: count the machine as idle
        return ATTEMPT_S
    return ATTEMPT_S * max(1.0, load / (os.cpu_count() or 1))


def infer_program(program: A.Program, bound, timeout, path, source, progress) -> ProofResult:
    load_modules()
    t0 = time.monotonic()
    deadline = t0 + timeout if timeout else None
    if isinstance(program.fails, A.Hole):
        if bound is not None:  # --bound answers the question: an ordinary claim
            return prove_claim(dataclasses.replace(program, fails=None), bound, timeout, path, source, progress)[0]
        return infer_bound(program, deadline, t0, path, source, progress)
    return infer_margin(program, bound, deadline, t0, path, source)


# ---------------------------------------------------------------------------- comparing


def fixed_inputs(cfa, exact: bool = False) -> dict[str, object]:
    """The inputs ``requires`` fixes to a literal (``--input`` adds ``name == value``), as floats
    (``exact``: as the literals' Fractions, which satisfy ``requires`` exactly: 0.01 as a float
    is not 1/100)."""
    out: dict[str, object] = {}
    for r in cfa.requires:
        for c in conjuncts(r):
            if (
                isinstance(c, A.Binary)
                and c.op == "=="
                and isinstance(c.left, A.Var)
                and isinstance(c.right, (A.Num, A.BoolLit))
            ):
                if isinstance(c.right, A.Num):
                    q = c.right.value
                    out[c.left.name] = float(q) if not exact else int(q) if c.right.is_int and q.denominator == 1 else q
                else:
                    out[c.left.name] = c.right.value
    return out


def sample_points(cfa, count: int = 24, seed: int = 3) -> list[dict]:
    """Up to ``count`` input points satisfying ``requires``: the fixed inputs at their exact
    values, the others drawn from a few typical values."""
    fixed = fixed_inputs(cfa, exact=True)
    rng = random.Random(seed)
    out = []
    for _ in range(count * 60):
        env = dict(fixed)
        for p in cfa.params:
            if p.name in env:
                continue
            t = p.type.name
            if t == "int":
                env[p.name] = rng.choice([1, 2, 5, 10, 20, 50, 100, 1000])
            elif t == "real":
                env[p.name] = rng.choice([0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 1.0, 2.0])
            elif t == "bool":
                env[p.name] = rng.random() < 0.5
        try:
            if all(evaluate(r, env) is True for r in cfa.requires):
                out.append(env)
        except Exception:  # noqa: BLE001 - arrays and undefined values: skip the point
            continue
        if len(out) >= count:
            break
    return out


def best(cands: Sequence[tuple[A.Expr, R]], cfa) -> tuple[A.Expr, R, float | None] | None:
    """The candidate smallest at the fixed inputs, else at most sample points (ties: first)."""
    if not cands:
        return None
    fixed = fixed_inputs(cfa)
    params = {p.name for p in cfa.params}
    free = set().union(*(set(free_vars(e)) for e, _ in cands)) & params
    if free <= set(fixed):
        vals = [numeric(e, fixed) for e, _ in cands]
        order = sorted(range(len(cands)), key=lambda i: (vals[i] is None, vals[i] if vals[i] is not None else 0, i))
        i = order[0]
        return cands[i][0], cands[i][1], vals[i]
    pts = sample_points(cfa)
    wins = [0] * len(cands)
    for env in pts:
        vals = [numeric(e, env) for e, _ in cands]
        ok = [(v, i) for i, v in enumerate(vals) if v is not None]
        if ok:  # the smallest; values equal up to rounding count as ties: the shorter text wins
            m = min(v for v, _ in ok)
            tied = [k for v, k in ok if v <= m + 1e-9 * abs(m) + 1e-15]
            wins[min(tied, key=lambda k: (len(show_expr(cands[k][0])), k))] += 1
    i = max(range(len(cands)), key=lambda k: (wins[k], -k))
    return cands[i][0], cands[i][1], None


def _positive(cfa) -> list[str]:
    return [p.name for p in cfa.params if p.type.name in ("int", "real")]


# ---------------------------------------------------------------------------- margins in the post


def _linear(X: A.Expr, S: str):
    """X as (a, c) with X = a + c·S (read off by substitution; checked by the POST obligation)."""
    a = subst(X, {S: A.num(0)})
    c = A.Binary("-", subst(X, {S: A.num(1)}), a)
    return a, c


def margin_candidates(post: A.Expr, S: str, positive) -> list[tuple[str, A.Expr]]:
    """(mode, u) such that the post may follow from the mode's ``dev <= u`` for the sum S."""
    out: list[tuple[str, A.Expr]] = []
    for c in conjuncts(post):
        fv = set(free_vars(c))
        if S not in fv or any(v.startswith("S$") and v != S for v in fv):
            continue
        if not (isinstance(c, A.Binary) and c.op in ("<=", "<", ">=", ">")):
            continue
        lhs, rhs = (c.left, c.right) if c.op in ("<=", "<") else (c.right, c.left)
        if isinstance(lhs, A.Call) and lhs.func == "abs" and S not in set(free_vars(rhs)):
            _a, k = _linear(lhs.args[0], S)
            out.append(("both", A.Binary("/", rhs, k)))
            continue
        X = A.Binary("-", lhs, rhs)  # X <= 0
        a, k = _linear(X, S)
        out.append(("upper", A.Binary("/", A.Unary("-", a), k)))  # k > 0: S <= -a/k
        out.append(("lower", A.Binary("/", a, k)))  # k < 0: -S <= a/k
    return [(m, simplify(u, positive)) for m, u in out]


# ---------------------------------------------------------------------------- fails ?


def infer_bound(program, deadline, t0, path, source, progress) -> ProofResult:
    prog0 = dataclasses.replace(program, fails=None)
    cfa0 = build_cfa(prog0, A.num(0), path, source)
    positive = _positive(cfa0)
    cands: list[tuple[A.Expr, ProofResult]] = []
    conc_why = ""
    try:
        claim = claim_of(prog0, cfa0)
    except NotApplicable as exc:
        claim, conc_why = None, f"not applicable: {exc}"
    if claim is not None:
        found = _conc_bounds(prog0, claim, deadline, path, source, positive)
        cands.extend(found)
        if not found:
            conc_why = "no rule's margin matches the postcondition"
    cands.extend(_linearity_bounds(prog0, cfa0, deadline, path, source, positive))
    exact = exact_failure(prog0, cfa0, positive)
    with explaining():  # a candidate that fails is not explained by inferring again
        proved_exact, simplest = None, False
        for beta in exact:  # nothing smaller is provable: when one proves, it is the answer
            proved_exact = _prove_exact(prog0, beta, deadline, path, source)
            if proved_exact is not None:
                cands.append((beta, proved_exact))
                simplest = beta is exact[0]
                break
        # the union bound is skipped only when the exact value proved in its simplified form (one
        # proved only as computed, `exp(-log(1/p))`, may have a readable equal: `p`)
        for beta in [] if simplest else union_candidates(cfa0, positive):
            if deadline is not None and time.monotonic() > deadline:
                break
            res = _prove_union(prog0, beta, deadline, path, source, progress)
            if res is not None:  # smallest first: the first proved one is the best
                cands.append((beta, res))
                break
        stated = _stated_bound(program)
        if stated is not None and all(stated != e for e, _r in cands):
            # the bound the program claims (`fails`, read as `fails ?` by --infer): inference
            # never does worse than checking it; proved like every candidate
            res = _prove_union(prog0, stated, deadline, path, source, progress, STRATEGIES)
            if res is not None:
                cands.append((stated, res))
    pick = best(cands, cfa0)
    if pick is None:
        msg = "could not infer a failure bound: no concentration rule, exact expected failure or union-bound proof applies"
        if conc_why:
            msg += f" (concentration rules: {conc_why})"
        return ProofResult(program.name, "failure-bound", "unknown", time.monotonic() - t0, "?", msg, cfa=cfa0)
    expr, res, value = pick
    if value is None:
        value = numeric(expr, fixed_inputs(cfa0)) if set(free_vars(expr)) <= set(fixed_inputs(cfa0)) else None
    others: list[dict[str, object]] = [{"bound": show_expr(e), "method": _method(r)} for e, r in cands if e is not expr]
    res.time_s = time.monotonic() - t0
    res.bound = show_expr(expr)
    if isinstance(res, ConcentrationResult):
        res.inferred, res.value, res.alternatives = "bound", value, others
    else:
        method = _method(res)
        res.details = dict(res.details, inferred="bound", bound_value=value, method=method, alternatives=others)
        val = f" = {value:.6g}" if value is not None and not isinstance(expr, A.Num) else ""  # not "1 = 1"
        res.message = "\n  ".join(
            [f"inferred failure bound: {res.bound}{val} ({METHOD_WORDS.get(method, method)})"]
            + ([res.message] if res.message else [])
        )
    return res


METHOD_WORDS = {"expectation": "expected failure", "linearity": "linearity of expectation"}


def _linearity_bounds(prog0, cfa0, deadline, path, source, positive) -> list[tuple[A.Expr, ProofResult]]:
    """Proved (bound, result) pairs from Markov's and Chebyshev's inequalities on the moments
    linearity of expectation computes (:mod:`tamp.cfa.expected`): the bound at each threshold
    read off the postcondition (E/t, Var/a², (Var + E²)/t), each proved by the linearity prover."""
    try:
        claim = LE.claim_of(prog0, cfa0)
    except (LE.NotApplicable, TampError):
        return []
    out: list[tuple[A.Expr, ProofResult]] = []
    seen: list[A.Expr] = []
    for rule, thr in LE.candidates(claim):
        beta = LE.bound_of(claim, rule, thr)
        if beta is not None:  # the readable form is the one proved
            beta = simplify(beta, positive)
        if beta is None or beta in seen:
            continue
        seen.append(beta)
        if deadline is not None and time.monotonic() > deadline:
            break
        t0 = time.monotonic()
        try:
            cfa = build_cfa(prog0, beta, path, source)
            res, _why = try_linearity(prog0, cfa, min(t0 + attempt_budget(), deadline or float("inf")), t0)
        except TampError:
            continue
        if res is not None:
            out.append((beta, res))
    return out


def _stated_bound(program: A.Program) -> A.Expr | None:
    """The failure bound the program stated where ``--infer`` put ``fails ?`` (see
    :func:`lang.speckind.infer_bound`), or None."""
    text = getattr(program.fails, "stated", None)
    if not text:
        return None
    try:
        return parse_expr(text)
    except TampError:
        return None


def _method(r: ProofResult) -> str:
    """How ``r`` was proved: "concentration", "expectation" (expected failure) or "union bound"."""
    if isinstance(r, ConcentrationResult):
        return "concentration"
    given = getattr(r, "details", {}).get("method")
    if given:
        return str(given)
    method = (r.stats or {}).get("method")
    return method if method in ("expectation", "linearity") else "union bound"


def _conc_bounds(prog0, claim, deadline, path, source, positive) -> list[tuple[A.Expr, ConcentrationResult]]:
    """Proved (bound, result) pairs from the rules' tails at the postcondition's margins."""
    per_sum = []
    for k, s in enumerate(claim.sums):
        opts = []
        for mode, u in margin_candidates(claim.post, s_name(k), positive):
            for rule in C.RULES_FOR[s.family]:
                f = C.tail(rule, mode, rule_blocks(rule, s), u)
                opts.append(Application(k, rule, mode, u, simplify(f, positive)))
        per_sum.append(opts)
    out = []
    chk = Checker(claim, deadline)
    seen = set()
    for combo in itertools.islice(itertools.product(*per_sum), 40):
        apps = list(combo)
        beta = apps[0].f
        for a in apps[1:]:
            beta = A.Binary("+", beta, a.f)
        beta = simplify(beta, positive) if len(apps) > 1 else beta
        if beta in seen:
            continue
        try:
            obs = obligations(claim, apps, beta)
            if chk.first_failure(obs) is not None:
                # the simplified tail may defeat the solver: the rule's own form
                raw = [
                    dataclasses.replace(a, f=C.tail(a.rule, a.mode, rule_blocks(a.rule, claim.sums[a.sum]), a.u))
                    for a in apps
                ]
                beta = raw[0].f
                for a in raw[1:]:
                    beta = A.Binary("+", beta, a.f)
                obs = obligations(claim, raw, beta)
                if chk.first_failure(obs) is not None:
                    continue
                apps = raw
        except Exception as exc:  # noqa: BLE001 - Timeout and unencodable candidates: skip
            if isinstance(exc, Timeout):
                break
            continue
        seen.add(beta)
        cfa = build_cfa(prog0, beta, path, source)
        proof = ConcProof(claim, apps, beta, obs)
        out.append((beta, conc_result(prog0, cfa, proof, time.monotonic(), chk=chk)))
    return out


def exact_failure(prog0, cfa0, positive) -> list[A.Expr]:
    """The failure probability of a program whose samples are all discrete and whose loops all
    unroll (``for`` over literal bounds), as an expression over the inputs: the expected-failure
    engine's pre-expectation of ``[¬ensures]`` (:mod:`.expectation`), exact for these programs,
    simplified (and as computed, in case the simplified form does not prove); [] for other
    programs. Three fair coins all coming up heads give ``1/8``. Only candidates: each is proved
    like a stated bound."""
    try:
        claim = X.claim_of(prog0, cfa0)
        pre = X.Wpe(claim.body, claim.params, types=claim.types).stmt(claim.body, claim.post)
        pre = X.readable(pre, claim, X.Checker(claim, time.monotonic() + EXACT_S))
    except Exception:  # noqa: BLE001 - outside the engine's rules (a loop to prove, a continuous draw)
        return []
    if X.size(pre) > EXACT_NODES:
        return []
    # the engine names the values of a draw u$: the bound is shown, and taken back by --bound,
    # in the user's names (and proved in exactly that form below)
    pre = user_form(pre, _program_names(prog0))
    out = []
    for e in (as_fractions(simplify(pre, positive)), pre):
        if e not in out and not set(free_vars(e)) - {p.name for p in cfa0.params}:
            out.append(e)
    return out


def _program_names(program: A.Program) -> set[str]:
    """Every name the program uses (inputs, locals, arrays): a renamed sum variable in an
    inferred bound avoids them all, so the bound reads the same inside the program's scope."""
    names = {p.name for p in program.params}
    for part in (program.body, *program.requires, *program.ensures):
        for n in A.walk(part):
            if isinstance(n, A.Var):
                names.add(n.name)
            elif isinstance(n, (A.Sum, A.Quant)):
                names.add(n.var)
    return names


class _Fractions(Transformer):
    def Num(self, node: A.Num, kids) -> A.Expr:
        v = node.value
        if node.text is None and v.denominator != 1 and v >= 0:
            return A.Binary("/", A.num(v.numerator), A.num(v.denominator))
        return node


def as_fractions(e: A.Expr) -> A.Expr:
    """``e`` with every exact non-integer constant written as a quotient of integers (``11 / 36``
    rather than ``11.0 / 36``, ``1 / 8`` rather than ``0.125``): the same value, as a user writes it."""
    out: A.Expr = _Fractions().walk(e)
    return out


#: seconds for reading the exact failure (dropping conditions `requires` settles) and its size limit
EXACT_S = 5.0
EXACT_NODES = 400


def union_candidates(cfa, positive) -> list[A.Expr]:
    """Union-bound candidates, smallest first (at the sample inputs), at most
    :data:`MAX_UNION_TRIES`: ``k·f`` for the real-valued samplings (k per run, f from the
    postcondition's ``log(E)``: ``1/E, 2/E, 1/(2E)``), plus for each discrete distribution ``D`` a
    run samples ``c_D`` times either nothing (its axiom free) or ``c_D`` times one outcome's
    probability (``p`` or ``1 - p`` for ``bern(p)``, ``1/N`` for a uniform over N values: an
    unreliable operation at rate r is ``bern(r)``, so a kernel with N of them gets ``N·r``).
    Bounds that are at least 1 at every sample input say nothing and are left out."""
    k = _samplings_per_run(cfa, _is_real)
    if k is None:
        return []
    fs = []
    for E in log_arguments(list(cfa.ensures)):
        r = reciprocal(E)
        fs += [A.Binary("/", r, A.num(2)), r, A.Binary("*", A.num(2), r)]
    k_is_zero = isinstance(k, A.Num) and k.value == 0
    reals: list[A.Expr] = [A.Binary("*", k, f) for f in fs] if fs and not k_is_zero else [A.num(0)]
    discrete: list[A.Expr] = [A.num(0)]
    groups = _discrete_groups(cfa)
    if groups is not None and groups:
        choices = [[A.num(0)] + [A.Binary("*", c, cost) for cost in costs] for c, costs in groups]
        if len(groups) <= MAX_GROUPS:
            combos = list(itertools.product(*choices))
        else:  # every group the same way: free, its first or its second outcome
            combos = [tuple(ch[min(i, len(ch) - 1)] for ch in choices) for i in range(3)]
        discrete = [_total(list(c)) for c in combos]
    out: list[A.Expr] = []
    for d in discrete:
        for r in reals:
            beta = as_fractions(simplify(_total([r, d]), positive))  # 1 / 4, as a user writes it
            if beta not in out:
                out.append(beta)
    return _smallest_first(out, cfa)[:MAX_UNION_TRIES]


#: union-bound candidates tried at most (each is a whole proof attempt)
MAX_UNION_TRIES = 6
#: distinct discrete distributions combined outcome by outcome (3^groups combinations)
MAX_GROUPS = 3


def _total(parts: list[A.Expr]) -> A.Expr:
    """The sum of ``parts`` with the zeros left out (0 when all are)."""
    nonzero = [p for p in parts if not (isinstance(p, A.Num) and p.value == 0)]
    if not nonzero:
        return A.num(0)
    out = nonzero[0]
    for p in nonzero[1:]:
        out = A.Binary("+", out, p)
    return out


def _smallest_first(cands: list[A.Expr], cfa) -> list[A.Expr]:
    """``cands`` ordered by their median value at the sample inputs (the fixed ones when
    ``requires`` fixes them all), without those that are at least 1 (or undefined) everywhere."""
    fixed = fixed_inputs(cfa)
    params = {p.name for p in cfa.params}
    free = set().union(*(set(free_vars(e)) for e in cands)) & params if cands else set()
    pts = [fixed] if free <= set(fixed) else sample_points(cfa)
    keyed = []
    for i, e in enumerate(cands):
        vals = sorted(v for v in (numeric(e, env) for env in pts) if v is not None)
        if not vals or vals[0] >= 1:
            continue
        keyed.append((vals[len(vals) // 2], i, e))
    return [e for _v, _i, e in sorted(keyed, key=lambda t: (t[0], t[1]))]


def _is_real(st) -> bool:
    return isinstance(st, A.Sample) and st.dist.func not in ("bern", "unif")


def _discrete_groups(cfa) -> list[tuple[A.Expr, list[A.Expr]]] | None:
    """For each discrete distribution the program samples (``bern``, ``unif``; unreliable
    operations are ``bern(rate)``): (how many times a run samples it, the probability of each
    single outcome a union bound may charge), or None when a loop has no iteration count."""
    dists: dict[str, A.Call] = {}
    for e in cfa.sample_edges():
        d = e[3]["stmt"].dist
        if d.func in ("bern", "unif"):
            dists.setdefault(show_expr(d), d)
    out = []
    for key, d in dists.items():
        count = _samplings_per_run(cfa, lambda st, key=key: isinstance(st, A.Sample) and show_expr(st.dist) == key)
        if count is None:
            return None
        if d.func == "bern" and len(d.args) == 1:
            costs = [d.args[0], A.Binary("-", A.num(1), d.args[0])]
        elif d.func == "unif" and len(d.args) == 2:
            costs = [A.Binary("/", A.num(1), A.Binary("+", A.Binary("-", d.args[1], d.args[0]), A.num(1)))]
        elif d.func == "unif" and len(d.args) == 1 and (size := _set_size(d.args[0])) is not None:
            costs = [A.Binary("/", A.num(1), A.num(size))]  # a product set: pairs
        else:
            continue
        out.append((count, costs))
    return out


def _set_size(e: A.Expr) -> int | None:
    """The number of values of a literal set or a product of them (``{0, 1} * {0, 1}``: 4
    pairs), or None. Distinct items only: a repeated literal would change the weights."""
    if isinstance(e, A.SetLit):
        return len(e.items) if len(set(e.items)) == len(e.items) and e.items else None
    if isinstance(e, A.Binary) and e.op == "*":
        a, b = _set_size(e.left), _set_size(e.right)
        return a * b if a is not None and b is not None else None
    return None


def _samplings_per_run(cfa, which=_is_real) -> A.Expr | None:
    """The number of samplings ``which`` selects (default: the real-valued ones, those with a
    failure parameter) a run makes: each such sampling counted once times the iteration counts of
    the counted loops around it (``n·m`` in a nest of two); None when a loop around one has no
    iteration count."""
    if cfa.is_acyclic():
        return A.num(sum(1 for e in cfa.sample_edges() if which(e[3]["stmt"])))
    info, _dag = _loops(cfa)
    whole = {h: loop_body(cfa, h) for h in info}  # inner loops' bodies included
    total: A.Expr = A.num(0)
    for u, v, _k, d in cfa.edges():
        if not which(d["stmt"]):
            continue
        term: A.Expr = A.num(1)
        for h, lp in info.items():
            if u in whole[h] and v in whole[h]:
                c = lp["counter"]
                if c is None:
                    return None
                term = A.Binary("*", term, c.done(c.final()))
        total = A.Binary("+", total, term)
    return total


def _prove_exact(prog0, beta, deadline, path, source):
    """The expected-failure engine's proof of ``beta`` (:func:`exact_failure`'s candidate) for
    ``prog0``, or None: asked of that engine directly, since the union bound cannot prove an
    exact product of probabilities."""
    t0 = time.monotonic()
    budget = t0 + attempt_budget()
    try:
        cfa = build_cfa(prog0, beta, path, source)
        res, _why = try_expectation(prog0, cfa, budget if deadline is None else min(deadline, budget), t0)
    except TampError:
        return None
    return res


#: the methods a union-bound candidate is proved with: the expected-failure engine has its own
#: candidates (:func:`exact_failure`, proved by :func:`_prove_exact`), so it is not run again on
#: each union-bound candidate (where it would only spend the budget on a loop it cannot read)
UNION_METHODS = tuple(s for s in STRATEGIES if s.method != "expectation")


def _prove_union(prog0, beta, deadline, path, source, progress, strategies=UNION_METHODS):
    budget = attempt_budget()
    left = budget if deadline is None else min(budget, deadline - time.monotonic())
    if left <= 0.5:
        return None
    try:
        res = prove_claim(prog0, beta, left, path, source, progress, strategies)[0]
    except TampError:
        return None
    return res if res.verdict == "proved" else None


# ---------------------------------------------------------------------------- ensures ?


class _FillHole(Transformer):
    def __init__(self, value: A.Expr):
        self.value = value

    def enter(self, node: A.Node) -> Any:
        return self.value if isinstance(node, A.Hole) else DESCEND


def fill_hole(e: A.Expr, value: A.Expr) -> A.Expr:
    """``e`` with its ``?`` replaced by ``value``."""
    out: A.Expr = _FillHole(value).walk(e)
    return out


def hole_solutions(post: A.Expr, S: str, u: A.Expr, mode: str) -> list[A.Expr]:
    """Values of the hole making the post follow from the mode's deviation bound ``u``."""
    out = []
    for c in conjuncts(post):
        if HOLE not in set(free_vars(c)) or not isinstance(c, A.Binary) or c.op not in ("<=", "<", ">=", ">"):
            continue
        lhs, rhs = (c.left, c.right) if c.op in ("<=", "<") else (c.right, c.left)

        def solve(M, target):  # M (linear in h) = target
            m0 = subst(M, {HOLE: A.num(0)})
            m1 = A.Binary("-", subst(M, {HOLE: A.num(1)}), m0)
            return A.Binary("/", A.Binary("-", target, m0), m1)

        if isinstance(lhs, A.Call) and lhs.func == "abs" and HOLE in set(free_vars(rhs)) and mode == "both":
            _a, k = _linear(lhs.args[0], S)
            out.append(solve(rhs, A.Binary("*", k, u)))
        elif HOLE in set(free_vars(rhs)) and S in set(free_vars(lhs)) and mode == "upper":
            a, k = _linear(lhs, S)
            out.append(solve(rhs, A.Binary("+", a, A.Binary("*", k, u))))
        elif HOLE in set(free_vars(lhs)) and S in set(free_vars(rhs)) and mode == "lower":
            a, k = _linear(rhs, S)
            out.append(solve(lhs, A.Binary("-", a, A.Binary("*", k, u))))
    return out


def infer_margin(program, bound, deadline, t0, path, source) -> ProofResult:
    beta = bound if bound is not None else program.fails
    hole = next(n for e in program.ensures for n in A.walk(e) if isinstance(n, A.Hole))
    if beta is None:
        raise error_at(
            UnsupportedError,
            "an `ensures` with `?` needs a failure bound (`fails p` or --bound): "
            "the margin is inferred for that probability",
            hole.pos,
            path,
            source,
        )
    ens_h = [fill_hole(e, A.Var(HOLE)) for e in program.ensures]
    base = dataclasses.replace(program, ensures=())
    cfa0 = build_cfa(base, beta, path, source)
    positive = _positive(cfa0)
    try:
        claim = claim_of(base, cfa0, ens_h)
    except NotApplicable as exc:
        return ProofResult(
            program.name,
            "failure-bound",
            "unknown",
            time.monotonic() - t0,
            show_expr(beta),
            f"could not infer the margin: margins are inferred by concentration rules, which do not apply: {exc}",
            cfa=cfa0,
        )
    if len(claim.sums) != 1:
        return ProofResult(
            program.name,
            "failure-bound",
            "unknown",
            time.monotonic() - t0,
            show_expr(beta),
            "could not infer the margin: the postcondition reads several sums of draws (a margin is inferred for one)",
            cfa=cfa0,
        )
    s = claim.sums[0]
    cands: list[tuple[A.Expr, ConcentrationResult]] = []
    why = ""
    tried = set()
    for mode in ("both", "upper", "lower"):
        for rule in C.RULES_FOR[s.family]:
            u = C.threshold(rule, mode, rule_blocks(rule, s), beta)
            for raw in hole_solutions(claim.post, s_name(0), u, mode):
                for h in (simplify(raw, positive), raw):
                    if h in tried:
                        continue
                    tried.add(h)
                    prog_h = dataclasses.replace(program, ensures=tuple(fill_hole(e, h) for e in program.ensures))
                    cfa = build_cfa(prog_h, beta, path, source)
                    res, w = try_concentration(prog_h, cfa, deadline, t0)
                    if res is not None:
                        res.margin = h
                        cands.append((h, res))
                        break
                    why = why or w
    pick = best(cands, cfa0)
    if pick is None:
        return ProofResult(
            program.name,
            "failure-bound",
            "unknown",
            time.monotonic() - t0,
            show_expr(beta),
            "could not infer the margin" + (f": {why}" if why else ""),
            cfa=cfa0,
        )
    h, res, value = pick
    if value is None and set(free_vars(h)) <= set(fixed_inputs(cfa0)):
        value = numeric(h, fixed_inputs(cfa0))
    res.inferred, res.value = "margin", value
    res.alternatives = [
        {"margin": show_expr(e), "rule": r.proof.apps[0].rule}
        for e, r in cands
        if e is not h and r.proof is not None  # a concentration result always carries its proof
    ]
    res.time_s = time.monotonic() - t0
    return res
