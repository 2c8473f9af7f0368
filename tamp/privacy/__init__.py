"""Differential privacy: ``neighbours R`` / ``private E on x…`` claims proved by randomness
alignment on the product of two runs (see :mod:`tamp.privacy.product` for the idea and why it is
sound, :mod:`tamp.privacy.engine` for the search)."""

from .engine import prove_privacy
from .result import PrivacyResult

__all__ = ["prove_privacy", "PrivacyResult"]
