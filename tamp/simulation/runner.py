"""``simulate(program_or_source, inputs, …)``: run a program many times and judge its claim."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from lang import ast as A
from lang.errors import TampError, UnsupportedError, error_at
from lang.loader import load
from lang.parser import parse_expr
from lang.typecheck import CANDIDATE_OPS, UNRELIABLE_OPS, check_program
from tamp.cfa import build_cfa
from tamp.cfa.dependence import precondition_positions
from tamp.cfa.loops import CountedLoop, counted_loops_by_step

from .arith import MAX_EXACT_BITS, BallDomain, DigitBudget, ExactDomain
from .draws import seed_key
from .errors import SimulationError
from .evaluate import Ctx, Evaluator
from .exact import ExactEvaluator, approx, exceeds
from .inputs import convert_inputs, to_domain
from .interp import Interpreter
from .result import CONFIRMED, CONSISTENT, REFUTED, UNDECIDED, Comparison, SimResult
from .spec import IntervalEvaluator, collect_terms, desugar, expr_text, is_probability_spec, term_intervals, term_masks
from .state import State
from .stats import failure_rate_ci
from .values import ArrayVal

_EXPR_OFFSET = len("program __e__() ensures ")  # lang.parser.parse_expr's wrapper
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def resolve_program(program_or_source, name: Optional[str] = None):
    """(Program, path, source text) from a Program, a SourceFile, a path or source text."""
    if isinstance(program_or_source, A.Program):
        return program_or_source, "<program>", None
    if isinstance(program_or_source, A.SourceFile):
        src = program_or_source
    elif isinstance(program_or_source, Path) or (
        isinstance(program_or_source, str) and "\n" not in program_or_source and "{" not in program_or_source
    ):
        src = load(Path(program_or_source), check=False)  # type-checked per program below
    elif isinstance(program_or_source, str):
        src = load(program_or_source, "<string>", check=False)
    else:
        raise TypeError("simulate needs a lang.ast.Program, a SourceFile, source text or a path")
    if name is not None:
        prog = src.program(name)
        if prog is None:
            names = ", ".join(p.name for p in src.programs) or "none"
            raise TampError(f"no program named '{name}' (the file has: {names})", src.path)
    elif len(src.programs) == 1:
        prog = src.programs[0]
    else:
        names = ", ".join(p.name for p in src.programs) or "none"
        raise TampError(f"the file has {len(src.programs)} programs ({names}); choose one", src.path)
    return prog, src.path, src.text or None


def _types(prog: A.Program, path: str, source: Optional[str]) -> Dict[str, A.Type]:
    """Variable types from the type checker; raises its errors."""
    return dict(check_program(prog, path, source).vars)


def _uses_failed(prog: A.Program) -> bool:
    if prog.rate is not None or prog.reliability is not None:
        return True
    for n in A.walk(prog.body):
        if isinstance(n, A.Binary) and n.op in ("+.", "-.", "*."):
            return True
        if isinstance(n, A.Var) and n.name == "failed":
            return True
    return any(n.name == "failed" for e in prog.ensures for n in A.walk(e) if isinstance(n, A.Var))


def _bound_expr(prog: A.Program, bound):
    """The failure bound as (expression or value, text)."""
    if bound is not None:
        if isinstance(bound, str):
            return parse_expr(bound, "--bound"), bound
        if isinstance(bound, A.Expr):
            return bound, expr_text(bound, None)
        return bound, str(bound)
    if prog.fails is not None:
        return prog.fails, None
    if prog.reliability is not None:
        return A.Binary("-", A.num(1), prog.reliability, pos=prog.reliability.pos), None
    return A.num(0), "0 (no fails clause)"


def _check_rate(prog, inputs_ev: ExactEvaluator) -> Optional[float]:
    if prog.rate is None:
        return None
    r = inputs_ev.eval(prog.rate)
    if isinstance(r, bool) or isinstance(r, (tuple, list)) or not 0 <= approx(r) <= 1:
        raise inputs_ev.error(f"the rate must be a probability in [0, 1], got {r}", prog.rate)
    return approx(r)  # a sampling probability: a float is enough


def _narrow(iv) -> bool:
    """An interval that is a number up to rounding (shown as that number)."""
    return iv[0] == iv[1] or (math.isfinite(iv[0]) and iv[1] - iv[0] <= 1e-12 * max(1.0, abs(iv[0])))


def _comparisons(specs, terms, inputs_ev, source) -> List[Comparison]:
    """Every comparison with P terms: its side's estimate and interval vs the other side."""
    out: List[Comparison] = []
    iv, pt = IntervalEvaluator(terms, inputs_ev), IntervalEvaluator(terms, inputs_ev, point=True)
    for s in specs:
        for node in A.walk(s):
            if isinstance(node, A.Binary) and node.op in _FLIP and is_probability_spec(node):
                left_p = is_probability_spec(node.left)
                side, other = (node.left, node.right) if left_p else (node.right, node.left)
                op = node.op if left_p else _FLIP[node.op]
                est = pt.eval(side)[0]
                thr = iv.eval(other)
                out.append(
                    {
                        "comparison": expr_text(node, source),
                        "side": expr_text(side, source),
                        "op": op,
                        "estimate": est,
                        "interval": list(iv.eval(side)),
                        "threshold": thr[0] / 2 + thr[1] / 2 if _narrow(thr) else list(thr),
                        "holds": iv.eval(node),
                    }
                )
    return out


def _hardware_model(prog: A.Program):
    """The first construct of Rely's hardware model the simulator does not run (per-kind rates,
    unreliable memory, value-level reliability, unreliable comparisons and division, candidate
    operators), or None."""
    for x in (*prog.op_rates, *prog.memory, prog.value_reliability):
        if x is not None:
            return x
    for n in A.walk(prog.body):
        if isinstance(n, A.Binary) and (n.op in UNRELIABLE_OPS or n.op in CANDIDATE_OPS) and n.op not in _SIMULATED:
            return n
    return None


_SIMULATED = ("+.", "-.", "*.")


def _prepare(prog, inputs, path, source):
    """Exact inputs (checked against the parameters) and their evaluator; ``requires`` must hold."""
    unsupported = _hardware_model(prog)
    if unsupported is not None:
        raise error_at(
            UnsupportedError,
            "the simulator runs `+. -. *.` with one `rate`; per-kind rates, unreliable memory, value-level "
            "reliability, unreliable comparisons and division and candidate operators are for `tamp prove`",
            unsupported.pos,
            path,
            source,
        )
    exact = convert_inputs(prog, dict(inputs or {}), path, source)
    inputs_ev = ExactEvaluator(exact, path, source, what="a requires/fails/rate clause")
    for r in prog.requires:
        if not inputs_ev.eval(r):
            raise error_at(SimulationError, "this requires clause is false at the given inputs", r.pos, path, source)
    return exact, inputs_ev


def counted_for_loops(prog: A.Program) -> Dict[tuple, CountedLoop]:
    """The ``for`` loops of ``prog`` whose trip count the CFA's loop analysis knows on entry
    (:func:`tamp.cfa.loops.counted_loop`: the bound reads nothing the body writes, the counter
    moves once per iteration), by the (line, col) of the ``for`` statement: the interpreter
    refuses such a loop longer than its budget before running it. None of a program the CFA
    cannot be built for (its loops then run until the budget is spent)."""
    if not any(isinstance(n, A.For) for n in A.walk(prog.body)):
        return {}
    try:
        cfa = build_cfa(prog)
    except TampError:
        return {}
    return counted_loops_by_step(cfa)


def _execute(prog, exact, inputs_ev, types, run_ids, key, dom, path, source, max_iterations=None):
    """Run the body on the runs ``run_ids`` in the number domain ``dom``; the evaluator and the
    final state of the kept runs."""
    rate = _check_rate(prog, inputs_ev)

    def err(msg):
        return error_at(SimulationError, msg, prog.pos, path, source)

    params = {k: to_domain(v, prog.param(k).type, dom, err) for k, v in exact.items()}
    ev = Evaluator(params, key, rate, path, source, dom=dom)
    interp = Interpreter(
        ev,
        types,
        **({"max_iterations": max_iterations} if max_iterations else {}),
        preconditions=precondition_positions(prog),
        counted=counted_for_loops(prog),
    )
    n = len(run_ids)
    state = State.start(n, run_id=np.asarray(run_ids, dtype=np.int64))
    if _uses_failed(prog):
        state.set("failed", np.zeros(n, dtype=bool))
    with np.errstate(all="ignore"):  # an overflow is an infinite ball, which decides nothing
        return ev, interp.exec(prog.body, state)


def run_samples(
    program_or_source,
    inputs: Optional[Dict[str, object]] = None,
    runs: int = 10000,
    seed: int = 0,
    program: Optional[str] = None,
) -> Dict[str, object]:
    """The final values of every local over the kept runs: name -> numpy array of shape (kept,)
    (arrays: (kept, capacity), unwritten elements 0; pairs: tuples). For tests and
    notebooks that want the samples themselves."""
    prog, path, source = resolve_program(program_or_source, program)
    exact, inputs_ev = _prepare(prog, inputs, path, source)
    dom = BallDomain()
    _, state = _execute(
        prog, exact, inputs_ev, _types(prog, path, source), np.arange(runs), seed_key(seed), dom, path, source
    )

    def plain(v):
        if isinstance(v, tuple):
            return tuple(plain(x) for x in v)
        return dom.mid(v.data if isinstance(v, ArrayVal) else v)

    return {k: plain(v) for k, v in state.vars.items()}


CHUNK = 500_000  # runs simulated at once; more runs are done in chunks (bounded memory)


def _chunks(runs: int):
    """Sizes of the successive chunks of ``runs``."""
    while runs > 0:
        yield min(runs, CHUNK)
        runs -= CHUNK


def _failing(plain: List[A.Expr], ev: Evaluator, ctx: Ctx) -> np.ndarray:
    """Per run: whether it violates the conjunction of ``plain`` (each clause evaluated where the
    earlier ones hold)."""
    holds = np.ones(ctx.n, dtype=bool)
    for e in plain:
        if holds.any():
            sub = ctx if holds.all() else ctx.restrict(holds)
            holds[holds.copy()] = ev.eval_bool(e, sub)
    return ~holds


#: The domain of the first pass over every run (tests swap in an exact one to compare).
FAST = BallDomain

#: The domains that re-run the runs the previous one left unsure (the fast pass is BallDomain),
#: made on demand (the symbolic one imports sympy).
REFINEMENTS = (lambda: ExactDomain("arb", 128), lambda: ExactDomain("arb", 1024), lambda: ExactDomain("sym"))


@dataclass
class _Tally:
    """Counts over the runs whose every comparison was decided."""

    kept: int = 0
    failures: int = 0
    counts: List[List[int]] = field(default_factory=list)

    def add(self, state: State, fail: np.ndarray, masks) -> np.ndarray:
        """Count the sure runs of ``state``; return the ids of its unsure runs."""
        sure = ~state.unsure
        self.kept += int(np.count_nonzero(sure))
        self.failures += int(np.count_nonzero(fail & sure))
        for c, (hit, trial) in zip(self.counts, masks):
            c[0] += int(np.count_nonzero(hit & sure))
            c[1] += int(np.count_nonzero(trial & sure))
        return state.run_id[state.unsure]


def _run_and_judge(
    prog, exact, inputs_ev, types, ids, key, dom, path, source, plain, terms, max_iterations, tally: _Tally
) -> np.ndarray:
    ev, state = _execute(prog, exact, inputs_ev, types, ids, key, dom, path, source, max_iterations)
    ctx = Ctx(state)
    if state.n == 0:
        return state.run_id
    with np.errstate(all="ignore"):
        fail = _failing(plain, ev, ctx) if plain else np.zeros(state.n, dtype=bool)
        masks = [term_masks(t, ev, ctx) for t in terms]
    return tally.add(state, fail, masks)


def simulate(
    program_or_source,
    inputs: Optional[Dict[str, object]] = None,
    runs: int = 100000,
    seed: int = 0,
    bound=None,
    confidence: float = 0.99,
    program: Optional[str] = None,
    max_iterations: Optional[int] = None,
) -> SimResult:
    """Run a program ``runs`` times at fixed ``inputs`` and compare with its claim.

    ``program_or_source``: a :class:`lang.ast.Program`, a :class:`lang.ast.SourceFile`,
    source text, or a path (``program`` picks one of several programs). ``inputs`` maps every
    parameter to a value (int / Fraction / float / bool / list). ``bound`` overrides the
    ``fails`` clause (expression text, AST or number). Raises a located
    :class:`lang.errors.TampError` for bad input (missing parameter, ``requires`` false,
    division by zero, …)."""
    t0 = time.perf_counter()
    if runs < 1:
        raise SimulationError(f"the number of runs must be positive, got {runs}")
    if not 0 < confidence < 1:
        raise SimulationError(f"the confidence must be in (0, 1), got {confidence}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SimulationError(f"the seed must be an integer >= 0, got {seed!r}")
    prog, path, source = resolve_program(program_or_source, program)
    types = _types(prog, path, source)
    for e in prog.ensures:
        for node in A.walk(e):
            if isinstance(node, A.Independent):
                raise error_at(
                    SimulationError,
                    "independent(…) is a property over all inputs, not a "
                    "sampling property: it cannot be simulated (use tamp prove)",
                    node.pos,
                    path,
                    source,
                )
    exact, inputs_ev = _prepare(prog, inputs, path, source)
    bexpr, btext = _bound_expr(prog, bound)
    bound_ev = ExactEvaluator(
        exact,
        "--bound" if isinstance(bound, str) else path,
        bound if isinstance(bound, str) else source,
        what="the bound",
    )
    try:
        bval = bound_ev.eval(bexpr) if isinstance(bexpr, A.Expr) else bexpr
    except SimulationError as exc:
        if isinstance(bound, str) and exc.line == 1:  # parse_expr positions are in its wrapper text
            exc.col = max(exc.col - _EXPR_OFFSET, 1)
        raise
    if isinstance(bval, bool) or isinstance(bval, (tuple, list)) or (isinstance(bval, float) and math.isnan(bval)):
        raise bound_ev.error(f"the bound must be a number, got {bval}", bexpr)
    if btext is None:
        btext = expr_text(bexpr, source)
    specs = [desugar(e) for e in prog.ensures]
    plain = [e for e in specs if not is_probability_spec(e)]
    probs = [e for e in specs if is_probability_spec(e)]
    if prog.reliability is not None:
        plain.append(A.Unary("!", A.Var("failed", pos=prog.reliability.pos), pos=prog.reliability.pos))
    terms = collect_terms(probs)
    tally = _Tally(counts=[[0, 0] for _ in terms])
    key = seed_key(seed)
    unsure, start = [], 0
    for chunk in _chunks(runs):
        ids = np.arange(start, start + chunk, dtype=np.int64)
        start += chunk
        unsure.append(
            _run_and_judge(
                prog, exact, inputs_ev, types, ids, key, FAST(), path, source, plain, terms, max_iterations, tally
            )
        )
    pending = np.concatenate(unsure)
    refined = len(pending)
    too_big = False
    for make in REFINEMENTS:
        if not len(pending):
            break
        try:
            pending = _run_and_judge(
                prog, exact, inputs_ev, types, pending, key, make(), path, source, plain, terms, max_iterations, tally
            )
        except DigitBudget:  # the exact numbers outgrew the budget: these runs stay undecided
            too_big = True
            break
    undecided = len(pending)
    kept, failures = tally.kept, tally.failures
    counts = [(hit, trial) for hit, trial in tally.counts]
    # undecided runs count in the way least favourable to a refutation: kept and passing
    lo, _ = failure_rate_ci(failures, kept + undecided, confidence)
    _, hi = failure_rate_ci(failures + undecided, kept + undecided, confidence)
    refuted = exceeds(lo, bval)
    if not isinstance(bval, (int, float, Fraction)):
        bval = approx(bval)  # an irrational bound: the verdict used its exact value, display a float
    messages = []
    if undecided and too_big:
        messages.append(
            f"{undecided} run(s) undecided: their floating-point balls were too wide to decide a "
            f"comparison, and their exact numbers outgrew the budget of {MAX_EXACT_BITS} bits "
            "(an iteration whose digits double each step); they count as passing for the verdict"
        )
    elif undecided:
        messages.append(
            f"{undecided} run(s) undecided: a comparison on them could not be decided "
            "exactly; they count as passing for the verdict"
        )
    elif refined:
        messages.append(f"{refined} run(s) re-run exactly (floating-point balls did not decide a comparison)")
    if kept + undecided == 0:
        messages.append("no run satisfied the assume(…) conditions: nothing to estimate")
    elif kept + undecided < runs:
        messages.append(f"assume(…) kept {kept + undecided} of {runs} runs ({(kept + undecided) / runs:.4g})")

    if probs:
        term_ivs = term_intervals(terms, counts, confidence, source, undecided)
        spec_ev = ExactEvaluator(exact, path, source, what="a probability specification outside P(…)")
        box = IntervalEvaluator(term_ivs, spec_ev)
        truth = True
        for e in probs:
            truth = IntervalEvaluator._logic("&&", truth, box.eval(e))
        if refuted or truth is False:
            verdict = REFUTED
        else:
            verdict = CONFIRMED if truth is True else UNDECIDED
        point = IntervalEvaluator(term_ivs, spec_ev, point=True)
        est = True
        for e in probs:
            est = IntervalEvaluator._logic("&&", est, point.eval(e))
        result = SimResult(
            prog.name,
            "probability",
            kept,
            runs,
            failures,
            confidence,
            (lo, hi),
            btext if (plain or prog.fails is not None or bound is not None) else None,
            bval,
            verdict,
            seed,
            prob_terms=[t.as_tuple() for t in term_ivs.values()],
            term_counts=[(t.hits, t.trials) for t in term_ivs.values()],
            spec_estimate=est,
            comparisons=_comparisons(probs, term_ivs, spec_ev, source),
        )
    else:
        result = SimResult(
            prog.name,
            "failure-bound",
            kept,
            runs,
            failures,
            confidence,
            (lo, hi),
            btext,
            bval,
            REFUTED if refuted else CONSISTENT,
            seed,
        )
    result.inputs = exact
    result.undecided = undecided
    result.message = "; ".join(messages)
    result.time_s = time.perf_counter() - t0
    return result


def check_consistent(
    program_or_source,
    inputs: Optional[Dict[str, object]] = None,
    bound=None,
    runs: int = 20000,
    seed: int = 0,
    program: Optional[str] = None,
) -> SimResult:
    """For provers' tests: simulate and raise ``AssertionError`` (with the report) unless the
    claim (``fails`` or ``bound``) is consistent with the samples — i.e. the Monte Carlo interval
    reaches below the bound (or a probability specification is not refuted)."""
    r = simulate(program_or_source, inputs, runs=runs, seed=seed, bound=bound, program=program)
    if r.verdict == REFUTED:
        raise AssertionError("the simulator refutes this claim:\n" + r.render_text())
    return r
