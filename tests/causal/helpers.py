"""Helpers for the causal tests: parse a program from text; check a witness or a fraction exactly."""

import random
from fractions import Fraction

from lang.parser import parse


def load(text, name=None):
    src = parse(text, "<test>")
    prog = src.programs[0] if name is None else src.program(name)
    return prog, src


def _certify():
    from tamp.causal import certify_program

    def run(text, **opts):
        prog, src = load(text)
        opts.setdefault("jobs", 1)
        opts.setdefault("timeout", 60)
        return certify_program(prog, opts, path=src.path, source=src.text)

    return run


def sampled_bias(text, n=2000, seed=1):
    """Monte Carlo estimate of the biased fraction (uniform over the requires box), with exact
    evaluation of the self-composed program at random rational points."""
    from tamp.causal import boxes as B
    from tamp.causal.analyzer import Analyzer, Options
    from tamp.causal.symexec import Context

    prog, src = load(text)
    a = Analyzer(prog, prog.ensures[0], Options(), Context())
    rng = random.Random(seed)
    root = B.root_box(a.dims)
    hits = sum(a.biased_at(B.random_point(a.dims, root, rng)) is not None for _ in range(n))
    return Fraction(hits, n)
