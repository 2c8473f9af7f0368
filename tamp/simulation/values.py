"""Per-run values of the vectorised interpreter.

A program variable holds one value per run:

* a scalar (bool / int / real) is a numpy array of shape ``(n,)``;
* a pair is a Python tuple of values;
* an array is an :class:`ArrayVal`: ``data`` of shape ``(n, capacity)`` and a ``written``
  mask of the same shape (reading an element that was never written is an error).

Expression results may also be 0-d constants (literals, inputs) that broadcast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np


@dataclass
class ArrayVal:
    """A per-run array: row ``r`` is run ``r``'s array; unwritten elements are False in ``written``."""

    data: np.ndarray
    written: np.ndarray

    @property
    def capacity(self) -> int:
        return self.data.shape[1]

    def grown(self, length: int) -> "ArrayVal":
        """This array with room for at least ``length`` elements (capacity doubles)."""
        if length <= self.capacity:
            return self
        cap = max(length, 2 * self.capacity, 4)
        n = self.data.shape[0]
        data = np.zeros((n, cap), dtype=self.data.dtype)
        written = np.zeros((n, cap), dtype=bool)
        data[:, : self.capacity] = self.data
        written[:, : self.capacity] = self.written
        return ArrayVal(data, written)


def full(v, n: int) -> np.ndarray:
    """A fresh ``(n,)`` array from a 0-d constant or an ``(n,)`` array."""
    a = np.asarray(v)
    if a.shape == (n,):
        return a.copy()
    return np.array(np.broadcast_to(a, (n,)))


def take(v, rows: np.ndarray):
    """The rows ``rows`` of a per-run value (0-d constants are left as they are)."""
    if isinstance(v, tuple):
        return tuple(take(x, rows) for x in v)
    if isinstance(v, ArrayVal):
        return ArrayVal(v.data[rows], v.written[rows])
    a = np.asarray(v)
    if a.ndim == 0:
        return a
    return a[rows]


def blank_like(v, n: int):
    """A placeholder of ``v``'s shape for ``n`` runs where the variable has no value."""
    if isinstance(v, tuple):
        return tuple(blank_like(x, n) for x in v)
    if isinstance(v, ArrayVal):
        return ArrayVal(np.zeros((n, 0), dtype=v.data.dtype), np.zeros((n, 0), dtype=bool))
    return np.zeros(n, dtype=np.asarray(v).dtype)


def concat(parts: List[object]):
    """Stack per-run values of several groups of runs (same kind) into one."""
    first = parts[0]
    if isinstance(first, tuple):
        pairs = [p for p in parts if isinstance(p, tuple)]
        if len(pairs) != len(parts):
            raise TypeError("concat: a tuple value stacked with a value of another kind")
        return tuple(concat([p[i] for p in pairs]) for i in range(len(first)))
    if isinstance(first, ArrayVal):
        arrays = [p for p in parts if isinstance(p, ArrayVal)]
        if len(arrays) != len(parts):
            raise TypeError("concat: an array value stacked with a value of another kind")
        cap = max(p.capacity for p in arrays)
        dtype = np.result_type(*[p.data.dtype for p in arrays])
        data, written = [], []
        for p in arrays:
            n = p.data.shape[0]
            d = np.zeros((n, cap), dtype=dtype)
            w = np.zeros((n, cap), dtype=bool)
            d[:, : p.capacity] = p.data
            w[:, : p.capacity] = p.written
            data.append(d)
            written.append(w)
        return ArrayVal(np.concatenate(data), np.concatenate(written))
    return np.concatenate([np.asarray(p) for p in parts])


def same_kind(a, b) -> bool:
    """Whether two per-run values can be stacked (both scalars, both arrays, equal-size pairs)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(same_kind(x, y) for x, y in zip(a, b))
        )
    return isinstance(a, ArrayVal) == isinstance(b, ArrayVal)


def select(mask: np.ndarray, when_true, when_false, n: int):
    """Per run: ``when_true`` where ``mask`` holds, else ``when_false`` (each valued on its own rows).

    ``when_true`` is valued on the rows ``mask`` selects (or is a constant), likewise
    ``when_false`` on the others.
    """
    if isinstance(when_true, tuple):
        return tuple(select(mask, a, b, n) for a, b in zip(when_true, when_false))
    t, f = np.asarray(when_true), np.asarray(when_false)
    out = np.empty(n, dtype=np.result_type(t.dtype, f.dtype))
    out[mask] = t
    out[~mask] = f
    return out
