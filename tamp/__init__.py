"""tamp: a verifier for probabilistic programs.

``tamp.prove(source_or_path, bound="p*n")`` proves, for every input, that each
program violates its postcondition with probability at most the bound — or
says why it could not. The other commands are functions too: ``tamp.check`` (parse and
type-check), ``tamp.simulate`` (run at fixed inputs), ``tamp.prob`` (probability
specifications), ``tamp.certify`` and ``tamp.check_proof`` (write and re-check a proof),
``tamp.import_model("net.onnx")`` (a trained model as a program), ``tamp.robust``,
``tamp.equiv`` and ``tamp.fit_prior``. See :mod:`tamp.api`.
"""

from .results import PROVED, UNKNOWN, VIOLATED, FileResult, ProgramResult  # noqa: F401
from .version import __version__  # noqa: F401

_API = (
    "prove",
    "prove_program",
    "check",
    "simulate",
    "prob",
    "certify",
    "check_proof",
    "certify_and_check",
    "import_model",
    "robust",
    "equiv",
    "fit_prior",
)

__all__ = [*_API, "FileResult", "ProgramResult", "PROVED", "UNKNOWN", "VIOLATED", "__version__"]


def __dir__():
    """The public API with the module's own names, so ``dir(tamp)`` and tab completion list
    ``tamp.prove`` and its siblings before their first use (they load lazily)."""
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str):
    """``tamp.prove`` and its siblings, from :mod:`tamp.api` on first use."""
    if name in _API:
        from . import api  # deferred on purpose: `import tamp` (every command) must not load the engines

        return getattr(api, name)
    raise AttributeError(f"module 'tamp' has no attribute {name!r}")
