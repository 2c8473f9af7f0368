"""How long a unit test lets the prover try a claim that is false (``from limits import
FALSE_CLAIM_S``). A false claim is never proved, so its proof search runs until the limit: at the
full limit the suite would spend most of its time waiting (the corpus runner, `python -m
benchmarks.corpus.run`, gives each false variant the full 120 s, and the soundness harness its own
limits). 20 s covers the proof search of every true claim these tests prove quickly, so a wrong
proof of a false claim that the prover finds as fast as its true siblings' still fails the test."""

FALSE_CLAIM_S = 20
