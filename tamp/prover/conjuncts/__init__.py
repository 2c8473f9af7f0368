"""Postconditions split into conjuncts that hold on every run and the rest; see :mod:`.prove`."""
