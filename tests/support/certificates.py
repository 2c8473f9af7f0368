"""Prove a file and check its certificate with ``tamp check-proof``, as a user would: the round
trip the certificate tests share (tamper with the dict in between to see it rejected)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Tuple

from lang import ast as A
from lang.walk import Transformer


def proved_certificate(path: Path) -> Dict[str, Any]:
    """The certificate of ``path``'s proof, as the JSON ``tamp prove --certificate`` writes."""
    from tamp.api import prove as api_prove
    from tamp.certificate.writer import file_certificate

    res = api_prove(str(path))
    assert res.verdict == "proved", res.render_text()
    return json.loads(json.dumps(file_certificate(res, path.read_bytes(), None, None)))


def proved_certificate_fresh(path: Path, tmp_path: Path) -> Dict[str, Any]:
    """:func:`proved_certificate` from ``tamp prove FILE --certificate OUT`` in a child process,
    as a user runs it: the search of the expected-failure engine follows z3's answers, which
    depend on what the same process asked before (a long-lived test worker's history made a
    claim the command line proves in 8 s "unknown"), so a test of what the command proves runs
    it in a process of its own."""
    import subprocess
    import sys

    out = tmp_path / f"{path.stem}.cert.json"
    run = subprocess.run(
        [sys.executable, "-m", "tamp", "prove", str(path), "--certificate", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(out.read_text())


def certify(path: Path, timeout: float = 60):
    """``path`` proved (whatever the verdict), its certificate as JSON data and the file's bytes."""
    from tamp.api import prove as api_prove
    from tamp.certificate.writer import file_certificate

    res = api_prove(str(path), timeout=timeout)
    raw = path.read_bytes()
    return res, json.loads(json.dumps(file_certificate(res, raw))), raw


def check_in_process(cert: Dict[str, Any], path: Path, raw: bytes, bound=None):
    """The checker's report on ``cert`` for the file ``path`` with bytes ``raw`` (and, where
    given, the command line's ``bound``), in this process."""
    from lang.parser import parse
    from tamp.certificate.checker import check_certificate
    from tamp.certificate.reader import decode

    return check_certificate(decode(cert), parse(raw.decode(), str(path)), raw, bound, None)


def check_proof(cert: Dict[str, Any], path: Path, tmp_path: Path, capsys) -> Tuple[int, str]:
    """``tamp check-proof`` on ``cert`` for ``path``: its exit status and output (standard
    output, then standard error)."""
    from tamp.cli import main

    out = tmp_path / "cert.json"
    out.write_text(json.dumps(cert))
    capsys.readouterr()
    code = main(["check-proof", str(out), str(path)])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def rewrite_labels(cert: Dict[str, Any], rewrite, field: str = "lambda") -> int:
    """Apply ``rewrite`` (a :class:`lang.walk.Transformer`) to every node label λ (or, with
    ``field="kappa"``, failure bound κ) of the first program's automata in ``cert``, in place;
    the number of labels it changed."""
    from lang.serialize import from_json, to_json

    changed = 0
    for aut in cert["programs"][0]["automata"]:
        for node in aut["nodes"]:
            old = from_json(node[field])
            new = rewrite.walk(old)
            if new != old:
                changed += 1
                node[field] = to_json(new)
    return changed


def swap_in_cores(cert: Dict[str, Any], old: A.Expr, new: A.Expr) -> bool:
    """Replace ``old`` by ``new`` in every loop core of the certificate's first expectation proof,
    in place; whether any core changed."""
    from lang.serialize import from_json, to_json
    from tamp.show import show_expr

    changed_any = False
    for loop in cert["expectation"][0]["loops"]:
        core = from_json(loop["core"])
        changed = Swap(old, new).walk(core)
        changed_any |= show_expr(changed) != show_expr(core)
        loop["core"] = to_json(changed)
    return changed_any


class Swap(Transformer):
    """Replace one subexpression by another wherever it occurs (to tamper with a certificate's expressions)."""

    def __init__(self, old: A.Expr, new: A.Expr):
        super().__init__()
        self.old, self.new = old, new

    def default(self, node, kids):
        out = super().default(node, kids)
        return self.new if out == self.old else out
