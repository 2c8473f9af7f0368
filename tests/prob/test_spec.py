"""Specifications: verdicts, fairness sugar, errors, the command."""

import pytest

from lang.errors import TampError, UnsupportedError
from lang.parser import parse
from tamp.probability import decide_program


def decide(text, **kw):
    src = parse(text)
    return decide_program(src.programs[0], path="t.prob", source=text, **kw)


def test_exact_spec_proved_and_violated():
    ok = decide("program p() ensures P(a || b) >= 0.72 { a ~ bern(0.3); b ~ bern(0.6); }")
    assert ok.verdict == "proved" and ok.kind == "probability"
    bad = decide("program p() ensures P(a || b) > 0.72 { a ~ bern(0.3); b ~ bern(0.6); }")
    assert bad.verdict == "violated"


def test_sums_products_and_quotients_of_terms():
    r = decide("program p() ensures P(a) + P(b) * 2 == 1.5 && P(a | b) / P(b) == 0.5 { a ~ bern(0.3); b ~ bern(0.6); }")
    assert r.verdict == "proved", r.render_text()


def test_fairness_sugar_and_parity():
    src = """program hire()
      ensures fairness h given female >= 0.85
    {
      female ~ bern(0.3);
      x ~ uniform(0, 1);
      if (female) { h := x <= 0.45; } else { h := x <= 0.5; }
    }"""
    r = decide(src)
    assert r.verdict == "proved"  # ratio 0.9
    r2 = decide(src.replace("fairness h", "parity h").replace(">= 0.85", ">= 0.95"))
    assert r2.verdict == "violated"  # 0.9 < 0.95


def test_gaussian_spec_is_decided_with_interval():
    r = decide("program g() ensures P(x + y >= 0) < 0.33 { x ~ gauss(0, 4); y ~ gauss(-1, 1); }")
    assert r.verdict == "proved"
    iv = r.term("P(x + y >= 0)")
    assert iv is not None and not iv.is_exact and iv.lo < 0.32737 and iv.hi > 0.32735
    assert "P(x + y >= 0) in [" in r.render_text()
    js = r.to_json()
    assert js["terms"][0]["lo"] <= 0.32736042300928851 <= js["terms"][0]["hi"]  # Φ(-1/√5), mpmath 200 bits


def test_inputs_fix_parameters():
    src = "program p(q: real) ensures P(a) == q { a ~ bern(q); }"
    assert decide(src, inputs={"q": __import__("fractions").Fraction(1, 3)}).verdict == "proved"
    with pytest.raises(TampError) as e:
        decide(src)
    assert "--input q" in str(e.value)


def test_nonlinear_dependence_is_located_error():
    with pytest.raises(UnsupportedError) as e:
        decide("program p() ensures P(z > 0) > 0.1 {\n  x ~ gauss(0, 1);\n  z := x * x;\n}")
    assert "t.prob:3:" in str(e.value) and "linear" in str(e.value)


def test_random_loop_bound_is_located_error():
    with pytest.raises(UnsupportedError) as e:
        decide("program p() ensures P(x > 0) > 0.1 {\n  x ~ uniform(0, 1);\n  while (x < 2) { x := x + 1; }\n}")
    assert "t.prob:3:" in str(e.value) and "constant bounds" in str(e.value)


def test_negative_density_is_rejected():
    with pytest.raises(UnsupportedError):
        decide("program p() ensures P(x > 0.5) > 0.1 { x ~ density(0, 1, _ - 0.5); }")


def test_condition_of_probability_zero_is_unknown_not_proved():
    r = decide("program p() ensures P(a | b) > 0.5 { a ~ bern(0.5); b ~ bern(0); }")
    assert r.verdict == "unknown"


def test_command_prints_terms_and_exit_codes(tmp_path, capsys):
    from tamp.cli import main

    f = tmp_path / "c.prob"
    f.write_text("program c() ensures P(a || b) >= 0.7 { a ~ bern(0.3); b ~ bern(0.6); }\n")
    assert main(["prob", str(f)]) == 0
    assert "P(a || b) = 18/25 (0.72)" in capsys.readouterr().out
    assert main(["prob", str(f), "--json"]) == 0
    assert '"value": "18/25"' in capsys.readouterr().out
    f.write_text("program c() ensures P(a || b) >= 0.8 { a ~ bern(0.3); b ~ bern(0.6); }\n")
    assert main(["prob", str(f)]) == 3
    f.write_text("program c() ensures P(z > 0) > 0.1 { x ~ gauss(0, 1); z := x * x; }\n")
    capsys.readouterr()
    assert main(["prob", str(f)]) == 2
    err = capsys.readouterr().err
    assert "c.prob:1:" in err and "Traceback" not in err
