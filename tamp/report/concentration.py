"""The report's section for a failure bound proved by concentration: each rule application (the
sum's draws, the rule's statement, margin and probability) and an inferred bound or margin.

When the inferred expression has one free input left besides those fixed by ``--input`` — or
all are fixed and the program has an integer input ``n`` — it is also plotted against that input
(matplotlib, inline SVG), so the reader sees how the bound moves (failure probability vs n, or
margin vs p)."""

from __future__ import annotations

import dataclasses
import html
import io
from fractions import Fraction
from typing import List, Optional

from lang import ast as A
from lang.parser import parse
from lang.walk import free_vars
from tamp.show import show_expr
from tamp.simulation import simulate


def escape(s) -> str:
    return html.escape(str(s))


def concentration_body(r) -> str:
    apps = r.applications_json()
    out = []
    if r.inferred == "bound":
        val = f" = {r.value:.6g}" if r.value is not None else ""
        out.append(
            f'<div class="message proved">inferred failure bound: <code>{escape(r.bound)}</code>{escape(val)}</div>'
        )
    elif r.inferred == "margin":
        val = f" = {r.value:.6g}" if r.value is not None else ""
        out.append(
            f'<div class="message proved">inferred margin: <code>? = {escape(show_expr(r.margin))}</code>'
            f"{escape(val)}</div>"
        )
    rows = []
    for a in apps:
        blocks = "<br>".join(f"{escape(b['count'])} × parameter {escape(b['param'])}" for b in a["blocks"])
        rows.append(
            f"<tr><td>{escape(a['sum'])}</td><td>{escape(a['family'])} (lines "
            f"{escape(', '.join(map(str, a['lines'])))})<br>{blocks}</td><td>{escape(a['rule'])} "
            f"({escape(a['mode'])})<br><code>{escape(a['statement'])}</code></td>"
            f"<td><code>{escape(a['margin'])}</code></td><td><code>{escape(a['probability'])}</code></td></tr>"
        )
    out.append(
        '<h3>Concentration</h3><table class="data axioms"><tr><th>sum</th><th>draws</th><th>rule</th>'
        "<th>margin u</th><th>probability f</th></tr>" + "".join(rows) + "</table>"
    )
    svg = _plot(r)
    if svg:
        out.append(f'<div class="automaton-box">{svg}</div>')
    return "\n".join(out)


SIM_RUNS = 4000


def _simulated(r, name, is_int, fixed, pts):
    """The simulator's failure rate (and 99% interval) at up to four of the plotted points where
    the bound is measurable (between 1e-3 and 1); none for programs with array inputs."""
    if not getattr(r, "source", None) or any(p.type.name == "array" for p in r.cfa.params):
        return []
    try:
        prog = parse(r.source).program(r.name)
    except Exception:  # noqa: BLE001 - no source to run
        return []
    if prog is None:
        return []
    prog = dataclasses.replace(prog, fails=None)
    out = []
    for x, _v in [p for p in pts if 1e-3 <= p[1] <= 1][:4]:
        inputs = {
            k: (Fraction(val).limit_denominator(10**9) if isinstance(val, float) else val) for k, val in fixed.items()
        }
        inputs[name] = int(x) if is_int else Fraction(x).limit_denominator(10**9)
        inputs = {
            k: (int(val) if any(p.name == k and p.type.name == "int" for p in r.cfa.params) else val)
            for k, val in inputs.items()
        }
        try:
            s = simulate(A.SourceFile((prog,), "<report>", r.source), inputs, runs=SIM_RUNS, seed=1, bound=A.num(1))
        except Exception:  # noqa: BLE001 - a point the simulator cannot run is left out
            continue
        m = s.failures / s.runs if s.runs else 0.0
        out.append((x, max(m, 1e-4), max(s.ci[0], 1e-4), max(s.ci[1], 1e-4)))
    return out


def _plot(r) -> Optional[str]:
    """The inferred expression against one input (others at their fixed values), as SVG."""
    try:  # deferred on purpose: matplotlib is the optional 'report' extra (the plot is left out without it)
        import matplotlib

        matplotlib.use("Agg")
        # deferred on purpose: matplotlib loads only when a figure is drawn
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        return None
    # deferred on purpose: it loads sympy (~1 s); only this step needs it
    from tamp.prover.base.simplify import numeric
    from tamp.prover.infer.search import fixed_inputs

    expr = r.margin if r.inferred == "margin" else (r.proof.beta if r.inferred == "bound" and r.proof else None)
    if expr is None or r.cfa is None:
        return None
    fixed = fixed_inputs(r.cfa)
    free = sorted(set(free_vars(expr)) - set(fixed))
    if len(free) > 1:
        return None
    name = free[0] if free else ("n" if "n" in set(free_vars(expr)) else None)
    if name is None:
        return None
    is_int = any(p.name == name and p.type.name == "int" for p in r.cfa.params)
    centre = fixed.get(name)
    if is_int:
        xs: List[float] = [float(v) for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)]
    else:
        xs = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    pts = []
    for x in xs:
        env = dict(fixed)
        env[name] = int(x) if is_int else x
        v = numeric(expr, env)
        if v is not None:
            pts.append((x, v))
    if len(pts) < 2:
        return None
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label="inferred (proved)")
    sims = _simulated(r, name, is_int, fixed, pts) if r.inferred == "bound" else []
    if sims:
        ax.errorbar(
            [x for x, _m, _lo, _hi in sims],
            [m for _x, m, _lo, _hi in sims],
            yerr=[[m - lo for _x, m, lo, _hi in sims], [hi - m for _x, m, _lo, hi in sims]],
            fmt="x",
            color="black",
            label="tamp simulate (99% interval)",
        )
        ax.legend(fontsize=7)
    ax.set_xscale("log")
    if r.inferred == "bound":
        ax.set_yscale("log")
    ax.set_xlabel(name)
    ax.set_ylabel("inferred failure bound" if r.inferred == "bound" else "inferred margin")
    if isinstance(centre, (int, float)):  # fixed_inputs gives floats (and Booleans)
        ax.axvline(float(centre), color="grey", linestyle=":")
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]
