"""The relational bound on two copies' difference (tamp.causal.netdiff) and the share bounds of
mixed boxes (tamp.causal.netshare), against exact rational evaluation of both copies.

Random small networks in Libra's format with a one-hot or a continuous sensitive feature; random
cells and boxes; at random rational points of each box the claim's decision forms are evaluated
exactly (the ReLUs of both copies in rationals): a relational form's value never leaves its
relational bound, and the share of sampled points in a biased case pair stays within the
certified share interval (up to the sampling error).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from tamp.causal.analyzer import Analyzer, Options
from tamp.causal.bounds import bounds_batch, relax_batch
from tamp.causal.certify import independence_claims
from tamp.causal.netclaim import network_claim
from tamp.causal.netdiff import all_copy_diffs, diff_bounds, tighten
from tamp.causal.netfair import exact_box
from tamp.causal.netshare import share_bounds_batch
from tamp.causal.symexec import Context

from .test_netfair import GROUP, REALS, SENS, SPEC_ONEHOT, _import, _libra_net

SPEC_SPLIT = "1\nx01\n0.5\n2\nx02\nx03\n"


def _claim(tmp_path, seed, continuous, three=False):
    rng = random.Random(seed)
    if three:  # a sensitive one-hot group of three: three pairs of copies
        text = _libra_net(rng, REALS + GROUP + ["x05", "x06", "x07"], [5, 4], 2)
        imp = _import(tmp_path, text, "3\nx05\nx06\nx07\n3\nx02\nx03\nx04\n", f"three{seed}")
    elif continuous:
        text = _libra_net(rng, ["x00", "x01", "x02", "x03"], [5, 4], 2)
        imp = _import(tmp_path, text, SPEC_SPLIT, f"split{seed}")
    else:
        text = _libra_net(rng, REALS + GROUP + SENS, [5, 4], 2 + seed % 2)
        imp = _import(tmp_path, text, SPEC_ONEHOT, f"onehot{seed}")
    ctx = Context("net", None)
    ind = independence_claims(imp.program, ctx)[0]
    an = Analyzer(imp.program, ind, Options(), ctx)
    return network_claim(an.dag, len(an.outs), an.pairs, an.dims)


def _values(claim, cell, point):
    """Exact values of the model's variables at a point of the real inputs in ``cell``."""
    val = dict(claim.cell_consts[cell])
    for v, t in claim.real_vars.items():
        val[v] = point[t]
    for r in claim.model.relus:
        co, c = r.pre
        val[r.var] = max(Fraction(0), sum((k * val[u] for u, k in co.items()), Fraction(0)) + c)
    return val


def _form(f, val):
    co, c = f
    return sum((k * val[u] for u, k in co.items()), Fraction(0)) + c


def _batch(claim, rng, B):
    """Random boxes (cells, integer boxes at depth 1..6 per dimension) with their float bounds."""
    nr = len(claim.real)
    items = []
    for _ in range(B):
        ib = []
        for _ in range(nr):
            d = rng.randrange(0, 6)
            ib.append((rng.randrange(1 << d), d))
        items.append((rng.randrange(len(claim.cells)), tuple(ib)))
    n = claim.graph.nvars
    lo, hi = np.zeros((B, n)), np.zeros((B, n))
    boxes = [exact_box(claim, ib) for _, ib in items]
    for t, box in enumerate(boxes):
        for k, (a, b) in enumerate(box):
            lo[t, k] = float(a) - 2.0**-40 * (1 + abs(float(a)))
            hi[t, k] = float(b) + 2.0**-40 * (1 + abs(float(b)))
    cells = np.array([c for c, _ in items])
    m = len(claim.model.relus)
    inf = np.full((B, m), np.inf)
    rx = relax_batch(claim.graph, lo, hi, (-inf, inf), claim.pre_c[cells])
    return items, boxes, cells, rx


@pytest.mark.parametrize("seed,continuous", [(1, False), (2, False), (3, True), (4, True)])
def test_relational_bound_encloses_exact_difference(tmp_path, seed, continuous):
    claim = _claim(tmp_path, seed, continuous)
    diffs = all_copy_diffs(claim)
    assert diffs, "the copies of an imported network share their layers"
    rng = random.Random(seed)
    items, boxes, cells, rx = _batch(claim, rng, 40)
    consts = claim.consts[cells]
    bb = bounds_batch(claim.graph, rx, claim.rows, consts)
    tighter = 0
    for cd in diffs:
        lo, hi = diff_bounds(claim, cd, rx, cells, consts)
        for t, ((cell, _), box) in enumerate(zip(items, boxes)):
            for _ in range(25):
                pt = [a + (b - a) * Fraction(rng.randrange(1 << 16), 1 << 16) for a, b in box]
                val = _values(claim, cell, pt)
                for q, f in enumerate(cd.forms):
                    x = _form(claim.forms[f], val)
                    assert lo[t, q] <= x <= hi[t, q]
            for q, f in enumerate(cd.forms):
                tighter += hi[t, q] - lo[t, q] < bb.upper[t, f] - bb.lower[t, f]
    if not continuous:
        # the copies differ by a constant in a cell: on some of these boxes their difference is
        # bounded more tightly than the copies one by one
        assert tighter > 0


@pytest.mark.parametrize("seed,continuous,three", [(5, False, False), (6, True, False), (7, False, True)])
def test_share_bounds_contain_sampled_share(tmp_path, seed, continuous, three):
    claim = _claim(tmp_path, seed, continuous, three)
    rng = random.Random(seed)
    items, boxes, cells, rx = _batch(claim, rng, 30)
    consts = claim.consts[cells]
    bb = bounds_batch(claim.graph, rx, claim.rows, consts, affine=True)
    rel = tighten(claim, all_copy_diffs(claim), rx, cells, consts, bb.lower, bb.upper)
    bcps = [cp for cp in claim.case_pairs if cp.biased]
    possible = np.ones((len(items), len(bcps)), dtype=bool)
    names = [claim.dims[k].name for k in claim.real]
    got = share_bounds_batch(names, boxes, bb, bcps, possible, {f: v[0] for f, v in rel.items()})
    informative = 0
    n = 400
    for (cell, _), box, (low, up, _) in zip(items, boxes, got):
        assert 0 <= low <= up <= 1
        informative += up - low < 1
        hits = 0
        for _ in range(n):
            pt = [a + (b - a) * Fraction(rng.randrange(1, 1 << 20), 1 << 20) for a, b in box]
            val = _values(claim, cell, pt)
            for cp in bcps:
                if all(
                    (_form(claim.forms[f], val) < 0) if s else (_form(claim.forms[f], val) <= 0) for f, s in cp.literals
                ):
                    hits += 1
                    break
        p = hits / n
        ci = 4 * math.sqrt(max(p * (1 - p), 1 / n) / n)
        assert float(low) - ci <= p <= float(up) + ci
        if up == 0:
            assert hits == 0  # an empty superset: no sampled point can be biased
    assert informative > 0
