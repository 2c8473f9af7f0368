"""Expected failure: products of probabilities over discrete samples.

A weakest pre-expectation (:mod:`.prove`): each coin weights its two branches, each loop gets an
invariant expectation, a uniform sample that must avoid values gets the birthday bound
(:mod:`.hits`), and counting loops that fail at a threshold get level cores (:mod:`.levels`).

Soundness: the expected value of the failure indicator is the failure probability; the
pre-expectation rules (McIver and Morgan) give an upper bound when every loop's invariant
expectation is checked by the solver to be a super-fixed-point and the loop terminates.
"""
