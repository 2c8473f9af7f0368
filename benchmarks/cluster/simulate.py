#!/usr/bin/env python3
"""A model of tamp on a large Dask cluster, from a real run's task durations.

    python benchmarks/cluster/simulate.py [--timings timings.json] [--workers 1,2,4,...,64]
                                          [--overhead-tasks 300] [--out simulated.md]

Replays the tasks recorded by ``run.py`` (``timings.json``: per task of an in-process run, its
batch and duration, and the windows of the batches) on W simulated workers:

* the work between batches (in the tamp process: parsing, the causal tree's bookkeeping, the
  combination of results) stays serial, as measured;
* a batch (one ``Executor.as_completed``) starts all its tasks at once and waits for the last:
  the scheduler hands the tasks out one after the other (``o_s`` each, in submission order)
  to the first free worker; a task occupies its worker for its duration plus ``o_w``; the
  batch ends one round trip (``rtt``) after its last task.

``o_s``, ``o_w`` and ``rtt`` are measured here, on a local 2-worker cluster: ``rtt`` is the
median time to submit one no-op task and get its result back; ``o_s = o_w`` is the wall time
per task of a few hundred no-op tasks (the scheduler, the client and both workers share the
machine's 2 cores, so this is an upper bound on the scheduler's own cost per task). The table
gives the modelled wall time, the speed-up over one process, and the bounds that stop it: the
critical path (serial work + the longest task of every batch) and work / W.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))


def noop(x):
    return x


def measure_overhead(n_tasks: int) -> dict:
    """Dask's per-task costs on this machine (seconds)."""
    import logging

    from distributed import Client, LocalCluster

    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL
    )
    start = time.perf_counter() - t0
    try:
        with Client(cluster, set_as_default=False) as client:
            client.submit(noop, -1, pure=False).result()  # warm up: workers import the function
            rtts = []
            for i in range(30):
                t0 = time.perf_counter()
                client.submit(noop, i, pure=False).result()
                rtts.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            futures = [client.submit(noop, i, pure=False) for i in range(n_tasks)]
            client.gather(futures)
            per_task = (time.perf_counter() - t0) / n_tasks
    finally:
        cluster.close()
    return {
        "rtt": statistics.median(rtts),
        "o_s": per_task,
        "o_w": per_task,
        "tasks": n_tasks,
        "start": start,
        "load": load,
    }


def durations(run: dict, clock: str):
    """(batch, name, seconds) per task, and the serial work of the tamp process, by ``clock``:
    ``cpu`` = processor time (what a core of its own would take: the machine here is shared),
    ``wall`` = as measured."""
    if clock == "cpu":
        tasks = [(b, n, c) for b, n, _w, c in run["tasks"]]
        return tasks, max(0.0, run["main_cpu_s"] - sum(c for _b, _n, c in tasks))
    windows = run["batches"]
    serial = (windows[0][0] if windows else 0.0) + run["after_s"]
    serial += sum(max(0.0, windows[k][0] - windows[k - 1][1]) for k in range(1, len(windows)))
    return [(b, n, w) for b, n, w, _c in run["tasks"]], serial


def model(run: dict, workers: int, ov: dict, clock: str) -> dict:
    """Modelled wall time of ``run`` on ``workers`` workers, and its parts."""
    tasks, serial = durations(run, clock)
    batches: dict = {}
    for b, _name, d in tasks:
        batches.setdefault(b, []).append(d)
    t = serial
    crit = serial
    for b in sorted(batches):
        ds = batches[b]
        free = [0.0] * workers  # when each worker is next free, relative to the batch's start
        heapq.heapify(free)
        end = 0.0
        for i, d in enumerate(ds):
            start = max(heapq.heappop(free), (i + 1) * ov["o_s"])
            finish = start + d + ov["o_w"]
            heapq.heappush(free, finish)
            end = max(end, finish)
        t += end + ov["rtt"]
        crit += max(ds) + ov["rtt"]
    work = sum(d for _b, _n, d in tasks)
    return {"wall": t, "serial": serial, "critical": crit, "work": work}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timings", default=str(HERE / "timings.json"))
    ap.add_argument("--workers", default="1,2,4,8,16,32,64")
    ap.add_argument("--overhead-tasks", type=int, default=300, help="no-op tasks to measure Dask's cost per task")
    ap.add_argument("--out", default=str(HERE / "simulated.md"))
    ap.add_argument(
        "--clock",
        choices=["cpu", "wall"],
        default="cpu",
        help="task durations: processor time (default: a core of its own each) or wall time as measured",
    )
    a = ap.parse_args(argv)
    runs = json.loads(Path(a.timings).read_text())
    ov = measure_overhead(a.overhead_tasks)
    ws = [int(w) for w in a.workers.split(",")]
    lines = [
        "# A simulated large cluster (model from measured task durations)",
        "",
        f"`python benchmarks/cluster/simulate.py` — Dask's costs measured on this machine: round trip of one "
        f"task {ov['rtt'] * 1000:.1f} ms, {ov['o_s'] * 1000:.1f} ms per task when {ov['tasks']} no-op tasks "
        "go through a 2-worker cluster (used both as the scheduler's serial cost per task and as the worker's); "
        f"starting a 2-worker local cluster took {ov['start']:.1f} s (not in the model: a cluster of 64 is "
        f"started once, before the work). Load average before the measurement: {ov['load']:.1f}.",
        "",
    ]
    clock = a.clock
    lines += [
        f"Task durations: {'processor time of each task (what it takes on a core of its own; the machine here is shared, so wall times measure the load more than the work)' if clock == 'cpu' else 'wall time as measured'}.",
        "",
    ]
    for run in runs.values():
        tasks, _serial = durations(run, clock)
        batches: dict = {}
        for b, _n, d in tasks:
            batches.setdefault(b, []).append(d)
        longest = max((d for _b, _n, d in tasks), default=0.0)
        name = max(tasks, key=lambda t: t[2])[1] if tasks else "-"
        base = model(run, 1, {"rtt": 0.0, "o_s": 0.0, "o_w": 0.0}, clock)  # one process: no Dask costs
        inf = model(run, 10**6, ov, clock)
        lines += [
            f"## {run['label']}",
            "",
            f"In-process run: {run['wall_s']:.1f} s wall; {len(tasks)} tasks in {len(batches)} batch(es) "
            f"(largest batch {max((len(v) for v in batches.values()), default=0)} tasks); task work "
            f"{base['work']:.1f} s, longest task {longest:.2f} s ({name}), serial work in the tamp process "
            f"{base['serial']:.1f} s; one process: {base['wall']:.1f} s. Critical path (serial + the longest task "
            f"of each batch + a round trip per batch): {inf['critical']:.1f} s, so no number of workers can beat "
            f"{base['wall'] / inf['critical']:.1f}x.",
            "",
            "| workers | modelled wall (s) | speed-up vs 1 process | work / W (s) | critical path (s) |",
            "|---|---|---|---|---|",
        ]
        for w in ws:
            m = model(run, w, ov, clock)
            lines.append(
                f"| {w} | {m['wall']:.1f} | {base['wall'] / m['wall']:.2f}x | {m['work'] / w:.1f} | {m['critical']:.1f} |"
            )
        lines.append("")
    text = "\n".join(lines)
    print(text)
    Path(a.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
