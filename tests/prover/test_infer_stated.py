"""``--infer`` never does worse than the bound the program states (tamp issue 36, item 6).

The README's randomized response proves with ``fails 1/4``, but ``--infer`` (which reads every
``fails`` as ``fails ?``) said "could not infer a failure bound": the stated bound is now a
candidate, proved like every other one. A stated bound that is false is not reported.
"""

from __future__ import annotations

from locations import BENCHMARKS

import tamp
from lang import ast as A
from lang.loader import load
from lang.speckind import infer_bound

RANDRESP = BENCHMARKS / "dp" / "randResp.prob"
FALSE = BENCHMARKS / "variants" / "randResp_fails1_5.prob"  # fails 1/5: the truth is 1/4


def test_infer_proves_at_least_the_stated_bound():
    r = tamp.prove(RANDRESP, infer=True).programs[0]
    assert r.verdict == "proved", r.message
    assert r.bound == "1 / 4" and r.details.get("inferred") == "bound"


def test_fails_hole_infers_the_exact_bound_of_a_draw_from_a_product_set():
    # (r1, r2) ~ unif({0, 1} * {0, 1}): one pair's probability, 1/4, is a union-bound candidate
    text = RANDRESP.read_text().replace("fails   1 / 4", "fails   ?")
    r = tamp.prove(text, path="rr.prob").programs[0]
    assert r.verdict == "proved" and r.bound == "1 / 4", r.message


def test_infer_does_not_report_a_false_stated_bound():
    r = tamp.prove(FALSE, infer=True).programs[0]
    assert r.bound != "1 / 5"
    assert r.verdict != "proved" or r.bound == "1 / 4"


def test_the_stated_bound_is_kept_outside_the_tree():
    prog = infer_bound(load(RANDRESP).programs[0])
    assert prog.fails.stated == "1 / 4"
    assert not list(A.children(prog.fails))  # not a child: walks and free variables do not see it


ABS = """program a(p: real)
  requires 0 < p && p <= 1
  ensures y <= 3
  fails ?
{ x ~ lap(0, 1); y := abs(x); }
"""


def test_a_reason_is_not_said_twice():
    r = tamp.prove(ABS, path="abs.prob").programs[0]
    # |x| is now a value computed from a sum (tamp/cfa/sums.py's formulas), so the concentration
    # reason is that no rule's margin matches; either way it is said once
    assert r.verdict == "unknown" and r.message.count("concentration rules") == 1, r.message
    assert "(not a sum of independent draws)" not in r.message
