"""Helpers shared by the sub-commands: loading a file, picking programs, ``--input``, JSON output,
and writing output files.

Every file a command writes goes through :func:`atomic_output` / :func:`write_output`, which keep
two promises. **No command writes over one of its inputs**: an output path that resolves to an
input file (symlinks followed, hard links caught by ``os.path.samefile``) is one exit-2 message
naming the option, and nothing is written; :func:`guard_outputs` checks every output option of a
command line before the command starts (the options whose argparse ``type`` is one of
:mod:`.options`' output types), so a new command's output option is covered without code of its
own. **An interrupted run never leaves half a file**: the output is written to a temporary file
in the same folder and renamed into place (``os.replace``, atomic on POSIX), so the file at the
path is either the old one or the whole new one.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from lang import ast as A
from lang.errors import TampError
from lang.inputs import check_inputs, check_known
from lang.loader import check_bound, load, parse_bound, select

from .jsonout import emit
from .options import OUTPUT_TYPES, add_input_argument


def add_file_arguments(p, inputs=True):
    p.add_argument("file", help="a .prob file")
    p.add_argument("--program", metavar="NAME", help="only this program of the file")
    if inputs:
        add_input_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def load_programs(args) -> tuple:
    """Read, parse and type-check ``args.file`` (:func:`lang.load`); return (SourceFile, [Program])
    with only ``args.program`` when given."""
    src = load(Path(args.file))
    return src, select(src, getattr(args, "program", None))


def checked_inputs(src: A.SourceFile, progs: List[A.Program], inputs: Dict[str, object]) -> Dict[str, object]:
    """``--input`` values checked against the selected programs: every name is a parameter of
    one of them and every value fits that parameter's type (located errors, exit 2)."""
    if not inputs:
        return {}
    check_known(progs, inputs, src.path)
    out: Dict[str, object] = {}
    for prog in progs:
        out.update(check_inputs(prog, inputs, src.path, src.text or None))
    return out


def checked_bound(progs: List[A.Program], text):
    """``--bound`` parsed and checked against every selected program (a number over its
    parameters; errors located in the option); None when the option is absent."""
    if text is None:
        return None
    bound = parse_bound(text)
    for prog in progs:
        check_bound(prog, bound, text)
    return bound


def emit_json(obj) -> None:
    """Print ``obj`` as JSON (see :mod:`tamp.commands.jsonout` for the shape every command uses)."""
    emit(obj)


# ---------------------------------------------------------------- output files


def same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` are one file: equal once symlinks are followed, or the
    same inode (a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): not the same file
        return False


def refuse_inputs(path: str, option: str, inputs: Iterable[Optional[str]]) -> None:
    """A TampError (exit 2) naming ``option`` when ``path`` is one of the ``inputs``."""
    for inp in inputs:
        if inp and os.path.isfile(inp) and same_file(path, inp):
            shown = "" if os.path.abspath(inp) == os.path.abspath(path) else f" ({inp})"
            raise TampError(
                f"{path} is an input file of this command{shown}: tamp never writes over its input; give another file",
                option,
            )


def _mode_for(target: str) -> int:
    """The permissions of the file being replaced, else those a new file gets (umask applied)."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@contextmanager
def atomic_output(path: str, option: str, inputs: Iterable[Optional[str]] = ()) -> Iterator[str]:
    """Write the output ``path`` atomically: yields a temporary path in the same folder to write
    to; when the block ends normally it is renamed onto ``path`` (through a symlink, onto the
    file it points to), else removed and ``path`` is left as it was. ``path`` must not be one of
    ``inputs`` (:func:`refuse_inputs`). An OSError is one message naming ``option``."""
    refuse_inputs(path, option, inputs)
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".part")
        os.close(fd)
    except OSError as exc:
        raise TampError(f"cannot write {path}: {exc.strerror or exc}", option) from None
    try:
        yield tmp
        os.chmod(tmp, _mode_for(target))
        fd = os.open(tmp, os.O_RDONLY)
        try:  # on disk before the rename: a crash then leaves the old file or the whole new one
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError as exc:
        raise TampError(f"cannot write {path}: {exc.strerror or exc}", option) from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def write_output(path: str, text: str, option: str, inputs: Iterable[Optional[str]] = ()) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_output`)."""
    with atomic_output(path, option, inputs) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)


class _NotRendered(Exception):
    """graphviz failed: the output is abandoned (its temporary file removed)."""


def render_graphviz(text: str, path: str, option: str, inputs: Iterable[Optional[str]] = ()) -> Optional[str]:
    """Render graphviz ``text`` into ``path`` (the format its extension names) with graphviz's
    ``dot`` program, atomically (:func:`atomic_output`); None when written, else dot's complaint
    (and ``path`` is left as it was)."""
    fmt = os.path.splitext(path)[1].lower()[1:]
    try:
        with atomic_output(path, option, inputs) as tmp:
            proc = subprocess.run(
                ["dot", f"-T{fmt}", "-o", tmp], input=text, text=True, capture_output=True, check=False
            )
            if proc.returncode != 0:
                raise _NotRendered(proc.stderr.strip()[:200] or f"dot exited with status {proc.returncode}")
    except _NotRendered as exc:
        return str(exc)
    return None


def _chosen_actions(parser: argparse.ArgumentParser, args) -> List[argparse.Action]:
    """The actions of ``parser`` and of the sub-command parsers ``args`` chose (``prior fit``)."""
    out: List[argparse.Action] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                out.extend(_chosen_actions(chosen, args))
        else:
            out.append(action)
    return out


def output_actions(parser: argparse.ArgumentParser) -> List[Tuple[Tuple[str, ...], argparse.Action]]:
    """Every output option of a command's parser as (sub-command words, action): the options
    whose ``type`` is an output type of :mod:`.options` (``--certificate``, ``-o``, ``--dot``…)."""
    out: List[Tuple[Tuple[str, ...], argparse.Action]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                out.extend(((word, *words), a) for words, a in output_actions(sub))
        elif action.type in OUTPUT_TYPES:
            out.append(((), action))
    return out


def _paths(value) -> List[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def guard_outputs(parser: argparse.ArgumentParser, args, module=None) -> None:
    """Before a command runs: no output option names one of its input files or the same file
    as another output option. The inputs are the values of its other arguments that name
    files, and the files of ``module.input_files(args)`` when the command defines it (bench:
    the ``.prob`` files under its folders)."""
    actions = _chosen_actions(parser, args)
    outputs: List[Tuple[argparse.Action, str]] = [
        (a, v)
        for a in actions
        if a.type in OUTPUT_TYPES
        for v in [getattr(args, a.dest, None)]
        if isinstance(v, str) and v
    ]
    if not outputs:
        return
    inputs: List[str] = []
    for a in actions:
        if a.type not in OUTPUT_TYPES and a.dest not in (argparse.SUPPRESS, "help"):
            inputs.extend(p for p in _paths(getattr(args, a.dest, None)) if os.path.isfile(p))
    extra = getattr(module, "input_files", None)
    if extra is not None:
        inputs.extend(str(p) for p in extra(args))
    seen: List[Tuple[str, str]] = []
    for a, path in outputs:
        option = max(a.option_strings, key=len) if a.option_strings else a.dest
        refuse_inputs(path, option, inputs)
        for other_option, other in seen:
            if os.path.realpath(other) == os.path.realpath(path):
                raise TampError(f"{path} is also the file of {other_option}: give each output its own file", option)
        seen.append((option, path))
