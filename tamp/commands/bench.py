"""``tamp bench DIR…``: prove every ``.prob`` file under the given folders and print a table.

Each file runs in its own process (``tamp prove FILE --json --timeout T``), so a
hung or crashing proof cannot take the table down with it; the files are jobs of
:mod:`tamp.executor` (``--workers N`` on this machine, or ``--scheduler ADDR`` on a Dask
cluster whose workers see the same files), and the table keeps the order of the files. A file may state the
verdict it expects in a comment line ``// expect: proved`` (or ``unknown``,
``violated``, one per program as ``// expect NAME: proved``; the privacy suite's
``// expect: private at …`` reads as ``proved``); the table marks any disagreement and the
command then exits 1. A privacy result's column shows ε, or a counterexample's two
probabilities.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

from tamp.executor import ENV_SCHEDULER, ExecutorError
from tamp.results import OK, UNEXPECTED

from .common import write_output
from .console import FileStream
from .jsonout import ERROR, envelope, jsonable
from .options import add_executor_arguments, make_executor, output_file, seconds

NAME = "bench"
HELP = "run tamp prove on every .prob file under the given folders and print a results table"

_EXPECT = re.compile(r"^\s*//\s*expect(?:\s+(\w+))?\s*:\s*(proved|unknown|violated|private)\b", re.M)


def add_arguments(p):
    p.add_argument("dirs", nargs="+", metavar="DIR", help="folders (or files) of .prob benchmarks")
    p.add_argument("--timeout", type=seconds, default=120.0, metavar="S", help="per-file time limit (default 120)")
    add_executor_arguments(p, default_workers=1)
    p.add_argument("--json", metavar="OUT", type=output_file, help="also write the results as JSON")
    p.add_argument(
        "--markdown",
        metavar="OUT",
        type=output_file,
        help="also write the table as Markdown (e.g. benchmarks/results.md)",
    )


def input_files(args):
    """The files this command reads (no output may be one of them: common.guard_outputs)."""
    return find_files(args.dirs)


def find_files(paths):
    """Every ``.prob`` file under ``paths``, sorted."""
    out = []
    for p in paths:
        path = Path(p)
        if path.is_file():
            out.append(path)
        elif path.is_dir():
            out.extend(sorted(path.rglob("*.prob")))
    return out


def expectations(text: str) -> dict:
    """``{program or None: verdict}`` from ``// expect …`` comments."""
    return {m.group(1): "proved" if m.group(2) == "private" else m.group(2) for m in _EXPECT.finditer(text)}


def run_one(path: Path, timeout: float) -> list:
    """Prove one file in a child process; one row per program. The child's engines run in it
    (``--workers 1``, no scheduler from the environment): the files are the parallel jobs."""
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "tamp", "prove", str(path), "--json", "--timeout", str(timeout), "--workers", "1"]
    env = {k: v for k, v in os.environ.items() if k != ENV_SCHEDULER}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30, env=env)
    except subprocess.TimeoutExpired:
        return [
            {
                "file": str(path),
                "name": "-",
                "verdict": "unknown",
                "time_s": time.monotonic() - t0,
                "message": f"killed after {timeout + 30:.0f} s",
            }
        ]
    wall = time.monotonic() - t0
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        msg = (proc.stderr.strip().splitlines() or ["no output"])[0]
        return [{"file": str(path), "name": "-", "verdict": "error", "time_s": wall, "message": msg}]
    if data.get("error"):  # the file could not be read or checked (docs/json.md)
        msg = data["error"]["text"].splitlines()[0]
        return [{"file": str(path), "name": "-", "verdict": "error", "time_s": wall, "message": msg}]
    rows = []
    for prog in data.get("programs", []):
        prog = dict(prog)
        prog["file"] = str(path)
        prog["wall_s"] = wall
        rows.append(prog)
    return rows


def _axioms(row) -> str:
    axs = row.get("axioms") or []
    parts = []
    for a in axs:
        if isinstance(a, dict):
            parts.append(f"{a.get('family', '?')}({a.get('param', '')})")
        else:
            parts.append(str(a))
    return "; ".join(parts)


def _stat(row, key):
    stats = row.get("stats") or row.get("statistics") or {}
    return stats.get(key, row.get(key, ""))


def _down4(x: float) -> str:
    """x rounded down to 4 decimals (a certified lower end stays a lower end)."""
    return f"{math.floor(x * 10**4 * (1 - 2**-50) if x > 0 else x * 10**4 * (1 + 2**-50)) / 10**4:.4f}"


def _up4(x: float) -> str:
    """x rounded up to 4 decimals."""
    return f"{math.ceil(x * 10**4 * (1 + 2**-50) if x > 0 else x * 10**4 * (1 - 2**-50)) / 10**4:.4f}"


def _result(row) -> str:
    """For a probability result, the certified interval of the first compared quantity (e.g. the
    fairness ratio), rounded outward to 4 decimals; exact values as they are. For a privacy
    result: ε, or the counterexample's P[S | in] and P[S | in'] (certified bounds, outward)."""
    if row.get("kind") == "privacy":
        cx = row.get("counterexample")
        if not cx:
            return f"ε = {row.get('epsilon', '')}"
        lo = float(Fraction(str(cx["probability"]["lower"])))
        hi = float(Fraction(str(cx["neighbour_probability"]["upper"])))
        return f"{_down4(lo)} vs {_up4(hi)}"
    for c in row.get("comparisons") or []:
        lhs = c.get("lhs")
        if not isinstance(lhs, dict):
            continue
        if lhs.get("exact"):
            value = str(lhs.get("value", lhs.get("lo")))
            return value if len(value) <= 16 else f"{lhs['lo']:.6g}"
        return f"[{_down4(lhs['lo'])}, {_up4(lhs['hi'])}]"
    return ""


COLUMNS = [
    "program",
    "kind",
    "verdict",
    "expected",
    "result",
    "time (s)",
    "axioms",
    "proposals",
    "lemmas",
    "solver calls",
]


def table_rows(rows):
    out = []
    for r in rows:
        exp = r.get("expected", "")
        mark = "" if not exp or exp == r["verdict"] else " ✗"
        out.append(
            [
                f"{Path(r['file']).stem}"
                + ("" if r.get("name") in (None, "-", Path(r["file"]).stem) else f":{r['name']}"),
                r.get("kind", ""),
                r["verdict"] + mark,
                exp,
                _result(r),
                f"{r.get('time_s', 0):.2f}",
                _axioms(r),
                str(_stat(r, "proposals")),
                str(_stat(r, "lemma_instances")),
                str(_stat(r, "solver_calls")),
            ]
        )
    return out


def render_grid(rows) -> str:
    """For probability results in files named ``POP_PROG.prob`` (e.g. FairSquare's ``BN1_DT4``): a
    program × population table of verdict, certified result interval and time; "" otherwise."""
    cells, pops, progs = {}, [], []
    for r in rows:
        stem = Path(r["file"]).stem
        if r.get("kind") != "probability" or "_" not in stem:
            continue
        pop, prog = stem.split("_", 1)
        pops += [pop] if pop not in pops else []
        progs += [prog] if prog not in progs else []
        mark = "" if not r.get("expected") or r["expected"] == r["verdict"] else " ✗"
        cells[(prog, pop)] = f"{r['verdict']}{mark} {_result(r)} {r.get('time_s', 0):.2f} s".replace("  ", " ")
    if len(pops) < 2 or len(progs) < 2:
        return ""
    head = ["program"] + pops
    body = [[prog] + [cells.get((prog, pop), "") for pop in pops] for prog in progs]
    widths = [max(len(head[i]), *(len(b[i]) for b in body)) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(x.ljust(w) for x, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


#: a column is never cut narrower than this (its header stays readable)
MIN_COLUMN = 8


def render_text(rows, width: int | None = None) -> str:
    """The table, at most ``width`` characters a line (default: the terminal's): the widest
    columns are narrowed first and a cell cut to its column ends in ``…``; the full text of every
    cell is in ``--json`` and ``--markdown``."""
    if width is None:
        width = shutil.get_terminal_size((120, 24)).columns
    body = table_rows(rows)
    widths = [max(len(c), *(len(x[i]) for x in body)) if body else len(c) for i, c in enumerate(COLUMNS)]
    gaps = 2 * (len(COLUMNS) - 1)
    least = [max(MIN_COLUMN, len(c)) for c in COLUMNS]
    while sum(widths) + gaps > width:
        wide = [k for k in range(len(widths)) if widths[k] > least[k]]
        if not wide:
            break  # every column at its least: the line stays wider than the terminal
        widths[max(wide, key=lambda k: widths[k])] -= 1
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(_cut(x, w).ljust(w) for x, w in zip(r, widths)).rstrip() for r in body]
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def machine_note() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"


def render_markdown(rows, total_s: float) -> str:
    body = table_rows(rows)
    lines = [
        f"Machine: {machine_note()}. Total wall time {total_s:.1f} s.",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(x.replace("|", "\\|") for x in r) + " |" for r in body]
    return "\n".join(lines) + "\n"


def run(args) -> int:
    files = find_files(args.dirs)
    if not files:
        print(f"tamp bench: no .prob files under {' '.join(args.dirs)}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    stream = FileStream(len(files))  # one line per finished file on stderr, a progress bar on a terminal
    try:
        with make_executor(args) as ex:
            done = {}
            for i, rs in ex.map(run_one, [(i, (f, args.timeout)) for i, f in enumerate(files)]):
                done[i] = rs
                stream.done(str(files[i]), rs, max((r.get("wall_s", r.get("time_s", 0.0)) for r in rs), default=0.0))
    except ExecutorError as exc:
        print(f"tamp {NAME}: error: {exc}", file=sys.stderr)
        return 1
    finally:
        stream.close()
    rows = []
    for i, f in enumerate(files):
        rs = done[i]
        exp = expectations(f.read_text(errors="replace"))
        for r in rs:
            r["expected"] = exp.get(r.get("name"), exp.get(None, ""))
            rows.append(r)
    total = time.monotonic() - t0
    bad = [r for r in rows if r.get("expected") and r["expected"] != r["verdict"]]
    code = 2 if any(r["verdict"] == "error" for r in rows) else 1 if bad else 0
    print(render_text(rows))
    grid = render_grid(rows)
    if grid:
        print("\n" + grid)
    for r in rows:
        if r["verdict"] == "error":
            line = f"{r['file']}: {r.get('message', '')}"
            print(_cut(line, max(shutil.get_terminal_size((120, 24)).columns, 40)))
    print(f"\n{len(rows)} programs in {total:.1f} s on {machine_note()}")
    if args.json:
        verdict = {0: OK, 1: UNEXPECTED, 2: ERROR}[code]
        data = envelope(NAME, verdict, code, total, machine=machine_note(), total_s=total, rows=rows)
        write_output(args.json, json.dumps(jsonable(data), indent=2, default=str), "--json", map(str, files))
    if args.markdown:
        write_output(args.markdown, render_markdown(rows, total), "--markdown", map(str, files))
    return code
