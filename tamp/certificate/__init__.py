"""Proof certificates: a "proved" failure bound written down (:mod:`.writer`) and re-checked
from scratch by an independent checker (:mod:`.checker`) — ``tamp check-proof``.

>>> import tamp
>>> tamp.certify_and_check('''program coin(p: real) requires 0 < p && p <= 1 ensures !y fails p
...                      { y ~ bern(p); }''').summary().startswith("OK:")
True
"""

from __future__ import annotations

from .checker import check_certificate
from .format import CertificateError, CheckReport, MalformedCertificate
from .reader import decode, load
from .writer import file_certificate, write_certificate

__all__ = [
    "check_certificate",
    "CheckReport",
    "MalformedCertificate",
    "decode",
    "load",
    "CertificateError",
    "file_certificate",
    "write_certificate",
]
