"""Lazy stand-ins for ``scipy.stats`` and ``scipy.integrate``: the modules are imported on first
attribute access, so importing the axiom families (which the prover does for every proof) does
not pay scipy's start-up time; only ``exact_tail`` (tests, soundness checks) uses them."""

import importlib


class _Lazy:
    def __init__(self, name: str):
        self._name = name
        self._mod = None

    def __getattr__(self, attr):
        if self._mod is None:
            self._mod = importlib.import_module(self._name)
        return getattr(self._mod, attr)


stats = _Lazy("scipy.stats")
integrate = _Lazy("scipy.integrate")
