"""``simulate(program_or_source, inputs, …)``: run a program many times and judge its claim."""

from __future__ import annotations

import math
import time
from fractions import Fraction
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from lang import ast as A
from lang.errors import TampError, error_at
from lang.parser import parse, parse_expr, parse_file
from lang.typecheck import check_program

from .errors import SimulationError
from .evaluate import Ctx, Evaluator
from .exact import ExactEvaluator
from .inputs import convert_inputs, to_numpy
from .interp import Interpreter
from .result import CONFIRMED, CONSISTENT, REFUTED, UNDECIDED, SimResult
from .spec import IntervalEvaluator, collect_terms, count_term, desugar, expr_text, is_probability_spec, term_intervals
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
            isinstance(program_or_source, str) and "\n" not in program_or_source
            and "{" not in program_or_source):
        src = parse_file(str(program_or_source))
    elif isinstance(program_or_source, str):
        src = parse(program_or_source)
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
    if isinstance(r, bool) or not 0 <= r <= 1:
        raise inputs_ev.error(f"the rate must be a probability in [0, 1], got {r}", prog.rate)
    return float(r)


def _comparisons(specs, terms, inputs_ev, source) -> List[dict]:
    """Every comparison with P terms: its side's estimate and interval vs the other side."""
    out = []
    iv, pt = IntervalEvaluator(terms, inputs_ev), IntervalEvaluator(terms, inputs_ev, point=True)
    for s in specs:
        for node in A.walk(s):
            if isinstance(node, A.Binary) and node.op in _FLIP and is_probability_spec(node):
                left_p = is_probability_spec(node.left)
                side, other = (node.left, node.right) if left_p else (node.right, node.left)
                op = node.op if left_p else _FLIP[node.op]
                est = pt.eval(side)[0]
                thr = iv.eval(other)
                out.append({"comparison": expr_text(node, source), "side": expr_text(side, source),
                            "op": op, "estimate": est, "interval": list(iv.eval(side)),
                            "threshold": thr[0] if thr[0] == thr[1] else list(thr),
                            "holds": iv.eval(node)})
    return out


def _prepare(prog, inputs, path, source):
    """Exact inputs (checked against the parameters) and their evaluator; ``requires`` must hold."""
    exact = convert_inputs(prog, dict(inputs or {}), path, source)
    inputs_ev = ExactEvaluator(exact, path, source, what="a requires/fails/rate clause")
    for r in prog.requires:
        if not inputs_ev.eval(r):
            raise error_at(SimulationError, "this requires clause is false at the given inputs",
                           r.pos, path, source)
    return exact, inputs_ev


def _execute(prog, exact, inputs_ev, types, runs, rng, path, source, max_iterations=None):
    """Run the body ``runs`` times; the evaluator and the final state of the kept runs."""
    rate = _check_rate(prog, inputs_ev)
    params = {k: to_numpy(v, prog.param(k).type) for k, v in exact.items()}
    ev = Evaluator(params, rng, rate, path, source)
    interp = Interpreter(ev, types, **({"max_iterations": max_iterations} if max_iterations else {}))
    state = State(runs)
    if _uses_failed(prog):
        state.set("failed", np.zeros(runs, dtype=bool))
    with np.errstate(all="ignore"):  # overflow to inf / nan is part of float semantics here
        return ev, interp.exec(prog.body, state)


def run_samples(program_or_source, inputs: Optional[Dict[str, object]] = None, runs: int = 10000,
                seed: int = 0, program: Optional[str] = None) -> Dict[str, object]:
    """The final values of every local over the kept runs: name -> numpy array of shape (kept,)
    (arrays: (kept, capacity), unwritten elements 0; pairs: tuples). For tests and
    notebooks that want the samples themselves."""
    prog, path, source = resolve_program(program_or_source, program)
    exact, inputs_ev = _prepare(prog, inputs, path, source)
    _, state = _execute(prog, exact, inputs_ev, _types(prog, path, source), runs,
                       np.random.default_rng(seed), path, source)
    return {k: (v.data if isinstance(v, ArrayVal) else v) for k, v in state.vars.items()}


CHUNK = 500_000  # runs simulated at once; more runs are done in chunks (bounded memory)


def _chunks(runs: int):
    """Sizes of the successive chunks of ``runs``."""
    while runs > 0:
        yield min(runs, CHUNK)
        runs -= CHUNK


def _count_failures(plain: List[A.Expr], ev: Evaluator, ctx: Ctx) -> int:
    """Runs violating the conjunction of ``plain`` (each clause evaluated where the earlier hold)."""
    if not plain or ctx.n == 0:
        return 0
    holds = np.ones(ctx.n, dtype=bool)
    for e in plain:
        if holds.any():
            sub = ctx if holds.all() else ctx.restrict(holds)
            holds[holds.copy()] = ev.eval_bool(e, sub)
    return int(np.count_nonzero(~holds))


def simulate(program_or_source, inputs: Optional[Dict[str, object]] = None, runs: int = 100000,
             seed: int = 0, bound=None, confidence: float = 0.99, program: Optional[str] = None,
             max_iterations: Optional[int] = None) -> SimResult:
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
    prog, path, source = resolve_program(program_or_source, program)
    types = _types(prog, path, source)
    for e in prog.ensures:
        for node in A.walk(e):
            if isinstance(node, A.Independent):
                raise error_at(SimulationError, "independent(…) is a property over all inputs, not a "
                               "sampling property: it cannot be simulated (use tamp prove)",
                               node.pos, path, source)
    exact, inputs_ev = _prepare(prog, inputs, path, source)
    bexpr, btext = _bound_expr(prog, bound)
    bound_ev = ExactEvaluator(exact, "--bound" if isinstance(bound, str) else path,
                              bound if isinstance(bound, str) else source, what="the bound")
    try:
        bval = bound_ev.eval(bexpr) if isinstance(bexpr, A.Expr) else bexpr
    except SimulationError as exc:
        if isinstance(bound, str) and exc.line == 1:  # parse_expr positions are in its wrapper text
            exc.col = max(exc.col - _EXPR_OFFSET, 1)
        raise
    if isinstance(bval, bool) or not isinstance(bval, (int, float, Fraction)) or \
            (isinstance(bval, float) and math.isnan(bval)):
        raise bound_ev.error(f"the bound must be a number, got {bval}", bexpr)
    if btext is None:
        btext = expr_text(bexpr, source)
    specs = [desugar(e) for e in prog.ensures]
    plain = [e for e in specs if not is_probability_spec(e)]
    probs = [e for e in specs if is_probability_spec(e)]
    if prog.reliability is not None:
        plain.append(A.Unary("!", A.Var("failed", pos=prog.reliability.pos), pos=prog.reliability.pos))
    terms = collect_terms(probs)
    counts = [(0, 0)] * len(terms)
    kept = failures = 0
    rng = np.random.default_rng(seed)
    for chunk in _chunks(runs):
        ev, state = _execute(prog, exact, inputs_ev, types, chunk, rng, path, source, max_iterations)
        ctx = Ctx(state)
        kept += state.n
        with np.errstate(all="ignore"):
            failures += _count_failures(plain, ev, ctx)
            more = [count_term(t, ev, ctx) for t in terms]
        counts = [(h + dh, n + dn) for (h, n), (dh, dn) in zip(counts, more)]
    lo, hi = failure_rate_ci(failures, kept, confidence)
    refuted = Fraction(lo) > Fraction(bval) if not isinstance(bval, float) else lo > bval
    messages = []
    if kept == 0:
        messages.append("no run satisfied the assume(…) conditions: nothing to estimate")
    elif kept < runs:
        messages.append(f"assume(…) kept {kept} of {runs} runs ({kept / runs:.4g})")

    if probs:
        terms = term_intervals(terms, counts, confidence, source)
        spec_ev = ExactEvaluator(exact, path, source, what="a probability specification outside P(…)")
        box = IntervalEvaluator(terms, spec_ev)
        truth = True
        for e in probs:
            truth = IntervalEvaluator._logic("&&", truth, box.eval(e))
        if refuted or truth is False:
            verdict = REFUTED
        else:
            verdict = CONFIRMED if truth is True else UNDECIDED
        point = IntervalEvaluator(terms, spec_ev, point=True)
        est = True
        for e in probs:
            est = IntervalEvaluator._logic("&&", est, point.eval(e))
        result = SimResult(prog.name, "probability", kept, runs, failures, confidence, (lo, hi),
                           btext if (plain or prog.fails is not None or bound is not None) else None,
                           bval, verdict, seed,
                           prob_terms=[t.as_tuple() for t in terms.values()],
                           term_counts=[(t.hits, t.trials) for t in terms.values()],
                           spec_estimate=est, comparisons=_comparisons(probs, terms, spec_ev, source))
    else:
        result = SimResult(prog.name, "failure-bound", kept, runs, failures, confidence, (lo, hi), btext,
                           bval, REFUTED if refuted else CONSISTENT, seed)
    result.inputs = exact
    result.message = "; ".join(messages)
    result.time_s = time.perf_counter() - t0
    return result


def check_consistent(program_or_source, inputs: Optional[Dict[str, object]] = None, bound=None,
                     runs: int = 20000, seed: int = 0, program: Optional[str] = None) -> SimResult:
    """For provers' tests: simulate and raise ``AssertionError`` (with the report) unless the
    claim (``fails`` or ``bound``) is consistent with the samples — i.e. the Monte Carlo interval
    reaches below the bound (or a probability specification is not refuted)."""
    r = simulate(program_or_source, inputs, runs=runs, seed=seed, bound=bound, program=program)
    if r.verdict == REFUTED:
        raise AssertionError("the simulator refutes this claim:\n" + r.render_text())
    return r
