"""The union bound's termination argument from the CFA's loop analysis (issue 31): a counted loop
(:func:`tamp.cfa.loops.counted_loop`) offers the ranking ``final - i``, checked like any other;
a loop whose body rewrites its bound offers none."""

from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.prover import prove_program
from tamp.prover.loops.termination import counted_ranking
from tamp.show import show_expr

BRANCH_START = """program b(n: int, p: real, c: bool)
  requires n >= 1 && 0 <= p && p <= 1
  ensures k <= n + 1
  fails 0
{
  k := 0;
  if (c) { i := 0; } else { i := 1; }
  while (i < n) {
    f ~ bern(p);
    if (f) { k := k + 1; }
    i := i + 1;
  }
}"""


def test_counted_loop_ranking():
    cfa = build_cfa(parse(BRANCH_START).programs[0])
    r = counted_ranking(cfa, cfa.loop_heads[0])
    assert r is not None and show_expr(r.rank) == "n - i" and len(r.decreasing) == 1


def test_rewritten_bound_has_no_counted_ranking():
    src = BRANCH_START.replace("i := i + 1;", "i := i + 1; n2 := n;").replace("while (i < n)", "while (i < m)")
    src = src.replace("k := 0;", "k := 0; m := n;").replace("n2 := n;", "m := m + 1;")
    cfa = build_cfa(parse(src).programs[0])
    assert counted_ranking(cfa, cfa.loop_heads[0]) is None


def test_program_with_counted_loop_is_proved():
    r = prove_program(parse(BRANCH_START).programs[0], source=BRANCH_START, path="t.prob", timeout=60)
    assert r.verdict == "proved", r.render_text()
