"""What the certificate writer, reader and checker share: the file format's name and version,
the source digest, and the errors and outcomes of writing, reading and checking a certificate
(for failure bounds and probability results alike).
"""

from __future__ import annotations

import hashlib
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from typing import Any, Iterable, Iterator, List

import z3

from tamp.results import OK, REJECTED, exit_code_of

FORMAT = "tamp-certificate"
VERSION = 1


def source_digest(data: bytes) -> str:
    """The SHA-256 (hex) of a source file's bytes, which a certificate is bound to."""
    return hashlib.sha256(data).hexdigest()


class CertificateError(ValueError):
    """A proof result that cannot be written as a certificate."""


class MalformedCertificate(ValueError):
    """Not a (well-formed) tamp certificate."""


def known_keys(d: Any, allowed: Iterable[str], where: str) -> None:
    """An object with a key the format does not have is malformed (a typo, or a tampered file)."""
    if not isinstance(d, dict):
        raise MalformedCertificate(f"{where}: expected an object")
    extra = sorted(k for k in d if k not in allowed)
    if extra:
        raise MalformedCertificate(f"{where}.{extra[0]}: unknown field (expected only {', '.join(sorted(allowed))})")


class Rejected(Exception):
    """The certificate does not prove the claim; the message says where."""


@contextmanager
def judging(out: "ProgramCheck", t0: float) -> Iterator[None]:
    """One program's check, run in the ``with`` block: a :class:`Rejected` (or a formula z3 cannot
    build, which the block's own checks did not anticipate) becomes ``out.reason``; the seconds
    since ``t0`` are recorded either way. The block sets ``out.ok`` when every step passed."""
    try:
        yield
    except Rejected as exc:
        out.reason = str(exc)
    except z3.Z3Exception as exc:
        out.reason = f"a formula of the certificate cannot be built: {exc}"
    finally:
        out.seconds = time.monotonic() - t0


@dataclass
class ProgramCheck:
    name: str
    ok: bool
    obligations: int = 0
    reason: str = ""
    seconds: float = 0.0
    log: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``ok`` (the proof re-checked) or ``rejected``: the words of the one vocabulary."""
        return OK if self.ok else REJECTED


@dataclass
class CheckReport:
    ok: bool
    programs: List[ProgramCheck]
    seconds: float
    reason: str = ""

    @property
    def obligations(self) -> int:
        return sum(p.obligations for p in self.programs)

    def __repr__(self) -> str:  # one line (a notebook's Out[])
        return f"<CheckReport {self.summary()}>"

    @property
    def verdict(self) -> str:
        return OK if self.ok else REJECTED

    @property
    def exit_code(self) -> int:
        """The exit status ``tamp check-proof`` returns (0 ok, 3 rejected)."""
        return exit_code_of(self.verdict)

    def _repr_html_(self) -> str:  # notebooks: the outcome, then one row per program
        rows = "".join(
            f"<tr><td><b>{escape(p.name)}</b></td><td>{p.verdict}</td>"
            f"<td>{p.obligations}</td><td>{p.seconds:.2f} s</td><td>{escape(p.reason)}</td></tr>"
            for p in self.programs
        )
        return (
            f"<div><b>{escape(self.summary())}</b></div>"
            '<table style="text-align:left"><tr><th>program</th><th>check</th><th>obligations</th>'
            f"<th>time</th><th>reason</th></tr>{rows}</table>"
        )

    def summary(self) -> str:
        if self.ok:
            return f"{OK}: {self.obligations} obligations re-checked in {self.seconds:.2f} s"
        return f"{REJECTED}: {self.reason}"
