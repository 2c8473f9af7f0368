"""Distribution axiom families: tail bounds the prover uses in place of sampling statements.

Each module of this package defines ``FAMILIES``; :func:`families_for` returns
every family that applies to a distribution. See :mod:`axioms.base`.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import List

from .base import AxiomFamily, AxiomInstance  # noqa: F401


@lru_cache(maxsize=1)
def all_families() -> tuple:
    """Every family defined by a module of this package, in module-name order."""
    fams: list = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in ("base",) or info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        fams.extend(getattr(mod, "FAMILIES", ()))
    return tuple(fams)


def families_for(dist) -> List[AxiomFamily]:
    """The families with axioms for the distribution call ``dist`` (a ``lang.ast.Call``)."""
    return [f for f in all_families() if f.applies(dist)]
