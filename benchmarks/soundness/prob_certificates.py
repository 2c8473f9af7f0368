"""Probability certificates over the fairness suite and the WMI property programs: decide,
write the certificate, re-check it; print a markdown table (size, write and check time vs decide).

    python benchmarks/soundness/prob_certificates.py [--timeout 60] [FILES...]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)


def one(path: str, timeout: float):
    from lang.parser import parse
    from tamp.api import prove
    from tamp.certificate.checker import check_certificate
    from tamp.certificate.reader import decode
    from tamp.certificate.writer import file_certificate

    raw = open(path, "rb").read()
    t0 = time.monotonic()
    res = prove(path, timeout=timeout)
    t1 = time.monotonic()
    cert = file_certificate(res, raw)
    text = json.dumps(cert)
    t2 = time.monotonic()
    row = {
        "file": os.path.relpath(path, ROOT),
        "verdict": res.verdict,
        "decide_s": t1 - t0,
        "write_s": t2 - t1,
        "bytes": len(text),
        "certified": len(cert["probability"]),
        "note": "; ".join(n["reason"] for n in cert["not_certified"]),
    }
    if cert["probability"]:
        rep = check_certificate(decode(json.loads(text)), parse(raw.decode(), path), raw)
        row.update(
            check_s=time.monotonic() - t2,
            check=rep.summary().split(":")[0],
            obligations=rep.obligations,
            cells=sum(len(tr["cells"]) for p in cert["probability"] for t in p["terms"] for tr in t["traces"]),
        )
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "benchmarks/fairness/*.prob"))) + sorted(
        glob.glob(os.path.join(ROOT, "benchmarks/wmi/prop_*.prob"))
    )
    print("| program | verdict | decide s | write s | check s | size KB | cells | obligations | check |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for f in files:
        r = one(f, args.timeout)
        rows.append(r)
        if r["certified"]:
            print(
                f"| {os.path.basename(r['file'])} | {r['verdict']} | {r['decide_s']:.2f} | {r['write_s']:.2f} | "
                f"{r['check_s']:.2f} | {r['bytes'] / 1024:.0f} | {r['cells']} | {r['obligations']} | {r['check']} |",
                flush=True,
            )
        else:
            print(
                f"| {os.path.basename(r['file'])} | {r['verdict']} | {r['decide_s']:.2f} | {r['write_s']:.2f} | – | – "
                f"| – | – | not certified: {r['note'][:90]} |",
                flush=True,
            )
    ok = [r for r in rows if r.get("check") == "OK"]
    print(
        f"\n{len(ok)}/{len(rows)} certified and re-checked OK; decide {sum(r['decide_s'] for r in rows):.1f} s, "
        f"write {sum(r['write_s'] for r in rows):.1f} s, check {sum(r.get('check_s', 0) for r in rows):.1f} s"
    )
    if ok:
        import statistics

        print(
            f"certified ones: decide {sum(r['decide_s'] for r in ok):.1f} s, check {sum(r['check_s'] for r in ok):.1f} s; "
            f"check time median {statistics.median(r['check_s'] for r in ok):.2f} s, max "
            f"{max(r['check_s'] for r in ok):.2f} s; check/decide median "
            f"{statistics.median(r['check_s'] / max(r['decide_s'], 1e-3) for r in ok):.1f}"
        )


if __name__ == "__main__":
    main()
