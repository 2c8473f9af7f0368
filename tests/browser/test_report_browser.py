"""The HTML report and the notebook cards in a real browser (headless Chromium): the page loads
with no console error, the automata and plots are visible, the failed trace is highlighted in
the source and on the drawing, zoom and pan change the drawing's viewBox, and a notebook card
renders compactly with its source left-aligned even under Jupyter's right-aligning table style."""

import pytest

import tamp
from tamp.report import write_report
from tamp.simulation import simulate

PROGRAMS = """program coin(p: real)
  requires 0 < p && p <= 1
  ensures !y
  fails p
{ y ~ bern(p); }

// the bound is too strong (the truth is 3p/4): the proof fails on the x branch
program half(p: real)
  requires 0 < p && p <= 1
  ensures  !y
  fails    p / 2
{
  x ~ bern(0.5);
  if (x) {
    y ~ bern(p);
  } else {
    y ~ bern(0.5 * p);
  }
}

program coins()
  ensures P(a && b) <= 0.3
  ensures P(a | b) >= 0.4
{
  a ~ bern(0.5);
  b ~ bern(0.5);
}

program band(x1: real, x2: real, sex: int)
  requires 0 <= x1 && x1 <= 1 && 0 <= x2 && x2 <= 1 && (sex == 0 || sex == 1)
  ensures independent(out, sex)
{
  h := max(0, 2*x1 + 0.1*sex - 1);
  out := h + 0.3 * x2 > 0.5 ? 1 : 0;
}
"""

ORANGE = "rgb(230, 126, 34)"  # the trace's colour (tamp/report/style.py)


@pytest.fixture(scope="module")
def result():
    r = tamp.prove(PROGRAMS, path="programs.prob")
    assert [p.verdict for p in r.programs] == ["proved", "unknown", "proved", "violated"]
    # every "proved" here is cross-checked by sampling
    assert simulate(PROGRAMS, {"p": 0.3}, runs=20000, seed=3, program="coin").verdict == "consistent"
    assert simulate(PROGRAMS, {}, runs=20000, seed=3, program="coins").verdict in ("confirmed", "undecided")
    return r


@pytest.fixture(scope="module")
def report(result, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "programs.html"
    write_report(str(path), result, PROGRAMS, engine="builtin", command="tamp prove programs.prob")
    return path


def box(locator):
    b = locator.bounding_box()
    assert b is not None and b["width"] > 0 and b["height"] > 0, b
    return b


def test_the_report_loads_without_errors_and_shows_automata_and_plots(page, report):
    p = page.open(report)
    assert page.errors == []
    drawings = p.locator("svg.automaton")
    assert drawings.count() >= 2  # coin's failure automaton, half's control flow
    for i in range(drawings.count()):
        assert drawings.nth(i).is_visible()
        box(drawings.nth(i))
    plots = p.locator("svg.plot")
    assert plots.count() == 3  # coin's bound, coins' intervals, band's regions
    for i in range(plots.count()):
        assert plots.nth(i).is_visible()
        box(plots.nth(i))
    bound_plot = p.locator("#prog-coin svg.plot")
    assert "tamp simulate" in bound_plot.text_content()  # measured rates beside the proved bound
    assert "biased" in p.locator("#prog-band svg.plot").text_content()
    assert "n iterations" not in p.content() and "κ at the exits" in p.locator("#prog-coin").text_content()


def test_the_failed_trace_is_highlighted_in_the_source_and_on_the_drawing(page, report):
    p = page.open(report)
    stuck = p.locator("#prog-half tr.failed-at")
    assert stuck.count() == 1 and stuck.is_visible()
    assert "bern(p)" in stuck.text_content()
    assert stuck.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(245, 183, 177)"
    on_trace = p.locator("#prog-half svg.automaton g.edge.trace")
    assert on_trace.count() >= 2
    for i in range(on_trace.count()):
        path = on_trace.nth(i).locator("path").first
        assert path.evaluate("e => getComputedStyle(e).stroke") == ORANGE
        assert float(path.evaluate("e => parseFloat(getComputedStyle(e).strokeWidth)")) >= 3
        box(path)
    other = p.locator("#prog-half svg.automaton g.edge:not(.trace)").filter(has_text="bern(0.5 * p)")
    assert other.count() == 1
    assert other.locator("path").first.evaluate("e => getComputedStyle(e).stroke") != ORANGE


def viewbox(svg):
    return [float(x) for x in svg.get_attribute("viewBox").split()]


def test_zoom_and_pan_change_the_viewbox(page, report):
    p = page.open(report)
    zoomable = p.locator("#prog-half .zoomable").first
    svg = zoomable.locator("svg.automaton")
    home = viewbox(svg)
    svg.scroll_into_view_if_needed()
    b = box(svg)
    p.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
    p.mouse.wheel(0, -300)  # zoom in around the pointer
    p.wait_for_function("([s, w]) => s.viewBox.baseVal.width < w", arg=[svg.element_handle(), home[2]])
    zoomed = viewbox(svg)
    assert zoomed[2] < home[2] and zoomed[3] < home[3]
    p.mouse.down()
    p.mouse.move(b["x"] + b["width"] / 2 + 60, b["y"] + b["height"] / 2 + 30, steps=4)
    p.mouse.up()
    panned = viewbox(svg)
    assert panned[0] < zoomed[0] and panned[1] < zoomed[1] and panned[2:] == zoomed[2:]
    zoomable.locator("button[data-zoom=fit]").click()
    assert viewbox(svg) == pytest.approx(home, abs=0.01)
    zoomable.locator("button[data-zoom=in]").click()
    assert viewbox(svg)[2] < home[2]
    zoomable.locator("button[data-zoom=out]").click()
    zoomable.locator("button[data-zoom=out]").click()
    assert viewbox(svg)[2] > home[2]
    assert page.errors == []


def test_a_wide_drawing_fits_a_narrow_page(page, report):
    page.page.set_viewport_size({"width": 420, "height": 800})
    p = page.open(report)
    for i in range(p.locator(".zoomable").count()):
        zoomable = p.locator(".zoomable").nth(i)
        inner = zoomable.evaluate("e => e.clientWidth")
        assert box(zoomable.locator("svg"))["width"] <= inner + 1


JUPYTER_LIKE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
/* what Jupyter's classic stylesheet does to tables in outputs */
.rendered_html td, .rendered_html th { text-align: right; }
</style></head><body><div class="rendered_html">{cards}</div></body></html>"""


def test_notebook_cards_render_compactly_and_left_aligned(page, result, tmp_path):
    cards = [r._repr_html_() for r in result.programs]
    sim = simulate(PROGRAMS, {"p": 0.3}, runs=5000, seed=1, program="coin")
    cards.append(sim._repr_html_())
    assert all(len(c) < 30_000 for c in cards), [len(c) for c in cards]
    assert all(len(repr(r)) < 120 and "\n" not in repr(r) for r in result.programs + [result])
    page_file = tmp_path / "notebook.html"
    page_file.write_text(JUPYTER_LIKE.replace("{cards}", "\n".join(f"<div class='output'>{c}</div>" for c in cards)))
    p = page.open(page_file)
    assert page.errors == []
    assert p.locator(".tamp-card").count() == 5
    drawing = p.locator(".tamp-card svg.automaton").first
    assert drawing.is_visible() and box(drawing)["height"] <= 301  # a small drawing
    assert p.locator(".tamp-card svg.plot").count() == 2  # coins' intervals, band's regions
    assert p.locator(".tamp-card svg.rate").is_visible()  # the simulation's interval against the bound
    summary = p.locator(".tamp-card details summary").first
    summary.click()
    code = p.locator(".tamp-card table.source td:not(.ln)").first
    assert code.is_visible()
    assert code.evaluate("e => getComputedStyle(e).textAlign") == "left"
    assert p.locator(".tamp-card").nth(1).locator("svg g.edge.trace").count() >= 2  # half's failed trace
