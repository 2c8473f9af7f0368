"""Fixed iteration bounds do not blow up (issue 35): exact rationals whose digits double each
step are bounded in the invariant pre-filter (:mod:`tamp.prover.base.samples`) and in the
simulator's exact re-runs (:data:`tamp.simulation.arith.MAX_EXACT_BITS`)."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from fractions import Fraction

import pytest

import tamp
from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.prover.base.samples import MAX_BITS, collect_states
from tamp.simulation import simulate

NEWTON50 = """program newton(x0: real, r: real)
  rate r
  requires 0 <= r && r <= 1 && x0 >= 1 && x0 <= 2
  reliability 1 - 5 * r * {iters}
{{
  x := x0;
  i := 0;
  while (i < {iters}) {{
    fx := x *. x *. x -. 2;
    dfx := 3 *. x *. x;
    if (dfx != 0) {{
      x := x - fx / dfx;
    }}
    i := i + 1;
  }}
}}
"""

LOGISTIC = """program logistic(x0: real)
  requires 0 < x0 && x0 < 1
  ensures y
  fails 1/2
{
  x := x0;
  i := 0;
  while (i < 50) {
    x := 3.9 * x * (1 - x);
    i := i + 1;
  }
  b ~ bern(1/2);
  y := b || x < 1/2;
}
"""


@contextmanager
def seconds(n: int):
    def boom(*_):
        raise TimeoutError(f"more than {n} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(n)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_prefilter_runs_stop_at_the_digit_budget():
    prog = parse(NEWTON50.format(iters=50)).programs[0]
    cfa = build_cfa(prog)
    with seconds(30):
        states = collect_states(cfa, {}, [{"x0": Fraction(3, 2), "r": Fraction(0)}])
    assert states  # the exact prefix of the run is kept
    for node in states.values():
        for env in node:
            x = env.get("x")
            if isinstance(x, Fraction):
                assert x.numerator.bit_length() + x.denominator.bit_length() <= MAX_BITS


@pytest.mark.parametrize("r", [None, 1e-7])
def test_newton_with_fifty_iterations_is_proved(r):
    res = tamp.prove(NEWTON50.format(iters=50), inputs={"r": r} if r else None, timeout=120)
    assert res.verdict == "proved", res.render_text()


def test_newton_false_sibling():
    src = NEWTON50.format(iters=50).replace("1 - 5 * r * 50", "1 - 4 * r * 50")
    assert tamp.prove(src, timeout=60).verdict != "proved"


def test_simulator_leaves_exploding_runs_undecided():
    with seconds(60):
        res = simulate(LOGISTIC, inputs={"x0": 0.3}, runs=20, seed=0)
    text = res.render_text()
    assert "outgrew the budget" in text
    assert res.verdict != "violated"
