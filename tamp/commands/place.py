"""``tamp place FILE``: Chisel's question — which candidate operations and memory regions may run
on unreliable hardware, saving the most, while the reliability claim is still proved.

The placement is found by an exact integer program over the candidates' union-bound shares
(:func:`tamp.api.place`, :mod:`tamp.cfa.placement`); the annotated program (candidates replaced
by ``+.`` or ``+``, ``unreliable? a`` by ``unreliable a`` or commented out) is written to
``-o OUT`` (default ``FILE.placed.prob``, never the input) and proved again by the prover: its
verdict is the command's (exit 0 proved, 1 not proved)."""

from __future__ import annotations

import argparse
import os
from fractions import Fraction

from lang.errors import TampError
from lang.inputs import show

from .. import api
from .common import atomic_output, refuse_inputs, write_output
from .options import add_input_argument, output_file, seconds

NAME = "place"
HELP = "choose which candidate operations (+? …) and regions (unreliable? a) run unreliably, saving the most while the reliability claim is proved"


class _SavingAction(argparse.Action):
    """``--saving KIND:S`` (repeatable): the saving of one candidate of that kind (a colon, not
    ``=``: the kinds ``<=``, ``>=`` and ``==`` end in one)."""

    def __call__(self, parser, namespace, values, option_string=None):
        kind, eq, value = values.rpartition(":")
        try:
            number = Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            number = None
        if not eq or number is None or number < 0:
            raise argparse.ArgumentError(self, f"expected KIND:S with S a number >= 0 (e.g. '*:0.3'), got '{values}'")
        seen = dict(getattr(namespace, self.dest, None) or {})
        seen[kind.strip()] = number
        setattr(namespace, self.dest, seen)


def add_arguments(p):
    p.add_argument("file", metavar="FILE", help="a .prob file with candidate operations or regions")
    p.add_argument("--program", metavar="NAME", help="the program to place (when the file has several)")
    add_input_argument(p)
    p.add_argument(
        "--saving",
        action=_SavingAction,
        default={},
        metavar="KIND:S",
        help="the saving of one candidate of a kind: + - * / < <= > >= == or memory (default 1 each; repeatable)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        type=output_file,
        help="where to write the annotated program (default FILE.placed.prob; never FILE itself)",
    )
    p.add_argument(
        "--certificate",
        metavar="OUT",
        type=output_file,
        help="write the proof certificate of the placed program to OUT (.json); re-check it with "
        "`tamp check-proof OUT PLACED`",
    )
    p.add_argument("--timeout", metavar="S", type=seconds, help="time limit for the whole run, in seconds")


def _default_output(path: str) -> str:
    stem = path[:-5] if path.endswith(".prob") else path
    return stem + ".placed.prob"


def _frac(v: Fraction) -> str:
    return str(v) if v.denominator == 1 else f"{v} (= {float(v):.6g})"


def run(args) -> int:
    out = args.output or _default_output(args.file)
    refuse_inputs(out, "--output", [args.file])
    res = api.place(
        args.file, output=out, program=args.program, savings=args.saving, inputs=args.input, timeout=args.timeout
    )
    write_output(out, res.text, "--output", [args.file])
    print(f"{res.program}: placement written to {out}")
    for c in res.chosen:
        print(f"  unreliable: {c}  (union-bound share {_frac(res.costs.get(c, Fraction(0)))})")
    for c in res.reliable:
        print(f"  reliable:   {c}")
    print(f"  saving: {_frac(res.saving)}")
    print(f"  failure bound used: {_frac(res.used)} of {_frac(res.budget)} (union bound, at the given inputs)")
    if res.refuted:
        print(f"  {res.refuted} better placement(s) were not proved by the prover and were skipped")
    inputs = " with " + ", ".join(f"{k}={show(v)}" for k, v in args.input.items()) if res.proved_with_inputs else ""
    r = res.proof.programs[0] if res.proof is not None and res.proof.programs else None
    print(
        f"  re-proved{inputs}: {r.verdict if r else 'unknown'}" + (f"  Pr[fail] <= {r.bound}" if r and r.bound else "")
    )
    if args.certificate and res.proof is not None and res.verdict == api.PROVED:
        # deferred on purpose: loaded only when a certificate is asked for
        from tamp.certificate.writer import file_certificate, write_certificate

        cert = file_certificate(
            res.proof, res.text.encode("utf-8"), None, args.input if res.proved_with_inputs else None
        )
        try:
            with atomic_output(args.certificate, "--certificate", [args.file, out]) as tmp:
                write_certificate(tmp, cert)
        except OSError as exc:
            raise TampError(
                f"cannot write the certificate {args.certificate}: {exc.strerror or exc}", "--certificate"
            ) from None
        print(f"certificate: written to {args.certificate} (check it with `tamp check-proof {args.certificate} {out}`)")
    if os.path.exists(out) and res.verdict == api.PROVED:
        return 0
    return 1
