"""Each proof runs in its own z3 context (tamp.core.z3context): proving the same claim again after
other proofs in the same process asks z3 the same queries and gets the same answers."""

from __future__ import annotations

from pathlib import Path

import z3

from lang.parser import parse_file
from tamp.core.z3context import in_proof, new_default_context, on_new_context, proof_context
from tamp.prover import prove_program

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _prove(rel: str):
    path = BENCHMARKS / rel
    src = parse_file(str(path))
    # a generous limit: the test is about the work done, which no deadline should cut short on a
    # loaded machine (every query is bounded by z3's resource limit, the same at any load)
    return prove_program(src.programs[0], source=src.text, path=str(path), timeout=600)


def _work(r) -> tuple:
    s = r.stats
    # the lemma instances and proposals, not the solver calls: those also vary a little with the
    # order Python iterates some sets in, which a process's earlier work can change
    return (r.verdict, s["lemma_instances"], s["proposals"])


def test_a_proof_repeated_after_other_proofs_does_the_same_work():
    # sparse vector after AboveThreshold: in one shared context the second sparseVec proof
    # instantiates 702 lemmas instead of 756 (measured with new contexts switched off), so
    # this fails if proofs stop getting their own context
    first = _prove("dp/sparseVec.prob")
    _prove("dp/aboveT.prob")
    again = _prove("dp/sparseVec.prob")
    assert first.verdict == "proved"
    assert _work(again) == _work(first)


def test_a_new_context_empties_the_registered_caches():
    cache = {"x": z3.Real("x")}
    on_new_context(cache.clear)
    old = z3.main_ctx()
    new_default_context()
    assert cache == {} and z3.main_ctx() is not old
    assert z3.Real("y").ctx is z3.main_ctx()


def test_nested_proofs_share_the_outer_context():
    with proof_context() as outer:
        with proof_context() as inner:
            assert inner is outer
        assert z3.main_ctx() is outer


def test_a_proof_sees_only_its_own_objects_in_the_cyclic_collector():
    import gc

    before = gc.get_freeze_count()
    with proof_context():
        frozen = gc.get_freeze_count()
        with proof_context():
            # a nested entry leaves the outer freeze alone: it freezes nothing more (the count may
            # fall when a frozen object is freed meanwhile, e.g. by another thread: CI saw -38)
            assert gc.get_freeze_count() <= frozen
    assert frozen > before
    assert gc.get_freeze_count() == before


def test_a_proof_after_a_large_allocation_does_the_same_work():
    # cyclic garbage holding z3 terms is freed when the collector runs, and z3 reuses a freed
    # term's number: a proof must not depend on how much the process allocated before it
    # (top_k/topk_peel went from proved to unknown when a library was loaded before the clock)
    first = _prove("corpus/sparse_vector/lyu_svt.prob")
    ballast = [{"k": [i]} for i in range(200_000)]
    again = _prove("corpus/sparse_vector/lyu_svt.prob")
    del ballast
    assert first.verdict == "proved"
    assert _work(again) == _work(first)


def test_the_automatic_collector_is_paused_in_a_proof_and_restored_after():
    import gc

    with proof_context():
        assert not gc.isenabled()
        with proof_context():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with proof_context():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_a_proof_collects_at_its_own_points_whatever_the_collectors_schedule():
    # the automatic collector's schedule counts every allocation of the process (other threads'
    # too): in a pytest-xdist worker the histogram median (tests/prover/test_counted_facts.py)
    # met its collections elsewhere than in a fresh process and came back "unknown" after 6
    # proposals instead of proved with 1 (CI, session 30). A proof's collections must be the
    # same whatever the thresholds: only its own, at its own points
    import gc

    def collections(threshold: int) -> tuple:
        seen: list = []

        def note(phase: str, info: dict) -> None:
            if phase == "start" and in_proof():
                seen.append(info["generation"])

        old = gc.get_threshold()
        gc.set_threshold(threshold, 2, 2)
        gc.callbacks.append(note)
        try:
            r = _prove("corpus/sparse_vector/lyu_svt.prob")
        finally:
            gc.callbacks.remove(note)
            gc.set_threshold(*old)
        return _work(r), seen

    low, high = collections(5), collections(1_000_000)
    assert low[0][0] == "proved" and low[1]  # it does collect (between its methods)
    assert low == high


def test_a_library_loaded_inside_a_proof_leaves_the_collector_as_if_it_had_been_loaded_before():
    """load_in_proof: in a fresh process the import happens, in a warm one it does not; either
    way the collector's counts afterwards are the same (no collection ran during the import,
    and what is alive is frozen, so the youngest generation starts empty)."""
    import gc
    import subprocess
    import sys

    probe = """
import gc, json, sys
from tamp.core.z3context import load_in_proof, proof_context
if sys.argv[1] == "warm":
    import tabnanny
with proof_context():
    junk = [[i] for i in range(5000)]  # the proof's own objects, before the library is needed
    before = gc.get_count()
    mod = load_in_proof("tabnanny")
    after = gc.get_count()
    again = load_in_proof("tabnanny")
print(json.dumps({"before": before[1:], "after": after, "same": mod is again, "loaded": "tabnanny" in sys.modules}))
"""
    out = {}
    for how in ("fresh", "warm"):
        run = subprocess.run([sys.executable, "-c", probe, how], capture_output=True, text=True, timeout=120)
        out[how] = run.stdout.strip().splitlines()[-1]
    import json

    fresh, warm = json.loads(out["fresh"]), json.loads(out["warm"])
    for got in (fresh, warm):
        assert got["same"] and got["loaded"], got
        assert got["after"][0] == 0, got  # what was alive is frozen
    assert fresh["after"] == warm["after"], (fresh, warm)
    assert gc.isenabled()


def test_z3_warnings_do_not_reach_the_user(capfd) -> None:
    """z3's own warnings (written to fd 2 by its C++ code) are not user messages: an optimisation
    over a quantified fact, as the invariant-template search makes, prints nothing."""
    import tamp.core.z3context  # noqa: F401 - the import turns them off

    x = z3.Int("x")
    o = z3.Optimize()
    o.add(z3.ForAll([x], x * x >= 0))
    o.minimize(z3.Int("y"))
    o.check()
    assert "WARNING" not in capfd.readouterr().err
