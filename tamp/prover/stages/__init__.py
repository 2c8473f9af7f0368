"""Composition of stages by products (issue 33): see :mod:`tamp.prover.stages.products`."""
