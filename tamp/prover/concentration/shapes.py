"""The shapes the concentration rules apply to: the program analysis of :mod:`tamp.cfa.sums`
(below the engines, so that the certificate checker derives the sums from the program with it
too, never from the prover's result), under the names the prover's rooms use."""

from tamp.cfa.sums import (
    Block,
    Det,
    Formula,
    Lin,
    NoiseSum,
    NotApplicable,
    Opaque,
    Shape,
    exit_value,
    recognise,
    sums_in,
)

__all__ = [
    "Block",
    "Det",
    "Formula",
    "Lin",
    "NoiseSum",
    "NotApplicable",
    "Opaque",
    "Shape",
    "exit_value",
    "recognise",
    "sums_in",
]
