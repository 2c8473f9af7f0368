"""``tamp check-proof`` as a function: a certificate and its source file in, a report out.

This is the checking path's front end: it reads the certificate (:mod:`.reader`), the source
file (its own bytes, which the certificate is bound to, parsed and type-checked by
:mod:`lang`), the claim as given on the command line, and hands them to :mod:`.checker`. It
and everything it imports form the checker's trusted base (docs/trust.md): no module of
``tamp.prover`` is imported on this path, so a fault in how the prover reads a program cannot
be repeated when its proof is re-checked.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Dict, Optional

import axioms
from lang import ast as A
from lang.errors import TampError
from lang.inputs import check_inputs, check_known
from lang.loader import check_bound, load, parse_bound, read_bytes
from lang.speckind import infer_bound

from .checker import check_certificate
from .format import CheckReport, MalformedCertificate
from .reader import decode
from .reader import load as load_certificate


def source_and_bytes(source_or_path, path: Optional[str] = None):
    """``(bytes, SourceFile)`` of a path or source text: the bytes a certificate is bound to, and
    the file parsed and type-checked."""
    if isinstance(source_or_path, A.SourceFile):
        return source_or_path.text.encode("utf-8"), load(source_or_path)
    if isinstance(source_or_path, bytes):
        return source_or_path, load(source_or_path, path)
    probe = load(source_or_path, path, check=False)  # a path or text, decided as every command does
    if probe.text == source_or_path:
        return source_or_path.encode("utf-8"), load(probe)
    raw = read_bytes(probe.path)  # a path: the file's own bytes (a BOM, say)
    return raw, load(raw, probe.path)


def check_proof(
    cert,
    source_or_path,
    bound: Optional[str] = None,
    inputs: Optional[Dict[str, object]] = None,
    infer: bool = False,
    solver_timeout_ms: int = 10000,
    timeout: Optional[float] = None,
    path: Optional[str] = None,
    executor=None,
) -> CheckReport:
    """Re-check ``cert`` (a certificate file's path or its JSON) against ``source_or_path`` (the
    ``.prob`` file or its text) for the claim ``bound``/``inputs``/``infer`` (see
    :func:`tamp.api.check_proof`)."""
    try:
        decoded = load_certificate(str(cert)) if isinstance(cert, (str, os.PathLike)) else decode(cert)
    except MalformedCertificate as exc:
        where = str(cert) if isinstance(cert, (str, os.PathLike)) else "<certificate>"
        raise TampError(f"malformed certificate: {exc}", where) from None
    raw, src = source_and_bytes(source_or_path, path)
    if infer:
        src = dataclasses.replace(src, programs=tuple(infer_bound(p) for p in src.programs))
    progs = list(src.programs)
    if inputs:
        check_known(progs, inputs, src.path)
        inputs = {k: v for p in progs for k, v in check_inputs(p, inputs, src.path, src.text or None).items()}
    b = None
    if bound is not None:
        b = parse_bound(bound)
        for p in progs:
            check_bound(p, b, bound)
    axioms.all_families()  # the axiom library (scipy) loads before the clock starts
    deadline = time.monotonic() + timeout if timeout else None
    return check_certificate(decoded, src, raw, b, inputs or None, max(solver_timeout_ms, 1), deadline, executor)
