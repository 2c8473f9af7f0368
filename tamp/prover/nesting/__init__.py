"""Loops whose per-iteration failure bound comes from any engine (issue 33); see :mod:`.prove`."""
