""" "Did you mean …?" for a misspelt name (a command, an option, a program, an input).

>>> did_you_mean("prov", ["check", "prove", "prob"])
" (did you mean 'prove'?)"
>>> did_you_mean("zzz", ["check", "prove"])
''
"""

from __future__ import annotations

import difflib
from typing import Iterable


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice most like ``word`` (difflib's ratio at least ``cutoff``), or None."""
    found = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean 'X'?)`` to append to an error message, or ``''`` when nothing is close."""
    best = closest(word, choices, cutoff)
    return f" (did you mean '{best}'?)" if best is not None and best != word else ""
