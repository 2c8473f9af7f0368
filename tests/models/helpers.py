"""Exact evaluation of an imported (deterministic, straight-line) program, for the tests."""

from fractions import Fraction

import numpy as np

from tamp.causal.dag import compile_dag, evaluate
from tamp.causal.symexec import Context, execute


class ExactRunner:
    """The program's ``out`` at given inputs, computed by tamp's exact (rational) evaluation: the
    program is executed symbolically once (``if`` merged into ``ite``) and its output term is
    evaluated on exact rationals — the evaluation the causal engine uses to check witnesses."""

    def __init__(self, prog, output="out"):
        self.prog = prog
        fin = execute(prog, {}, Context())
        self.dag = compile_dag([fin.env[output]])
        self.types = {p.name: p.type.name for p in prog.params}

    def __call__(self, env):
        vals = {k: (int(v) if self.types[k] == "int" else Fraction(float(v))) for k, v in env.items()}
        return evaluate(self.dag, vals)[0]

    def classes(self, names, X):
        return np.array([self({n: v for n, v in zip(names, row)}) for row in X])


def float32_points(rng, lo, hi, n):
    """n points uniform in the box [lo, hi] (per feature), as float32 values (so an ONNX
    model's cast of its input to float32 is exact)."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    return (lo + rng.random((n, len(lo))) * (hi - lo)).astype(np.float32)
