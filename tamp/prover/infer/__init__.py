"""Inferred bounds: ``fails ?`` and ``?`` margins (:mod:`.search`).

Soundness: every inferred bound is proved again by the portfolio like a bound the user wrote;
inference only chooses what to try.
"""
