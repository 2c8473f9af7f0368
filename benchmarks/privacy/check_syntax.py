"""Syntax and shape check of the privacy suite against LANGUAGE.md, without the privacy engine.

Idea: today's grammar (lang/grammar.lark) does not know the `neighbours` and `private` clauses,
so each file is checked twice.
1. With the grammar extended by exactly what LANGUAGE.md's "Differential privacy" section adds:
   the clauses `neighbours R` and `private E [, D] on x1, ..., xk` (or `private ? on ...`),
   primed inputs `q'` in expressions, and `neighbours`, `private` as keywords (`on` only inside
   a `private` clause; `written(a, i)` is an ordinary call). On that tree it checks what the
   contract says of the clauses: primes only on parameters and only inside `neighbours`, at
   least one primed input, the budget reads only public (never primed) inputs, every released
   variable is assigned in the body, and the file's comment block names its source and an
   `expect:` line that agrees with its folder (private/ or broken/).
2. With the two clauses blanked out (positions kept), the rest must parse and type-check with
   the real front end (lang.parser, lang.typecheck), so the programs are in today's language.
This is a check of the benchmark files only; it says nothing about whether tamp proves them.

Run: `python benchmarks/privacy/check_syntax.py` (exit 1 on any problem).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Iterator, List, Set, Tuple

from lark import Lark, Token, Tree

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from lang import parser as lang_parser  # noqa: E402
from lang import typecheck as lang_typecheck  # noqa: E402
from lang.errors import TampError  # noqa: E402

KEYWORDS = ("neighbours", "private")


def extended_grammar() -> str:
    g = (ROOT / "lang" / "grammar.lark").read_text()
    clause = '      | "reliability" expr     -> reliability\n'
    assert clause in g, "grammar changed: no reliability clause to extend after"
    g = g.replace(
        clause,
        clause
        + '      | "neighbours" expr      -> neighbours\n'
        + '      | "private" budget "on" NAME ("," NAME)* -> private\n',
    )
    g += '\nbudget: expr ["," expr]   // `private ? on x` parses as the hole atom `?`\n'
    atom = "     | NAME                                     -> var\n"
    assert atom in g, "grammar changed: no variable atom to extend after"
    g = g.replace(atom, atom + '     | NAME "\'"                                 -> primed\n')
    name = "NAME: /(?!(program|"
    assert name in g, "grammar changed: NAME is not a keyword-excluding regex"
    g = g.replace(name, name + "|".join(KEYWORDS) + "|")
    return g


def _parser() -> Lark:
    return Lark(extended_grammar(), parser="lalr", propagate_positions=True, maybe_placeholders=True, start="start")


def _names(t: Any, kind: str) -> Iterator[Tuple[str, Any]]:
    for sub in t.iter_subtrees():
        if sub.data == kind:
            tok = sub.children[0]
            yield str(tok), tok


def _assigned(body: Any) -> Set[str]:
    out: Set[str] = set()
    for sub in body.iter_subtrees():
        if sub.data in ("assign", "sample"):
            for lv in sub.children[0].children:
                if isinstance(lv, Tree) and lv.children and isinstance(lv.children[0], Token):
                    out.add(str(lv.children[0]))
    return out


def check_file(path: Path, lark: Lark, suite: Path = HERE) -> List[str]:
    """The problems of one file of the suite rooted at `suite` (its folder says the verdict)."""
    rel = path.relative_to(suite)
    text = path.read_text()
    problems: List[str] = []

    def bad(msg: str, tok: object = None) -> None:
        where = f"{getattr(tok, 'line', 1)}:{getattr(tok, 'column', 1)}" if tok is not None else "1:1"
        problems.append(f"{rel}:{where}: {msg}")

    # -- the comment block
    head = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        head.append(line)
    block = "\n".join(head)
    if not head:
        bad("no comment block at the top")
    if "Source" not in block:
        bad("the comment block names no source")
    want = "expect: private" if rel.parts[0] == "private" else "expect: violated"
    if want not in block:
        bad(f"the comment block has no '{want}' line")
    if rel.parts[0] == "broken" and "Witness" not in block:
        bad("a broken mechanism's comment block gives no witness")

    # -- 1. the extended grammar
    try:
        tree = lark.parse(text)
    except Exception as exc:  # lark's UnexpectedInput family
        ln, cl = getattr(exc, "line", None) or 1, getattr(exc, "column", None) or 1
        return problems + [f"{rel}:{ln}:{cl}: syntax error (extended grammar): {str(exc).splitlines()[0]}"]
    progs = [p for p in tree.children if isinstance(p, Tree) and p.data == "program"]
    if len(progs) != 1:
        bad(f"expected one program, found {len(progs)}")
    spans: List[Tuple[Tuple[int, int], str]] = []
    for prog in progs:
        name_tok = prog.children[0]
        if name_tok != path.stem:
            bad(f"program {name_tok} is not named after its file", name_tok)
        params = {str(p.children[0]) for p in prog.children if isinstance(p, Tree) and p.data == "param"}
        clauses = [c for c in prog.children if isinstance(c, Tree) and c.data not in ("param", "block")]
        body = prog.children[-1]
        nb = [c for c in clauses if c.data == "neighbours"]
        pv = [c for c in clauses if c.data == "private"]
        if len(nb) != 1 or len(pv) != 1:
            bad("expected one `neighbours` and one `private` clause", name_tok)
        primed: Set[str] = set()
        for c in nb:
            for n, tok in _names(c, "primed"):
                if n not in params:
                    bad(f"primed {n}' is not a parameter", tok)
                primed.add(n)
            if not primed:
                bad("the neighbours relation primes no input", name_tok)
        for c in clauses:
            if c.data != "neighbours":
                for n, tok in _names(c, "primed"):
                    bad(f"{n}' outside the neighbours clause", tok)
        for n, tok in _names(body, "primed"):
            bad(f"{n}' in the body", tok)
        assigned = _assigned(body)
        for c in pv:
            budget = c.children[0]
            for n, tok in _names(budget, "var"):
                if n not in params:
                    bad(f"the budget reads {n}, which is not an input", tok)
                elif n in primed:
                    bad(f"the budget reads {n}, which is private (primed in neighbours)", tok)
            for released in c.children[1:]:
                if released is None:
                    continue
                if str(released) not in assigned:
                    bad(f"released variable {released} is never assigned", released)
                if str(released) in params:
                    bad(f"released variable {released} is an input", released)
        for c in nb + pv:
            spans.append(((c.meta.start_pos, c.meta.end_pos), c.data))

    # -- 2. today's front end on the rest
    chars = list(text)
    for (a, b), kw in spans:
        start = text.rfind(kw, 0, a + len(kw))  # the clause's keyword, wherever meta starts
        for k in range(start, b):
            if chars[k] != "\n":
                chars[k] = " "
    stripped = "".join(chars)
    if re.search(r"\b(neighbours|private)\b", re.sub(r"//[^\n]*", "", stripped)):
        bad("a privacy clause was not blanked out")
    try:
        src = lang_parser.parse(stripped, str(rel))
        lang_typecheck.check_file(src)
    except TampError as exc:  # syntax, type or unsupported-construct error
        bad(f"today's front end rejects the body: {exc}")
    return problems


def main() -> int:
    lark = _parser()
    files = sorted(HERE.glob("private/*.prob")) + sorted(HERE.glob("broken/*.prob"))
    problems: List[str] = []
    for f in files:
        problems += check_file(f, lark)
    for p in problems:
        print(p)
    n_priv = len(list(HERE.glob("private/*.prob")))
    print(f"{len(files)} files ({n_priv} private, {len(files) - n_priv} broken): {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
