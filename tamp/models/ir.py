"""The imported model as data: exact affine forms, assignments and the class rule.

Every number is a :class:`fractions.Fraction` holding the *exact* value of the model's binary
float (a float32 weight is the rational it denotes, never a rounded decimal), so the program
tamp analyses computes exactly what the model's weights define, in exact arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Set, Tuple, Union


@dataclass(frozen=True)
class Affine:
    """``Σ coef·var + const`` over program variables (features or earlier assignments)."""

    terms: Tuple[Tuple[str, Fraction], ...] = ()
    const: Fraction = Fraction(0)

    @staticmethod
    def var(name: str) -> "Affine":
        return Affine(((name, Fraction(1)),), Fraction(0))

    @staticmethod
    def constant(c: Fraction) -> "Affine":
        return Affine((), Fraction(c))

    def scale(self, k: Fraction) -> "Affine":
        if k == 0:
            return Affine()
        return Affine(tuple((v, c * k) for v, c in self.terms), self.const * k)

    def plus(self, other: "Affine") -> "Affine":
        return combine([(Fraction(1), self), (Fraction(1), other)])

    def single_var(self) -> Optional[str]:
        """The variable when the form is exactly one variable with coefficient 1."""
        if self.const == 0 and len(self.terms) == 1 and self.terms[0][1] == 1:
            return self.terms[0][0]
        return None


def combine(parts: List[Tuple[Fraction, Affine]]) -> Affine:
    """``Σ k·form`` with like terms collected (order of first appearance) and zeros dropped."""
    acc: Dict[str, Fraction] = {}
    const = Fraction(0)
    for k, form in parts:
        if k == 0:
            continue
        for v, c in form.terms:
            acc[v] = acc.get(v, Fraction(0)) + k * c
        const += k * form.const
    return Affine(tuple((v, c) for v, c in acc.items() if c != 0), const)


def fresh(base: str, taken: Set[str]) -> str:
    """``base``, or ``base_``, ``base__``, ... : the first not in ``taken`` (then added to it). The
    readers name their intermediate values with it, so that they never take a feature's name
    (``--features h1_1`` must stay the input, not become a hidden unit)."""
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name


@dataclass(frozen=True)
class Relu:
    """``max(0, arg)``."""

    arg: Affine


@dataclass(frozen=True)
class Leaf:
    value: Fraction


@dataclass(frozen=True)
class Split:
    """``feature OP threshold ? yes : no`` (a decision-tree node; OP one of <= < >= > == !=)."""

    feature: str
    op: str
    threshold: Fraction
    yes: "TreeExpr"
    no: "TreeExpr"


TreeExpr = Union[Leaf, Split]
Expr = Union[Affine, Relu, Split, Leaf]


@dataclass
class Assign:
    name: str
    expr: Expr
    comment: str = ""


# How the model's output becomes the program's result:
ARGMAX = "argmax"  # class = index of the largest score (the first one on a tie, as numpy)
THRESHOLD = "threshold"  # one score: class 1 when score > 0, else class 0
VALUE = "value"  # a regressor: the output is the score itself


@dataclass
class Network:
    """A feed-forward model over named features, as straight-line exact assignments."""

    features: List[str]  # input names in positional order
    body: List[Assign] = field(default_factory=list)
    scores: List[Affine] = field(default_factory=list)
    rule: str = ARGMAX
    labels: Optional[List[object]] = None  # class labels by index (None: the index itself)
    notes: List[str] = field(default_factory=list)  # comments for the reader (dropped monotone layers, ...)
    source: str = ""  # what was read, e.g. "ONNX (skl2onnx MLPClassifier)"
    ranges: Dict[str, Tuple[Fraction, Fraction]] = field(default_factory=dict)  # boxes known from the model file
    exactness: str = (
        "Every weight, bias and threshold is the exact decimal value of the model's binary float;\n"
        "tamp computes with these exact rationals (no rounding)."
    )
