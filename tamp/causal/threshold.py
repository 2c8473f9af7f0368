"""Threshold outputs: an output that is one of two constants according to the sign of an affine
combination of the program's values — ``out := score > 0 ? 1 : 0``, ``hire := x > 5``.

For such outputs the self-composition's bias condition is a Boolean function of the two
decision predicates p_a = [g_a ⋈ 0] and p_b = [g_b ⋈ 0] of the two copies: the pairs of truth
values (p_a, p_b) for which the outputs differ (:func:`bias_cases`). That is what the relational
check (:mod:`tamp.causal.relational`) and the exact masses (:mod:`tamp.causal.exactmass`) use.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import List, Optional, Tuple

from tamp.core.linear import affine_add, affine_scale

from .dag import Dag
from .linear import Form, LinearModel, comparison_form


@dataclass(frozen=True)
class Threshold:
    """``out = if_true`` when g > 0 (``strict``) or g >= 0 (not strict), else ``if_false``."""

    cmp_node: int
    g: Form
    strict: bool
    if_true: object
    if_false: object


def threshold_of(model: LinearModel, root: int) -> Optional[Threshold]:
    """The threshold structure of the output node ``root``, or None."""
    dag: Dag = model.dag
    n = dag.nodes[root]
    if n.kind == "ite":
        c, a, b = n.args
        na, nb = dag.nodes[a], dag.nodes[b]
        if na.kind != "const" or nb.kind != "const" or na.payload == nb.payload:
            return None
        cmp_node, t, f = c, na.payload, nb.payload
    elif n.sort == "bool":
        cmp_node, t, f = root, True, False
    else:
        return None
    k = dag.nodes[cmp_node].kind
    d = comparison_form(model, cmp_node)  # lhs - rhs
    if d is None or k in ("==", "!="):
        return None
    if k in (">", ">="):
        return Threshold(cmp_node, d, k == ">", t, f)
    return Threshold(cmp_node, affine_scale(d, Fraction(-1)), k == "<", t, f)


def bias_cases(a: Threshold, b: Threshold) -> List[Tuple[bool, bool]]:
    """The truth values (p_a, p_b) of the two decision predicates for which the outputs differ."""
    val = lambda t, p: t.if_true if p else t.if_false  # noqa: E731
    return [(x, y) for x in (True, False) for y in (True, False) if val(a, x) != val(b, y)]


def difference(a: Threshold, b: Threshold) -> Form:
    """g_a - g_b."""
    return affine_add(a.g, b.g, Fraction(-1))
