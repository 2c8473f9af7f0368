"""Per-iteration Gaussian tails (issue 33): the Gaussian tail axioms matched against bounds
written ``exp(-t²/(2v))`` / ``2·exp(…)`` (axioms/gaussian.py), and *Gaussian accumulators* in
per-iteration composition (:func:`tamp.cfa.nesting.gaussian_accumulator`): a running sum of
fresh normal draws is drawn at each look from its exact law. The dev files are
benchmarks/prover4/dev/periter (variants written differently from blind5's interim_looks_gauss,
gauss_chart_alarms, or_fusion_false_alarm, gauss_lost_sales: renamed, other work in the loop,
the look before or after the update, the sum written in two operations, two draws per step);
every true claim is cross-checked by simulation at its recorded inputs, every false sibling
stays unknown. Unit tests pin each condition of the accumulator rule."""

from __future__ import annotations

import pytest
from limits import FALSE_CLAIM_S
from locations import BENCHMARKS
from support.proving import prove_path as _prove

from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.cfa.nesting import flag_loop, iteration_program
from tamp.prover.nesting.prove import NestResult
from tamp.show import show_stmt
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import inputs_for

DEV = BENCHMARKS / "prover4" / "dev" / "periter"
TRUE = sorted(p for p in DEV.glob("*.prob") if not p.stem.endswith("_false"))
BLIND5 = [
    BENCHMARKS / "prover4" / "dev" / "blind5" / f"{name}.prob"
    for name in (
        "trials/interim_looks_gauss",
        "qualitycontrol/gauss_chart_alarms",
        "sensors/or_fusion_false_alarm",
        "inventory/gauss_lost_sales",
    )
]


@pytest.mark.parametrize("path", TRUE + BLIND5, ids=lambda p: p.stem)
def test_gaussian_looks_are_proved_per_iteration(path, without_top_union_bound):
    r = _prove(path)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and r.form == "union"
    for given in inputs_for(str(path)):
        sim = simulate(str(path), given, runs=4000, seed=7)
        assert sim.verdict == "consistent", sim.render_text()


@pytest.mark.parametrize("path", TRUE + BLIND5, ids=lambda p: p.stem)
def test_false_siblings_are_not_proved(path):
    false = path.with_name(path.stem + "_false.prob")
    assert _prove(false, timeout=FALSE_CLAIM_S).verdict != "proved"


# ---- the accumulator rule's conditions, on the iteration program it builds ------------------

WALK = """
program walk(n: int, c: real, w: real)
  requires n >= 1 && c > 0 && w > 0
  ensures !hit
  fails n * exp(-c * c / 2)
{
  PREFIX
  var s: real;
  s := INIT;
  hit := false;
  for k in 0..n {
    PRE
    x ~ gauss(0, w);
    s := UPDATE;
    if (s > c * sqrt(w * (k + 1))) { hit := true; }
    POST
  }
}
"""


def _iteration(init="0", pre="", update="s + x", post="", requires=None, claim="!hit", prefix=""):
    text = (
        WALK.replace("PREFIX", prefix)
        .replace("INIT", init)
        .replace("PRE", pre)
        .replace("UPDATE", update)
        .replace("POST", post)
    )
    text = text.replace("ensures !hit", f"ensures {claim}")
    if requires is not None:
        text = text.replace("requires n >= 1 && c > 0 && w > 0", f"requires {requires}")
    prog = parse(text).programs[0]
    types = build_cfa(prog).types
    fl = flag_loop(prog, prog.ensures, types)
    assert fl is not None
    it = iteration_program(prog, fl, types, prog.fails)
    return it, [show_stmt(s) for s in it.body.stmts]


def _drawn(stmts):
    return any(s.startswith("s ~ gauss(") for s in stmts)


def test_the_accumulator_is_drawn_from_its_law():
    it, stmts = _iteration()
    assert _drawn(stmts) and not any(p.name.startswith("s$") for p in it.params), stmts
    assert "s ~ gauss((k + 1) * 0, (k + 1) * w)" in stmts, stmts
    assert not any(s.startswith("x ~") for s in stmts)


@pytest.mark.parametrize(
    "kw",
    [
        {"update": "s + k * x"},  # a coefficient that reads the counter: not this closed form
        {"update": "s + x * x"},  # not linear in the draw
        {"update": "2 * s + x"},  # s is scaled, not accumulated
        {"pre": "if (s > c) { hit := true; }"},  # s read before its update too (two looks, one law)
        {"post": "if (x > 0) { hit := true; }"},  # the draw read elsewhere (correlated with s)
        {"prefix": "y0 ~ gauss(0, 1);", "init": "y0"},  # the start is drawn, not set from parameters
        {"requires": "n >= 1 && c > 0"},  # w > 0 not known: gauss(…, n·w) may not be a law
        {"claim": "hit"},  # the product form (given the history, s is not fresh)
    ],
)
def test_conditions_that_keep_the_worst_case(kw):
    it, stmts = _iteration(**kw)
    assert not _drawn(stmts), stmts


def test_state_the_loop_writes_keeps_the_worst_case():
    # another input written by the loop and read by the look: s's law alone is not enough
    it, stmts = _iteration(prefix="m := 0;", pre="m := m + 1;", post="if (m > 3 && s > 0) { hit := true; }")
    assert not _drawn(stmts), stmts


def test_bookkeeping_the_flag_does_not_read_is_dropped():
    it, stmts = _iteration(prefix="seen := 0;", pre="seen := seen + 1;")
    assert _drawn(stmts) and not any("seen" in s for s in stmts), stmts
