"""A recursion guard for the recursive passes over the AST.

The parser refuses programs nested deeper than :data:`MAX_DEPTH` levels, and
every recursive pass of :mod:`lang` runs inside :func:`deep_recursion`, which
makes sure Python's recursion limit leaves room for that depth.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

MAX_DEPTH = 1000  # AST levels accepted by the parser
_FRAMES_PER_LEVEL = 6  # generous: the deepest pass uses about 4 Python frames per AST level
_NEEDED = MAX_DEPTH * _FRAMES_PER_LEVEL + 1000


@contextmanager
def deep_recursion():
    """Raise the recursion limit (never lower it) for the duration of a pass."""
    old = sys.getrecursionlimit()
    if old < _NEEDED:
        sys.setrecursionlimit(_NEEDED)
    try:
        yield
    finally:
        if old < _NEEDED:
            sys.setrecursionlimit(old)
