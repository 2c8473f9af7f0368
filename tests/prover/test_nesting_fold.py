"""Two-level arguments (session 24): a row's deterministic epilogue — the threshold test that
raises the flag, ``if (seen >= 2) { over := true; }`` — is folded into the row's claim
(:mod:`tamp.cfa.epilogue`), so the per-iteration composition reaches the query-only methods
(the pairs rule, Markov, concentration) on each row. The programs are benchmarks/prover4/dev/pairs2
and blind10's frequency_cap; their false siblings are checked by the soundness harness."""

from __future__ import annotations

import pytest
from locations import BENCHMARKS

from lang.parser import parse
from lang.printer import print_expr
from tamp.cfa.epilogue import epilogue_length, fold_epilogue
from tamp.prover import prove_program
from tamp.prover.nesting.prove import NestResult

DEV = BENCHMARKS / "prover4" / "dev"


def _prog(src: str):
    return parse(src).programs[0]


CAP = """program cap(m: int, p: real)
  requires m >= 1 && 0 <= p && p <= 1
  ensures !over
  fails m * (m - 1) * p * p / 2
{
  over := false;
  seen := 0;
  for s in 0..m {
    show ~ bern(p);
    if (show) { seen := seen + 1; }
  }
  big := seen >= 2;
  if (big) { over := true; }
}"""


def test_the_epilogue_becomes_the_claim():
    prog = _prog(CAP)
    assert epilogue_length(prog) == 2
    folded = fold_epilogue(prog, 2)
    assert folded is not None and len(folded.body.stmts) == 3
    post = print_expr(folded.ensures[0])
    assert "seen >= 2" in post and "big" not in post
    assert fold_epilogue(prog, 3) is None  # the loop is no deterministic statement


@pytest.mark.parametrize(
    "change",
    [
        ("big := seen >= 2;", "big := seen / m >= 2;"),  # a division: not total
        ("big := seen >= 2;", "big ~ bern(p);"),  # a draw
        ("over := false;\n", ""),  # the claim would read a flag the prefix never set
    ],
)
def test_what_is_not_folded(change):
    prog = _prog(CAP.replace(*change))
    k = epilogue_length(prog)
    assert k < 2 or fold_epilogue(prog, k) is None


@pytest.mark.parametrize(
    "path,rule",
    [
        (DEV / "blind10" / "advertising" / "frequency_cap.prob", "the pairs rule"),
        (DEV / "pairs2" / "server_pairs.prob", "the pairs rule"),
        (DEV / "pairs2" / "row_markov.prob", "Markov"),
        (DEV / "pairs2" / "user_chernoff.prob", "concentration"),
    ],
)
def test_rows_are_proved_by_any_single_loop_method(path, rule):
    src = path.read_text()
    r = prove_program(parse(src).programs[0], source=src, path=str(path), timeout=60)
    assert r.verdict == "proved", r.render_text()
    assert isinstance(r, NestResult) and r.fold >= 1
    assert rule in r.message
