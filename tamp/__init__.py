"""tamp: a verifier for probabilistic programs.

``tamp.prove(source_or_path, bound="p*n")`` proves, for every input, that each
program violates its postcondition with probability at most the bound — or
says why it could not. ``tamp.import_model("net.onnx")`` turns a trained model into a
program. See :mod:`tamp.api`.
"""

from .api import import_model, prove, prove_program  # noqa: F401
from .results import PROVED, UNKNOWN, VIOLATED, FileResult, ProgramResult  # noqa: F401

__version__ = "0.1.0"
__all__ = ["prove", "prove_program", "import_model", "FileResult", "ProgramResult", "PROVED", "UNKNOWN", "VIOLATED"]
