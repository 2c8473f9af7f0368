"""Reliability on unreliable hardware: Rely's product bound (see :mod:`.product`)."""
