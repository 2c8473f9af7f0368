"""The public corpus runner: prove every program, simulate every claim, print a Markdown table.

    /work/venv/bin/python benchmarks/corpus/run.py [--timeout 120] [--jobs 1] [--runs 20000]
                                                   [--markdown OUT] [--json OUT] [--checkpoint]
                                                   [--no-prove] [--no-simulate] [FILE|DIR ...]
    /work/venv/bin/python benchmarks/corpus/run.py --compare main=A.json loops=B.json [--markdown OUT]

Every ``.prob`` file under ``benchmarks/corpus/`` (or the given files / folders) is proved in its
own child process (``tamp prove FILE --json --timeout T``, the same call as ``tamp bench``), so a
hang or crash stays in its row; the files are jobs of :mod:`tamp.executor` (``--jobs N``). Each
file states the verdict it expects (``// expect: proved`` for a true claim, ``// expect: unknown``
for a false one: tamp's prover never says "violated" for a failure bound, and must never prove
a false claim). Then every input set of ``benchmarks/corpus/inputs.json`` is simulated
(``tamp.simulation``, fixed seed) and compared with the simulator verdict recorded there
(``consistent`` for true claims; ``refuted`` at least once for every false one).

Which tamp is measured is whatever ``tamp`` the interpreter imports: run with
``PYTHONPATH=/path/to/a/worktree`` to measure that branch (the table names its commit).

Exit status 1 when a false claim was proved or a simulation disagrees with inputs.json, else 0:
unproved true claims are the measurement, not a failure of the runner.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs.json"

_EXPECT = re.compile(r"^\s*//\s*expect\s*:\s*(proved|unknown|violated)\b", re.M)


@dataclass
class Row:
    """One corpus program: the prover's verdict and the simulator's checks."""

    program: str  # family/file stem
    expected: str  # proved | unknown
    verdict: str = "-"  # proved | unknown | error | - (not run)
    seconds: float = 0.0
    reason: str = ""  # one line: why not proved (tamp's own words)
    sims: List[str] = field(default_factory=list)  # simulator verdict per input set
    sim_expect: List[str] = field(default_factory=list)  # what inputs.json says it must be

    @property
    def true_claim(self) -> bool:
        return self.expected == "proved"

    @property
    def sim_ok(self) -> int:
        return sum(a == b for a, b in zip(self.sims, self.sim_expect))

    @property
    def false_proved(self) -> bool:
        return not self.true_claim and self.verdict == "proved"


def corpus_files(paths: List[str]) -> List[Path]:
    """The ``.prob`` files under ``paths`` (default: the whole corpus), sorted."""
    out: List[Path] = []
    for p in paths or [str(HERE)]:
        path = Path(p).resolve()
        out.extend([path] if path.is_file() else sorted(path.rglob("*.prob")))
    return out


def label(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def interleave(files: List[Path]) -> List[Path]:
    """The files in round-robin order over the families, a true claim with its false siblings at a
    time, so that a run stopped early (``--checkpoint`` outputs) has measured every family."""
    fams: Dict[str, Dict[str, List[Path]]] = {}
    for f in files:  # a claim's siblings need not be next to it (horner, horner_down, ..., horner_false)
        fams.setdefault(f.parent.name, {}).setdefault(f.stem.split("_false")[0], []).append(f)
    out: List[Path] = []
    queues = [list(chunks.values()) for chunks in fams.values()]
    while any(queues):
        for q in queues:
            if q:
                out.extend(q.pop(0))
    return out


def expected_verdict(path: Path) -> str:
    m = _EXPECT.search(path.read_text())
    return m.group(1) if m else ""


def one_line_reason(prog: dict) -> str:
    """tamp's own explanation of an unknown, on one line: an explicit ``reason`` when the prover
    gives one, else the specific lines of its message and the failed trace."""
    if prog.get("verdict") == "proved":
        return ""
    parts = []
    if prog.get("reason"):
        parts.append(str(prog["reason"]))
    else:
        lines = [ln.strip() for ln in str(prog.get("message", "")).splitlines() if ln.strip()]
        generic = "not proved (a failed union-bound proof does not mean the claim is false)"
        parts.extend(ln for ln in lines if ln != generic)
        if prog.get("failed_trace"):
            parts.append(str(prog["failed_trace"]))
    text = "; ".join(dict.fromkeys(parts)) or str(prog.get("message", "")).strip()
    text = " ".join(text.split()).replace(str(HERE.parents[1]) + os.sep, "")
    return text if len(text) <= 240 else text[:237] + "..."


def prove_file(path: str, timeout: float) -> dict:
    """Prove one file in a child process (an executor task: module-level, plain data in and out)."""
    import tamp

    t0 = time.monotonic()
    root = str(Path(tamp.__file__).resolve().parents[1])
    cmd = [sys.executable, "-m", "tamp", "prove", str(Path(path).resolve()), "--json", "--timeout", str(timeout)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    try:
        # cwd = the measured tamp's root: `python -m` puts the working directory first on sys.path,
        # so from another checkout the child would import that checkout's tamp instead
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30, env=env, cwd=root)
    except subprocess.TimeoutExpired:
        return {"verdict": "unknown", "seconds": time.monotonic() - t0, "reason": f"killed after {timeout + 30:.0f} s"}
    wall = time.monotonic() - t0
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        msg = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"verdict": "error", "seconds": wall, "reason": msg}
    if data.get("error"):  # the file could not be read or checked (docs/json.md)
        return {"verdict": "error", "seconds": wall, "reason": data["error"]["text"].splitlines()[0]}
    progs = data.get("programs") or [{}]
    prog = progs[0]
    return {
        "verdict": prog.get("verdict", data.get("verdict", "error")),
        "seconds": float(prog.get("time_s", wall)),
        "reason": one_line_reason(prog),
    }


def simulate_file(path: str, inputs_path: str, runs: int) -> List[List[str]]:
    """[simulator verdict, recorded expectation] for each input set of ``path`` in inputs.json."""
    from lang.errors import TampError
    from tamp.simulation import simulate
    from tamp.simulation.bench_inputs import load_inputs

    out = []
    for b in load_inputs(Path(inputs_path)):
        if b.file.resolve() != Path(path).resolve():
            continue
        try:
            verdict = simulate(b.file, b.inputs, runs=runs, seed=7).verdict
        except TampError as exc:
            verdict = "error: " + str(exc).splitlines()[0]
        out.append([verdict, b.expect])
    return out


def tamp_revision() -> str:
    """Where the measured tamp comes from, and its commit."""
    import tamp

    root = Path(tamp.__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%h %s"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        head = ""
    return f"{root} ({textwrap.shorten(head, 80)})" if head else str(root)


def run(
    files: List[Path],
    timeout: float,
    jobs: int,
    runs: int,
    prove: bool,
    simulate: bool,
    on_row: Optional[Callable[[List[Row]], object]] = None,
) -> List[Row]:
    """Prove and simulate ``files``; ``on_row(rows)`` is called after each proof (rows not yet
    proved have verdict "-"), e.g. to write the outputs so far."""
    from tamp.executor import Executor

    rows = [Row(label(f), expected_verdict(f)) for f in files]
    with Executor(jobs, None) as ex:
        if prove:
            tasks = [(i, (str(f), timeout)) for i, f in enumerate(files)]
            for i, res in ex.map(prove_file, tasks):
                r = rows[i]
                r.verdict, r.seconds, r.reason = res["verdict"], res["seconds"], res["reason"]
                mark = "" if r.verdict == r.expected else "  (expected " + r.expected + ")"
                print(f"  {r.program:45s} {r.verdict:8s} {r.seconds:7.2f} s{mark}", file=sys.stderr, flush=True)
                if on_row is not None:
                    on_row(rows)
        if simulate:
            tasks = [(i, (str(f), str(INPUTS), runs)) for i, f in enumerate(files)]
            for i, pairs in ex.map(simulate_file, tasks):
                rows[i].sims = [p[0] for p in pairs]
                rows[i].sim_expect = [p[1] for p in pairs]
    return rows


def summary(rows: List[Row]) -> Dict[str, object]:
    true_rows = [r for r in rows if r.true_claim]
    false_rows = [r for r in rows if not r.true_claim]
    proved = sum(r.verdict == "proved" for r in true_rows)
    # a partial run (stopped early, or a checkpoint): shares are over the claims that were proved
    # or not, and not_run counts the rest; a run without the prover (--no-prove) has none
    ran = [r for r in rows if r.verdict != "-"]
    not_run = len(rows) - len(ran) if ran else 0
    true_run = sum(r.true_claim for r in ran) if ran else len(true_rows)
    return {
        "programs": len(rows),
        "families": len({r.program.split("/")[0] for r in rows}),
        "true_claims": len(true_rows),
        "true_run": true_run,
        "false_run": sum(not r.true_claim for r in ran) if ran else len(false_rows),
        "not_run": not_run,
        "true_proved": proved,
        "true_proved_share": round(proved / true_run, 4) if true_run else 0.0,
        "false_claims": len(false_rows),
        "false_proved": sum(r.false_proved for r in false_rows),
        "errors": sum(r.verdict == "error" for r in rows),
        "simulate_checks": sum(len(r.sims) for r in rows),
        "simulate_passed": sum(r.sim_ok for r in rows),
        "false_refuted_by_simulation": sum("refuted" in r.sims for r in false_rows),
        "prove_seconds": round(sum(r.seconds for r in rows), 1),
    }


# What an unknown true claim ran into, from tamp's own reason (first match wins): a coarse
# tally for the table's head, so one sees at a glance which prover limits cost the most claims.
REASON_KINDS = [
    ("may not terminate", "loop termination not shown"),
    ("no recognisable counter", "loop counter not recognised"),
    ("depends on the state", "cost of an iteration depends on the state"),
    ("killed after", "time limit"),
    ("timeout", "time limit"),
    ("no axiom for", "no axiom instance fits the bound"),
    ("no combination of axioms", "no combination of axioms within the budget"),
    ("EXIT at", "labelled automaton does not check at exit"),
    ("STEP at", "labelled automaton does not check at a step"),
]


def reason_kind(reason: str) -> str:
    for needle, kind in REASON_KINDS:
        if needle in reason:
            return kind
    return "other"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(rows: List[Row], s: Dict[str, object], settings: str) -> str:
    share = f"{100 * float(s['true_proved_share']):.1f}%"  # type: ignore[arg-type]
    proved_run = any(r.verdict != "-" for r in rows)
    lines = [
        "# tamp on the public corpus",
        "",
        f"Generated by `benchmarks/corpus/run.py`; {settings}.",
        "",
        f"* true claims proved: **{s['true_proved']} / {s['true_run']} ({share})**"
        if proved_run
        else "* the prover was not run (--no-prove)",
        *(
            [
                f"* **partial run**: {s['not_run']} of {s['programs']} programs not proved (yet); the shares and "
                "the tables are over the programs that were"
            ]
            if s.get("not_run")
            else []
        ),
        f"* false claims proved: **{s['false_proved']}** of {s['false_run']} (must be 0)",
        f"* simulate checks passed: {s['simulate_passed']} / {s['simulate_checks']}; false claims refuted "
        f"by simulation at some input: {s['false_refuted_by_simulation']} / {s['false_claims']}"
        if s["simulate_checks"]
        else "* the simulator was not run (--no-simulate)",
        f"* errors: {s['errors']}; {s['programs']} programs in {s['families']} families; total prove time "
        f"{s['prove_seconds']} s",
        "",
        "## Per family (true claims proved)",
        "",
        "| family | proved | true claims | false proved |",
        "|---|---|---|---|",
    ]
    if proved_run:
        rows = [r for r in rows if r.verdict != "-"]
    rows = sorted(rows, key=lambda r: r.program)
    fams: Dict[str, List[Row]] = {}
    for r in rows:
        fams.setdefault(r.program.split("/")[0], []).append(r)
    for fam, rs in fams.items():
        t = [r for r in rs if r.true_claim]
        lines.append(
            f"| {fam} | {sum(r.verdict == 'proved' for r in t)} | {len(t)} | {sum(r.false_proved for r in rs)} |"
        )
    kinds: Dict[str, List[str]] = {}
    for r in rows:
        if r.true_claim and r.verdict not in ("proved", "-"):
            kinds.setdefault(reason_kind(r.reason), []).append(r.program.split("/")[1])
    if kinds:
        lines += ["", "## Why true claims are not proved (first matching reason)", ""]
        lines += ["| reason | claims | programs |", "|---|---|---|"]
        for kind, progs in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"| {kind} | {len(progs)} | {', '.join(progs)} |")
    lines += [
        "",
        "## Every program",
        "",
        "| program | expected | verdict | time (s) | simulate | unknown reason |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        mark = "" if r.verdict in ("-", r.expected) else (" **FALSE PROVED**" if r.false_proved else " ✗")
        sim = f"{r.sim_ok}/{len(r.sims)} ({', '.join(r.sims)})" if r.sims else "-"
        lines.append(
            f"| {r.program} | {r.expected} | {r.verdict}{mark} | {r.seconds:.2f} | {_cell(sim)} | {_cell(r.reason)} |"
        )
    return "\n".join(lines) + "\n"


def load_rows(path: str) -> "tuple[List[Row], str]":
    """The rows and the settings line of a ``--json`` output."""
    data = json.loads(Path(path).read_text())
    return [Row(**r) for r in data["rows"]], data.get("settings", "")


def render_comparison(runs: Dict[str, "tuple[List[Row], str]"]) -> str:
    """Several runs side by side (e.g. main and two branches): totals, true claims proved per
    family, and every program whose verdict differs between the runs."""
    names = list(runs)
    lines = ["# tamp on the public corpus: runs compared", ""]
    for name, (_, settings) in runs.items():
        lines.append(f"* **{name}**: {settings}")
    lines += ["", "| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    sums = {n: summary(rows) for n, (rows, _) in runs.items()}
    lines.append(
        "| true claims proved | "
        + " | ".join(
            f"{sums[n]['true_proved']} / {sums[n]['true_run']} ({100 * float(sums[n]['true_proved_share']):.1f}%)"  # type: ignore[arg-type]
            for n in names
        )
        + " |"
    )
    lines.append("| false claims proved | " + " | ".join(str(sums[n]["false_proved"]) for n in names) + " |")
    lines.append("| errors | " + " | ".join(str(sums[n]["errors"]) for n in names) + " |")
    lines.append("| total prove time (s) | " + " | ".join(str(sums[n]["prove_seconds"]) for n in names) + " |")
    fams: Dict[str, Dict[str, List[Row]]] = {}
    by_prog: Dict[str, Dict[str, Row]] = {}
    for n, (rows, _) in runs.items():
        for r in rows:
            if r.verdict == "-":
                continue
            fams.setdefault(r.program.split("/")[0], {}).setdefault(n, []).append(r)
            by_prog.setdefault(r.program, {})[n] = r
    lines += ["", "## True claims proved per family", ""]
    lines += ["| family | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for fam in sorted(fams):
        cells = []
        for n in names:
            t = [r for r in fams[fam].get(n, []) if r.true_claim]
            cells.append(f"{sum(r.verdict == 'proved' for r in t)} / {len(t)}")
        lines.append(f"| {fam} | " + " | ".join(cells) + " |")
    lines += ["", "## Programs whose verdict differs", ""]
    lines += ["| program | expected | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for prog in sorted(by_prog):
        rs = by_prog[prog]
        if len({r.verdict for r in rs.values()}) > 1:
            exp = next(iter(rs.values())).expected
            cells = [f"{rs[n].verdict} ({rs[n].seconds:.1f} s)" if n in rs else "-" for n in names]
            lines.append(f"| {prog} | {exp} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", help="corpus files or folders (default: all of benchmarks/corpus)")
    ap.add_argument("--timeout", type=float, default=120.0, help="time limit per file in seconds (default 120)")
    ap.add_argument("--jobs", type=int, default=1, help="parallel worker processes (default 1)")
    ap.add_argument("--runs", type=int, default=20000, help="simulation runs per input set (default 20000)")
    ap.add_argument("--markdown", metavar="OUT", help="also write the table as Markdown")
    ap.add_argument("--json", metavar="OUT", help="also write the rows and totals as JSON")
    ap.add_argument("--no-prove", action="store_true", help="only simulate")
    ap.add_argument("--no-simulate", action="store_true", help="only prove")
    ap.add_argument(
        "--checkpoint",
        action="store_true",
        help="rewrite --markdown / --json after every file (a run stopped early keeps its rows) and prove the "
        "families round-robin, so that a partial run covers them all",
    )
    ap.add_argument(
        "--compare",
        nargs="+",
        metavar="NAME=JSON",
        help="instead of running: compare earlier --json outputs (e.g. main=a.json loops=b.json)",
    )
    args = ap.parse_args(argv)
    if args.compare:
        pairs = [c.split("=", 1) for c in args.compare]
        if any(len(p) != 2 for p in pairs):
            ap.error("--compare takes NAME=JSON arguments")
        md = render_comparison({name: load_rows(path) for name, path in pairs})
        print(md)
        if args.markdown:
            Path(args.markdown).write_text(md)
        return 0
    if args.timeout <= 0 or args.jobs < 1 or args.runs < 1:
        ap.error("--timeout, --jobs and --runs must be positive")
    files = corpus_files(args.paths)
    if not files:
        ap.error("no .prob files found")
    if args.checkpoint:
        files = interleave(files)
    t0 = time.monotonic()
    revision = tamp_revision()

    def write(rows: List[Row]) -> str:
        s = summary(rows)
        settings = (
            f"tamp from {revision}; time limit {args.timeout:g} s per file, {args.jobs} job(s), "
            f"{args.runs} simulation runs per input set; {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"wall time {time.monotonic() - t0:.0f} s"
        )
        md = render_markdown(rows, s, settings)
        if args.markdown:
            Path(args.markdown).write_text(md)
        if args.json:
            out = {"summary": s, "settings": settings, "rows": [asdict(r) for r in rows]}
            Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
        return md

    on_row = write if args.checkpoint and (args.markdown or args.json) else None
    rows = run(files, args.timeout, args.jobs, args.runs, not args.no_prove, not args.no_simulate, on_row)
    s = summary(rows)
    print(write(rows))
    sims_bad = s["simulate_passed"] != s["simulate_checks"]
    return 1 if s["false_proved"] or sims_bad else 0


if __name__ == "__main__":
    try:
        import tamp  # noqa: F401  (the tamp of PYTHONPATH, when given)
    except ImportError:
        sys.path.insert(0, str(HERE.parents[1]))
    sys.exit(main())
