"""``afltheory claims [list | show ID | markdown] [--file FILE.py]``: the claims the package states (the
paper's, ``afltheory.claims.paper``) and those a user file defines (module-level ``Claim`` objects), printed
from the claim objects themselves — docs/claims.md is ``afltheory claims markdown`` (a test keeps it
current)."""

from __future__ import annotations

import os
import sys
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from ._claim import Claim

__all__ = ["add_parser", "collect", "file_claim_ids", "markdown", "run", "show"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``afltheory claims ...`` to an argparse subparsers object."""
    p = sub.add_parser(
        "claims",
        help="list or show the stated claims (theorems as Claim objects)",
        description="List the claims (the paper's and those in --file), show one completely, "
        "or print all as Markdown.",
    )
    p.add_argument("action", nargs="?", default="list", choices=("list", "show", "markdown"))
    p.add_argument("id", nargs="?", help="claim id (for show)")
    p.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="FILE.py",
        help="also read the module-level Claim objects of this Python file (repeatable)",
    )
    p.set_defaults(func=run)


def _load(path: str) -> list[Claim]:
    """The module-level claims of a user file, loaded once through the check registry (a file that also
    registers checks, like the tutorials, is executed once per process whoever loads it first). A path that
    is not a regular file, and a file that fails to load (a syntax error, null bytes, bytes that are not
    UTF-8, an exception or ``sys.exit`` at import, a ``Claim`` without its bound) is a ValueError of one line
    naming ``--file``."""
    from .._io import describe_path
    from ..checks.registry import load_file
    from ._claim import Claim

    if not os.path.exists(path) and not os.path.islink(path):
        raise ValueError(f"--file {path!r}: does not exist")
    what = describe_path(path)
    if what is not None:
        raise ValueError(f"--file {path!r}: is {what}, not a Python file")
    try:
        load_file(path)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: a file that exits is refused, not silent
        if isinstance(exc, SyntaxError) and exc.lineno:
            why = f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
        elif isinstance(exc, SystemExit):
            why = f"it calls sys.exit({exc.code!r}) while loading"
        else:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            why = f"{type(exc).__name__}: {first}"[:300]
        raise ValueError(f"--file {path!r}: failed to load: {why}") from None
    name = "afltheory_user_" + format(zlib.crc32(os.path.abspath(path).encode()), "x")  # registry's name
    return [v for v in vars(sys.modules[name]).values() if isinstance(v, Claim)]


def file_claim_ids(files: list[str] = ()) -> list[str]:
    """The ids of the module-level claims the user ``files`` define (loaded as by ``collect``)."""
    return [c.id for f in files for c in _load(f)]


def collect(files: list[str] = ()) -> dict[str, Claim]:
    """id -> claim: the paper's claims, then those defined at module level in ``files``."""
    from .paper import PAPER_CLAIMS

    out = dict(PAPER_CLAIMS)
    for f in files:
        for c in _load(f):
            out[c.id] = c
    return out


def _pretty(e) -> str:
    import sympy as sp

    return sp.pretty(e, use_unicode=True, wrap_line=False) if len(sp.sstr(e)) < 60 else sp.sstr(e)


def show(c: Claim) -> str:
    """Every field of a claim as plain text (statement, class, algorithm, terms, conditions, source)."""
    import sympy as sp

    from ._claim import QUANTITIES

    rule = getattr(c.rule, "__name__", repr(c.rule))
    lines = [
        f"{c.id}: {c.title}",
        f"  reference   {c.reference}",
        f"  source      {c.source}",
        f"  confidence  {c.confidence}"
        + ("   (a false variant: expected to fail)" if c.expect == "fails" else ""),
        f"  class       {c.assumptions.describe()}",
        f"  algorithm   {rule}"
        + (f"  η = {c.eta}" if c.eta is not None else "")
        + (f"  η_L = {c.eta_L}" if c.eta_L is not None else ""),
        f"  measured    {QUANTITIES[c.measured]}",
        "  bound (sum of the named terms):",
    ]
    lines += [f"    {k:16s} {sp.sstr(e)}" for k, e in c.bound.items()]
    if c.conditions:
        lines.append("  conditions:")
        lines += [f"    {k:16s} {sp.sstr(e)}" for k, e in c.conditions.items()]
    if c.values:
        lines.append("  the claim's own symbols: " + ", ".join(f"{k} = {v}" for k, v in c.values.items()))
    if c.extra_symbols:
        lines.append("  run statistics: " + "; ".join(f"{k}: {v}" for k, v in c.extra_symbols.items()))
    if c.rate:
        lines.append("  rates: " + ", ".join(f"∝ {k}^({v:g})" for k, v in c.rate.items()))
    if c.reading:
        lines.append(f"  reading     {c.reading}")
    return "\n".join(lines)


def markdown(claims: dict[str, Claim]) -> str:
    """All claims as a Markdown document (docs/claims.md)."""
    out = [
        "# Claims stated in afltheory",
        "",
        "Generated by `afltheory claims markdown` from the `Claim` objects (`afltheory.claims.paper`): each "
        "bound, condition and scope below is the object every engine reads. Symbols: "
        "`afltheory.claims.symbols`.",
        "",
    ]
    for c in claims.values():
        out += [f"## `{c.id}` — {c.title}", "", "```text", show(c), "```", ""]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """The ``claims`` subcommand."""
    claims = collect(args.file)
    if args.action == "list":
        for c in claims.values():
            print(f"{c.id:28s} {c.title}  [{c.confidence}]")
        return 0
    if args.action == "markdown":
        print(markdown(claims))
        return 0
    if not args.id:
        raise ValueError("claims show needs a claim id; known: " + ", ".join(claims))
    if args.id not in claims:
        raise ValueError(f"claim id={args.id!r} is unknown; known: {', '.join(claims)}")
    print(show(claims[args.id]))
    return 0
