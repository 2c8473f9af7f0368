"""The general per-iteration composition (issue 33): flags of either polarity, counters, early exits
that write the flag freely, an epilogue carried back into the claim, a sampling prefix, and
per-iteration bounds that read the iteration's counter (composed as ``sum(...)``). Each true claim
is written differently from the dev file it generalizes (blind3 single_child_lines,
arq_retransmit, ben_or_unanimity, first_arrival_varying): renamed, the condition written another
way, other work in the loop; each is cross-checked by simulation at its recorded inputs. Each false
sibling (a counterexample in its first line) stays unknown, is refuted by simulation and is a
soundness-harness file. The programs are the files of benchmarks/prover4/dev/nesting2."""

from __future__ import annotations

import dataclasses

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS

from lang.parser import parse, parse_expr, parse_file
from lang.printer import print_expr
from tamp.cfa import build_cfa
from tamp.cfa.nesting import composition, flag_loop
from tamp.prover import prove_program
from tamp.prover.nesting.prove import NestResult
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev" / "nesting2"


def _read(name: str) -> str:
    return (DEV / f"{name}.prob").read_text()


# each file's first line says what it generalizes, or (a false sibling) its counterexample
LINES, LINES_FALSE = _read("lines"), _read("lines_false")
FRAMES, FRAMES_FALSE = _read("frames"), _read("frames_false")
SLOTS, SLOTS_FALSE = _read("slots"), _read("slots_false")
BURSTS, BURSTS_FALSE = _read("bursts"), _read("bursts_false")
SHARED_FALSE = _read("shared_false")
TRUE = {"bursts": BURSTS, "lines": LINES, "frames": FRAMES, "slots": SLOTS}
FALSE = {
    "bursts": BURSTS_FALSE,
    "lines": LINES_FALSE,
    "frames": FRAMES_FALSE,
    "slots": SLOTS_FALSE,
    "shared": SHARED_FALSE,
}


def _prove(tmp_path, name, text, timeout=60):
    path = tmp_path / f"{name}.prob"
    path.write_text(text)
    src = parse_file(str(path))
    return prove_program(src.programs[0], path=str(path), source=src.text, timeout=timeout)


@pytest.mark.parametrize("name", sorted(TRUE))
def test_general_flag_loops_are_proved(tmp_path, name):
    r = _prove(tmp_path, name, TRUE[name])
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult)
    # cross-checked: the proved bound holds when the program is run at its recorded inputs
    path = DEV / f"{name}.prob"
    assert inputs_for(str(path))
    for given in inputs_for(str(path)):
        sim = simulate(str(path), given, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


def test_the_false_siblings_are_soundness_harness_files_refuted_at_their_inputs():
    import sys

    sys.path.insert(0, str(BENCHMARKS / "soundness"))
    from harness import variant_files

    listed = set(variant_files())
    for name in sorted(FALSE):
        path = DEV / f"{name}_false.prob"
        assert path.relative_to(BENCHMARKS).as_posix() in listed
        assert [simulate(str(path), given, runs=4000, seed=7).verdict for given in inputs_for(str(path))] == [
            "refuted"
        ], name


@pytest.mark.parametrize("name", sorted(FALSE))
def test_false_siblings_stay_unknown(tmp_path, name):
    assert _prove(tmp_path, name + "_false", FALSE[name], timeout=FALSE_CLAIM_S).verdict != "proved"


def _loop(text):
    prog = parse(text, "t.prob").programs[0]
    cfa = build_cfa(prog, None, "t.prob", text)
    return flag_loop(prog, prog.ensures, cfa.types), cfa


def test_a_counter_is_a_flag_and_its_claim_is_read_by_z3():
    fl, _ = _loop(LINES)
    assert fl is not None and fl.form == "union" and fl.flag == "survivors$pos"
    # a counter compared with another threshold is not a flag (the expectation helper's)
    fl, _ = _loop(LINES.replace("!(survivors > 0)", "survivors < 2"))
    assert fl is None
    # a counter the body reads elsewhere (the raise would not be its only use) is not rewritten
    fl, _ = _loop(LINES.replace("total := total + 1;", "total := total + survivors;"))
    assert fl is None


def test_early_exit_and_polarity():
    fl, _ = _loop(FRAMES)
    assert fl is not None and fl.early_exit and fl.form == "product"
    # the guard written another way (z3 reads it as the flag's start value)
    fl, _ = _loop(FRAMES.replace("if (!sent) {", "if (sent == false) {"))
    assert fl is not None and fl.early_exit
    # without the guard the flag may be lowered again by a later iteration: not a flag loop
    fl, _ = _loop(FRAMES.replace("if (!sent) {", "if (true) {"))
    assert fl is None


def test_a_varying_bound_is_summed_over_the_range():
    fl, cfa = _loop(SLOTS)
    side = dict(composition(fl, cfa.bound, parse_expr("1 - lam[s]")))
    assert print_expr(side["PRODUCT"]) == "!(w >= 1) || -sum(s in 0..w: lam[s]) <= -sum(s in 0..w: lam[s])"
    # a varying bound under a logarithm would need u(c) > 0 for every c: not composed
    assert composition(fl, cfa.bound, parse_expr("lam[s] / 2")) is None


def test_a_counter_every_iteration_raises_once_is_a_product():
    prog = parse(BURSTS, "t.prob").programs[0]
    inner = prog.body.stmts[1].body  # one slot: busy := 0; for u in 0..width {...}; if (busy == width) ...
    one = dataclasses.replace(prog, body=inner, ensures=(parse_expr("busy < width"),))
    cfa = build_cfa(one, None, "t.prob")
    fl = flag_loop(one, one.ensures, cfa.types)
    assert fl is not None and fl.form == "product" and fl.flag == "busy$miss"
    # raised twice in an iteration, busy == width no longer means every iteration raised it
    two = BURSTS.replace("busy := busy + 1; }", "busy := busy + 1; } if (x) { busy := busy + 1; }")
    prog2 = parse(two, "t.prob").programs[0]
    one2 = dataclasses.replace(prog2, body=prog2.body.stmts[1].body, ensures=(parse_expr("busy < width"),))
    assert flag_loop(one2, one2.ensures, build_cfa(one2, None, "t.prob").types) is None
