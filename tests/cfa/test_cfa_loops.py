"""tamp.cfa.loops: the natural loop of a head, over all edges (inner loops included) or over
forward edges only (the loop's own level)."""

from lang import ast as A
from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.cfa.loops import body_edges, latches, loop_body

NESTED = """program grid(n: int, m: int) requires n >= 1 && m >= 1 {
  i := 0;
  while (i < n) {
    j := 0;
    while (j < m) { x ~ bern(0.5); j := j + 1; }
    i := i + 1;
  }
}"""


def _written(cfa, nodes):
    return {st.targets[0] for _e, st in body_edges(cfa, nodes) if isinstance(st, (A.Assign, A.Sample))}


def test_outer_loop_over_all_edges_holds_the_inner_loop_forward_edges_only_its_head():
    cfa = build_cfa(parse(NESTED).programs[0])
    outer, inner = sorted(cfa.loop_heads)
    assert len(latches(cfa, outer)) == 1 and len(latches(cfa, inner)) == 1
    whole, level = loop_body(cfa, outer), loop_body(cfa, outer, forward_only=True)
    assert level < whole and inner in level
    assert {A.Var("x"), A.Var("i"), A.Var("j")} <= _written(cfa, whole)
    assert A.Var("x") not in _written(cfa, level) and {A.Var("i"), A.Var("j")} <= _written(cfa, level)


def test_an_innermost_loop_is_the_same_either_way():
    cfa = build_cfa(parse(NESTED).programs[0])
    inner = max(cfa.loop_heads)
    assert loop_body(cfa, inner) == loop_body(cfa, inner, forward_only=True)
    assert _written(cfa, loop_body(cfa, inner)) == {A.Var("x"), A.Var("j")}
