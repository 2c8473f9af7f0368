"""The general per-iteration composition (issue 33): flags of either polarity, counters, early exits
that write the flag freely, an epilogue carried back into the claim, a sampling prefix, and
per-iteration bounds that read the iteration's counter (composed as ``sum(...)``). Each true claim
is written differently from the dev file it generalizes (blind3 single_child_lines,
arq_retransmit, ben_or_unanimity, first_arrival_varying): renamed, the condition written another
way, other work in the loop. Each false sibling (a counterexample in its comment) stays unknown."""

from __future__ import annotations

import dataclasses

import pytest
from limits import FALSE_CLAIM_S

from lang.parser import parse, parse_expr, parse_file
from lang.printer import print_expr
from tamp.cfa import build_cfa
from tamp.cfa.nesting import composition, flag_loop
from tamp.prover import prove_program
from tamp.prover.nesting.prove import NestResult

#: the survivors of m lines of g generations (a counter raised by 2, read as ``!(survivors > 0)``;
#: the inner `while` is itself an early-exit product over the generations)
LINES = """\
program lines(m: int, q: real, g: int)
  requires m >= 1 && 0 < q && q < 1 && g >= 1
  ensures !(survivors > 0)
  fails m * pow(q, g)
{
  survivors := 0;
  total := 0;
  for a in 0..m {
    up := true;
    d := 0;
    while (up && d < g) {
      kid ~ bern(q);
      up := kid;
      total := total + 1;
      d := d + 1;
    }
    if (up) { survivors := survivors + 2; }
  }
}
"""
#: m = 2, g = 1, q = 0.9: Pr[some line survives] = 1 - 0.01 = 0.99 > 0.9
LINES_FALSE = """\
program lines(m: int, q: real, g: int)
  requires m >= 1 && 0 < q && q < 1 && g >= 1
  ensures !(survivors > 0)
  fails pow(q, g)
{
  survivors := 0;
  total := 0;
  for a in 0..m {
    up := true;
    d := 0;
    while (up && d < g) {
      kid ~ bern(q);
      up := kid;
      total := total + 1;
      d := d + 1;
    }
    if (up) { survivors := survivors + 2; }
  }
}
"""
#: a `for` whose body runs only while the flag is down (early exit), the flag then written as `sent := clean`
FRAMES = """\
program frames(L: int, e: real, R: int)
  requires L >= 1 && 0 < e && e <= 1 && R >= 1
  ensures sent
  fails pow(L * e, R)
{
  sent := false;
  for a in 0..R {
    if (!sent) {
      clean := true;
      for b in 0..L {
        f ~ bern(e);
        if (f) { clean := false; }
      }
      sent := clean;
    }
  }
}
"""
#: L = 2, e = 0.5, R = 1: a frame fails with probability 0.75 > 0.5
FRAMES_FALSE = """\
program frames(L: int, e: real, R: int)
  requires L >= 1 && 0 < e && e <= 1 && R >= 1
  ensures sent
  fails pow(e, R)
{
  sent := false;
  for a in 0..R {
    if (!sent) {
      clean := true;
      for b in 0..L {
        f ~ bern(e);
        if (f) { clean := false; }
      }
      sent := clean;
    }
  }
}
"""
#: a per-slot chance lam[s]: Π (1 - lam[s]) <= exp(-Σ lam[s]); a draw before the loop that the
#: iterations read (the prefix may sample)
SLOTS = """\
program slots(lam: real[], w: int)
  requires w >= 1
  requires forall s in 0..w: 0 <= lam[s] && lam[s] <= 1
  ensures got
  fails exp(-sum(s in 0..w: lam[s]))
{
  seed ~ bern(1 / 2);
  got := false;
  for s in 0..w {
    x ~ bern(lam[s]);
    if (x || (seed && s > w)) { got := true; }
  }
}
"""
#: w = 1, lam[0] = 0.5: 0.5 > exp(-1)
SLOTS_FALSE = """\
program slots(lam: real[], w: int)
  requires w >= 1
  requires forall s in 0..w: 0 <= lam[s] && lam[s] <= 1
  ensures got
  fails exp(-2 * sum(s in 0..w: lam[s]))
{
  seed ~ bern(1 / 2);
  got := false;
  for s in 0..w {
    x ~ bern(lam[s]);
    if (x || (seed && s > w)) { got := true; }
  }
}
"""
#: every iteration reads the prefix's draw s: with s false (probability 1/2) no iteration succeeds,
#: so Pr[!ok] >= 1/2 > (1 - p)^n at p = 0.9; the iteration's proof must hold for s false too
SHARED_FALSE = """\
program shared(n: int, p: real)
  requires n >= 1 && 0 < p && p < 1
  ensures ok
  fails pow(1 - p, n)
{
  s ~ bern(1 / 2);
  ok := false;
  for i in 0..n {
    y ~ bern(s ? p : 0);
    if (y) { ok := true; }
  }
}
"""
#: a slot jams when all its width sources send (a counter equal to its loop's trip count: every
#: iteration raised it once), union over the slots
BURSTS = """\
program bursts(slots: int, width: int, lam: real)
  requires slots >= 1 && width >= 1 && 0 < lam && lam < 1
  ensures !jam
  fails slots * pow(lam, width)
{
  jam := false;
  for s in 0..slots {
    busy := 0;
    for u in 0..width {
      x ~ bern(lam);
      if (x) { busy := busy + 1; }
    }
    if (busy == width) { jam := true; }
  }
}
"""
#: slots = 1: Pr[jam] = lam^width > lam^width / 2
BURSTS_FALSE = """\
program bursts(slots: int, width: int, lam: real)
  requires slots >= 1 && width >= 1 && 0 < lam && lam < 1
  ensures !jam
  fails slots * pow(lam, width) / 2
{
  jam := false;
  for s in 0..slots {
    busy := 0;
    for u in 0..width {
      x ~ bern(lam);
      if (x) { busy := busy + 1; }
    }
    if (busy == width) { jam := true; }
  }
}
"""
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
