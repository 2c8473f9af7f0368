"""Proof certificates: a "proved" failure bound written down (:mod:`.writer`) and re-checked
from scratch by an independent checker (:mod:`.checker`) — ``tamp check-proof``.

The package exports the checking side only: importing it (or any checking module,
:mod:`.check_file` and what it imports) imports no module of ``tamp.prover``. The writers
(:mod:`.writer`, :mod:`.exp_writer`, :mod:`.conc_writer`, :mod:`.prob_writer`) take the
prover's results and are imported by their own names, by ``tamp prove --certificate``.

>>> import tamp
>>> tamp.certify_and_check('''program coin(p: real) requires 0 < p && p <= 1 ensures !y fails p
...                      { y ~ bern(p); }''').summary().startswith("ok:")
True
"""

from __future__ import annotations

from .checker import check_certificate
from .format import CertificateError, CheckReport, MalformedCertificate
from .reader import decode, load

__all__ = [
    "check_certificate",
    "CheckReport",
    "MalformedCertificate",
    "decode",
    "load",
    "CertificateError",
]
