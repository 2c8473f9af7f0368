"""The Result protocol every engine's result implements (tamp.results), and how several
engines' results combine into one program's result."""

import pytest

from tamp.results import PROVED, UNKNOWN, VIOLATED, FileResult, MixedResult, ProgramResult, combine


def part(kind, verdict, t=1.0, bound=None, message=""):
    return ProgramResult("p", kind, verdict, t, bound=bound, message=message)


def test_a_single_result_is_its_own_only_part():
    r = part("probability", PROVED)
    assert r.parts == [r] and combine("p", [r]) is r and r.to_dot() == {}


@pytest.mark.parametrize(
    "verdicts,expected",
    [
        ((PROVED, PROVED), PROVED),
        ((PROVED, UNKNOWN), UNKNOWN),
        ((UNKNOWN, VIOLATED), VIOLATED),
        ((PROVED, VIOLATED), VIOLATED),
    ],
)
def test_several_engines_combine_into_a_mixed_result(verdicts, expected):
    a, b = part("failure-bound", verdicts[0], 1.0, "p"), part("probability", verdicts[1], 2.0)
    r = combine("p", [a, b])
    assert isinstance(r, MixedResult) and r.kind == "mixed" and r.verdict == expected
    assert r.parts == [a, b] and r.time_s == 3.0 and r.bound == "p"
    assert r.render_text() == a.render_text() + "\n" + b.render_text()
    js = r.to_json()
    assert list(js)[-1] == "parts" and js["parts"] == [a.to_json(), b.to_json()]


def test_file_verdict_and_exit_code():
    f = FileResult("f.prob", [part("failure-bound", PROVED), part("probability", UNKNOWN)])
    assert f.verdict == UNKNOWN and f.exit_code() == 1
    assert FileResult("f.prob", [part("causal", VIOLATED)]).exit_code() == 3


def test_exit_code_is_a_property_like_the_other_results():
    # simulate's and robust's results have ``exit_code`` as a property; the file result too
    # (still callable for code written against the old method)
    f = FileResult("f.prob", [part("failure-bound", PROVED)])
    assert f.exit_code == 0 and isinstance(f.exit_code, int)
    assert FileResult("f.prob", [part("causal", VIOLATED)]).exit_code == 3


def test_dir_of_tamp_lists_the_public_api():
    import tamp

    names = dir(tamp)
    for name in ("prove", "check", "simulate", "prob", "certify", "check_proof", "__version__"):
        assert name in names, name


def test_results_show_as_text_without_the_report_views(monkeypatch):
    import tamp.results as R

    monkeypatch.setattr(R, "NOTEBOOK_VIEWS", {})
    r = part("probability", PROVED, message="a <b>")
    assert r._repr_html_().startswith("<pre>") and "a &lt;b&gt;" in r._repr_html_() and r._repr_svg_() is None
