"""Per-iteration composition over runs and over periods (session 28, runs28).

1. A product over runs whose body holds an inner ``while`` that ends surely (a count-down or
   count-up by a literal step towards a bound the body does not write, :mod:`tamp.cfa.ending`)
   composes a single run proved by any method (mincut/repeated_cycle_runs).
2. A flag loop whose body reads its counter modulo a small literal ``k`` is composed over blocks
   of ``k`` iterations (:mod:`tamp.cfa.periods`; vaccines/first_case), a block's misses bounded
   factor by factor (``1 - s <= exp(-s)``, :func:`tamp.cfa.nesting.exponent`).

Proved, certified, tampered certificates (a wrong period, no period: a block of one copy)
rejected, false siblings left unproved, and the pure functions on their own."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

from lang import ast as A
from lang.parser import parse_file
from lang.printer import print_program
from lang.speckind import FAILURE_BOUND, clause_kind
from tamp.cfa import build_cfa
from tamp.cfa.ending import counted_while, ends_surely
from tamp.cfa.nesting import exponent, flag_loop, iteration_program
from tamp.cfa.periods import block_count, period_loop, period_of, periodic
from tamp.prover.nesting.prove import NestResult
from tamp.show import show_expr

MINE = BENCHMARKS / "prover4" / "dev" / "runs28"
BLIND = BENCHMARKS / "prover4" / "dev" / "blind14"
RUNS = BLIND / "mincut" / "repeated_cycle_runs.prob"
FIRST = BLIND / "vaccines" / "first_case.prob"

TRUE = [
    "alternating_trials",
    "batch_checks",
    "cut_runs_while",
    "paired_alarms",
    "retry_runs",
    "shrink_first_runs",
    "supplier_rotation",
]
#: false siblings that are refuted fast (the others spend the whole timeout: slow)
FALSE_FAST = ["alternating_trials", "paired_alarms", "supplier_rotation"]
FALSE_SLOW = ["batch_checks", "cut_runs_while", "retry_runs", "shrink_first_runs"]


def _program(text: str, tmp_path):
    f = tmp_path / "p.prob"
    f.write_text(text)
    prog = parse_file(str(f)).programs[0]
    cfa = build_cfa(prog, None, str(f))
    ens = tuple(e for e in prog.ensures if clause_kind(e) == FAILURE_BOUND)
    return prog, cfa, flag_loop(prog, ens, cfa.types)


def _loop(text: str, tmp_path) -> A.While:
    prog = parse_file(str(_write(text, tmp_path))).programs[0]
    return next(n for n in A.walk(prog.body) if isinstance(n, A.While))


def _write(text, tmp_path):
    f = tmp_path / "w.prob"
    f.write_text(text)
    return f


def _wrap(body: str) -> str:
    return f"program p(n: int)\n  requires n >= 0\n  ensures x\n  fails 1\n{{\n  x := false;\n{body}\n}}\n"


# ------------------------------------------------------------------------ pure functions


@pytest.mark.parametrize(
    "body,ends",
    [
        ("v := n; while (v > 2) { e ~ unif(1, 3); v := v - 1; }", True),
        ("v := 0; while (v < n && !x) { v := v + 2; }", True),
        ("v := 0; while (n >= v) { v := v + 1; }", True),
        # the step under a branch, a step of 0, a bound the body writes, two writes: no
        ("v := n; while (v > 2) { b ~ bern(0.5); if (b) { v := v - 1; } }", False),
        ("v := n; while (v > 2) { v := v - 0; }", False),
        ("v := n; m := 0; while (v > m) { v := v - 1; m := m + 1; }", False),
        ("v := n; while (v > 2) { v := v - 1; v := v + 1; }", False),
        ("v := n; while (v != 2) { v := v - 1; }", False),
    ],
)
def test_a_while_ends_surely_when_a_counted_conjunct_moves_by_a_literal_step(body, ends, tmp_path):
    loop = _loop(_wrap(body), tmp_path)
    assert counted_while(loop) is ends
    assert ends_surely(loop) is ends


def test_a_nested_while_that_may_not_end_spoils_the_outer_one(tmp_path):
    text = _wrap("v := n; while (v > 0) { w := 1; while (w > 0) { b ~ bern(0.5); if (b) { w := 0; } } v := v - 1; }")
    loop = _loop(text, tmp_path)
    assert counted_while(loop) and not ends_surely(loop)


def test_the_period_is_the_lcm_of_the_moduli(tmp_path):
    text = (
        "program p(n: int)\n  requires n >= 0\n  ensures x\n  fails exp(-n)\n{\n  x := false;\n"
        "  for i in 0..6 * n { if (i mod 2 == 0 && i mod 3 == 1) { x := true; } }\n}\n"
    )
    _prog, _cfa, fl = _program(text, tmp_path)
    assert period_of(fl.loop) is None  # 6 is no period tried
    text2 = text.replace("i mod 3 == 1", "i mod 4 == 1")
    _prog, cfa, fl = _program(text2, tmp_path)
    assert period_of(fl.loop) == 4
    assert block_count(fl.loop, 4, cfa.types) is None  # 6 * n is no multiple of 4 as written
    assert block_count(fl.loop, 2, cfa.types) is not None and show_expr(block_count(fl.loop, 2, cfa.types)) == "3 * n"


def test_the_block_program_writes_the_body_out_with_the_residues(tmp_path):
    prog = parse_file(str(FIRST)).programs[0]
    cfa = build_cfa(prog, None, str(FIRST))
    fl = flag_loop(prog, tuple(prog.ensures), cfa.types)
    got = period_loop(prog, fl, cfa.types)
    assert got is not None and got[1] == 2
    blocks, _k = got
    assert show_expr(blocks.loop.hi) == "n" and blocks.early_exit
    it = iteration_program(prog, blocks, cfa.types, A.num(1))
    text = print_program(it)
    # two copies, the second under the early exit's test, the counter modulo 2 read as 0 and 1
    assert text.count("sick ~ bern(a)") == 2 and "if (observed == false)" in text
    assert "if (0 == 0)" in text and "if (1 == 0)" in text and "mod" not in text
    assert periodic(prog, fl, cfa.types, 3) is None and periodic(prog, fl, cfa.types, 1) is None


def test_a_product_of_misses_is_bounded_factor_by_factor():
    from lang.parser import parse_expr

    e, side = exponent(parse_expr("(1 - a) * (1 - b)"))
    assert show_expr(e) == "-(a + b)" and show_expr(side) == "1 - a >= 0 && 1 - b >= 0"
    e1, side1 = exponent(parse_expr("(1 - a) * b"))
    assert show_expr(e1) == "log((1 - a) * b)"  # not every factor a complement: the logarithm


# ------------------------------------------------------------------------ targets and claims


@pytest.mark.parametrize("path,period", [(RUNS, 0), (FIRST, 2)], ids=["repeated_cycle_runs", "first_case"])
def test_the_targets_are_proved_and_certified(path, period, tmp_path, capsys):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and r.form == "product" and r.period == period
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize("name", TRUE)
def test_dev_claims_are_proved_and_certified(name, tmp_path, capsys):
    path = MINE / f"{name}.prob"
    r = _prove(path, timeout=120)
    assert r.verdict == "proved", r.render_text()
    code, out = check_proof(proved_certificate(path), path, tmp_path, capsys)
    assert code == 0, out


@pytest.mark.parametrize(
    "tamper",
    [lambda n: n.__setitem__("period", 3), lambda n: n.pop("period"), lambda n: n.__setitem__("period", 1)],
    ids=["period_3", "one_copy_per_block", "period_1"],
)
def test_a_tampered_period_is_rejected(tamper, tmp_path, capsys):
    cert = proved_certificate(FIRST)
    (nest,) = cert["nesting"]
    assert nest["period"] == 2
    tamper(nest)
    code, out = check_proof(cert, FIRST, tmp_path, capsys)
    assert code != 0, out


def test_a_tampered_per_run_bound_is_rejected(tmp_path, capsys):
    cert = proved_certificate(RUNS)
    (nest,) = cert["nesting"]
    # each run said to lose the cut w.p. 1 - 4/(n(n-1)): the inner proof is of another bound
    from lang.parser import parse_expr
    from lang.serialize import to_json

    nest["per_iteration"] = to_json(parse_expr("1 - 4 / (n * (n - 1))"))
    code, out = check_proof(cert, RUNS, tmp_path, capsys)
    assert code != 0, out


@pytest.mark.parametrize("name", FALSE_FAST)
def test_false_siblings_stay_unproved(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


def test_the_first_case_false_sibling_stays_unproved():
    assert _prove(FIRST.with_name("first_case_false.prob")).verdict != "proved"


@pytest.mark.slow
@pytest.mark.parametrize("name", FALSE_SLOW)
def test_false_siblings_stay_unproved_slow(name):
    assert _prove(MINE / f"{name}_false.prob").verdict != "proved"


@pytest.mark.slow
def test_the_repeated_runs_false_sibling_stays_unproved():
    assert _prove(RUNS.with_name("repeated_cycle_runs_false.prob")).verdict != "proved"
