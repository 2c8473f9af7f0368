"""Exact primitives shared by every engine (the layer just above ``lang``).

Numeric modules: :mod:`tamp.core.interval` (certified real intervals on python-flint's
``arb`` balls and exact rational intervals), :mod:`tamp.core.dyadic` (outward rounding to
short dyadic rationals), :mod:`tamp.core.ldl` (rational LDLᵀ) and :mod:`tamp.core.linear`
(linear forms and half-spaces over the rationals). Import the module you need: this package
re-exports nothing, so importing it stays cheap.
"""
