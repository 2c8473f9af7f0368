"""Automata drawn to fit the page, with zoom and pan for wide ones (no library, no network).

:func:`zoomable` wraps a drawing's ``<svg>`` in a box with three buttons (zoom in, zoom out,
fit); :data:`ZOOM_JS` — included once at the end of the page — makes the mouse wheel zoom
around the pointer and a drag pan, by changing the drawing's ``viewBox``. Without scripts
(a notebook that does not run them) the drawing still fits the box.
"""

from __future__ import annotations

#: The inline script: small, self-contained, idempotent (a box is set up once).
ZOOM_JS = """
(function () {
  function setUp(box) {
    if (box.getAttribute("data-zoom-ready")) return;
    var svg = box.querySelector("svg");
    if (!svg || !svg.viewBox || !svg.viewBox.baseVal || !svg.viewBox.baseVal.width) return;
    box.setAttribute("data-zoom-ready", "1");
    var v0 = svg.viewBox.baseVal, home = [v0.x, v0.y, v0.width, v0.height];
    function view() { var v = svg.viewBox.baseVal; return [v.x, v.y, v.width, v.height]; }
    function set(v) { svg.setAttribute("viewBox", v.map(function (x) { return x.toFixed(2); }).join(" ")); }
    function zoom(f, cx, cy) {
      var v = view();
      if (cx === undefined) { cx = v[0] + v[2] / 2; cy = v[1] + v[3] / 2; }
      set([cx - (cx - v[0]) * f, cy - (cy - v[1]) * f, v[2] * f, v[3] * f]);
    }
    function at(e) {
      var r = svg.getBoundingClientRect(), v = view();
      return [v[0] + (e.clientX - r.left) / r.width * v[2], v[1] + (e.clientY - r.top) / r.height * v[3]];
    }
    svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      var p = at(e);
      zoom(e.deltaY < 0 ? 0.8 : 1.25, p[0], p[1]);
    }, { passive: false });
    var last = null;
    svg.addEventListener("pointerdown", function (e) {
      last = [e.clientX, e.clientY];
      if (svg.setPointerCapture) svg.setPointerCapture(e.pointerId);
      box.classList.add("panning");
    });
    svg.addEventListener("pointermove", function (e) {
      if (!last) return;
      var r = svg.getBoundingClientRect(), v = view();
      var dx = (e.clientX - last[0]) / r.width * v[2], dy = (e.clientY - last[1]) / r.height * v[3];
      last = [e.clientX, e.clientY];
      set([v[0] - dx, v[1] - dy, v[2], v[3]]);
    });
    function end() { last = null; box.classList.remove("panning"); }
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointercancel", end);
    box.querySelectorAll("button[data-zoom]").forEach(function (b) {
      b.addEventListener("click", function () {
        var z = b.getAttribute("data-zoom");
        if (z === "in") zoom(0.8); else if (z === "out") zoom(1.25); else set(home.slice());
      });
    });
  }
  document.querySelectorAll(".tamp-report .zoomable").forEach(setUp);
})();
"""

_BUTTONS = (
    '<div class="zoom-tools">'
    '<button type="button" data-zoom="in" title="zoom in (or the mouse wheel)">+</button>'
    '<button type="button" data-zoom="out" title="zoom out">−</button>'
    '<button type="button" data-zoom="fit" title="fit the drawing to the box">fit</button>'
    '<span class="zoom-hint">wheel: zoom · drag: pan</span></div>'
)


def zoomable(svg: str, renderer: str, extra_class: str = "") -> str:
    """The drawing in a box that fits the page, with the zoom buttons."""
    cls = "automaton-box zoomable" + (f" {extra_class}" if extra_class else "")
    return f'<div class="{cls}" data-renderer="{renderer}">{_BUTTONS}{svg}</div>'


def script() -> str:
    return f"<script>{ZOOM_JS}</script>"
