"""Proof certificates: a "proved" failure bound written down (:mod:`.writer`) and re-checked
from scratch by an independent checker (:mod:`.checker`) — ``tamp check-proof``.

>>> import tamp
>>> from tamp.certificate import certify_and_check
>>> certify_and_check('''program coin(p: real) requires 0 < p && p <= 1 ensures !y fails p
...                      { y ~ bern(p); }''').summary().startswith("OK:")
True
"""

from __future__ import annotations

from typing import Dict, Optional

from .checker import check_certificate
from .format import CertificateError, CheckReport, MalformedCertificate
from .reader import decode, load
from .writer import file_certificate, write_certificate

__all__ = ["check_certificate", "CheckReport", "MalformedCertificate", "decode", "load",
           "CertificateError", "file_certificate", "write_certificate", "certify_and_check"]


def certify_and_check(text: str, bound: Optional[str] = None, inputs: Optional[Dict[str, object]] = None
                      ) -> CheckReport:
    """Prove ``text`` (a whole source file), write its certificate in memory, and re-check it —
    a round trip for tests and notebooks."""
    import json

    from lang.parser import parse, parse_expr
    from tamp.api import prove

    from .reader import decode as _decode

    res = prove(text, bound=bound, inputs=inputs, path="<string>")
    cert = json.loads(json.dumps(file_certificate(res, text.encode("utf-8"), bound, inputs)))
    src = parse(text, "<string>")
    b = parse_expr(bound, "--bound") if bound else None
    return check_certificate(_decode(cert), src, text.encode("utf-8"), b, inputs)
