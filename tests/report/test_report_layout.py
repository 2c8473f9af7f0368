"""The built-in automaton drawing (no graphviz): back edges, layers, boxes that do not overlap,
well-formed SVG; and the graphviz path when `dot` happens to be installed."""

import xml.etree.ElementTree as ET

import pytest

from tamp.report.dot import clean_svg, dot_available, dot_source
from tamp.report.drawing import draw
from tamp.report.graph import GEdge, GNode, Graph, wrap
from tamp.report.layout import assign_layers, measure, place, split_back_edges, svg_of

SVG = "{http://www.w3.org/2000/svg}"


def loop_graph(flag_back=True):
    """entry -> head; head -> body -> latch -> head (the back edge); head -> exit; plus an
    edge skipping a layer."""
    g = Graph("loop", root="q0")
    for i, extra in enumerate(["", "", "", "", " exit"]):
        g.nodes.append(GNode(f"q{i}", [f"q{i}", f"λ: x{i} > 0", "κ: p * i"], f"q{i}", "node" + extra))
    g.edges = [
        GEdge("q0", "q1", "i := 0", "i := 0"),
        GEdge("q1", "q2", "assume(i < n)", "assume(i < n)"),
        GEdge("q2", "q3", "a ~ lap(0, 1)\nlaplace, cost p", "a ~ lap(0, 1)"),
        GEdge("q3", "q1", "i := i + 1", "i := i + 1", "back-edge" if flag_back else "edge"),
        GEdge("q1", "q4", "assume(!(i < n))", "assume(!(i < n))"),
        GEdge("q0", "q3", "skip ahead", "skip ahead"),
    ]
    return g


@pytest.mark.parametrize("flag_back", [True, False])
def test_back_edges_are_found_marked_or_not(flag_back):
    fwd, back = split_back_edges(loop_graph(flag_back))
    assert [(e.src, e.dst) for e in back] == [("q3", "q1")]
    assert len(fwd) == 5


def test_layers_are_longest_paths_and_rows_do_not_overlap():
    g = loop_graph()
    fwd, _ = split_back_edges(g)
    layer = assign_layers(g, fwd)
    assert layer == {"q0": 0, "q1": 1, "q2": 2, "q3": 3, "q4": 2}
    boxes = measure(g)
    place(g, fwd, boxes, layer)
    for a in boxes.values():
        for b in boxes.values():
            if a is not b and a.layer == b.layer:
                assert a.x + a.w / 2 <= b.x - b.w / 2 or b.x + b.w / 2 <= a.x - a.w / 2
    for e in fwd:  # every forward edge points down
        assert boxes[e.dst].y > boxes[e.src].y


def test_svg_is_well_formed_with_classes_and_labels():
    svg = svg_of(loop_graph())
    root = ET.fromstring(svg)
    groups = root.iter(f"{SVG}g")
    classes = [g.get("class") for g in groups]
    assert classes.count("back-edge") == 1
    assert "node exit" in classes
    texts = "".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "λ: x1 > 0" in texts and "κ: p * i" in texts
    back = [g for g in root.iter(f"{SVG}g") if g.get("class") == "back-edge"][0]
    path = back.find(f"{SVG}path")
    assert path.get("stroke-dasharray") and " C" in path.get("d")  # dashed, curved
    assert "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_text_is_escaped():
    g = Graph("esc", nodes=[GNode("a", ["x < y && z > 0 <script>"], 'x < y & "q"')], root="a")
    svg = svg_of(g)
    ET.fromstring(svg)
    assert "<script>" not in svg


def test_wrap_elides_long_labels():
    lines = wrap("λ: ", "a && b " * 200, width=40, max_lines=3)
    assert len(lines) == 3 and lines[-1].endswith("…") and all(len(s) <= 40 for s in lines)


def test_builtin_engine_never_calls_dot(monkeypatch):
    import tamp.report.drawing as draw_mod

    monkeypatch.setattr(draw_mod, "dot_svg", lambda g: pytest.fail("dot was called"))
    svg, used = draw(loop_graph(), "builtin")
    assert used == "builtin" and svg.startswith("<svg")


def test_auto_falls_back_without_dot(monkeypatch):
    import tamp.report.dot as dot_mod

    monkeypatch.setattr(dot_mod.shutil, "which", lambda name: None)
    svg, used = draw(loop_graph(), "auto")
    assert used == "builtin" and 'class="back-edge"' in svg


def test_unknown_engine_is_rejected():
    with pytest.raises(ValueError):
        draw(loop_graph(), "neato")


def test_dot_source_marks_classes_in_ids():
    src = dot_source(loop_graph())
    assert "__back-edge" in src and "style=dashed" in src and "__node_exit" in src


def test_clean_svg_restores_classes_and_drops_doctype():
    raw = (
        '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
        '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<!-- x -->\n'
        '<svg width="1pt" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<g id="e3__back-edge" class="edge"><g id="a_e3"><a xlink:title="i := i + 1">'
        '<path d="M0,0"/></a>\n</g></g></svg>'
    )
    svg = clean_svg(raw)
    assert svg.startswith("<svg") and "DOCTYPE" not in svg and "dtd" not in svg
    assert 'class="back-edge"' in svg and "<title>i := i + 1</title>" in svg and "xlink" not in svg


@pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed (optional)")
def test_dot_rendering_keeps_classes():
    svg, used = draw(loop_graph(), "dot")
    assert used == "dot"
    assert 'class="back-edge"' in svg and 'class="node exit"' in svg and "DOCTYPE" not in svg


def big_automaton(n):
    from lang import ast as A
    from tamp.prover.trace.automaton import AEdge, FailureAutomaton

    aut = FailureAutomaton("big")
    for i in range(n):
        aut.add_node(i, i + 1)
    for i in range(1, n):
        aut.edges.append(AEdge((i - 1) // 2, i, A.Assign((A.Var("x"),), A.num(i))))
    aut.exits = [n - 1]
    return aut


def test_large_automata_are_listed_not_drawn():
    from tamp.report import automaton_svg
    from tamp.report.graph import MAX_DRAWN
    from tamp.report.sections import _automaton_block

    html = _automaton_block(big_automaton(MAX_DRAWN + 1), "builtin")
    assert "too many to draw" in html and "<svg" not in html and html.count("<tr>") == MAX_DRAWN + 2
    small = _automaton_block(big_automaton(40), "builtin")
    assert "<svg" in small and "too many" not in small
    ET.fromstring(automaton_svg(big_automaton(MAX_DRAWN), "builtin"))  # the largest drawn one is well-formed
