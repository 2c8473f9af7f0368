"""tamp: a verifier for probabilistic programs.

``tamp.prove(source_or_path, bound="p*n")`` proves, for every input, that each
program violates its postcondition with probability at most the bound — or
says why it could not. See :mod:`tamp.api`.
"""

from . import report as _report  # noqa: F401  (registers the notebook views of results)
from .api import certify_and_check, prove, prove_program  # noqa: F401
from .results import PROVED, UNKNOWN, VIOLATED, FileResult, ProgramResult  # noqa: F401
from .version import __version__  # noqa: F401

__all__ = ["prove", "prove_program", "certify_and_check", "FileResult", "ProgramResult", "PROVED", "UNKNOWN",
           "VIOLATED", "__version__"]
