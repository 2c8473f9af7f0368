"""The soundness harness's jobs (:mod:`tamp.executor`): pure functions of plain data, in a module
of their own so that workers import them by name (``run.py`` runs as ``__main__``, which a
worker cannot import). The workers need this folder on their path: a local cluster inherits
it; on an external cluster start the workers in (or with PYTHONPATH set to) this folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

from harness import BENCH, Record, benchmark_inputs, simulate_all


def certify(path: Path, timeout: float):
    """Prove a file, certify its proofs and re-check them: (FileResult, check report, cert bytes)."""
    from lang.parser import parse_file
    from tamp.api import prove
    from tamp.certificate import check_certificate, decode
    from tamp.certificate.writer import file_certificate
    from tamp.executor import in_process

    with in_process() as ex:  # the engines' own jobs stay in this job
        res = prove(str(path), timeout=timeout, executor=ex)
    cert = json.loads(json.dumps(file_certificate(res, path.read_bytes())))
    report = (
        check_certificate(decode(cert), parse_file(str(path)), path.read_bytes())
        if cert["programs"] or cert.get("concentration")
        else None
    )
    return res, report, len(json.dumps(cert))


def original(rel: str, timeout: float, runs: int) -> dict:
    """One benchmark file: its programs proved, each proof simulated and its certificate
    re-checked. Returns the records, the certificate rows, the output lines and the names of
    the proved programs (whose mutants are the next jobs)."""
    path = BENCH / rel
    res, report, size = certify(path, timeout)
    records: List[Record] = []
    certs: List[dict] = []
    lines: List[str] = []
    proved: List[str] = []
    for pr in res.programs:
        rec = Record(pr.name, "original", "holds", pr.verdict, pr.time_s)
        if pr.verdict == "proved":
            rec.simulated = simulate_all(program(path, pr.name), None, benchmark_inputs(rel), runs)
            if rec.refuted:
                rec.problem = "proved, but the simulator refutes it"
        records.append(rec)
        lines.append(record_line(rec))
        if report is not None:
            pc = next((p for p in report.programs if p.name.split(" (")[0] == pr.name), None)
            if pc is not None:
                certs.append(
                    {
                        "file": rel,
                        "program": pr.name,
                        "prove_s": round(pr.time_s, 3),
                        "check_s": round(pc.seconds, 3),
                        "obligations": pc.obligations,
                        "ok": pc.ok,
                        "reason": pc.reason,
                        "bytes": size,
                    }
                )
                lines.append(
                    f"  certificate: {'OK' if pc.ok else 'REJECTED ' + pc.reason}, {pc.obligations} "
                    f"obligations, check {pc.seconds:.2f} s vs prove {pr.time_s:.2f} s"
                )
                if not pc.ok:
                    rec.problem = "its own certificate was rejected: " + pc.reason
        if pr.verdict == "proved":
            proved.append(pr.name)
    return {"records": records, "certs": certs, "lines": lines, "proved": proved}


def call(fn, args):
    """One job of the harness (files, variants and mutants share one map): ``fn(*args)``."""
    return fn(*args)


def record_line(r: Record) -> str:
    return (
        f"  {r.label:40s} {r.expect:9s} {r.verdict:9s} {r.seconds:7.2f} s  {','.join(r.simulated)}"
        + (f"  <<< {r.problem}" if r.problem else "")
        + (f"  [review: {r.review}]" if r.review else "")
    )


def program(path: Path, name: str):
    from lang.parser import parse_file

    return parse_file(str(path)).program(name)
