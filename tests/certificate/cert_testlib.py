"""Helpers for the certificate tests: prove a file in-process, write/tamper/check certificates."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from locations import REPO

from lang.serialize import to_json

ROOT = REPO
BENCH = ROOT / "benchmarks"


def make_certificate(path: Path, bound=None, inputs=None) -> dict:
    """Prove ``path`` and return its certificate as parsed JSON (a fresh dict)."""
    from tamp.api import prove
    from tamp.certificate.writer import file_certificate

    res = prove(str(path), bound=bound, inputs=inputs)
    assert res.verdict == "proved", res.render_text()
    cert = file_certificate(res, path.read_bytes(), bound, inputs)
    return json.loads(json.dumps(cert))


def check(cert: dict, path: Path, tmp_path: Path, capsys, extra=()):
    """Run ``tamp check-proof`` on ``cert`` (written to a file); return (exit code, output)."""
    from tamp.cli import main

    out = tmp_path / "cert.json"
    out.write_text(json.dumps(cert))
    capsys.readouterr()
    code = main(["check-proof", str(out), str(path), *extra])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def tampered(cert: dict) -> dict:
    return copy.deepcopy(cert)


def aut(cert: dict, i: int = 0) -> dict:
    return cert["programs"][i]["automata"][0]


def ast(text: str):
    """The JSON AST of an expression in source syntax."""
    from lang.parser import parse_expr

    return to_json(parse_expr(text))


def node(cert: dict, nid: int) -> dict:
    return next(n for n in aut(cert)["nodes"] if n["id"] == nid)


def exit_nodes(cert: dict):
    a = aut(cert)
    exit_cfa = cert["programs"][0]["cfa"]["exit"]
    return [n for n in a["nodes"] if n["cfa_node"] == exit_cfa]


def sampling_edges(cert: dict):
    return [e for e in aut(cert)["edges"] if e["stmt"]["node"] == "Sample"]


os.environ.setdefault("TAMP_DEBUG", "1")
