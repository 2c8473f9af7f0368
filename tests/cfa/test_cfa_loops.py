"""tamp.cfa.loops: the natural loop of a head, over all edges (inner loops included) or over
forward edges only (the loop's own level)."""

from lang import ast as A
from lang.parser import parse
from tamp.cfa import build_cfa
from tamp.cfa.loops import body_edges, entry_value, latches, loop_body

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


ENTRY = """program e(n: int, y: int) requires n >= 1 {
  k := 0;
  x := y;
  s := x;
  t := 5;
  u := k;
  x := 1;
  i := 0;
  while (i < n) { s := s + 1; j := t; i := i + 1; }
  c := s;
  while (c < n) { c := c + 1; }
}"""


def _heads(src):
    cfa = build_cfa(parse(src).programs[0])
    first, second = sorted(cfa.loop_heads)
    return cfa, first, second


def test_entry_value_reads_the_last_write_on_the_straight_line_path():
    cfa, first, _ = _heads(ENTRY)
    body = loop_body(cfa, first)
    assert entry_value(cfa, first, body, "i") == A.num(0)
    assert entry_value(cfa, first, body, "k") == A.num(0)
    assert entry_value(cfa, first, body, "t") == A.num(5)
    assert entry_value(cfa, first, body, "j") is None  # never assigned before the loop
    # ``s := x`` reads x, overwritten before the loop: the value is still ``x`` by default ...
    assert entry_value(cfa, first, body, "s") == A.Var("x")
    # ... but not when the reads must be unchanged at the head
    assert entry_value(cfa, first, body, "s", unchanged=set()) is None
    # a value reading a variable the loop writes is refused under ``unchanged``
    assert entry_value(cfa, first, body, "u", unchanged={"k"}) is None
    assert entry_value(cfa, first, body, "u", unchanged={"s", "i", "j"}) == A.Var("k")


def test_entry_value_over_an_earlier_loop_stops_there_when_asked():
    cfa, first, second = _heads(ENTRY)
    body = loop_body(cfa, second)
    assert entry_value(cfa, second, body, "c") == A.Var("s")
    # k is written before the first loop: reached through that loop's head only by default
    assert entry_value(cfa, second, body, "k") == A.num(0)
    assert entry_value(cfa, second, body, "k", stop_at_loop_heads=True) is None
    assert entry_value(cfa, second, body, "c", stop_at_loop_heads=True) == A.Var("s")


def test_entry_value_refuses_samples_and_self_reads():
    src = """program f(n: int) requires n >= 1 {
  a ~ bern(0.5);
  b := 1;
  b := b + 1;
  i := 0;
  while (i < n) { i := i + 1; }
}"""
    cfa = build_cfa(parse(src).programs[0])
    (h,) = cfa.loop_heads
    body = loop_body(cfa, h)
    assert entry_value(cfa, h, body, "a") is None
    assert entry_value(cfa, h, body, "b") is None
