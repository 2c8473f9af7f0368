"""COVER across traces: the listed traces of a term form a decision tree, and what it misses.

Each replayed trace is a sequence of decisions (:class:`.replay.Decision`): discrete outcomes
and followed branches. The replay is deterministic, so traces that agree on their first k
decisions reach the same (k+1)-th decision point: the traces form a tree whose inner nodes are
decision points and whose leaves are the traces (no trace is a proper prefix of another — it
would have ended where the other one decides). The events of distinct leaves are disjoint.

What the tree leaves out is bounded from above, node by node:

* at an **outcome** node reached with discrete weight ``w`` (the product of the outcome
  probabilities before it — the node's event has probability at most ``w``), the outcomes not
  listed have probability at most ``w · (1 − Σ listed outcome probabilities)``;
* at a **branch** node, a side that is not listed must be impossible: support ∧ guard ∧ that
  side is unsatisfiable (a z3 query; ``unknown``/timeout reject), so it costs nothing.

The sum over all nodes is an upper bound of the probability of the runs that no listed trace
describes (with no branches it is exactly 1 − Σ trace weights). No listed trace at all leaves 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

import z3

from .replay import Decision, Trace


class CoverError(ValueError):
    """The traces do not form a decision tree (the message says where)."""


@dataclass
class _Node:
    kind: str
    place: str
    weight: Fraction  # upper bound of the probability of reaching the node
    probs: Dict[int, Fraction] = field(default_factory=dict)  # listed outcome -> probability (lower)
    decision: Optional[Decision] = None  # one branch decision here (its guard and condition)
    support: List = field(default_factory=list)


@dataclass
class MissingBranch:
    """A branch side no listed trace takes: ``parts`` must be unsatisfiable."""

    place: str
    parts: List


def decision_tree(traces: List[Trace]) -> Tuple[Fraction, List[MissingBranch]]:
    """(an upper bound of the mass the traces miss, besides the branch sides in the list —
    each of which must be shown impossible)."""
    if not traces:
        return Fraction(1), []
    nodes: Dict[tuple, _Node] = {}
    leaves = set()
    for tr in traces:
        prefix: tuple = ()
        w = Fraction(1)
        for d in tr.decisions:
            if prefix in leaves:
                raise CoverError("a trace continues past the end of another one")
            node = nodes.get(prefix)
            if node is None:
                node = nodes[prefix] = _Node(d.kind, d.place, w, decision=d, support=tr.support())
            elif node.kind != d.kind or node.place != d.place:
                raise CoverError(f"two traces decide differently placed decisions after {list(prefix)}")
            if d.kind == "outcome":
                if d.prob is None:
                    raise CoverError(f"an outcome decision at {d.place} has no probability")
                node.probs[d.value] = d.prob.lo
                w = w * d.prob.hi
            else:
                node.probs[d.value] = Fraction(0)
            prefix = prefix + ((d.kind, d.value),)
        if prefix in nodes or prefix in leaves:
            raise CoverError(f"trace {list(prefix)} is listed twice or ends inside another trace")
        leaves.add(prefix)
    missing = Fraction(0)
    branches: List[MissingBranch] = []
    for node in nodes.values():
        if node.kind == "outcome":
            missing += node.weight * max(Fraction(0), 1 - sum(node.probs.values(), Fraction(0)))
            continue
        branch = node.decision
        if branch is None:  # every node is made with the decision that reached it
            raise CoverError(f"a branch node at {node.place} has no decision")
        for side in (0, 1):
            if side not in node.probs:
                cond = branch.cond if side == 1 else z3.Not(branch.cond)
                branches.append(MissingBranch(branch.place, list(node.support) + list(branch.guard) + [cond]))
    return missing, branches
