"""Markov's and Chebyshev's inequalities on the moments of an accumulated value, computed by
linearity of expectation (:mod:`tamp.cfa.expected`); see :mod:`.prove`."""
