"""Every benchmark program at its recorded inputs: the true claims are consistent (the interval
reaches below the bound), the too-strong variants refuted."""

import pytest
from locations import BENCHMARKS

from lang.parser import parse_file
from tamp.simulation import simulate
from tamp.simulation.bench_inputs import load_inputs

ENTRIES = load_inputs(BENCHMARKS / "inputs.json")
MINE = ["illustrative", "dp", "reliability", "variants", "selection", "products"]


def _id(b):
    return f"{b.file.parent.name}/{b.file.stem}-" + ",".join(
        f"{k}={v}" for k, v in b.inputs.items() if not isinstance(v, list)
    )


@pytest.mark.parametrize("entry", ENTRIES, ids=[_id(b) for b in ENTRIES])
def test_benchmark_verdict(entry):
    runs = 200 if "Concrete" in entry.file.name else 20000
    r = simulate(entry.file, entry.inputs, runs=runs, seed=11)
    assert r.verdict == entry.expect, r.render_text()
    if entry.expect == "consistent":
        assert r.ci[0] <= r.bound_value


def test_every_benchmark_file_has_inputs_and_a_matching_name():
    files = sorted(p for d in MINE for p in (BENCHMARKS / d).glob("*.prob"))
    assert len(files) >= 17
    covered = {b.file.resolve() for b in ENTRIES}
    for f in files:
        assert f.resolve() in covered, f"no inputs for {f}"
        src = parse_file(str(f))
        assert [p.name for p in src.programs] == [f.stem]
        assert src.text.lstrip().startswith("//"), f"{f} needs a header comment"
    assert len({b.file for b in ENTRIES if b.file.parent.name != "variants"}) >= 11


def test_input_arrays_have_length_n():
    for b in ENTRIES:
        for k in ("q", "u"):
            if isinstance(b.inputs.get(k), list):  # an array named q or u (a scalar q is a probability)
                cells = b.inputs["n"] * b.inputs.get("m", 1)  # a grid stores n x m cells row by row
                assert len(b.inputs[k]) == cells, b
        if "blocks" in b.inputs and "nblocks" in b.inputs:
            i = b.inputs
            assert len(i["blocks"]) == i["nblocks"] * i["height"] * i["width"]
            assert len(i["ref"]) == i["height"] * i["width"]
        if "Concrete" in b.file.name:
            assert len(b.inputs["blocks"]) == 20 * 16 * 16 and len(b.inputs["ref"]) == 16 * 16


def test_variants_are_refuted_somewhere():
    variants = {b.file for b in ENTRIES if b.file.parent.name == "variants"}
    assert len(variants) >= 7
    for v in variants:
        assert any(b.expect == "refuted" for b in ENTRIES if b.file == v)


def test_search_ref_concrete_reliability_is_visible_with_a_large_rate():
    """searchRef's union bound 1 - 4*r*pixels is close to the true failure rate when the rate is
    large: the interval reaches below the bound, and below it a tighter bound is refuted."""
    f = BENCHMARKS / "reliability" / "searchRef.prob"
    inputs = {"blocks": list(range(12)), "ref": [1, 2, 3, 4], "nblocks": 3, "height": 2, "width": 2, "r": 0.005}
    r = simulate(f, inputs, runs=20000, seed=5)
    exact = 1 - (1 - 0.005) ** (4 * 12)
    assert r.ci[0] < exact < r.ci[1]
    assert r.verdict == "consistent"
    assert simulate(f, inputs, runs=20000, seed=5, bound="3 * r * nblocks * height * width").verdict == "refuted"


def test_benchmarks_folder_is_found_from_a_directory_not_from_the_package(tmp_path, monkeypatch):
    from fractions import Fraction

    from tamp.simulation.bench_inputs import NoBenchmarks, benchmarks_dir, inputs_for

    bench = tmp_path / "repo" / "benchmarks"
    (bench / "dp").mkdir(parents=True)
    (bench / "inputs.json").write_text('{"dp/a.prob": [{"inputs": {"n": 2, "p": "0.25"}}]}')
    (bench / "dp" / "a.prob").write_text("")
    monkeypatch.chdir(tmp_path / "repo")
    assert benchmarks_dir() == bench.resolve()
    assert benchmarks_dir(bench / "dp") == bench.resolve()
    assert inputs_for(bench / "dp" / "a.prob") == [{"n": 2, "p": Fraction(1, 4)}]
    monkeypatch.chdir(bench / "dp")
    assert [b.file.resolve() for b in load_inputs()] == [(bench / "dp" / "a.prob").resolve()]
    (tmp_path / "other").mkdir()
    with pytest.raises(NoBenchmarks):
        benchmarks_dir(tmp_path / "other")
