"""Keeps the prover4 held-out parts well formed: benchmarks/prover4/dev/blind1 to dev/blind16
(the blind parts of sessions 14 to 29, now development material) and benchmarks/prover4/test (the newest blind part,
when there is one). In each, every file parses and
type-checks, carries its headers, every true claim has a false sibling, and inputs.json covers every file (two
consistent input sets per true claim, a refuting one per false claim). A few input sets are simulated. Nothing
here proves anything: the folders are held-out measurements of the prover, so its answers are not asserted.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lang.parser import parse_file
from lang.typecheck import check_file

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "blind1": ROOT / "benchmarks" / "prover4" / "dev" / "blind1",
    "blind2": ROOT / "benchmarks" / "prover4" / "dev" / "blind2",
    "blind3": ROOT / "benchmarks" / "prover4" / "dev" / "blind3",
    "blind4": ROOT / "benchmarks" / "prover4" / "dev" / "blind4",
    "blind5": ROOT / "benchmarks" / "prover4" / "dev" / "blind5",
    "blind6": ROOT / "benchmarks" / "prover4" / "dev" / "blind6",
    "blind7": ROOT / "benchmarks" / "prover4" / "dev" / "blind7",
    "blind8": ROOT / "benchmarks" / "prover4" / "dev" / "blind8",
    "blind9": ROOT / "benchmarks" / "prover4" / "dev" / "blind9",
    "blind10": ROOT / "benchmarks" / "prover4" / "dev" / "blind10",
    "blind11": ROOT / "benchmarks" / "prover4" / "dev" / "blind11",
    "blind12": ROOT / "benchmarks" / "prover4" / "dev" / "blind12",
    "blind13": ROOT / "benchmarks" / "prover4" / "dev" / "blind13",
    "blind14": ROOT / "benchmarks" / "prover4" / "dev" / "blind14",
    "blind15": ROOT / "benchmarks" / "prover4" / "dev" / "blind15",
    "blind16": ROOT / "benchmarks" / "prover4" / "dev" / "blind16",
    "test": ROOT / "benchmarks" / "prover4" / "test",
}
FOLDERS = {name: here for name, here in FOLDERS.items() if (here / "inputs.json").exists()}
INPUTS = {name: json.loads((here / "inputs.json").read_text()) for name, here in FOLDERS.items()}
FILES = [(name, f) for name, here in FOLDERS.items() for f in sorted(here.glob("*/*.prob"))]
SIMULATED = [
    ("blind1", "repetition/freivalds_vector_false.prob"),
    ("blind1", "dpaccuracy/geometric_mechanism.prob"),
    ("blind2", "faults/tmr_vote_false.prob"),
    ("blind2", "walks/rademacher_walk.prob"),
    ("blind3", "permutations/cycle_of_zero_false.prob"),
    ("blind3", "queues/machine_repair.prob"),
    ("blind4", "gametrees/and_of_ors_all_leaves_false.prob"),
    ("blind4", "risk/ruin_within_horizon.prob"),
    ("blind5", "qualitycontrol/double_sampling_false.prob"),
    ("blind5", "sketching/stream_sign_sketch.prob"),
    ("blind6", "traceback/all_routers_seen_false.prob"),
    ("blind6", "epidemics/cluster_growth.prob"),
    ("blind7", "insurance/excess_loss_two_claims_false.prob"),
    ("blind7", "polling/rdd_dials_markov.prob"),
    ("blind8", "wireless/delivered_hoeffding_false.prob"),
    ("blind8", "credit/no_default_union.prob"),
    ("blind9", "overbooking/misconnect_false.prob"),
    ("blind9", "chipyield/wafer_map_nested.prob"),
    ("blind10", "auctions/topk_same_side_false.prob"),
    ("blind10", "geometry/sample_extreme.prob"),
    ("blind11", "juries/majority_hoeffding_false.prob"),
    ("blind11", "screening/clinics_false_alarms.prob"),
    ("blind12", "ransac/iterations_formula_false.prob"),
    ("blind12", "stochasticcomputing/xor_chain_bit_flips.prob"),
    ("blind13", "salvos/two_shot_salvo_false.prob"),
    ("blind13", "mendelian/crossovers_markov.prob"),
    ("blind14", "cards/two_aces_false.prob"),
    ("blind14", "telephony/hunt_group.prob"),
    ("blind15", "stringmatching/repeated_fingerprints_false.prob"),
    ("blind15", "archival/scrub_until_found.prob"),
    ("blind16", "powergrid/substations_false.prob"),
    ("blind16", "cloud/hedged_request.prob"),
]


def rel(folder: str, path: Path) -> str:
    return str(path.relative_to(FOLDERS[folder]))


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_counts(folder: str) -> None:
    files = [f for name, f in FILES if name == folder]
    true = [f for f in files if not f.stem.endswith("_false")]
    assert len(true) >= 44 and len({f.parent.name for f in true}) >= 5
    assert len(files) == 2 * len(true)


@pytest.mark.parametrize(("folder", "path"), FILES, ids=[f"{n}/{rel(n, f)}" for n, f in FILES])
def test_file_checks_and_headers(folder: str, path: Path) -> None:
    check_file(parse_file(str(path)))
    lines = path.read_text().splitlines()
    assert lines[0].startswith("// source: ")
    expects = [c["expect"] for c in INPUTS[folder][rel(folder, path)]]
    if path.stem.endswith("_false"):
        assert lines[1].startswith(f"// false variant of {path.stem[: -len('_false')]}: ")
        assert lines[2] == "// expect: unknown"
        assert expects == ["refuted"]
    else:
        assert lines[1].startswith("// claim: ")
        assert lines[2] == "// expect: proved"
        assert (path.parent / f"{path.stem}_false.prob").exists()
        assert expects == ["consistent", "consistent"]


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_inputs_name_existing_files(folder: str) -> None:
    assert sorted(INPUTS[folder]) == sorted(rel(n, f) for n, f in FILES if n == folder)


def arg(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(arg(v) for v in value) + "]"
    return str(value)


@pytest.mark.parametrize(("folder", "key"), SIMULATED, ids=[f"{n}/{k}" for n, k in SIMULATED])
def test_a_few_simulations(folder: str, key: str) -> None:
    for case in INPUTS[folder][key]:
        cmd = [sys.executable, "-m", "tamp", "simulate", str(FOLDERS[folder] / key), "--json", "--runs", "20000"]
        cmd += ["--seed", "7"]
        for name, value in case["inputs"].items():
            cmd += ["--input", f"{name}={arg(value)}"]
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert json.loads(out.stdout)["programs"][0]["verdict"] == case["expect"]
