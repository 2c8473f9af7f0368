"""Session 23 "pairs": the union bound over pairs finished by the sum lemmas (``sum-mono``,
:func:`axioms.lemmas.sum_order_lemmas`, with ``sum-sign``), Markov on a count for "no event"
(``X == 0``), and Chebyshev's axiom of one draw in the union bound (:mod:`axioms.chebyshev`).
The dev/pairs claims and the two dev/blind9 claims are proved; their false siblings stay
unknown; the lemma is not a fact where its premise fails."""

from __future__ import annotations

import pytest
import z3
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS

from axioms.lemmas import sum_order_lemmas
from axioms.terms import transcendental_apps
from lang.parser import parse_expr, parse_file
from tamp.cfa import build_cfa
from tamp.core.encode import Encoder
from tamp.prover import prove_program

DEV = BENCHMARKS / "prover4" / "dev"
PAIRS = DEV / "pairs"
TRUE = [
    DEV / "blind9" / "evolutionary" / "critical_bits.prob",
    DEV / "blind9" / "robotics" / "beam_max_reading.prob",
    PAIRS / "two_failures.prob",
    PAIRS / "three_of_n.prob",
    PAIRS / "birthday.prob",
    PAIRS / "lap_dropout.prob",
    PAIRS / "uniform_cheb.prob",
    PAIRS / "two_sensors.prob",
]


def _prove(path, timeout):
    sf = parse_file(str(path))
    prog = sf.programs[0]
    return prove_program(prog, timeout=timeout, path=str(path))


@pytest.mark.parametrize("path", TRUE, ids=lambda p: p.stem)
def test_proved(path):
    assert _prove(path, 60).verdict == "proved"


@pytest.mark.slow
@pytest.mark.parametrize("path", [p.with_name(p.stem + "_false.prob") for p in TRUE], ids=lambda p: p.stem)
def test_false_sibling_unproved(path):
    assert _prove(path, FALSE_CLAIM_S).verdict != "proved"


def _valid_with_lemmas(text: str, types) -> bool:
    enc = Encoder(types)
    env = enc.initial_env()
    f = enc.expr(parse_expr(text), env)
    lems = [lem for _n, lem in sum_order_lemmas(transcendental_apps(f), enc)]
    s = z3.Solver()
    s.set("timeout", 5000)
    s.add(*lems, z3.Not(f))
    return s.check() == z3.unsat


def test_sum_mono_orders_sums_by_their_bodies():
    types = _types()
    assert _valid_with_lemmas("sum(i in 0..n: q[i] - q[i] * q[i]) <= sum(i in 0..n: q[i])", types)
    # the premise fails (q[i] may be above q[i]²): no fact, the claim stays unproved
    assert not _valid_with_lemmas("sum(i in 0..n: q[i]) <= sum(i in 0..n: q[i] * q[i])", types)


def _types():
    from lang.parser import parse

    prog = parse("program p(n: int, q: real[]) ensures x == 0 { x := 0; }").programs[0]
    return dict(build_cfa(prog).types)
