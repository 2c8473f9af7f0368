"""A trained classifier as the robustness engine sees it: exact evaluation at a point, and the
exact condition "the class is c" as margins over the model's scores.

The model is an imported :class:`tamp.models.ir.Network` (straight-line exact assignments):
a *network* (affine forms and ReLUs: MLPs, linear models) or a *forest* (decision trees whose
leaf values are added into the scores). ``class == c`` holds exactly when every margin of
:meth:`Classifier.margins` is > 0 (strict) or >= 0 (not strict): for an argmax, ``s_c - s_j``
for every other class j, strict when j comes first (ties go to the first class, as numpy's
argmax); for a threshold, ``score > 0`` for class 1 and ``-score >= 0`` for class 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Dict, List, Mapping, Tuple

from tamp.models.errors import ModelError
from tamp.models.ir import ARGMAX, THRESHOLD, Affine, Leaf, Network, Relu, Split, TreeExpr, combine

NET, FOREST = "network", "forest"

Margin = Tuple[Affine, bool]  # (form over program variables, strict?)


def tree_value(t: TreeExpr, env: Mapping[str, Fraction]) -> Fraction:
    while isinstance(t, Split):
        t = t.yes if compare(env[t.feature], t.op, t.threshold) else t.no
    return t.value


def compare(x: Fraction, op: str, t: Fraction) -> bool:
    if op == "<=":
        return x <= t
    if op == "<":
        return x < t
    if op == ">=":
        return x >= t
    if op == ">":
        return x > t
    if op == "==":
        return x == t
    return x != t


def affine_value(a: Affine, env: Mapping[str, Fraction]) -> Fraction:
    return sum((c * env[v] for v, c in a.terms), a.const)


@dataclass
class Classifier:
    network: Network
    kind: str
    path: str = "<model>"

    @property
    def features(self) -> List[str]:
        return list(self.network.features)

    @property
    def n_classes(self) -> int:
        return 2 if self.network.rule == THRESHOLD else len(self.network.scores)

    def label(self, c: int) -> object:
        labels = self.network.labels
        if labels is None:
            return c
        v = labels[c]
        return int(v) if isinstance(v, (int, float)) and float(v).is_integer() else v

    def scores(self, point: Mapping[str, Fraction]) -> List[Fraction]:
        env: Dict[str, Fraction] = dict(point)
        for a in self.network.body:
            e = a.expr
            if isinstance(e, Affine):
                env[a.name] = affine_value(e, env)
            elif isinstance(e, Relu):
                env[a.name] = max(Fraction(0), affine_value(e.arg, env))
            else:
                env[a.name] = tree_value(e, env)
        return [affine_value(s, env) for s in self.network.scores]

    def classify(self, point: Mapping[str, Fraction]) -> int:
        """The class index at a point, in exact rational arithmetic."""
        return class_of(self.scores(point), self.network.rule)

    def margins(self, c: int) -> List[Margin]:
        s = self.network.scores
        if self.network.rule == THRESHOLD:
            return [(s[0], True)] if c == 1 else [(s[0].scale(Fraction(-1)), False)]
        return [(combine([(Fraction(1), s[c]), (Fraction(-1), s[j])]), j < c) for j in range(len(s)) if j != c]


def class_of(scores: List[Fraction], rule: str) -> int:
    if rule == THRESHOLD:
        return 1 if scores[0] > 0 else 0
    best = 0
    for j in range(1, len(scores)):
        if scores[j] > scores[best]:
            best = j
    return best


def classifier(net: Network, path: str) -> Classifier:
    """Check that the model is a classifier tamp can analyse (a ReLU network or a forest)."""
    if net.rule not in (ARGMAX, THRESHOLD):
        raise ModelError("the model is a regressor: robustness and equivalence need a classifier", path)
    if net.rule == ARGMAX and len(net.scores) < 2:
        raise ModelError("the model has a single class", path)
    trees = any(isinstance(a.expr, (Split, Leaf)) for a in net.body)
    relus = any(isinstance(a.expr, Relu) for a in net.body)
    if trees and relus:
        raise ModelError("a model mixing decision trees and ReLU layers is not supported", path)
    return Classifier(net, FOREST if trees else NET, path)
