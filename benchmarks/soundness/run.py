"""Soundness harness, full form: every benchmark, every mutant operator, certificates.

    /work/venv/bin/python benchmarks/soundness/run.py [--timeout 120] [--mutant-timeout 60]
                                                      [--runs 20000] [--limit 3] [FILE …]
                                                      [--workers N | --scheduler ADDR]

For each program of benchmarks/{illustrative,dp,reliability,selection,products}: prove it; when proved, (a)
cross-check by simulation at the inputs of benchmarks/inputs.json, (b) write its certificate and
re-check it with the independent checker (times compared), (c) prove each mutant
(:mod:`mutants`) — none whose claim is false may be proved. The hand-written false variants in
benchmarks/variants (and variants/nonterminating, false because runs may never end) and the false
siblings of the public corpus (benchmarks/corpus/*/*_false*.prob) must not be proved either
(``--variants-only`` checks just those). Writes results.json and results.md next to this
script; exit status 1 when any soundness problem was found. The files and variants, then the
mutants of what was proved, are jobs of tamp.executor (``--workers N`` on this machine,
``--scheduler ADDR`` on a Dask cluster; the job functions are in jobs.py); the output and the
results keep the order of one process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from harness import BENCH, benchmark_inputs, check_mutant, to_json, variant_files, variant_record  # noqa: E402
from jobs import call, original, program, record_line  # noqa: E402
from mutants import mutants  # noqa: E402

from tamp.commands.options import add_executor_arguments, make_executor  # noqa: E402

SUITES = ["illustrative", "dp", "reliability", "selection", "products"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="benchmark files relative to benchmarks/ (default: all)")
    ap.add_argument("--timeout", type=float, default=120.0, help="time limit per original proof (s)")
    ap.add_argument("--mutant-timeout", type=float, default=60.0, help="time limit per mutant proof (s)")
    ap.add_argument("--runs", type=int, default=20000, help="simulation runs per input")
    ap.add_argument("--limit", type=int, default=3, help="mutants per operator and program")
    ap.add_argument("--out", default=str(HERE), help="directory for results.json / results.md")
    ap.add_argument("--variants-only", action="store_true", help="only the hand-written false variants")
    add_executor_arguments(ap, default_workers=1)  # files, variants, then mutants: jobs of tamp.executor
    args = ap.parse_args(argv)
    files = args.files or [f"{s}/{p.name}" for s in SUITES for p in sorted((BENCH / s).glob("*.prob"))]
    if args.variants_only:
        files = []
    # variants/nonterminating: false because some runs never end (the simulator cannot show it)
    variants = variant_files()
    t_all = time.monotonic()
    with make_executor(args) as ex:
        # round 1: the originals and the hand-written variants; round 2: the mutants of what was proved
        items = [(("file", i), (original, (rel, args.timeout, args.runs))) for i, rel in enumerate(files)]
        items += [
            (("variant", i), (variant_record, (rel, args.mutant_timeout, args.runs))) for i, rel in enumerate(variants)
        ]
        first = dict(ex.map(call, items))
        todo = []
        for i, rel in enumerate(files):
            path = BENCH / rel
            for name in first[("file", i)]["proved"]:
                inputs = benchmark_inputs(rel)
                for j, m in enumerate(mutants(program(path, name), args.limit)):
                    todo.append(((i, name, j), (check_mutant, (m, str(path), inputs, args.mutant_timeout, args.runs))))
        second = dict(ex.map(call, todo))
    records, certs = [], []
    for i, rel in enumerate(files):  # the order of one process, whatever the workers did
        out = first[("file", i)]
        print(rel)
        for line in out["lines"]:
            print(line)
        records += out["records"]
        certs += out["certs"]
        for key, _job in todo:
            if key[0] == i:
                records.append(second[key])
                print(record_line(second[key]))
    print("benchmarks/variants and the corpus's false siblings (false claims)")
    for i in range(len(variants)):
        for r in first[("variant", i)]:
            records.append(r)
            print(record_line(r))
    total = time.monotonic() - t_all
    summary = summarize(records, certs, total, args)
    (Path(args.out) / "results.json").write_text(
        json.dumps({"summary": summary, "certificates": certs, "records": to_json(records)}, indent=1) + "\n"
    )
    (Path(args.out) / "results.md").write_text(markdown(summary, records, certs))
    print(json.dumps(summary, indent=1))
    return 1 if summary["soundness_problems"] else 0


def summarize(records, certs, total, args) -> dict:
    muts = [r for r in records if r.kind == "mutant"]
    false_m = [r for r in muts if r.expect == "false"]
    return {
        "originals": sum(r.kind == "original" for r in records),
        "originals_proved": sum(r.kind == "original" and r.verdict == "proved" for r in records),
        "mutants_tried": len(muts),
        "mutants_expected_false": len(false_m),
        "mutants_expected_false_proved": sum(r.verdict == "proved" for r in false_m),
        "mutants_expected_false_refuted_by_simulation": sum(r.refuted for r in false_m),
        "mutants_may_hold_proved": sum(r.verdict == "proved" for r in muts if r.expect == "may-hold"),
        "variants_tried": sum(r.kind == "variant" for r in records),
        "variants_proved": sum(r.kind == "variant" and r.verdict == "proved" for r in records),
        "certificates_ok": sum(c["ok"] for c in certs),
        "certificates": len(certs),
        "soundness_problems": [f"{r.label}: {r.problem}" for r in records if r.problem],
        "to_review": [f"{r.label}: {r.review}" for r in records if r.review],
        "settings": {
            "timeout": args.timeout,
            "mutant_timeout": args.mutant_timeout,
            "runs": args.runs,
            "limit": args.limit,
            "cpus": os.cpu_count(),
        },
        "total_s": round(total, 1),
    }


def markdown(summary, records, certs) -> str:
    s = summary
    lines = [
        "# Soundness harness results",
        "",
        "Generated by `benchmarks/soundness/run.py` (see docs/trust.md).",
        "",
        f"* originals: {s['originals']} programs, {s['originals_proved']} proved (each cross-checked by "
        "simulation at the inputs of benchmarks/inputs.json)",
        f"* mutants tried: **{s['mutants_tried']}**; expected false: {s['mutants_expected_false']}, "
        f"of which **proved: {s['mutants_expected_false_proved']}**, refuted by simulation at some input: "
        f"{s['mutants_expected_false_refuted_by_simulation']}",
        f"* mutants that may still hold (less noise) and were proved: {s['mutants_may_hold_proved']} "
        "(each must survive simulation)",
        f"* hand-written false variants: {s['variants_tried']}, proved: {s['variants_proved']}",
        f"* certificates re-checked OK: {s['certificates_ok']} of {s['certificates']}",
        f"* soundness problems (proved and refuted by simulation, or a rejected certificate): "
        f"{len(s['soundness_problems'])}",
        f"* proved mutants expected false but not refuted, to review by hand: {len(s['to_review'])}"
        + "".join(f"\n  * {x}" for x in s["to_review"]),
        f"* total time {s['total_s']} s; settings {s['settings']}",
        "",
        "## Certificates",
        "",
        "| file | program | prove (s) | check (s) | obligations | result |",
        "|---|---|---|---|---|---|",
    ]
    for c in certs:
        lines.append(
            f"| {c['file']} | {c['program']} | {c['prove_s']} | {c['check_s']} | {c['obligations']} | "
            f"{'OK' if c['ok'] else 'REJECTED: ' + c['reason']} |"
        )
    lines += [
        "",
        "## Every run",
        "",
        "| program / mutant | kind | expect | verdict | time (s) | simulation | problem / review |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        lines.append(
            f"| {r.label} | {r.kind} | {r.expect} | {r.verdict} | {r.seconds:.2f} | "
            f"{', '.join(r.simulated)} | {r.problem or r.review} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
