"""A recursion guard for the recursive passes over the AST.

The parser refuses programs nested deeper than :data:`MAX_DEPTH` levels, and
every recursive pass of :mod:`lang` runs inside :func:`deep_recursion`, which
makes sure Python's recursion limit leaves room for that depth.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from . import ast as A

MAX_DEPTH = 1000  # AST levels accepted by the parser
_FRAMES_PER_LEVEL = 6  # generous: the deepest pass uses about 4 Python frames per AST level
_NEEDED = MAX_DEPTH * _FRAMES_PER_LEVEL + 1000


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Raise the recursion limit (never lower it) for the duration of a pass."""
    old = sys.getrecursionlimit()
    if old < _NEEDED:
        sys.setrecursionlimit(_NEEDED)
    try:
        yield
    finally:
        if old < _NEEDED:
            sys.setrecursionlimit(old)


def nesting_overflow(root: Any, limit: int = MAX_DEPTH) -> Optional[Any]:
    """The first node (pre-order) nested more than ``limit`` levels below ``root``, or None.

    A binary operator's left operand is at the operator's own level: left-deep chains such as
    ``a + b + c + …`` (what the parser builds for operators written without parentheses) are
    walked iteratively by every pass, so only their right operands nest. Walks iteratively.
    """
    binary = A.Binary
    leaves = (A.Var, A.Num, A.BoolLit, A.Skip)
    children = A.children
    stack: list[tuple[Any, int]] = [(root, 0)] if isinstance(root, A.Node) else [(x, 0) for x in root]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        kind = type(node)
        if kind is binary:
            stack.append((node.right, depth + 1))
            stack.append((node.left, depth))
        elif kind in leaves:
            continue
        else:
            for c in children(node):
                stack.append((c, depth + 1))
    return None
