"""Errors of the model importers: one located message, exit status 2 at the command line."""

from __future__ import annotations

from lang.errors import TampError


class ModelError(TampError):
    """The model file (or its spec) cannot be imported exactly; the message names the operator,
    layer or feature."""
