"""The library entry point behind ``tamp prove``: usable directly from a notebook.

>>> import tamp
>>> r = tamp.prove('''
... program coin(p: real)
...   requires 0 < p && p <= 1
...   ensures !y
...   fails p
... { y ~ bern(p); }''')
>>> r.verdict
'proved'

A program's ``ensures`` clauses are split by kind — failure-bound
(the trace-abstraction prover), probability (``P(…)``, fairness) and causal
(``independent``) — and each group goes to its engine; the program's verdict
combines them (violated if any is violated, proved if all are proved).
"""

from __future__ import annotations

import dataclasses
import json
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Dict, List, Optional, Union

from lang import ast as A
from lang.errors import TampError
from lang.evaluate import EvalError, evaluate
from lang.inputs import check_inputs, check_known, fix_inputs
from lang.inputs import show as show_value
from lang.loader import check_bound, decode, load, parse_bound, read_bytes, select
from lang.parser import parse, parse_expr
from lang.speckind import FAILURE_BOUND, PROBABILITY, clause_kind, infer_bound, spec_kind
from lang.typecheck import check_file, input_reliabilities
from lang.walk import free_vars

from . import prover
from . import report as _report  # noqa: F401  (registers the notebook views of the results)
from .cfa import placement
from .cfa.dependence import conditioning_assumes, describe
from .results import PROVED, UNKNOWN, UNSPECIFIED, CheckedFile, FileResult, ProgramResult, ProgramSummary, combine
from .show import show_expr

if TYPE_CHECKING:
    from .certificate import CheckReport

# The probability engine (pysmt, flint), the causal engine and the certificate checker load on
# first use, in the function that needs them: `tamp prove` of a failure bound reads none of them.


def _load(source_or_path: Union[str, A.SourceFile, A.Program], path: Optional[str]) -> A.SourceFile:
    if isinstance(source_or_path, A.Program):
        return A.SourceFile((source_or_path,), path or "<program>", "")
    return load(source_or_path, path)


def prove_program(
    prog: A.Program,
    bound: Optional[A.Expr] = None,
    timeout: Optional[float] = None,
    inputs: Optional[Dict[str, object]] = None,
    path: str = "<string>",
    source: Optional[str] = None,
    progress=None,
    executor=None,
) -> ProgramResult:
    """Check every specification of one program with the right engine(s); ``inputs`` that are
    parameters of ``prog`` must fit their types (others are ignored). ``executor`` (a
    :class:`tamp.executor.Executor`): where the parallel jobs of the probability and causal
    engines run (default: their own choice, see docs/cluster.md)."""
    inputs = check_inputs(prog, inputs, path, source or None) if inputs else {}
    if not _specified(prog):
        return ProgramResult(prog.name, "none", UNSPECIFIED, message=NOTHING_TO_PROVE)
    if prog.private is not None:  # the privacy claim is decided by its own engine
        privacy = prove_privacy_claim(prog, timeout, inputs, path, source)
        if not has_accuracy_claim(prog):
            return privacy
        rest = prove_program(
            dataclasses.replace(prog, neighbours=None, private=None),
            bound,
            timeout,
            inputs,
            path,
            source,
            progress,
            executor,
        )
        return combine(prog.name, list(rest.parts) + [privacy])
    groups: Dict[str, List[A.Expr]] = {}
    for e in prog.ensures:
        groups.setdefault(clause_kind(e), []).append(e)
    if prog.reliability is not None or not groups:
        groups.setdefault(FAILURE_BOUND, [])
    if bound is not None and FAILURE_BOUND not in groups:
        raise TampError("--bound applies to failure-bound specifications, and this program has none", path)
    parts: List[ProgramResult] = []
    deadline = time.monotonic() + timeout if timeout else None
    for kind, clauses in groups.items():
        sub = dataclasses.replace(prog, ensures=tuple(clauses))
        if kind != FAILURE_BOUND:
            sub = dataclasses.replace(sub, fails=None)
        left = max(deadline - time.monotonic(), 0.01) if deadline else None
        t0 = time.monotonic()
        res: ProgramResult
        if kind == FAILURE_BOUND:
            res = prove_fixed(sub, inputs, bound, left, path, source, progress)
            if res.verdict == UNKNOWN and all(p.name in inputs for p in prog.params):
                left = max(deadline - time.monotonic(), 0.01) if deadline else None
                res = decide_conditional(
                    res, dataclasses.replace(prog, ensures=tuple(clauses)), inputs, left, path, source, executor
                )
        elif kind == PROBABILITY:
            from . import probability  # deferred on purpose: see the imports above

            res = probability.decide_program(
                sub, inputs=inputs or None, timeout=left, path=path, source=source, executor=executor
            )
        else:
            from . import causal  # deferred on purpose: see the imports above

            res = causal.certify_program(
                sub, options={"timeout": left} if left else None, path=path, source=source, executor=executor
            )
        if not res.time_s:
            res.time_s = time.monotonic() - t0
        parts.append(res)
    return combine(prog.name, parts)


def prove_fixed(
    prog: A.Program,
    inputs: Dict[str, object],
    bound: Optional[A.Expr],
    timeout: Optional[float],
    path: str,
    source: Optional[str],
    progress=None,
) -> ProgramResult:
    """The failure bound of ``prog`` at the fixed ``inputs`` (none: the claim as written).

    Fixing an input never loses a proof: when the claim at the fixed values is not proved, the
    claim with those inputs free is tried. A proof of it covers every input satisfying
    ``requires``; the fixed claim is the same program, bound and postcondition under the
    stronger ``requires && name == value``, so it holds by instantiation (and vacuously when no
    input satisfies that — the fixed attempt's notes say so). The result is marked
    ``inputs_free``: its certificate records that its proof is about the free claim, and
    ``tamp check-proof`` re-checks it as such. With a time limit, the fixed attempt gets half
    of it and the free one the rest."""
    fixed = {k: v for k, v in inputs.items() if prog.param(k) is not None}
    if not fixed:
        return prover.prove_program(prog, bound=bound, timeout=timeout, path=path, source=source, progress=progress)
    deadline = time.monotonic() + timeout if timeout else None
    first = timeout / 2 if timeout else None
    sub = fix_inputs(prog, fixed)
    res = prover.prove_program(sub, bound=bound, timeout=first, path=path, source=source, progress=progress)
    if res.verdict != UNKNOWN or isinstance(prog.fails, A.Hole) or any(A.contains(e, A.Hole) for e in prog.ensures):
        return res
    left = max(deadline - time.monotonic(), 0.01) if deadline else None
    free = prover.prove_program(prog, bound=bound, timeout=left, path=path, source=source, progress=progress)
    if free.verdict != PROVED or not isinstance(free, prover.ProofResult):
        return res
    shown = ", ".join(f"{k}={show_value(v)}" for k, v in fixed.items())
    notes = [line for line in res.message.splitlines() if line.strip().startswith("note:")]
    free.inputs_free = True
    free.time_s += res.time_s
    free.message = "\n  ".join(
        [n.strip() for n in notes]
        + [
            f"note: proved for every input satisfying `requires` (the inputs {shown} free), so at "
            f"{shown} by instantiation (the proof at the fixed values alone was not found)"
        ]
        + ([free.message] if free.message else [])
    )
    return free


def has_accuracy_claim(prog: A.Program) -> bool:
    """Whether ``prog`` claims more than privacy (``ensures``, ``fails``, ``reliability``); a
    program with neither kind of claim is the failure-bound prover's (it proves ``true``)."""
    return bool(prog.ensures) or prog.fails is not None or prog.reliability is not None or prog.private is None


def prove_privacy_claim(
    prog: A.Program,
    timeout: Optional[float] = None,
    inputs: Optional[Dict[str, object]] = None,
    path: str = "<string>",
    source: Optional[str] = None,
) -> ProgramResult:
    """Decide ``prog``'s ``private`` clause (:mod:`tamp.privacy`). ``inputs`` fix the *public*
    inputs only (those never primed in ``neighbours``): a proof for every value of a secret input
    covers the fixed one, and fixing it in both runs would prove a weaker claim."""
    from . import privacy  # deferred on purpose: see the imports above

    inputs = check_inputs(prog, inputs, path, source or None) if inputs else {}
    secret = {b for n in set(free_vars(prog.neighbours)) if (b := A.unprimed(n))} if prog.neighbours else set()
    public = {k: v for k, v in inputs.items() if k not in secret}
    sub = fix_inputs(prog, public) if public else prog
    t0 = time.monotonic()
    res = privacy.prove_privacy(sub, timeout=timeout, path=path, source=source, inputs=inputs)
    if public and res.verdict == PROVED:  # the proof assumes them: its certificate records them
        res.fixed_inputs = dict(public)
    if not res.time_s:
        res.time_s = time.monotonic() - t0
    return res


#: What ``tamp prove`` says of a program with no specification.
NOTHING_TO_PROVE = (
    "nothing to prove: the program states no specification (add `ensures` with `fails`, a "
    "probability, or another claim of docs/language.md)"
)

#: A program's fields that are not claims: the rest (``ensures``, ``fails``, ``reliability``,
#: ``rate``, and any clause the language gains) are its specification.
_NOT_CLAIMS = {"name", "params", "body", "requires", "pos"}


def _specified(prog: A.Program) -> bool:
    """The program states some claim: a clause other than ``requires`` is present (``fails ?``
    alone, as ``--infer`` asks for every program, is no claim: there is nothing to bound)."""
    for f in dataclasses.fields(prog):
        value = getattr(prog, f.name)
        if f.name in _NOT_CLAIMS or value is None or value == () or isinstance(value, A.Hole):
            continue
        return True
    return False


def decide_conditional(
    res: ProgramResult,
    prog: A.Program,
    inputs: Dict[str, object],
    timeout: Optional[float],
    path: str,
    source: Optional[str],
    executor=None,
) -> ProgramResult:
    """A failure bound with a conditioning ``assume`` (docs/language.md) at fully fixed inputs,
    decided exactly: Pr[violation | conditions] <= β is P(ensures | conditions) >= 1 - β, which
    the probability engine computes with the same conditioning (exact values or certified
    intervals). Returns ``res`` (the prover's "unknown") when that does not apply or decide."""
    cfa = res.cfa if isinstance(res, prover.ProofResult) else None
    found = conditioning_assumes(cfa) if cfa is not None else []
    if (
        cfa is None
        or not found
        or not all(p.name in inputs for p in prog.params)
        or prog.reliability is not None
        or "failed" in cfa.types
    ):
        return res
    event: A.Expr = A.BoolLit(True)
    for e in cfa.ensures:
        event = e if event == A.BoolLit(True) else A.Binary("&&", event, e)
    claim = A.Binary(">=", A.Prob(event), A.Binary("-", A.num(1), cfa.bound))
    sub = dataclasses.replace(prog, ensures=(claim,), fails=None)
    from . import probability  # deferred on purpose: see the imports above

    try:
        exact = probability.decide_program(
            sub, inputs=inputs, timeout=timeout, path=path, source=source, executor=executor
        )
    except TampError as exc:
        res.message += f"\n  (the probability engine cannot decide it at these inputs either: {exc.message})"
        return res
    if exact.verdict == UNKNOWN:
        return res
    how = "holds" if exact.verdict == PROVED else "is violated"
    detail = exact.render_text().splitlines()[1:]
    msg = (
        f"the claim {how} at the fixed inputs: {describe(found[0], path)}, so it is the conditional bound "
        f"P({show_expr(event)} | the assumes) >= 1 - ({show_expr(cfa.bound)}), decided exactly by the "
        "probability engine (no failure-bound certificate: `tamp check-proof` does not accept it)"
    )
    out = ProgramResult(
        prog.name,
        FAILURE_BOUND,
        exact.verdict,
        res.time_s + exact.time_s,
        res.bound,
        "\n  ".join([msg] + [d.strip() for d in detail if d.strip()]),
        {"conditional": exact.to_json()},
    )
    return out


def prove(
    source_or_path,
    bound: Union[str, A.Expr, None] = None,
    timeout: Optional[float] = None,
    program: Optional[str] = None,
    inputs: Optional[Dict[str, object]] = None,
    path: Optional[str] = None,
    progress=None,
    infer: bool = False,
    executor=None,
) -> FileResult:
    """Prove every program of a file (a path, or source text) — the ``tamp prove`` command as a function.

    ``infer=True`` (``--infer``) reads every ``fails`` clause as ``fails ?``: the smallest failure
    bound tamp can prove is inferred (see :mod:`tamp.prover.infer.search`).

    ``bound`` replaces each program's ``fails`` clause (a string such as ``"p*n"`` or an expression).
    Raises :class:`lang.errors.TampError` for bad input (syntax, types, unknown program).
    ``inputs`` fixes parameters (``{"n": 8}``): each must be a parameter of a chosen program and
    fit its type. ``executor`` (a :class:`tamp.executor.Executor`, e.g. ``Executor(4)`` or
    ``Executor(scheduler="tcp://host:8786")``) runs the engines' parallel jobs: the causal box
    tree and the exact cell integrals of probability specifications.
    """
    t0 = time.monotonic()
    src = _load(source_or_path, path)
    progs = select(src, program)
    if not progs:
        raise TampError("the file contains no program", src.path)
    bound_expr = parse_bound(bound) if isinstance(bound, str) else bound
    if inputs:
        check_known(progs, inputs, src.path)
    if infer:
        if bound_expr is not None:
            raise TampError("--infer asks for the failure bound; it cannot be given with --bound")
        progs = [infer_bound(p) for p in progs]
    results = []
    deadline = time.monotonic() + timeout if timeout else None
    for prog in progs:
        if bound_expr is not None:
            check_bound(prog, bound_expr, bound if isinstance(bound, str) else None)
        left = max(deadline - time.monotonic(), 0.01) if deadline else None
        if prog.private is not None:  # the privacy claim is its own entry (after the accuracy claim's)
            acc = dataclasses.replace(prog, neighbours=None, private=None)
            if has_accuracy_claim(prog):
                results.append(prove_program(acc, bound_expr, left, inputs, src.path, src.text, progress, executor))
            left = max(deadline - time.monotonic(), 0.01) if deadline else None
            results.append(prove_privacy_claim(prog, left, inputs, src.path, src.text))
            continue
        results.append(prove_program(prog, bound_expr, left, inputs, src.path, src.text, progress, executor))
    return _file_result(src, results, "prove", t0)


def _file_result(src: A.SourceFile, results: List[ProgramResult], command: str, t0: float) -> FileResult:
    """The file's result, its programs' results knowing the file's text and path (the notebook
    view, :mod:`tamp.report`, lists the source and places the reasons in it)."""
    out = FileResult(src.path, results, command, time.monotonic() - t0)
    out.source = src.text
    for r in results:
        r.source, r.path = src.text, src.path
    return out


def certify_and_check(
    text: str, bound: Optional[str] = None, inputs: Optional[Dict[str, object]] = None
) -> CheckReport:
    """Prove ``text`` (a whole source file), write its certificate in memory, and re-check it —
    a round trip for tests and notebooks (``tamp prove --certificate``, then ``tamp check-proof``)."""
    from .certificate import check_certificate
    from .certificate import decode as decode_certificate
    from .certificate.writer import file_certificate

    res = prove(text, bound=bound, inputs=inputs, path="<string>")
    cert = json.loads(json.dumps(file_certificate(res, text.encode("utf-8"), bound, inputs)))
    src = parse(text, "<string>")
    b = parse_expr(bound, "--bound") if bound else None
    return check_certificate(decode_certificate(cert), src, text.encode("utf-8"), b, inputs)


def check(source_or_path, path: Optional[str] = None) -> CheckedFile:
    """Parse and type-check a file (a path, or source text) — ``tamp check`` as a function.

    Returns a :class:`tamp.results.CheckedFile` listing each program's parameter and local types
    and the kind of its specification; a file that does not check raises a located
    :class:`lang.errors.TampError` (``file:line:col: error: …``).

    >>> c = check("program coin(p: real) requires 0 < p && p <= 1 ensures !y fails p { y ~ bern(p); }")
    >>> c
    <CheckedFile <string>: ok (1 program: coin)>
    >>> c.programs[0].params, c.programs[0].locals, c.programs[0].kind
    ({'p': 'real'}, {'y': 'bool'}, 'failure-bound')
    """
    t0 = time.monotonic()
    src = _load(source_or_path, path) if not isinstance(source_or_path, A.SourceFile) else source_or_path
    types = check_file(src)
    programs = [
        ProgramSummary(
            prog.name,
            {n: str(ty) for n, ty in types[prog.name].params.items()},
            {n: str(ty) for n, ty in types[prog.name].locals.items()},
            spec_kind(prog) if _specified(prog) else "none",
        )
        for prog in src.programs
    ]
    return CheckedFile(src.path, programs, time.monotonic() - t0)


def simulate(
    source_or_path,
    inputs: Optional[Dict[str, object]] = None,
    runs: int = 100000,
    seed: int = 0,
    bound: Union[str, A.Expr, None] = None,
    confidence: float = 0.99,
    program: Optional[str] = None,
    path: Optional[str] = None,
):
    """Run one program ``runs`` times at fixed ``inputs`` and test its claim statistically —
    ``tamp simulate`` as a function. Returns a :class:`tamp.simulation.SimResult` (``.verdict``
    ``consistent``/``refuted``/… , ``.rate``, ``.ci``, ``.bound_value``; a notebook shows the rate's
    interval against the bound). ``program`` picks one program of a file with several.
    ``inputs`` must name parameters of the program and fit their types (located errors).

    >>> r = simulate("program c(p: real) requires 0 < p && p <= 1 ensures !x fails p { x ~ bern(p); }",
    ...              {"p": 0.25}, runs=20000, seed=1)
    >>> r.verdict, r.ci[0] < 0.25 < r.ci[1]
    ('consistent', True)
    """
    from .simulation import simulate as _simulate  # deferred on purpose: numpy loads only here

    src = _load(source_or_path, path)
    progs = select(src, program)
    if len(progs) != 1:
        names = ", ".join(p.name for p in progs) or "none"
        raise TampError(f"simulate runs one program; choose one with program= (the file has: {names})", src.path)
    if inputs:
        check_known(progs, inputs, src.path)
        inputs = check_inputs(progs[0], inputs, src.path, src.text or None)
    if isinstance(bound, str):
        check_bound(progs[0], parse_bound(bound), bound)
    res = _simulate(src, inputs or {}, runs=runs, seed=seed, bound=bound, confidence=confidence, program=progs[0].name)
    return res


def prob(
    source_or_path,
    inputs: Optional[Dict[str, object]] = None,
    timeout: Optional[float] = 60.0,
    program: Optional[str] = None,
    path: Optional[str] = None,
    executor=None,
) -> FileResult:
    """Compute every ``P(…)`` term (exactly, or as a certified interval) and decide the probability
    specifications of each program that has one — ``tamp prob`` as a function. Returns a
    :class:`tamp.results.FileResult` of :class:`tamp.probability.ProbResult` s (``.terms`` with their
    intervals, ``.verdict``); a file without a probability specification is a located error.

    >>> r = prob("program c() ensures P(x) >= 0.2 { x ~ bern(0.25); }")
    >>> r.verdict
    'proved'
    >>> print(r.programs[0].render_text().splitlines()[1])
      P(x) = 1/4 (0.25)
    """
    t0 = time.monotonic()
    src = _load(source_or_path, path)
    selected = select(src, program)
    progs = [p for p in selected if any(A.contains(e, (A.Prob, A.Fairness)) for e in p.ensures)]
    if not progs:
        where = "program " + program if program else "this file"
        raise TampError(
            f"no probability specification (an ensures clause with P(...) or fairness) in {where}", src.path
        )
    if inputs:
        check_known(selected, inputs, src.path)
    from . import probability  # deferred on purpose: see the imports above

    results: List[ProgramResult] = []
    for p in progs:
        mine = check_inputs(p, inputs, src.path, src.text or None) if inputs else None
        results.append(
            probability.decide_program(
                p, inputs=mine or None, timeout=timeout, path=src.path, source=src.text, executor=executor
            )
        )
    return _file_result(src, results, "prob", t0)


def certify(result: FileResult, bound: Optional[str] = None, inputs: Optional[Dict[str, object]] = None) -> dict:
    """The proof certificate of a :func:`prove` result (what ``tamp prove --certificate`` writes:
    a JSON-ready dict), for :func:`check_proof`. ``bound`` and ``inputs`` are the claim's, as
    given to :func:`prove`."""
    from .certificate.writer import file_certificate

    text = getattr(result, "source", None)
    if text is None:
        raise TampError("this result has no source text (make it with tamp.prove)", result.file)
    raw = text.encode("utf-8")
    try:
        on_disk = read_bytes(result.file)
        if decode(on_disk, result.file) == text:
            raw = on_disk  # the certificate is bound to the file's own bytes (a BOM, say)
    except TampError:
        pass  # source text, not a file
    return json.loads(json.dumps(file_certificate(result, raw, bound, inputs)))


def check_proof(
    cert,
    source_or_path,
    bound: Optional[str] = None,
    inputs: Optional[Dict[str, object]] = None,
    infer: bool = False,
    solver_timeout_ms: int = 10000,
    timeout: Optional[float] = None,
    path: Optional[str] = None,
    executor=None,
) -> CheckReport:
    """Re-check a proof certificate against its source, independently of the prover — ``tamp
    check-proof`` as a function. ``cert`` is a certificate file's path or its JSON (a dict, e.g.
    from :func:`certify`); ``source_or_path`` the ``.prob`` file (path or text) it is about;
    ``bound``/``inputs``/``infer`` the claim, as given to :func:`prove`. Returns a
    :class:`tamp.certificate.CheckReport` (``.ok``, ``.obligations``, ``.reason`` when rejected).

    >>> text = "program coin(p: real) requires 0 < p && p <= 1 ensures !y fails p { y ~ bern(p); }"
    >>> check_proof(certify(prove(text)), text)  # doctest: +ELLIPSIS
    <CheckReport ok: ... obligations re-checked in ... s>
    """
    # deferred on purpose: the checker loads when a proof is checked; it is the checking path of
    # `tamp check-proof`, which imports no module of the prover (tamp.certificate.check_file)
    from .certificate.check_file import check_proof as _check_proof

    return _check_proof(cert, source_or_path, bound, inputs, infer, solver_timeout_ms, timeout, path, executor)


def import_model(
    model: str,
    *,
    format: Optional[str] = None,
    features: Optional[List[str]] = None,
    spec=None,
    ranges=(),
    name: Optional[str] = None,
    sensitive: Optional[str] = None,
):
    """A trained model (ONNX, Keras HDF5 or Libra's network format) as a tamp program: an
    :class:`tamp.models.ImportedModel` with ``.text`` (the ``.prob`` source, parsed and
    type-checked), ``.program`` (its AST) and ``.network`` (the exact weights). See
    :func:`tamp.models.import_model` for the arguments; errors are located
    :class:`lang.errors.TampError` s naming the operator, layer or feature.

    >>> r = tamp.import_model("net.onnx", spec="spec.txt", ranges=["0..1"])  # doctest: +SKIP
    >>> tamp.prove(r.text)                                                   # doctest: +SKIP
    """
    from .models import import_model as _import  # deferred on purpose: onnx/h5py load only here

    return _import(model, format=format, features=features, spec=spec, ranges=ranges, name=name, sensitive=sensitive)


def robust(model: str, at, eps, **options):
    """Certified probabilistic robustness of a trained classifier (``tamp robust``): for every
    row of ``at`` (a CSV path with a header of feature names) an exact interval containing
    Pr[the class stays the one at the point] for inputs drawn from ``prior`` (a path or a
    :class:`tamp.models.prior.Prior`; uniform by default) restricted to the eps-box. Options:
    ``prior``, ``spec``, ``format``, ``features``, ``ranges``, ``width``, ``timeout`` (per
    point), ``workers``, ``scheduler``. Returns a :class:`tamp.robustness.RobustResult`.

    >>> r = tamp.robust("mlp.onnx", at="points.csv", eps=0.05, prior="prior.json")  # doctest: +SKIP
    >>> r.points[0].lower, r.points[0].upper                                        # doctest: +SKIP
    """
    from .robustness import robust as _robust  # deferred on purpose: onnx/numpy load only here

    return _robust(model, at, eps, **options)


def equiv(model_a: str, model_b: str, **options):
    """A certified interval of Pr[the two models' classes differ] (``tamp equiv``) for inputs
    drawn from ``prior`` (default uniform over the input box); returns a
    :class:`tamp.robustness.EquivResult`."""
    from .robustness import equiv as _equiv

    return _equiv(model_a, model_b, **options)


def fit_prior(data, **options):
    """A piecewise-constant prior (density-estimation tree) fitted to a CSV table (a path or a
    :class:`tamp.models.table.Table`), as ``tamp prior fit`` does; options ``categorical``,
    ``continuous``, ``ranges`` ({name: (lo, hi)}), ``max_cells``, ``min_leaf``. Save it with
    :func:`tamp.models.prior.save_prior`."""
    from .models.prior import fit_prior as _fit
    from .models.table import load_table

    table = load_table(data) if isinstance(data, str) else data
    return _fit(table, **options)


# ---------------------------------------------------------------------------- placement (Chisel)


@dataclasses.dataclass
class Placement:
    """The answer of :func:`place`: which candidates go to unreliable hardware, the saving, the
    annotated program's text and the prover's result on it (``proof``: its verdict decides)."""

    program: str
    chosen: List[str]
    reliable: List[str]
    saving: Fraction
    budget: Fraction
    used: Fraction
    text: str
    proof: Optional[FileResult] = None
    proved_with_inputs: bool = False
    costs: Dict[str, Fraction] = dataclasses.field(default_factory=dict)
    refuted: int = 0  # placements the integer program chose but the prover did not prove

    @property
    def verdict(self) -> str:
        return self.proof.verdict if self.proof is not None else UNKNOWN


#: the saving of one candidate of each kind when none is given (`--saving KIND=S`)
DEFAULT_SAVING = Fraction(1)


def _exact(e: A.Expr, env: Dict[str, object], what: str) -> Fraction:
    missing = sorted(set(free_vars(e)) - set(env))
    if missing:
        raise TampError(
            f"{what} ({show_expr(e)}) depends on {', '.join(missing)}: give {'it' if len(missing) == 1 else 'them'} "
            "with --input (the placement is chosen for numbers)"
        )
    try:
        return Fraction(evaluate(e, dict(env)))
    except (EvalError, ValueError, ZeroDivisionError, TypeError) as exc:
        raise TampError(f"{what} ({show_expr(e)}) has no value at the given inputs: {exc}") from None


def _budget(prog: A.Program) -> A.Expr:
    if prog.fails is not None and not isinstance(prog.fails, A.Hole):
        return prog.fails
    if prog.value_reliability is not None:
        return A.Binary("-", A.num(1), input_reliabilities(prog.value_reliability.bound)[0])
    if prog.reliability is not None:
        return A.Binary("-", A.num(1), prog.reliability)
    raise TampError(
        f"program '{prog.name}' states no reliability claim to keep (`reliability E`, `reliability(x) >= E` or `fails`)"
    )


def place(
    source_or_path,
    output: Optional[str] = None,
    program: Optional[str] = None,
    savings: Optional[Dict[str, object]] = None,
    inputs: Optional[Dict[str, object]] = None,
    path: Optional[str] = None,
    timeout: Optional[float] = None,
    attempts: int = 8,
) -> Placement:
    """Chisel's question — ``tamp place`` as a function: which candidate operations (``+?`` …)
    and regions (``unreliable? a``) may run on unreliable hardware, saving the most, while the
    program's reliability claim still holds (:mod:`tamp.cfa.placement`).

    Each candidate's share of the union bound is the failure bound inferred with it alone
    unreliable, less the bound with none; the shares and the claim's bound are evaluated at
    ``inputs`` (every parameter they read must be given) and the integer program is solved
    exactly. The annotated program is then proved by the prover (as written, else with
    ``inputs`` fixed); a placement the prover does not prove is excluded and the next best is
    tried (at most ``attempts`` times). ``savings``: per kind (``"*"``, ``"<="``, ``"memory"`` …,
    default 1 per candidate). ``output``: where :func:`place`'s caller writes ``text``."""
    src = _load(source_or_path, path)
    progs = select(src, program)
    if len(progs) != 1:
        names = ", ".join(p.name for p in src.programs)
        raise TampError(f"the file has {len(src.programs)} programs ({names}); choose one with --program", src.path)
    prog = progs[0]
    check_file(A.SourceFile((prog,), src.path, src.text))
    inputs = check_inputs(prog, inputs, src.path, src.text or None) if inputs else {}
    cands = placement.candidates(prog)
    if not cands:
        raise TampError(
            f"program '{prog.name}' has no candidate: mark operators `+? -? *? /? <? <=? >? >=? ==?` or "
            "regions `unreliable? a`",
            src.path,
        )
    per_kind = {placement.kind_key(k): Fraction(str(v)) for k, v in (savings or {}).items()}
    for k in per_kind:
        if k not in placement.KINDS:
            raise TampError(f"--saving {k}:…: the kinds are {', '.join(placement.KINDS)}", "--saving")
    budget_expr = _budget(prog)
    budget = _exact(budget_expr, inputs, "the claim's failure bound")
    deadline = time.monotonic() + timeout if timeout else None

    def left() -> Optional[float]:
        return max(deadline - time.monotonic(), 0.01) if deadline else None

    def inferred(chosen: set) -> Optional[A.Expr]:
        variant = placement.placed(prog, chosen)
        variant = dataclasses.replace(infer_bound(variant), fails=A.Hole(stated=None))
        res = prover.prove_program(variant, None, left(), src.path, src.text)
        if res.verdict != PROVED or not res.bound:
            return None
        return parse_expr(res.bound, "<inferred bound>")

    base_expr = inferred(set())
    if base_expr is None:
        raise TampError(f"program '{prog.name}': no failure bound could be proved even with every candidate reliable")
    base = _exact(base_expr, inputs, "the failure bound with every candidate reliable")
    costs: Dict[int, Fraction] = {}
    for c in cands:
        e = inferred({c.index})
        if e is None:  # no bound with it unreliable: it cannot be placed
            continue
        costs[c.index] = max(_exact(e, inputs, f"the failure bound with {c.describe()} unreliable") - base, Fraction(0))
    save = {c.index: per_kind.get(placement.kind_key(c.kind), DEFAULT_SAVING) for c in cands if c.index in costs}
    excluded: List[set] = []
    for _ in range(max(attempts, 1)):
        sol = placement.optimise(costs, save, base, budget, excluded)
        if sol is None:
            break
        text = placement.annotate(src.text, cands, sol.chosen)
        out_path = output or src.path
        proof = prove(text, program=prog.name, path=out_path, timeout=left())
        with_inputs = False
        if proof.verdict != PROVED and inputs:
            proof = prove(text, program=prog.name, path=out_path, inputs=inputs, timeout=left())
            with_inputs = True
        if proof.verdict == PROVED:
            return Placement(
                prog.name,
                [c.describe() for c in cands if c.index in sol.chosen],
                [c.describe() for c in cands if c.index not in sol.chosen],
                sol.saving,
                budget,
                sol.used,
                text,
                proof,
                with_inputs,
                {c.describe(): costs[c.index] for c in cands if c.index in costs},
                len(excluded),
            )
        excluded.append(set(sol.chosen))
    # nothing better was proved: every candidate reliable (the claim itself was proved above)
    text = placement.annotate(src.text, cands, set())
    proof = prove(text, program=prog.name, path=output or src.path, inputs=inputs or None, timeout=left())
    return Placement(
        prog.name,
        [],
        [c.describe() for c in cands],
        Fraction(0),
        budget,
        base,
        text,
        proof,
        bool(inputs),
        {c.describe(): costs[c.index] for c in cands if c.index in costs},
        len(excluded),
    )
