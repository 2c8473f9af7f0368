"""Pausing Python's cyclic garbage collector while the front end builds a large AST.

Parsing and checking allocate many small objects and free almost none; each allocation burst
triggers a collection that scans every object still alive, which made the front end quadratic
in the size of the file (200,000 lines took minutes). The AST has no reference cycles, so
nothing is lost by collecting once afterwards instead.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block (nested uses are fine); restore it after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
