"""Markov's inequality on quantities whose expected increments read the inputs' arrays or the
state (issue 33, :mod:`tamp.prover.expectation.moments`): the increments left of a rounded cost
written with the claim's own sum body (:func:`written_like`, so the solver sees one sum
function), and a queue whose expected step depends on the state bounded by a step that
dominates it in every state (:func:`dominating`, each choice decided by INDUCT). True dev claims
and differently written variants are proved; their false siblings are not; a wrong dominating
choice is rejected by INDUCT; synthesis with sum terms no longer stops the engine. Every proved
claim is cross-checked by simulation at its recorded inputs; the variants are the files of
benchmarks/prover4/dev/moments2, whose false siblings the soundness harness runs."""

from __future__ import annotations

import re

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse, parse_expr
from tamp.cfa import build_cfa
from tamp.prover import prove_program
from tamp.prover.base.smt import VALID
from tamp.prover.expectation import moments as M
from tamp.prover.expectation import prove as E
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

# tests of the expected-failure engine: linearity (tried before it) is turned off
pytestmark = pytest.mark.usefixtures("without_linearity")

BLIND = BENCHMARKS / "prover4" / "dev" / "blind3"
TRUE = [BLIND / "rounding" / "rounding_cost_markov.prob", BLIND / "queues" / "queue_length_markov.prob"]

DEV = BENCHMARKS / "prover4" / "dev" / "moments2"


def _template(name: str) -> str:
    """The dev file ``name`` with its bound left open (``fails BOUND``)."""
    return re.sub(r"(?m)^  fails .*$", "  fails BOUND", (DEV / f"{name}.prob").read_text(), count=1)


# a rounded LP's cost written as a while loop with a second count; a stack's depth dominated by
# its pushes (benchmarks/prover4/dev/moments2, whose files hold the true bound and a false sibling)
LP_ROUND = _template("lp_round")
STACK = _template("stack")


def _prove_text(text, timeout=60):
    src = parse(text)
    return prove_program(src.programs[0], path="<t>", source=text, timeout=timeout)


def _claim(text):
    prog = parse(text).programs[0]
    cfa = build_cfa(prog, None, "<t>", text)
    claim = E.claim_of(prog, cfa)
    return prog, cfa, claim, E.Checker(claim, None)


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_dev_claims_are_proved_by_expected_failure(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert type(r).__name__ == "ExpectationResult"
    _simulated_consistent(path)


def _simulated_consistent(path):
    """The proved bound holds when the program is run at its recorded inputs."""
    assert inputs_for(str(path))
    for given in inputs_for(str(path)):
        sim = simulate(str(path), given, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("name", ["lp_round", "stack", "colony"])
def test_the_variants_files_are_proved_and_their_false_siblings_are_harness_files(name):
    import sys

    r = _prove(DEV / f"{name}.prob")
    assert r.verdict == "proved", r.render_text()
    _simulated_consistent(DEV / f"{name}.prob")
    false = DEV / f"{name}_false.prob"
    sys.path.insert(0, str(BENCHMARKS / "soundness"))
    from harness import variant_files

    assert false.relative_to(BENCHMARKS).as_posix() in set(variant_files())
    assert [simulate(str(false), given, runs=4000, seed=7).verdict for given in inputs_for(str(false))] == ["refuted"]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


@pytest.mark.parametrize("name", ["lp_round", "stack", "colony"])
def test_the_variants_false_siblings_are_not_proved(name):
    assert _prove(DEV / f"{name}_false.prob", timeout=FALSE_CLAIM_S).verdict != "proved"


def test_a_sum_of_increments_is_written_with_the_claims_body():
    known = [parse_expr("sum(j in 0..n: w[j] * x[j])")]
    assert isinstance(known[0], A.Sum)
    got = M.written_like(parse_expr("(sum(l in i..n: x[l] * w[l])) / k"), known)
    assert got == parse_expr("(sum(l in i..n: w[l] * x[l])) / k")
    # a body of another value is left as it is
    other = parse_expr("sum(l in i..n: x[l] * x[l])")
    assert M.written_like(other, known) == other


def test_dominating_increments_choose_one_branch_per_state_test():
    d = parse_expr("a * (q + 1 > 0 ? 1 - s : 1) + (1 - a) * (q > 0 ? -s : 0)")
    got = M.dominating(d, {"q", "t"})
    assert len(got) == 4 and all(not {"q"} & set(n.name for n in A.walk(e) if isinstance(n, A.Var)) for e in got)
    assert any(M.same_value(e, parse_expr("a")) for e in got)
    assert M.dominating(parse_expr("a + s"), {"q"}) == []  # no state test: nothing to choose


def test_a_dominating_step_that_is_too_small_is_rejected_by_induct():
    _prog, _cfa, claim, chk = _claim(STACK.replace("BOUND", "push * rounds / cap"))
    loop = next(n for n in A.walk(claim.body) if isinstance(n, A.While))
    g, body, _ = E.as_while(loop)
    w = E.Wpe(claim.body, claim.params, {}, None, types=claim.types)

    def induct(core):
        c = parse_expr(core)
        steps = E.induct_formulas(g, w.stmt(body, E.invariant(g, c, claim.post)), c)
        return chk.valid(E.and_all([ob for _w, ob in steps]), 10000)

    guard = "r >= 0 && 0 <= pop && pop <= 1 && 0 <= push && push <= 1 && depth >= 0"
    assert induct(f"{guard} ? (depth + (rounds - r) * push) / cap : 1") == VALID
    # the step when the stack is never popped is push - pop: not an upper bound where it is empty
    assert induct(f"{guard} ? (depth + (rounds - r) * (push - pop)) / cap : 1") != VALID


def test_synthesis_with_sum_terms_gives_an_answer_not_an_exception():
    # the optimizer took the lemmas' (name, lemma) pairs as formulas: z3 raised, and the whole
    # engine gave up silently (the prover catches it) before the later cores were tried
    text = LP_ROUND.replace("BOUND", "1 / (2 * t)")
    prog, cfa, _claim_, _chk = _claim(text)
    proof, why, _c = E.prove_with_bound(prog, cfa, cfa.bound, None)
    assert proof is None and why


# a population written otherwise: a while loop over generations, offspring by a coin of chance
# q each adding `kids`, a running total the loop also starts from the input
COLONY = _template("colony")

BRANCHING = [BLIND / "branching" / "subcritical_extinction.prob", BLIND / "branching" / "supercritical_growth.prob"]


@pytest.mark.parametrize("path", BRANCHING, ids=lambda p: p.stem)
def test_branching_processes_are_proved_and_their_false_siblings_are_not(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert type(r).__name__ == "ExpectationResult"
    _simulated_consistent(path)
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


def test_the_state_bound_and_the_inner_mean_are_proposed():
    beta = parse_expr("z0 * pow(2 * p, k)")
    cores = M.state_cores(beta, [("k", parse_expr("k - g"))], [("z0", "z"), ("z0", "total")])
    assert parse_expr("z >= 0 ? z * pow(2 * p, k - g) : 1") in cores
    assert parse_expr("total >= 0 ? total * pow(2 * p, k - g) : 1") in cores
    assert M.state_cores(beta, [("k", parse_expr("k - g"))], []) == []


def test_an_inner_core_with_the_wrong_offspring_mean_is_rejected_by_induct():
    text = COLONY.replace("BOUND", "n0 * pow(kids * q, gens) / lim")
    _prog, _cfa, claim, chk = _claim(text)
    inner = next(n for n in A.walk(claim.body) if isinstance(n, A.For))
    g, body, _ = E.as_while(inner)
    outer_core = parse_expr("pop >= 0 ? pop * pow(kids * q, gens - t) / lim : 1")
    # the inner loop's continuation: the rest of the generation, then the outer invariant
    after = parse("program p() requires true ensures true fails 0 { pop := next; seen := seen + next; t := t + 1; }")
    rest = after.programs[0].body
    w = E.Wpe(claim.body, claim.params, {}, None, types=claim.types)
    outer_loop = next(n for n in A.walk(claim.body) if isinstance(n, A.While))
    og, _ob, _ = E.as_while(outer_loop)
    f = w.stmt(rest, E.invariant(og, outer_core, claim.post))

    def induct(core):
        c = parse_expr(core)
        steps = E.induct_formulas(g, w.stmt(body, E.invariant(g, c, f)), c)
        return chk.valid(E.and_all([ob for _w, ob in steps]), 10000)

    good = "t < gens ? next >= 0 ? (next + (pop - u) * (kids * q)) * pow(kids * q, gens - (t + 1)) / lim : 1 : 1"
    assert induct(good) == VALID
    # each coin's mean counted as kids * q / 2: the expected offspring too small
    bad = "t < gens ? next >= 0 ? (next + (pop - u) * (kids * q / 2)) * pow(kids * q, gens - (t + 1)) / lim : 1 : 1"
    assert induct(bad) != VALID
