"""The one loop analysis (:func:`tamp.cfa.loops.counted_loop`): a loop's counter, range and trip
count read off the CFA — what the loop does, not what its syntax suggests (issue 31)."""

from __future__ import annotations

import pytest

from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.cfa.loops import NotCounted, counted_loop
from tamp.show import show_expr

TEMPLATE = """
program a(n: int, q: int[], x: real)
  ensures true
{{
  {pre}
  {loop}
}}
"""


def _loop(pre: str, loop: str):
    cfa = build_cfa(parse(TEMPLATE.format(pre=pre, loop=loop)).programs[0])
    return counted_loop(cfa, cfa.loop_heads[0])


@pytest.mark.parametrize(
    "pre,loop,counter,up,lo,hi",
    [
        ("i := 0;", "while (i < n) { y ~ bern(0.5); i := i + 1; }", "i", True, "0", "n"),
        ("i := 0;", "while (i < n) { i := i + 1; y ~ bern(0.5); }", "i", True, "0", "n"),
        ("i := 0;", "while (n > i) { i := i + 1; }", "i", True, "0", "n"),
        ("i := n;", "while (i > 0) { i := i - 1; }", "i", False, "0 + 1", "n + 1"),
        ("i := n;", "while (0 <= i) { i := i - 1; }", "i", False, "0", "n + 1"),
        ("", "for i in 2..=n { y ~ bern(0.5); }", "i", True, "2", "n + 1"),
        ("i := 0;", "while (i < q[0]) { i := i + 1; }", "i", True, "0", "q[0]"),
        ("i := 0;", "while (i < n) { j := 0; while (j < n) { j := j + 1; } i := i + 1; }", "i", True, "0", "n"),
    ],
)
def test_counted(pre, loop, counter, up, lo, hi):
    cl = _loop(pre, loop)
    assert (cl.counter, cl.up, show_expr(cl.lo), show_expr(cl.hi)) == (counter, up, lo, hi)


@pytest.mark.parametrize(
    "pre,loop,why",
    [
        ("m := n;", "for i in 0..m { m := 100 * n; }", "bound reads 'm'"),
        ("m := n;", "for i in 0..m { m := m + 1; }", "bound reads 'm'"),
        ("i := 0; m := n;", "while (i < m) { m := m + 1; i := i + 1; }", "bound reads 'm'"),
        ("i := 0;", "while (i < n) { y ~ bern(0.5); if (y) { i := i + 1; } }", "can skip"),
        ("i := 0;", "while (i < n) { j := 0; while (j < n) { j := j + 1; i := i + 1; } }", "inner loop"),
        ("i := 0;", "while (i < n) { i := i + 1; i := i + 1; }", "exactly one"),
        ("i := 0;", "while (i < n) { i := i - 1; }", "exactly one"),
        ("i := 0;", "while (i < x) { i := i + 1; }", "integers"),
        ("i := 0;", "while (i != n) { i := i + 1; }", "comparison"),
    ],
)
def test_not_counted(pre, loop, why):
    with pytest.raises(NotCounted, match=why):
        _loop(pre, loop)
