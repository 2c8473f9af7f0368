"""The HTML report's structure, on real proofs (built-in drawing: neither Chromium nor `dot`
is needed): self-contained, source with line anchors, axioms linked to their lines, automata
with λ/κ, back edges for a loop, the unlabelled trace highlighted for a failed proof,
probability intervals; every "proved" cross-checked by simulation."""

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from locations import REPO

import tamp
from tamp.report import automata_svg, fragment, program_card, render_report
from tamp.simulation import simulate

EX1 = (REPO / "benchmarks/illustrative/ex1.prob").read_text()
EX2 = (REPO / "benchmarks/dp/ex2.prob").read_text()

FAILS_HALF = """// ex1 with a bound that is too strong: the truth is 3p/4
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
"""

COINS = """program coins()
  ensures P(a && b) <= 0.3
  ensures P(a | b) >= 0.4
{
  a ~ bern(0.5);
  b ~ bern(0.5);
}
"""


class Structure(HTMLParser):
    """Collects ids, local links, external references and tag balance of a page."""

    VOID = {
        "meta",
        "br",
        "img",
        "input",
        "link",
        "hr",
        "path",
        "rect",
        "polygon",
        "ellipse",
        "polyline",
        "marker",
        "line",
        "circle",
    }

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.external, self.stack, self.errors = set(), [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("href", "src", "xlink:href"):
            v = a.get(k)
            if v and v.startswith("#"):
                self.links.append(v[1:])
            elif v and not v.startswith("data:"):  # an embedded image is part of the page
                self.external.append(v)
        if tag in ("link", "iframe", "img", "object", "embed") or (tag == "script" and "src" in a):
            self.external.append(tag)  # inline scripts (the zoom of the drawings) are part of the page
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
            return
        self.stack.pop()


def structure(html: str) -> Structure:
    s = Structure()
    s.feed(html)
    s.close()
    return s


def assert_self_contained(html: str) -> Structure:
    s = structure(html)
    assert not s.errors, s.errors[:3]
    assert not s.external, s.external
    assert "@import" not in html and not re.search(r"url\((?!#)", html)
    without_ns = html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert not re.search(r"https?://", without_ns), re.findall(r"https?://\S+", without_ns)[:3]
    missing = [t for t in s.links if t not in s.ids]
    assert not missing, missing  # every local link lands somewhere
    return s


def svgs(html: str):
    """Every top-level inline <svg> element, parsed as XML (so they are well-formed)."""
    out = []
    for m in re.finditer(r'<svg (?:xmlns="[^"]*" )?class="automaton".*?</svg>', html, re.S):
        out.append(ET.fromstring(m.group(0)))
    return out


def texts(svg) -> str:
    return " ".join("".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text"))


def classes(svg):
    return [g.get("class") for g in svg.iter("{http://www.w3.org/2000/svg}g")]


@pytest.fixture(scope="module")
def ex1():
    return tamp.prove(EX1, path="ex1.prob")


@pytest.fixture(scope="module")
def ex2():
    return tamp.prove(EX2, path="ex2.prob")


@pytest.fixture(scope="module")
def half():
    return tamp.prove(FAILS_HALF, path="half.prob")


def test_proved_loop_free_report(ex1):
    assert ex1.verdict == "proved"
    # cross-check the proof by sampling: the failure rate's interval reaches below the bound
    sim = simulate(EX1, {"p": 0.9}, runs=20000, seed=3)
    assert sim.ci[0] < sim.bound_value and sim.verdict == "consistent"
    html = render_report(ex1, EX1, engine="builtin")
    s = assert_self_contained(html)
    assert html.startswith("<!DOCTYPE html>") and "<style>" in html
    assert "PROVED" in html
    lines = EX1.splitlines()
    for n in range(1, len(lines) + 1):  # the whole program with line anchors
        assert f"prog-ex1-L{n}" in s.ids
    # axioms: one row per sampling, each linked to its source line, which is highlighted
    ax_lines = [a["line"] for a in ex1.programs[0].axioms]
    assert sorted(ax_lines) == [n for n, t in enumerate(lines, 1) if "~" in t]
    for n in ax_lines:
        assert f'href="#prog-ex1-L{n}"' in html
        assert re.search(rf'<tr id="prog-ex1-L{n}" class="axiom-line">', html)
    (svg,) = svgs(html)
    t = texts(svg)
    assert "λ:" in t and "κ:" in t and "κ: p" in t and "κ: 0.5 * p" in t
    assert "node exit" in classes(svg) and "back-edge" not in classes(svg)
    assert 'data-renderer="builtin"' in html
    assert "statistics" in html.lower() and "solver calls" in html


def test_loop_report_shows_back_edge(ex2):
    assert ex2.verdict == "proved"
    sim = simulate(EX2, {"n": 4, "eps": 0.5, "p": 0.1, "q": [1, 2, 3, 4]}, runs=20000, seed=5)
    assert sim.ci[0] < sim.bound_value
    html = render_report(ex2, EX2, engine="builtin")
    assert_self_contained(html)
    (svg,) = svgs(html)
    assert classes(svg).count("back-edge") == 1
    back = [g for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "back-edge"][0]
    assert back.find("{http://www.w3.org/2000/svg}path").get("stroke-dasharray")
    t = texts(svg)
    assert "κ: p * (n - 0)" in t and "λ: 0 <= i" in t
    assert "1 back edge(s)" in html
    assert "laplace" in html


def test_failed_proof_highlights_the_trace(half):
    r = half.programs[0]
    assert r.verdict == "unknown"
    # the claim is really false: sampling refutes it (so the report must not say proved)
    sim = simulate(FAILS_HALF, {"p": 0.9}, runs=20000, seed=1)
    assert sim.verdict == "refuted"
    html = render_report(half, FAILS_HALF, engine="builtin")
    assert_self_contained(html)
    assert "PROVED" not in html and "UNKNOWN" in html
    lines = FAILS_HALF.splitlines()
    stuck = next(n for n, t in enumerate(lines, 1) if "bern(p);" in t)
    first = next(n for n, t in enumerate(lines, 1) if "bern(0.5);" in t)
    assert re.search(rf'<tr id="prog-half-L{stuck}" class="[^"]*failed-at', html)
    assert re.search(rf'<tr id="prog-half-L{first}" class="[^"]*failed-trace', html)
    other = next(n for n, t in enumerate(lines, 1) if "bern(0.5 * p)" in t)
    assert not re.search(rf'<tr id="prog-half-L{other}" class="[^"]*failed', html)  # not on the trace
    assert "Why the proof failed" in html and "tamp simulate" in html
    # no failure automaton: the control flow is drawn instead
    (svg,) = svgs(html)
    assert any({"node", "exit"} <= set(c.split()) for c in classes(svg))
    # the failed trace is highlighted on the drawing too: its edges, not the other branch's
    ns = "{http://www.w3.org/2000/svg}"
    edges = {
        g.findtext(f"{ns}title"): set(g.get("class").split()) for g in svg.iter(f"{ns}g") if "edge" in g.get("class")
    }
    assert "trace" in edges["x ~ bern(0.5)"] and "trace" in edges["y ~ bern(p)"]
    assert "trace" not in edges["y ~ bern(0.5 * p)"]


def test_probability_report_lists_terms_and_comparisons():
    r = tamp.prove(COINS, path="coins.prob")
    assert r.verdict == "proved"
    sim = simulate(COINS, {}, runs=20000, seed=2)
    assert sim.verdict in ("confirmed", "undecided")
    html = render_report(r, COINS, engine="builtin")
    assert_self_contained(html)
    assert "P(a &amp;&amp; b)" in html and "1/4" in html and "holds" in html
    assert 'class="data terms"' in html and 'class="data comparisons"' in html


def test_notebook_views_from_a_string(ex1):
    p = ex1.programs[0]
    assert p.source == EX1  # tamp.prove keeps the text for the views
    html = p._repr_html_()
    assert html == program_card(p, EX1)  # the compact card (tamp.report.notebook), not the whole section
    assert '<div class="tamp-report tamp-card"><style>' in html and "prog-ex1-nb-L1" in html and "<svg" in html
    assert len(html) < 30_000 and "PROVED" in html
    svg = p._repr_svg_()
    assert svg is not None and svg.lstrip().startswith("<svg")
    assert automata_svg(p, engine="builtin").startswith("<svg")
    assert "prog-ex1" in ex1._repr_html_()
    assert "prog-ex1" in fragment(p, EX1)  # the report's section, for embedding


def test_notebook_svg_is_none_without_automaton(half):
    assert half.programs[0]._repr_svg_() is None
    coins = tamp.prove(COINS).programs[0]
    assert coins._repr_svg_() is None and "P(a &amp;&amp; b)" in coins._repr_html_()


def test_report_without_source_still_renders(ex1):
    html = render_report(ex1, None, engine="builtin")
    assert_self_contained(html)
    assert "<svg" in html and 'class="source"' not in html


def test_two_programs_each_get_their_own_lines():
    text = EX1 + "\n" + FAILS_HALF
    r = tamp.prove(text, path="two.prob")
    html = render_report(r, text, engine="builtin")
    s = assert_self_contained(html)
    half_start = text.splitlines().index("program half(p: real)") + 1
    assert f"prog-half-L{half_start}" in s.ids and f"prog-ex1-L{half_start}" not in s.ids
    assert f"prog-ex1-L{half_start - 1}" in s.ids


MIXED = """program both()
  ensures P(a) <= 0.6
  ensures !b
  fails 0.5
{
  a ~ bern(0.5);
  b ~ bern(0.5);
}

program fair(x: int, s: bool)
  ensures independent(y, s)
{
  y := x + 1;
}
"""


def test_mixed_and_causal_programs_render():
    r = tamp.prove(MIXED, path="mixed.prob")
    both, fair = r.programs
    assert both.kind == "mixed" and both.verdict == "proved" and fair.kind == "causal"
    sim = simulate(MIXED, {}, runs=20000, seed=4, program="both")
    assert sim.ci[0] < 0.5
    html = render_report(r, MIXED, engine="builtin")
    s = assert_self_contained(html)
    # one listing per program, each with its own lines, no trailing blank line
    assert "prog-both-L8" in s.ids and "prog-both-L9" not in s.ids and "prog-fair-L10" in s.ids
    assert html.count('<section class="part">') == 2  # probability and failure-bound parts
    assert 'class="data terms"' in html and "Failure automaton both" in html
    assert 'class="engine-text"' in html and "independent" in html


def test_failed_loop_proof_marks_the_failing_node():
    """noisy max claimed exact (false: sampling refutes it): the report marks the loop exit,
    where the checker's EXIT obligation failed, in the listing and in the drawing."""
    text = (REPO / "benchmarks/variants/noisyMax_exact.prob").read_text()
    inputs = {"q": [0, 1, 0.5], "n": 3, "eps": 0.5, "p": 0.1}
    assert simulate(text, inputs, runs=20000, seed=6).verdict == "refuted"
    r = tamp.prove(text, path="nme.prob", timeout=120)
    prog = r.programs[0]
    assert prog.verdict == "unknown"
    html = render_report(r, text, engine="builtin")
    assert_self_contained(html)
    if "at q" in (prog.failed_trace or ""):  # the loop prover names the failing automaton node
        (svg,) = svgs(html)
        assert any("failed" in (c or "").split() for c in classes(svg))
        assert "back-edge" in classes(svg)
        assert "failed-at" in html
