"""Module-level (so picklable by reference) tasks for the executor tests."""

import time
from fractions import Fraction


def slow_square(x, pause=0.3):
    time.sleep(pause)
    return Fraction(x, 7) ** 2


def fail(x):
    raise ValueError(f"task {x} fails")
