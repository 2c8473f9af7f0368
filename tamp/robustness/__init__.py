"""Probabilistic robustness and equivalence of trained classifiers under a data prior.

``robust(model, at=points.csv, eps=0.05, prior=prior.json)`` certifies, for every point, an
interval of Pr[the class stays the one at the point] for inputs drawn from the prior restricted
to the eps-box; ``equiv(a, b, prior=...)`` an interval of Pr[A and B disagree]. See
:mod:`.engine` (the method), :mod:`.agree` (branch and bound), :mod:`.netbounds` (ReLU networks),
:mod:`.forest` (trees) and docs/models.md.
"""

from .engine import equiv, robust
from .result import EquivResult, PointResult, RobustResult

__all__ = ["robust", "equiv", "RobustResult", "EquivResult", "PointResult"]
