"""docs/architecture.md matches the tree: every module or package it names exists, every part of
tamp is named there, and every part of tamp sits in a layer of the import-linter contract."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from locations import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PAGE = REPO / "docs" / "architecture.md"
TOPS = ("tamp", "lang", "axioms", "tests")  # a path under one of these is named from the repository root
ENGINES = ("prover", "prob", "certificate", "causal", "wmi", "simulate", "report", "cfa", "core", "models")


def _text() -> str:
    return PAGE.read_text()


def _module_exists(dotted: str) -> bool:
    """``a.b.c`` is a module or package of the repository, or ``a.b`` is and ``c`` a name in it."""
    parts = dotted.split(".")
    for n in (len(parts), len(parts) - 1):
        if n < 1:
            continue
        base = REPO.joinpath(*parts[:n])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            if n == len(parts):
                return True
            src = (base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py").read_text()
            return re.search(rf"^(def|class) {parts[-1]}\b|^{parts[-1]}\s*[:=]", src, re.M) is not None
    return False


def _path_exists(token: str) -> bool:
    token = token.rstrip("/")
    if token.split("/")[0] in TOPS:
        return (REPO / token).exists()
    # a path relative to the package its table row is about (`interval.py`, `cfa/dependence.py`)
    return any(p.relative_to(REPO).as_posix().endswith("/" + token) for p in (REPO / "tamp").rglob(Path(token).name))


def named_paths(text: str):
    for tok in re.findall(r"`([^`\s]+)`", text):
        if re.fullmatch(r"[\w/]+\.py|(tamp|lang|axioms)(/[\w.]+)*/?", tok):
            yield tok


def named_modules(text: str):
    return set(re.findall(r"\b((?:tamp|lang|axioms|%s)(?:\.\w+)+)" % "|".join(ENGINES), text))


def test_every_path_named_in_architecture_md_exists():
    named = list(named_paths(_text()))
    assert len(named) > 20
    missing = [t for t in named if not _path_exists(t)]
    assert not missing, f"docs/architecture.md names paths that are not in the tree: {missing}"


def test_every_dotted_module_named_in_architecture_md_exists():
    import tamp

    named = named_modules(_text())
    assert len(named) > 10  # the data-flow picture names the prover's modules
    missing = []
    for tok in named:
        lazy_api = tok.startswith("tamp.") and tok.split(".")[1] in tamp.__all__  # tamp.prove, from tamp.api
        if not (lazy_api or _module_exists(tok) or _module_exists("tamp." + tok)):
            missing.append(tok)
    assert not missing, f"docs/architecture.md names modules that are not in the tree: {sorted(missing)}"


def _parts_of_tamp():
    for p in sorted((REPO / "tamp").iterdir()):
        if p.name.startswith(("_", ".")) and p.name != "__main__.py":
            continue
        if p.suffix == ".py" or (p / "__init__.py").is_file():
            yield p


def test_every_part_of_tamp_is_named_in_architecture_md():
    text = _text()
    unnamed = [
        p.name
        for p in _parts_of_tamp()
        if p.name != "__main__.py" and f"`tamp/{p.name}" not in text and f"`tamp.{p.stem}" not in text
    ]
    assert not unnamed, f"add these parts of tamp to docs/architecture.md (with their layer): {unnamed}"
    for top in TOPS:
        assert f"`{top}" in text


def test_every_part_of_tamp_is_in_a_layer_of_the_import_contract():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    layered = set()
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            for layer in contract["layers"]:
                layered.update(re.findall(r"[\w.]+", layer))
    unplaced = [f"tamp.{p.stem}" for p in _parts_of_tamp() if f"tamp.{p.stem}" not in layered and p.stem != "version"]
    unplaced = [m for m in unplaced if m not in layered]
    assert not unplaced, f"put these in a layer of [tool.importlinter] in pyproject.toml: {unplaced}"
    for top in ("lang", "axioms"):
        assert top in layered
