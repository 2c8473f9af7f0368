"""Errors of the model importers: one located message, exit status 2 at the command line; and
warnings about a model that is imported as what it computes, which is not what it seems to be
(a one-unit softmax is the constant 1): a located line on stderr, the import goes on."""

from __future__ import annotations

import warnings

from lang.errors import TampError


class ModelError(TampError):
    """The model file (or its spec) cannot be imported exactly; the message names the operator,
    layer or feature."""


class ModelWarning(UserWarning):
    """``PATH: warning: MESSAGE`` (the text is complete: the command line prints it as it is)."""

    located = True  # tamp.cli prints warnings of a category with this mark as their text only

    def __init__(self, message: str, path: str):
        super().__init__(f"{path}: warning: {message}")
        self.message = message
        self.path = path


#: The words of the warning (and program note) that a one-unit softmax gives: the model is a
#: constant (so the general "does not depend on its input" warning is not repeated).
CONSTANT_NOTE = "is the constant 1 whatever its"


def warn(message: str, path: str) -> None:
    """Issue a :class:`ModelWarning` (shown once per message, as Python's warnings are)."""
    warnings.warn(ModelWarning(message, path), stacklevel=3)
