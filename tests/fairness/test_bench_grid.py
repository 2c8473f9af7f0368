"""tamp bench's program × population grid and result column for probability results."""

from tamp.commands.bench import _result, render_grid


def _row(stem, verdict="proved", expected="proved", lo=0.85016, hi=0.91416):
    return {
        "file": f"benchmarks/fairness/{stem}.prob",
        "kind": "probability",
        "verdict": verdict,
        "expected": expected,
        "time_s": 1.5,
        "comparisons": [{"lhs": {"lo": lo, "hi": hi, "exact": False}}],
    }


def test_result_column_rounds_the_interval_outward():
    assert _result(_row("BN1_NN3_2")) == "[0.8501, 0.9142]"
    exact = {"comparisons": [{"lhs": {"lo": 1.0, "hi": 1.0, "exact": True, "value": "1"}}]}
    assert _result(exact) == "1"
    assert _result({"kind": "failure-bound"}) == ""


def test_grid_has_programs_as_rows_and_populations_as_columns():
    rows = [
        _row("ind_DT4"),
        _row("BN1_DT4", "violated", "violated", 0.38, 0.39),
        _row("ind_NN3_2"),
        _row("BN1_NN3_2", "unknown"),
    ]
    grid = render_grid(rows).splitlines()
    assert grid[0].split() == ["program", "ind", "BN1"]
    assert grid[2].startswith("DT4") and "violated [0.3799, 0.3901] 1.50 s" in grid[2]
    assert grid[3].startswith("NN3_2") and "unknown ✗" in grid[3]


def test_no_grid_for_other_suites():
    assert render_grid([_row("coin"), _row("dice")]) == ""
    assert render_grid([{**_row("a_b"), "kind": "failure-bound"}, {**_row("c_d"), "kind": "failure-bound"}]) == ""


def test_table_rows_fit_the_terminal_width():
    # issue 36, item 10: rows were 1,184 characters wide (every axiom's parameter in full)
    from tamp.commands.bench import render_text

    axioms = [{"family": "laplace", "param": "p / (2 * n) * " * 40 + "1"} for _ in range(6)]
    row = {
        "file": "benchmarks/dp/aboveT.prob",
        "name": "aboveT",
        "kind": "failure-bound",
        "verdict": "proved",
        "expected": "proved",
        "time_s": 1.5,
        "axioms": axioms,
        "statistics": {"proposals": 1, "lemma_instances": 231, "solver_calls": 28},
    }
    text = render_text([row], width=100)
    assert all(len(line) <= 100 for line in text.splitlines()), text
    assert "…" in text and "aboveT" in text and "proved" in text and "231" in text
    assert len(render_text([row], width=10000).splitlines()[2]) > 1000  # the full text when it fits
