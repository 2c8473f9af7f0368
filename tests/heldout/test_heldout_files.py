"""The held-out corpus (benchmarks/heldout) is well formed, cheaply: every file parses and
type-checks, states its source and the verdict it expects, every true claim has a false sibling,
every attack program (``attack_*.prob``, a false claim aimed at the prover's soundness) says what
it attacks and expects unknown, inputs.json gives every program at least two complete input sets
with the right verdicts, and a handful of claims agree with the simulator at those inputs.
Nothing here proves anything: the prover's numbers are benchmarks/corpus/run.py's job
(``run.py --no-simulate benchmarks/heldout``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from locations import BENCHMARKS
from support.claim_files import ClaimFolder

HELDOUT = BENCHMARKS / "heldout"
CORPUS = BENCHMARKS / "corpus"


FOLDER = ClaimFolder(HELDOUT)
_rel = FOLDER.rel
_expect = FOLDER.expect
CLAIMS = sorted(HELDOUT.glob("*/*.prob"))
ATTACKS = sorted(HELDOUT.glob("attack_*.prob"))
FILES = CLAIMS + ATTACKS


def test_heldout_size_and_families():
    true = [f for f in CLAIMS if _expect(f) == "proved"]
    assert len(true) >= 30
    assert len({f.parent.name for f in true}) >= 15
    assert len(CLAIMS) - len(true) >= len(true)


def test_only_family_folders_and_attack_files():
    for f in HELDOUT.rglob("*.prob"):
        assert f in FILES, f"{_rel(f)}: claims go in FAMILY/NAME.prob, attacks in attack_NAME.prob"


def test_heldout_names_are_not_corpus_names():
    """Held-out means new: no program shares its file name with one of benchmarks/corpus."""
    corpus = {f.stem for f in CORPUS.glob("*/*.prob")}
    clash = sorted(f.stem for f in FILES if f.stem in corpus)
    assert not clash, f"held-out files named like corpus files: {clash}"


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_file_parses_type_checks_and_documents_its_claim(path):
    head = FOLDER.check_documented(path)
    if path in ATTACKS:
        assert _expect(path) == "unknown", "an attack is a false claim: `// expect: unknown`"
        assert re.search(r"^// attack: \S", head, re.M), "say what the attack aims at (`// attack: ...`)"
        assert re.search(r"^// false: \S", head, re.M), "say why the claim is false (`// false: ...`)"
    elif _expect(path) == "proved":
        assert re.search(r"^// claim: \S", head, re.M), "state the claim (`// claim: ...`)"
    else:
        assert re.search(r"^// false variant of \w+", head, re.M), "say what makes it false"


def test_every_true_claim_has_a_false_sibling_and_back():
    FOLDER.check_siblings(CLAIMS)


def test_inputs_cover_every_program_with_complete_input_sets():
    FOLDER.check_input_sets(FILES)


# A handful of pairs, a few thousand runs each: the false ones' failure rates are far above their
# bounds at the recorded inputs (see each file's header), so the verdicts are stable at this size.
SIMULATED = [
    "laplace/lap_composition",
    "geometric/dlap_vector_le",
    "noisy_max/rnm_expnoise",
    "sparse_vector/svt_found_flag",
    "histogram/hist_release",
    "randomized_response/rr_keep_or_uniform",
    "matvec/matvec_colmajor",
    "deterministic/count_below",
]


@pytest.mark.parametrize("name", [n + s for n in SIMULATED for s in ("", "_false")])
def test_simulator_agrees_with_the_recorded_verdicts(name):
    FOLDER.check_simulated(name)


def test_soundness_harness_checks_every_heldout_false_claim():
    """benchmarks/soundness runs every held-out false sibling and attack (none may be proved),
    with the inputs that refute it."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "soundness"))
    from harness import benchmark_inputs, variant_files

    listed = set(variant_files())
    heldout = Path(__file__).resolve().parents[2] / "benchmarks" / "heldout"
    false = sorted(heldout.glob("*/*_false*.prob")) + sorted(heldout.glob("attack_*.prob"))
    assert len(false) >= 100
    for f in false:
        rel = "heldout/" + f.relative_to(heldout).as_posix()
        assert rel in listed, f"benchmarks/soundness does not check {rel}"
        assert benchmark_inputs(rel), f"the harness finds no inputs for {rel}"
