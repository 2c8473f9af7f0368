"""The simulator's error: a located :class:`lang.errors.TampError` (the CLI exits 2)."""

from __future__ import annotations

from lang.errors import TampError


class SimulationError(TampError):
    """A run-time error while sampling: division by zero, log of a non-positive number,
    a read of an unwritten array element, a bad distribution parameter, a missing input …"""
