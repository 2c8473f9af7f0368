"""The state of a group of runs: one per-run value per variable (see :mod:`.values`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from .values import ArrayVal, blank_like, concat, same_kind, take


@dataclass
class State:
    """``n`` runs. ``vars`` maps a local to its per-run value; ``undefined`` maps a scalar or
    pair local to the mask of runs where it has no value yet (absent: defined everywhere).
    Arrays need no mask: a missing array is an array with no written element.

    Per run also: ``run_id`` (its number, which keys its random draws), ``draws`` (how many
    uniforms it has drawn) and ``unsure`` (some comparison on its path was not decided by the
    number domain: its path and values from there on are a guess, and it must be re-run)."""

    n: int
    run_id: np.ndarray
    draws: np.ndarray
    unsure: np.ndarray
    vars: Dict[str, object] = field(default_factory=dict)
    undefined: Dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def start(cls, n: int, run_id: Optional[np.ndarray] = None) -> "State":
        """``n`` fresh runs (numbered 0..n-1 unless ``run_id`` is given) with nothing drawn yet."""
        return cls(
            n,
            np.arange(n, dtype=np.int64) if run_id is None else run_id,
            np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=bool),
        )

    def take(self, rows: np.ndarray) -> "State":
        """The sub-state of the runs ``rows`` (a copy)."""
        return State(
            len(rows),
            self.run_id[rows],
            self.draws[rows],
            self.unsure[rows],
            {k: take(v, rows) for k, v in self.vars.items()},
            {k: m[rows] for k, m in self.undefined.items()},
        )

    def set(self, name: str, value) -> None:
        """Give ``name`` a value on every run of this state."""
        self.vars[name] = value
        self.undefined.pop(name, None)


def merge_states(parts: List[State]) -> State:
    """The union of disjoint groups of runs; a variable missing from a group is undefined there."""
    parts = [p for p in parts if p.n > 0] or parts[:1]
    if len(parts) == 1:
        return parts[0]
    names: Dict[str, object] = {}
    for p in parts:
        for k, v in p.vars.items():
            names.setdefault(k, v)
    out = State(
        sum(p.n for p in parts),
        run_id=np.concatenate([p.run_id for p in parts]),
        draws=np.concatenate([p.draws for p in parts]),
        unsure=np.concatenate([p.unsure for p in parts]),
    )
    for name, example in names.items():
        values, masks, partial = [], [], False
        for p in parts:
            v = p.vars.get(name)
            if v is None or not same_kind(v, example):
                # absent here (or an incompatible shape, which the type checker excludes)
                values.append(blank_like(example, p.n))
                masks.append(np.ones(p.n, dtype=bool))
                partial = True
            else:
                values.append(v)
                m = p.undefined.get(name)
                masks.append(m if m is not None else np.zeros(p.n, dtype=bool))
                partial = partial or m is not None
        out.vars[name] = concat(values)
        if partial and not isinstance(example, ArrayVal):
            out.undefined[name] = np.concatenate(masks)
    return out
