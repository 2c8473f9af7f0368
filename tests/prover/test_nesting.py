"""Loops whose per-iteration failure bound comes from any engine (issue 33): a flag loop's body is
proved as a program of its own (:func:`tamp.cfa.nesting.iteration_program`) by the portfolio,
and the bound is composed over the iterations — summed (union bound) or multiplied (repetitions
that all must fail) — by :mod:`tamp.prover.nesting`. True claims are proved and re-checked from
their certificates; false siblings (benchmarks/prover4/dev/nesting, counterexamples in their
comments) are never proved; a tampered certificate is rejected."""

from __future__ import annotations

import time

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.certificates import check_proof, proved_certificate
from support.proving import prove_path as _prove

from lang.parser import parse, parse_expr
from lang.printer import print_expr
from lang.serialize import to_json
from tamp.cfa import build_cfa
from tamp.cfa.nesting import flag_loop, iteration_program, live_in
from tamp.prover import prove_program
from tamp.prover.nesting.prove import NestResult, candidates, try_nesting
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev" / "nesting"
TRUE = [DEV / f"{n}.prob" for n in ("segment_retry", "round_retry", "retry_until_ok")]
FALSE = [
    DEV / f"{n}_false.prob"
    for n in ("segment_retry", "round_retry", "scrub_passes", "carried_state", "retry_until_ok", "real_range")
]


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_flag_loops_are_proved_by_composing_iterations(path):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult)
    # cross-checked: the proved bound holds when the program is run at its recorded inputs
    for given in inputs_for(str(path)):
        sim = simulate(str(path), given, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


def test_the_segment_retry_nests_a_product_in_a_union():
    r = _prove(DEV / "segment_retry.prob")
    assert r.form == "union" and isinstance(r.inner, NestResult) and r.inner.form == "product"


@pytest.mark.parametrize("path", FALSE, ids=lambda p: p.stem)
@pytest.mark.slow  # long: runs false claims to their time limit (README command leaves it to .ci/run)
def test_false_siblings_are_not_proved(path):
    assert _prove(path, timeout=FALSE_CLAIM_S).verdict != "proved"


def _parts(text):
    prog = parse(text, "t.prob").programs[0]
    cfa = build_cfa(prog, None, "t.prob", text)
    return prog, cfa


CARRIED = (DEV / "carried_state_false.prob").read_text()


def test_state_an_earlier_iteration_wrote_is_an_input_of_the_iteration():
    # from the first iteration's state (s = 0) the body never raises the flag; the iteration
    # program must read s as an input (any value), or the false claim would be proved
    prog, cfa = _parts(CARRIED)
    fl = flag_loop(prog, prog.ensures, cfa.types)
    assert fl is not None and fl.form == "union"
    it = iteration_program(prog, fl, cfa.types, cfa.bound)
    assert "s$in" in {p.name for p in it.params}
    result, _why = try_nesting(prog, cfa, time.monotonic(), time.monotonic() + 20, _no_proof_expected)
    assert result is None


def _no_proof_expected(program, cfa):
    return prove_program(program, timeout=10)


def test_live_in_ignores_what_is_written_before_it_is_read():
    prog, _cfa = _parts(CARRIED)
    body = prog.body.stmts[-1].body
    assert live_in(body, frozenset()) == {"s"}
    prog2, _ = _parts((DEV / "segment_retry.prob").read_text())
    assert live_in(prog2.body.stmts[-1].body, frozenset()) == {"r", "q"}


@pytest.mark.parametrize(
    "body",
    [
        "ok := false; j := 0; while (j < 2) { j := j + 1; } for i in 0..n { y ~ bern(p); if (y) { ok := true; } }",
        # (a counted `while (j < 2) { …; j := j + 1; }` ends surely and is allowed: runs28)
        "ok := false; for i in 0..n { j := 0; while (j < 2) { y ~ bern(p); if (y) { ok := true; j := j + 1; } } }",
        "ok := false; for i in 0..n { y ~ bern(p); if (y) { ok := true; } else { ok := false; } }",  # lowered
        "ok := false; for i in 0..n { y ~ bern(p); if (y) { ok := true; } } ok := true;",  # epilogue
    ],
)
def test_what_is_not_a_flag_loop(body):
    # a prefix with a `while` (it might not end), a `while` that need not end inside a product (an
    # iteration after a success might not end), a flag lowered in the body, an epilogue that
    # does more than turn the flag into the claim's
    prog, cfa = _parts(
        f"program p(n: int, p: real) requires n >= 0 && 0 < p && p <= 1 ensures ok fails pow(1 - p, n) {{ {body} }}"
    )
    assert flag_loop(prog, prog.ensures, cfa.types) is None


def test_a_retry_against_a_real_limit_is_not_a_counted_loop():
    # `while (!bad && c < h)` with h real runs ceil(h) times: h iterations would undercount
    prog, cfa = _parts((DEV / "real_range_false.prob").read_text())
    assert flag_loop(prog, prog.ensures, cfa.types) is None
    prog, cfa = _parts((DEV / "retry_until_ok.prob").read_text())
    fl = flag_loop(prog, prog.ensures, cfa.types)
    assert fl is not None and fl.form == "product" and fl.loop.var == "tries"


def test_unreliable_operations_keep_a_program_out():
    # unreliable operations may add `!failed` to the compiled claim (with `reliability`, or a
    # faulty comparison), which is then not the flag alone: a product over the flag would not
    # count a fault in an iteration before the success, so the rule keeps such programs out
    prog, cfa = _parts(
        "program p(k: int, r: real, w: int) rate r requires k >= 0 && 0 <= r && r <= 1 ensures ok "
        "fails pow(1 / 2, k) { ok := false; for t in 0..k { y := w *. 2; b ~ bern(1 / 2); if (b) { ok := true; } } }"
    )
    assert "failed" in cfa.types
    assert flag_loop(prog, prog.ensures, cfa.types) is None


def _candidates(bound, n, body="y ~ bern(p); if (y) { ok := true; }"):
    prog, cfa = _parts(
        f"program p({n}: int, p: real, w: real, eps: real) requires {n} >= 0 && 0 < p && p <= 1 ensures ok "
        f"fails {bound} {{ ok := false; for i in 0..{n} {{ {body} }} }}"
    )
    fl = flag_loop(prog, prog.ensures, cfa.types)
    return [print_expr(u) for u in candidates(fl, cfa.bound)]


def test_per_iteration_bounds_are_read_off_the_claim():
    prog, cfa = _parts((DEV / "round_retry.prob").read_text())
    fl = flag_loop(prog, prog.ensures, cfa.types)
    assert [print_expr(u) for u in candidates(fl, cfa.bound)][0] == "n * p"
    assert _candidates("exp(-t / (exp(1) * w))", "t")[:2] == ["1 - 1 / (exp(1) * w)", "exp(-1 / (exp(1) * w))"]
    assert _candidates("exp(-k * w * eps)", "k") == ["1 - w * eps", "exp(-(w * eps))", "1 - p"]


def test_certificate_is_rechecked_and_a_tampered_one_rejected(tmp_path, capsys):
    path = DEV / "segment_retry.prob"
    cert = proved_certificate(path)
    assert [c["method"] for c in cert["nesting"]] == ["nesting"] and not cert["programs"]
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code == 0, out
    # a smaller per-iteration bound: the composition still holds, the iteration's proof does not
    cert["nesting"][0]["per_iteration"] = to_json(parse_expr("exp((r + 1) * log(q)) / 2"))
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0 and "INNER" in out, out


def test_a_certificate_composing_the_wrong_way_is_rejected(tmp_path, capsys):
    path = DEV / "segment_retry.prob"
    cert = proved_certificate(path)
    cert["nesting"][0]["form"] = "product"
    code, out = check_proof(cert, path, tmp_path, capsys)
    assert code != 0 and "composes by product" in out, out


def test_soundness_harness_checks_every_false_sibling():
    """benchmarks/soundness runs every false sibling here (none may be proved) with the inputs
    that refute it (inputs.json, checked by benchmarks/prover4/check_inputs.py)."""
    import json
    import sys

    sys.path.insert(0, str(BENCHMARKS / "soundness"))
    from harness import benchmark_inputs, variant_files

    listed = set(variant_files())
    for f in sorted(DEV.glob("*_false*.prob")):
        rel = f.relative_to(BENCHMARKS).as_posix()
        assert rel in listed and benchmark_inputs(rel), rel
    recorded = json.loads((DEV / "inputs.json").read_text())
    assert {p.name for p in DEV.glob("*.prob")} == set(recorded)
