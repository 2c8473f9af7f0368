"""Reading a certificate file: strict JSON-shape checks into small dataclasses.

Anything that is not a well-formed certificate raises :class:`MalformedCertificate` with the
JSON path of the problem (``tamp check-proof`` exits 2). Whether a well-formed certificate
*proves* anything is the checker's business (:mod:`.checker`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from lang import ast as A
from lang.jsonfile import JSONError, loads
from lang.serialize import SerializeError, expr_from_json, stmt_from_json

from .conc_checker import MalformedConc, decode_conc
from .conj_checker import MalformedConj, decode_conj
from .exp_checker import MalformedExp, decode_exp
from .format import FORMAT, VERSION, MalformedCertificate, known_keys
from .lin_checker import MalformedLin, decode_lin
from .nest_checker import MalformedNest, decode_nest
from .privacy_checker import decode_privacy
from .prob_reader import decode_prob
from .product_checker import MalformedProduct, decode_product
from .termination import Geometric, Ranking


@dataclass
class CertAxiom:
    family: str
    parts: Any  # the derivation tree (JSON), evaluated by the checker
    bad: A.Expr
    cost: A.Expr
    side: Tuple[A.Expr, ...]


@dataclass
class CertNode:
    id: int
    cfa_node: int
    lam: A.Expr
    kappa: A.Expr


@dataclass
class CertEdge:
    index: int
    src: int
    dst: int
    kind: str
    stmt: A.Stmt
    cfa_edge: Optional[Tuple[int, int, int]]
    axiom: Optional[CertAxiom]


@dataclass
class CertAutomaton:
    root: int
    exits: List[int]
    nodes: Dict[int, CertNode] = field(default_factory=dict)
    edges: List[CertEdge] = field(default_factory=list)

    def out(self, nid: int) -> List[CertEdge]:
        return [e for e in self.edges if e.src == nid]


@dataclass
class ProgramCert:
    name: str
    bound: A.Expr
    cfa: Dict[str, Any]
    automaton: CertAutomaton
    obligations: List[Dict[str, Any]]
    facts: List[A.Expr] = field(default_factory=list)
    termination: List[Any] = field(default_factory=list)  # .termination.Ranking or .Geometric


@dataclass
class Certificate:
    file: str
    source_sha256: str
    claim: Dict[str, Any]
    programs: List[ProgramCert]
    probability: List[Any] = field(default_factory=list)  # prob_reader.ProbCert
    concentration: List[Any] = field(default_factory=list)  # conc_checker.ConcCert
    expectation: List[Any] = field(default_factory=list)  # exp_checker.ExpCert
    privacy: List[Any] = field(default_factory=list)  # privacy_checker.PrivCert
    inputs_free: List[str] = field(default_factory=list)  # failure bounds proved with --input free
    product: List[Any] = field(default_factory=list)  # product_checker.ProductCert
    nesting: List[Any] = field(default_factory=list)  # nest_checker.NestCert
    linearity: List[Any] = field(default_factory=list)  # lin_checker.LinCert
    conjuncts: List[Any] = field(default_factory=list)  # conj_checker.ConjCert


def load(path: str) -> Certificate:
    """Read and shape-check the certificate at ``path``; the message of a
    :class:`MalformedCertificate` starts with the JSON path of the problem (the caller names
    the file)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise MalformedCertificate(f"cannot read the certificate: {exc.strerror or exc}") from None
    try:
        data = loads(raw)  # strict: no NaN, no duplicate keys, no 5000-digit integers
    except JSONError as exc:
        raise MalformedCertificate(str(exc)) from None
    return decode(data)


def _get(d: Any, key: str, kind, where: str):
    if not isinstance(d, dict):
        raise MalformedCertificate(f"{where}: expected an object")
    if key not in d:
        raise MalformedCertificate(f"{where}: missing field '{key}'")
    v = d[key]
    if kind is int and (isinstance(v, bool) or not isinstance(v, int)):
        raise MalformedCertificate(f"{where}.{key}: expected an integer")
    if kind is not None and kind is not int and not isinstance(v, kind):
        raise MalformedCertificate(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}")
    return v


def _ast(fn, data, where):
    try:
        return fn(data)
    except SerializeError as exc:
        raise MalformedCertificate(f"{where}: {str(exc).replace('$', '', 1)}") from None


def decode(data: Any) -> Certificate:
    """A :class:`Certificate` from parsed JSON."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MalformedCertificate(f'not a tamp certificate (expected "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise MalformedCertificate(f"unsupported certificate version {data.get('version')!r} (expected {VERSION})")
    known_keys(
        data,
        (
            "format",
            "version",
            "file",
            "source_sha256",
            "claim",
            "programs",
            "probability",
            "not_certified",
            "concentration",
            "expectation",
            "privacy",
            "inputs_free",
            "product",
            "nesting",
            "linearity",
            "conjuncts",
        ),
        "$",
    )
    free = data.get("inputs_free", [])
    if not (isinstance(free, list) and all(isinstance(x, str) for x in free)):
        raise MalformedCertificate("$.inputs_free: expected a list of program names")
    sha = _get(data, "source_sha256", str, "$")
    claim = _get(data, "claim", dict, "$")
    known_keys(claim, ("bound", "inputs"), "$.claim")
    progs = _get(data, "programs", list, "$")
    probs = data.get("probability", [])
    if not isinstance(probs, list):
        raise MalformedCertificate("$.probability: expected a list")
    return Certificate(
        str(data.get("file", "")),
        sha,
        claim,
        [decode_program(p, f"$.programs[{i}]") for i, p in enumerate(progs)],
        [decode_prob(p, f"$.probability[{i}]") for i, p in enumerate(probs)],
        _decode_concentration(data.get("concentration", [])),
        _decode_expectation(data.get("expectation", [])),
        _decode_privacy(data.get("privacy", [])),
        list(free),
        _decode_product(data.get("product", [])),
        _decode_nesting(data.get("nesting", [])),
        _decode_linearity(data.get("linearity", [])),
        _decode_conjuncts(data.get("conjuncts", [])),
    )


def _decode_conjuncts(items: Any) -> List[Any]:
    if not isinstance(items, list):
        raise MalformedCertificate("$.conjuncts: expected a list")
    try:
        return [decode_conj(c, f"$.conjuncts[{i}]", decode_any) for i, c in enumerate(items)]
    except (MalformedConj, MalformedNest, MalformedProduct, MalformedExp, MalformedConc, MalformedLin) as exc:
        raise MalformedCertificate(str(exc)) from None


def _decode_nesting(items: Any) -> List[Any]:
    if not isinstance(items, list):
        raise MalformedCertificate("$.nesting: expected a list")
    try:
        return [decode_nest(c, f"$.nesting[{i}]", decode_any) for i, c in enumerate(items)]
    except (MalformedNest, MalformedProduct, MalformedExp, MalformedConc, MalformedLin) as exc:
        raise MalformedCertificate(str(exc)) from None


def decode_any(d: Any, where: str) -> Any:
    """A failure-bound certificate of any method (its ``method`` field; none: the union bound's
    program certificate), as a nesting certificate's inner proof."""
    method = d.get("method") if isinstance(d, dict) else None
    if method == "nesting":
        return decode_nest(d, where, decode_any)
    if method == "conjuncts":
        return decode_conj(d, where, decode_any)
    if method == "product":
        return decode_product(d, where, decode_program)
    if method == "expectation":
        return decode_exp(d, where)
    if method == "concentration":
        return decode_conc(d, where)
    if method == "linearity":
        return decode_lin(d, where)
    if method is not None:
        raise MalformedCertificate(f"{where}.method: unknown method {method!r}")
    return decode_program(d, where)


def _decode_product(items: Any) -> List[Any]:
    if not isinstance(items, list):
        raise MalformedCertificate("$.product: expected a list")
    try:
        return [decode_product(c, f"$.product[{i}]", decode_program) for i, c in enumerate(items)]
    except MalformedProduct as exc:
        raise MalformedCertificate(str(exc)) from None


def _decode_privacy(items: Any) -> List[Any]:
    if not isinstance(items, list):
        raise MalformedCertificate("$.privacy: expected a list")
    return [decode_privacy(c, f"$.privacy[{i}]") for i, c in enumerate(items)]


def _decode_expectation(items: Any) -> List[Any]:
    if not isinstance(items, list):
        raise MalformedCertificate("$.expectation: expected a list")
    try:
        return [decode_exp(c, f"$.expectation[{i}]") for i, c in enumerate(items)]
    except MalformedExp as exc:
        raise MalformedCertificate(str(exc)) from None


def _decode_linearity(items: Any) -> List[Any]:
    if not isinstance(items, list):
        raise MalformedCertificate("$.linearity: expected a list")
    try:
        return [decode_lin(c, f"$.linearity[{i}]") for i, c in enumerate(items)]
    except MalformedLin as exc:
        raise MalformedCertificate(str(exc)) from None


def _decode_concentration(items: Any) -> List[Any]:
    if not isinstance(items, list):
        raise MalformedCertificate("$.concentration: expected a list")
    try:
        return [decode_conc(c, f"$.concentration[{i}]") for i, c in enumerate(items)]
    except MalformedConc as exc:
        raise MalformedCertificate(str(exc)) from None


def decode_program(p: Any, where: str) -> ProgramCert:
    known_keys(p, ("program", "bound", "bound_text", "cfa", "automata", "facts", "obligations", "termination"), where)
    name = _get(p, "program", str, where)
    bound = _ast(expr_from_json, _get(p, "bound", None, where), f"{where}.bound")
    cfa = _get(p, "cfa", dict, where)
    auts = _get(p, "automata", list, where)
    if len(auts) != 1:
        raise MalformedCertificate(f"{where}.automata: a proof is exactly one automaton (got {len(auts)})")
    obligations = p.get("obligations", [])
    if not isinstance(obligations, list):
        raise MalformedCertificate(f"{where}.obligations: expected a list")
    facts = p.get("facts", [])
    if not isinstance(facts, list):
        raise MalformedCertificate(f"{where}.facts: expected a list")
    term = p.get("termination", [])
    if not isinstance(term, list):
        raise MalformedCertificate(f"{where}.termination: expected a list")
    return ProgramCert(
        name,
        bound,
        cfa,
        decode_automaton(auts[0], f"{where}.automata[0]"),
        obligations,
        [_ast(expr_from_json, f, f"{where}.facts[{i}]") for i, f in enumerate(facts)],
        [decode_ranking(r, f"{where}.termination[{i}]") for i, r in enumerate(term)],
    )


def decode_ranking(r: Any, where: str):
    known_keys(r, ("head", "kind", "sample", "rank", "decreasing", "invariant", "paths"), where)
    head = _get(r, "head", int, where)
    kind = r.get("kind", "rank")
    if kind == "geometric":
        e = _get(r, "sample", list, where)
        if not (len(e) == 3 and all(type(x) is int for x in e)):
            raise MalformedCertificate(f"{where}.sample: expected [src, dst, key]")
        return Geometric(head, tuple(e))
    if kind != "rank":
        raise MalformedCertificate(f'{where}.kind: expected "rank" or "geometric"')
    rank = _ast(expr_from_json, _get(r, "rank", None, where), where + ".rank")
    dec = []
    for i, e in enumerate(_get(r, "decreasing", list, where)):
        if not (isinstance(e, list) and len(e) == 3 and all(type(x) is int for x in e)):
            raise MalformedCertificate(f"{where}.decreasing[{i}]: expected [src, dst, key]")
        dec.append(tuple(e))
    inv = None
    if r.get("invariant") is not None:
        inv = _ast(expr_from_json, r["invariant"], where + ".invariant")
    paths = r.get("paths", False)
    if type(paths) is not bool:
        raise MalformedCertificate(f"{where}.paths: expected true or false")
    return Ranking(head, rank, tuple(dec), inv, paths)


def decode_automaton(a: Any, where: str) -> CertAutomaton:
    known_keys(a, ("root", "exits", "nodes", "edges"), where)
    root = _get(a, "root", int, where)
    exits = _get(a, "exits", list, where)
    aut = CertAutomaton(root, [x for x in exits if isinstance(x, int)])
    for i, n in enumerate(_get(a, "nodes", list, where)):
        w = f"{where}.nodes[{i}]"
        known_keys(n, ("id", "cfa_node", "lambda", "kappa"), w)
        nid = _get(n, "id", int, w)
        if nid in aut.nodes:
            raise MalformedCertificate(f"{w}: duplicate node id {nid}")
        aut.nodes[nid] = CertNode(
            nid,
            _get(n, "cfa_node", int, w),
            _ast(expr_from_json, _get(n, "lambda", None, w), w + ".lambda"),
            _ast(expr_from_json, _get(n, "kappa", None, w), w + ".kappa"),
        )
    if root not in aut.nodes:
        raise MalformedCertificate(f"{where}.root: no node {root}")
    for i, e in enumerate(_get(a, "edges", list, where)):
        w = f"{where}.edges[{i}]"
        known_keys(e, ("src", "dst", "kind", "stmt", "cfa_edge", "axiom"), w)
        src, dst = _get(e, "src", int, w), _get(e, "dst", int, w)
        for end in (src, dst):
            if end not in aut.nodes:
                raise MalformedCertificate(f"{w}: no node {end}")
        kind = _get(e, "kind", str, w)
        if kind not in ("cfa", "split"):
            raise MalformedCertificate(f'{w}.kind: expected "cfa" or "split"')
        stmt = _ast(stmt_from_json, _get(e, "stmt", None, w), w + ".stmt")
        ce = e.get("cfa_edge")
        if ce is not None:
            if not (isinstance(ce, list) and len(ce) == 3 and all(type(x) is int for x in ce)):
                raise MalformedCertificate(f"{w}.cfa_edge: expected [src, dst, key] or null")
            ce = tuple(ce)
        ax = e.get("axiom")
        aut.edges.append(
            CertEdge(i, src, dst, kind, stmt, ce, decode_axiom(ax, w + ".axiom") if ax is not None else None)
        )
    return aut


def decode_axiom(ax: Any, where: str) -> CertAxiom:
    known_keys(ax, ("family", "param", "parts", "bad", "cost", "side"), where)
    side = _get(ax, "side", list, where)
    return CertAxiom(
        str(ax.get("family", "")),
        _get(ax, "parts", None, where),
        _ast(expr_from_json, _get(ax, "bad", None, where), where + ".bad"),
        _ast(expr_from_json, _get(ax, "cost", None, where), where + ".cost"),
        tuple(_ast(expr_from_json, s, f"{where}.side[{i}]") for i, s in enumerate(side)),
    )
