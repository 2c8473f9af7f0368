"""The report's plots (matplotlib, embedded as SVG text: the page stays self-contained).

* :func:`bound_plot` — a proved failure bound against one of its inputs (the others fixed by
  ``requires`` or ``--input``, else at a point ``requires`` allows — the title says which), with
  ``tamp simulate``'s measured failure rates and their 99% Clopper–Pearson intervals at a few of
  the points (array inputs are generated: one element per unit of the largest integer input):
  the proved curve must stay above them. A probability is at most 1: where the bound exceeds 1
  it says nothing, so the curve is drawn capped at 1 and the plot says so;
* :func:`comparison_plot` — each probability comparison's certified interval (e.g. a fairness
  ratio) as a bar against its threshold, instead of 17-digit numbers;
* :func:`causal_plot` — a causal-fairness result: the boxes found biased, partly biased, fair
  or unknown drawn over two of the inputs, and the certified / biased / unknown shares as a bar.

Every function returns an ``<svg class="plot">`` element or None when there is nothing to plot
(or matplotlib, the optional ``report`` extra, is missing). Plots are for reading only: nothing
here feeds a verdict.
"""

from __future__ import annotations

import dataclasses
import io
import re
import time
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

from lang import ast as A
from lang.evaluate import evaluate
from lang.parser import parse, parse_expr
from lang.walk import free_vars
from tamp.simulation import simulate

#: Runs of ``tamp simulate`` per plotted point, and most points simulated per plot.
SIM_RUNS = 2000
SIM_POINTS = 3
SIM_BUDGET_S = 10.0  # no new point is simulated after this many seconds
#: More boxes than this are drawn as one embedded image rather than as vector rectangles.
RASTER_ABOVE = 200

COLOURS = {
    "proved": "#1e8449",
    "holds": "#1e8449",
    "fair": "#a9dfbf",
    "certified": "#1e8449",
    "violated": "#c0392b",
    "fails": "#c0392b",
    "biased": "#c0392b",
    "partly biased": "#f1948a",
    "unknown": "#f5b041",
    "undecided": "#b9770e",
}


def _pyplot():
    try:  # deferred on purpose: matplotlib is the optional 'report' extra (plots are left out without it)
        import matplotlib

        matplotlib.use("Agg")
        # deferred on purpose: matplotlib loads only when a figure is drawn
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return None
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, selectable, searchable
    return plt


def figure_svg(fig, label: str) -> str:
    """A matplotlib figure as an inline ``<svg class="plot">`` (no XML prolog, no date)."""
    plt = _pyplot()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    if plt is not None:
        plt.close(fig)
    text = buf.getvalue()
    svg = text[text.index("<svg") :]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)  # RDF naming outside vocabularies
    svg = svg.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "").replace("xlink:href=", "href=")
    return svg.replace("<svg ", f'<svg class="plot" role="img" aria-label="{label}" ', 1)


# ---------------------------------------------------------------------------- failure bound


def _base_point(cfa) -> Optional[Dict[str, object]]:
    """Values for every input: those ``requires`` fixes, the others at a point it allows."""
    # deferred on purpose: it loads sympy (~1 s); only this step needs it
    from tamp.prover.infer.search import fixed_inputs, sample_points

    pts = sample_points(cfa, count=1)
    if pts:
        return pts[0]
    fixed = fixed_inputs(cfa)
    return fixed if all(p.name in fixed for p in cfa.params) else None


def _requires_hold(cfa, env) -> bool:
    try:
        return all(evaluate(r, env) is True for r in cfa.requires)
    except Exception:  # noqa: BLE001 - undefined there: not a point to plot
        return False


def bound_points(r) -> Optional[Tuple[str, Dict[str, object], List[Tuple[float, float]]]]:
    """``(input, the other inputs' values, [(x, bound at x)])`` for a failure bound with at least
    one input in it (None otherwise)."""
    # deferred on purpose: it loads sympy (~1 s); only this step needs it
    from tamp.prover.base.simplify import numeric
    from tamp.prover.infer.search import fixed_inputs

    cfa = getattr(r, "cfa", None)
    if cfa is None or r.bound is None:
        return None
    try:
        expr = parse_expr(str(r.bound), "bound")
    except Exception:  # noqa: BLE001 - a bound tamp cannot read back is not plotted
        return None
    types = {p.name: p.type.name for p in cfa.params}
    free = [v for v in sorted(set(free_vars(expr))) if types.get(v) in ("int", "real")]
    if not free:
        return None
    fixed = fixed_inputs(cfa)
    name = next((v for v in free if v not in fixed), free[0])
    base = _base_point(cfa)
    if base is None:
        return None
    is_int = types[name] == "int"
    grid = [1, 2, 4, 8, 16, 32, 64, 128] if is_int else [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    pts = []
    for x in grid:
        env = dict(base)
        env[name] = x
        if not _requires_hold(cfa, env):
            continue
        v = numeric(expr, env)
        if v is not None and v > 0:
            pts.append((float(x), v))
    if len(pts) < 2:
        return None
    return name, {k: v for k, v in base.items() if k != name}, pts


def simulated_rates(r, name: str, base: Dict[str, object], xs: Sequence[float], is_int: bool):
    """``tamp simulate``'s failure rate and 99% interval at the points ``xs`` (``name`` varied,
    the other inputs at ``base``): ``[(x, rate, lo, hi)]``; none for programs with array inputs
    or without their source."""
    source = getattr(r, "source", None)
    if not source:
        return []
    try:
        prog = parse(source).program(r.name)
    except Exception:  # noqa: BLE001 - no source to run
        return []
    if prog is None:
        return []
    prog = dataclasses.replace(prog, fails=None)
    types = {p.name: p.type.name for p in r.cfa.params}
    out = []
    t0 = time.monotonic()
    for x in list(xs)[:SIM_POINTS]:
        if time.monotonic() - t0 > SIM_BUDGET_S:  # a slow program: fewer points, not a slow report
            break
        point: Dict[str, object] = dict(base)
        point[name] = int(x) if is_int else x
        full = with_arrays(r.cfa, point)
        if full is None:
            continue
        point = full
        inputs = {k: _exact(v, types.get(k) == "int") for k, v in point.items()}
        try:
            s = simulate(A.SourceFile((prog,), "<report>", source), inputs, runs=SIM_RUNS, seed=1, bound=A.num(1))
        except Exception:  # noqa: BLE001 - a point the simulator cannot run is left out
            continue
        if s.runs:
            out.append((x, s.failures / s.runs, s.ci[0], s.ci[1]))
    return out


def with_arrays(cfa, point: Dict[str, object]) -> Optional[Dict[str, object]]:
    """``point`` with a value for every array input it lacks: as many elements as the largest
    integer input (at least 1), all 0 (false for ``bool[]``), else all 1 when ``requires`` rejects
    zeros; None when neither satisfies ``requires``. Simulated points are measurements at some
    inputs, never evidence for a verdict."""
    arrays = [p for p in cfa.params if p.type.name == "array" and p.name not in point]
    if not arrays:
        return point
    ints = [v for p in cfa.params if p.type.name == "int" and isinstance((v := point.get(p.name)), int)]
    length = max([1, *ints])
    for fill in (0, 1):
        env = dict(point)
        for p in arrays:
            elem = p.type.elem[0].name if p.type.elem else "real"
            env[p.name] = [bool(fill) if elem == "bool" else fill for _ in range(length)]
        if _requires_hold(cfa, env):
            return env
    return None


def _exact(v: object, is_int: bool) -> object:
    """An input value as the simulator takes it: an int, or a float as the Fraction it stands for."""
    if is_int and isinstance(v, (int, float)):
        return int(v)
    return Fraction(v).limit_denominator(10**9) if isinstance(v, float) else v


def bound_plot(r, simulate: bool = True) -> Optional[str]:
    """The failure bound against one input, with simulated rates (``simulate=False``: the curve only)."""
    found = bound_points(r)
    plt = _pyplot() if found else None
    if found is None or plt is None:
        return None
    name, base, pts = found
    is_int = any(p.name == name and p.type.name == "int" for p in r.cfa.params)
    fig, ax = plt.subplots(figsize=(5.2, 2.9))
    # a bound above 1 says nothing about a probability: drawn at 1, and the plot says so
    ax.plot(
        [x for x, _ in pts], [min(v, 1.0) for _, v in pts], marker="o", color=COLOURS["proved"], label="proved bound"
    )
    if any(v > 1 for _x, v in pts):
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="bound above 1 (vacuous): capped at 1")
    measurable = [x for x, v in pts if 1e-3 <= v <= 1]
    sims = simulated_rates(r, name, base, measurable, is_int) if simulate else []
    if sims:
        floor = 1e-4
        ys = [max(m, floor) for _x, m, _lo, _hi in sims]
        ax.errorbar(
            [x for x, *_ in sims],
            ys,
            yerr=[
                [y - max(lo, floor) for y, (_x, _m, lo, _hi) in zip(ys, sims)],
                [hi - y for y, (*_, hi) in zip(ys, sims)],
            ],
            fmt="x",
            color="black",
            capsize=3,
            label=f"tamp simulate, {SIM_RUNS} runs (99% interval)",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(name)
    ax.set_ylabel("Pr[fail]")
    ax.set_title(f"failure bound {r.bound}" + _where(r.cfa, base), fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return figure_svg(fig, f"failure bound of {r.name} against {name}")


def _where(cfa, base: Dict[str, object]) -> str:
    """Where the other inputs' values come from: fixed (``requires`` or ``--input``), or a
    point ``requires`` allows that tamp chose (fix them with ``--input``)."""
    # deferred on purpose: it loads sympy (~1 s); only this step needs it
    from tamp.prover.infer.search import fixed_inputs

    fixed = fixed_inputs(cfa)
    given = [f"{k} = {_show(v)}" for k, v in sorted(base.items()) if k in fixed]
    chosen = [f"{k} = {_show(v)}" for k, v in sorted(base.items()) if k not in fixed]
    parts = []
    if given:
        parts.append("fixed: " + ", ".join(given))
    if chosen:
        parts.append("chosen where requires holds (set with --input): " + ", ".join(chosen))
    return ("\n" + "; ".join(parts)) if parts else ""


def _show(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (float, Fraction)) and not (isinstance(v, Fraction) and v.denominator == 1):
        return f"{float(v):g}"
    return str(v)


# ---------------------------------------------------------------------------- probability


def comparison_plot(r) -> Optional[str]:
    """Each comparison ``lhs op rhs`` whose right side is a number (a threshold): the left side's
    certified interval (or exact value) as a bar, the threshold as a line."""
    rows = []
    for c in getattr(r, "comparisons", None) or []:
        if c.lhs is None or c.rhs is None or not c.rhs.is_exact:
            continue
        rows.append((c.text, float(c.lhs.lo), float(c.lhs.hi), float(c.rhs.lo), c.holds))
    plt = _pyplot() if rows else None
    if plt is None:
        return None
    rows = rows[:6]
    fig, ax = plt.subplots(figsize=(5.6, 0.55 + 0.5 * len(rows)))
    ends = [v for _t, lo, hi, th, _h in rows for v in (lo, hi, th)]
    span = max(ends) - min(ends) or max(abs(max(ends)), 1.0)
    for i, (_text, lo, hi, th, holds) in enumerate(rows):
        colour = COLOURS[{True: "holds", False: "fails", None: "undecided"}[holds]]
        width = max(hi - lo, span * 0.004)  # a point (an exact value) stays visible
        ax.barh(i, width, left=lo - (width - (hi - lo)) / 2, height=0.45, color=colour)
        ax.plot([th, th], [i - 0.38, i + 0.38], color="black", linewidth=1.5)
        ax.annotate(f"[{lo:.4g}, {hi:.4g}]", (hi, i), xytext=(4, -3), textcoords="offset points", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([_short(t) for t, *_ in rows], fontsize=7)
    ax.set_xlim(min(ends) - 0.15 * span, max(ends) + 0.35 * span)
    ax.invert_yaxis()
    ax.set_xlabel("certified interval (bar) and threshold (black line)", fontsize=7)
    fig.tight_layout()
    return figure_svg(fig, f"certified intervals of {r.name}")


def _short(text: str, width: int = 34) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# ---------------------------------------------------------------------------- causal


def _two_features(regions) -> Optional[Tuple[str, str]]:
    """The two inputs the boxes were split along most (the ones the bias depends on)."""
    cuts: Dict[str, set] = {}
    for box, _kind in regions:
        for name, (lo, hi) in box.items():
            if lo is not None and hi is not None and lo != float("-inf") and hi != float("inf"):
                cuts.setdefault(name, set()).update((lo, hi))
    ranked = sorted(cuts, key=lambda n: (-len(cuts[n]), n))
    return (ranked[0], ranked[1]) if len(ranked) >= 2 else None


def causal_plot(r) -> Optional[str]:
    """The biased regions over two inputs (when there are two to draw) and the shares as a bar."""
    d = getattr(r, "details", None) or {}
    if "certified" not in d:
        return None
    plt = _pyplot()
    if plt is None:
        return None
    regions = getattr(r, "regions", None) or []
    pair = _two_features(regions)
    if pair is not None:
        fig, (ax, bar) = plt.subplots(2, 1, figsize=(5.2, 4.6), gridspec_kw={"height_ratios": [5, 1]})
        _draw_regions(ax, regions, pair)
    else:
        fig, bar = plt.subplots(figsize=(5.2, 1.1))
    left = 0.0
    for key in ("certified", "biased", "unknown"):
        share = float(d.get(key) or 0.0)
        # boxes with bias found but only bounded ("mixed") are not the biased mass: said so
        label = "biased or mixed" if key == "biased" and (d.get("mixed_share") or 0) >= 0.0005 else key
        bar.barh(0, share, left=left, color=COLOURS[key], label=f"{label} {share:.1%}")
        left += share
    bar.set_xlim(0, 1)
    bar.set_yticks([])
    bar.set_xlabel("share of the input region", fontsize=7)
    bar.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.9 if pair else -1.2), frameon=False)
    fig.subplots_adjust(bottom=0.16 if pair else 0.5)
    if pair:
        fig.subplots_adjust(left=0.12, right=0.97, top=0.93, hspace=0.45)
    return figure_svg(fig, f"biased regions of {r.name}")


def _draw_regions(ax, regions, pair: Tuple[str, str]) -> None:
    # deferred on purpose: matplotlib loads only when a figure is drawn
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Patch, Rectangle

    xname, yname = pair
    order = {"fair": 0, "unknown": 1, "partly biased": 2, "biased": 3}  # biased drawn on top
    xs, ys = [], []
    for kind in order:
        rects = []
        for box, k in regions:
            if k != kind:
                continue
            (x0, x1), (y0, y1) = box[xname], box[yname]
            xs += [x0, x1]
            ys += [y0, y1]
            rects.append(Rectangle((x0, y0), x1 - x0, y1 - y0))
        if rects:  # many boxes become one embedded image: the page stays small
            coll = PatchCollection(
                rects, facecolor=COLOURS[kind], edgecolor="white", linewidth=0.2, alpha=0.35 if kind == "fair" else 0.85
            )
            coll.set_rasterized(len(regions) > RASTER_ABOVE)
            ax.add_collection(coll)
    ax.set_xlim(min(xs), max(xs))
    ax.set_ylim(min(ys), max(ys))
    ax.set_xlabel(xname)
    ax.set_ylabel(yname)
    ax.set_title("boxes the certifier settled, over two inputs (others projected)", fontsize=8)
    kinds = [k for k in order if any(kind == k for _b, kind in regions)]
    ax.legend(handles=[Patch(color=COLOURS[k], label=k) for k in kinds], fontsize=7, loc="upper left", framealpha=0.8)
