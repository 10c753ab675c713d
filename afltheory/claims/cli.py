"""``afltheory claims [list | show ID | markdown | registry] [--file FILE.py]``: the claims the package states
(every registered claim: the one registry, ``afltheory.published.registry``, whose claims the command line
passes in — the registry sits above this layer) and those a user file defines (module-level ``Claim``
objects), printed from the claim objects themselves — docs/claims.md is ``afltheory claims markdown`` (the
paper's own claims, ``claims.paper``), docs/claims_registry.md ``afltheory claims registry`` (tests keep both
current). ``afltheory claims parse 'LATEX' [--map paper.toml]``: a formula read as a claim would read it
(``afltheory.claims.latex``, docs/claims_latex.md)."""

from __future__ import annotations

import os
import sys
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping

    from ._claim import Claim

__all__ = [
    "add_parser",
    "collect",
    "file_claim_ids",
    "markdown",
    "parse",
    "registry_markdown",
    "run",
    "show",
]


def add_parser(
    sub: argparse._SubParsersAction, registered: Callable[[], Mapping[str, Claim]] | None = None
) -> None:
    """Add ``afltheory claims ...`` to an argparse subparsers object. ``registered``: a function returning
    the one registry's claims (id -> claim; the command line passes ``afltheory.published.registry``'s, which
    sits above this layer): ``list``, ``show`` and ``registry`` then read every registered claim."""
    p = sub.add_parser(
        "claims",
        help="list or show the stated claims (theorems as Claim objects)",
        description="List the registered claims (and those in --file), show one completely, print the "
        "paper's as Markdown (markdown) or the registry as a Markdown table (registry); parse a LaTeX "
        "formula into the claim symbols.",
    )
    p.add_argument(
        "action", nargs="?", default="list", choices=("list", "show", "markdown", "registry", "parse")
    )
    p.add_argument("id", nargs="?", help="claim id (for show); the LaTeX formula (for parse)")
    p.add_argument(
        "--map",
        metavar="PAPER.toml",
        help="parse: the paper's letters -> claim symbols (TOML, over the default table)",
    )
    p.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="FILE.py",
        help="also read the module-level Claim objects of this Python file (repeatable)",
    )
    p.set_defaults(func=run, registered=registered)


def _load(path: str) -> list[Claim]:
    """The module-level claims of a user file, loaded once through the check registry (a file that also
    registers checks, like the tutorials, is executed once per process whoever loads it first). A path that
    is not a regular file, and a file that fails to load (a syntax error, null bytes, bytes that are not
    UTF-8, an exception or ``sys.exit`` at import, a ``Claim`` without its bound) is a ValueError of one line
    naming ``--file``."""
    from .._io import describe_path, path_arg
    from ..checks.registry import load_file
    from ._claim import Claim

    path_arg(path, "--file", reading=True)  # "" and "-" (stdin) refused with the flag's name
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


def collect(
    files: list[str] = (), registered: Callable[[], Mapping[str, Claim]] | None = None
) -> dict[str, Claim]:
    """id -> claim: the registered claims (``registered()``, the one registry's; None: the paper's own,
    ``claims.paper``), then those defined at module level in ``files``."""
    from .paper import PAPER_CLAIMS

    out = dict(PAPER_CLAIMS if registered is None else registered())
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
    ]
    if not c.runnable:  # a statement no engine runs: what it is, where it was read, why no engine runs it
        lines += [f"  kind        {c.kind}" + (" (a lower bound)" if c.lower_bound else "")]
        lines += [f"  location    {c.location}"] if c.location is not None else []
        lines += [f"  not run     {c.why_not_a_claim}"]
    if c.assumptions is not None:
        lines.append(f"  class       {c.assumptions.describe()}")
    if c.rule is not None or c.runnable:
        lines.append(
            f"  algorithm   {rule}"
            + (f"  η = {c.eta}" if c.eta is not None else "")
            + (f"  η_L = {c.eta_L}" if c.eta_L is not None else "")
        )
    if c.measured is not None:
        lines.append(f"  measured    {QUANTITIES[c.measured]}")
    lines.append(
        "  bound (sum of the named terms"
        + ("; constants hidden in O(·)" if c.constant == "hidden" else "")
        + "):"
    )
    lines += [f"    {k:16s} {sp.sstr(e)}" for k, e in c.bound.items()]
    latex = getattr(c, "latex", {})
    if "bound" in latex:
        lines.append(f"    from LaTeX       {latex['bound']}")
    if c.conditions:
        lines.append("  conditions:")
        for k, e in c.conditions.items():
            lines.append(f"    {k:16s} {sp.sstr(e)}")
            if k in latex:
                lines.append(f"    {'':16s} from LaTeX: {latex[k]}")
    if c.values:
        lines.append("  the claim's own symbols: " + ", ".join(f"{k} = {v}" for k, v in c.values.items()))
        lines += [f"    {k} from LaTeX: {latex[k]}" for k in c.values if k in latex]
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


def registry_markdown(claims: Mapping[str, Claim]) -> str:
    """The registry as a Markdown table (docs/claims_registry.md, ``afltheory claims registry``): per claim
    its id, kind, confidence, whether an engine runs it (else why not) and where its text was read."""

    def cell(x: object) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    out = [
        "# The registered claims",
        "",
        "Generated by `afltheory claims registry` from the one registry (`afltheory.published.registry`): "
        "every theorem, corollary, lemma and published statement the package states, registered once. "
        "`afltheory claims show ID` prints one completely; docs/claims.md the paper's runnable claims, "
        "docs/published.md the published statements.",
        "",
        "| id | kind | confidence | runnable | location |",
        "|---|---|---|---|---|",
    ]
    for c in claims.values():
        run_ = "yes" if c.runnable else f"no: {c.why_not_a_claim}"
        loc = "—" if c.location is None else str(c.location)
        out.append(f"| `{c.id}` | {c.kind} | {cell(c.confidence)} | {cell(run_)} | {cell(loc)} |")
    kinds = {}
    for c in claims.values():
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    out += [
        "",
        f"{len(claims)} claims ("
        + ", ".join(f"{n} {k}" for k, n in kinds.items())
        + f"); {sum(c.runnable for c in claims.values())} runnable.",
        "",
    ]
    return "\n".join(out)


def parse(source: str, table: str | None = None) -> str:
    """``afltheory claims parse``: the formula as read (paper letters), in the claim symbols, its named terms
    as written, every symbol found with its target, and which are unknown (with their positions)."""
    import sympy as sp

    from ._claim import SYMBOLS
    from .latex import _latex_of, latex, load_table

    r = latex(source, load_table(table) if table else None, strict=False)
    lines = [f"read        {sp.sstr(r.raw)}", f"expression  {sp.sstr(r.expr)}"]
    if r.is_relation:
        lines.append(
            f"relation    {type(r.expr).__name__}: a condition (lhs {sp.sstr(r.expr.lhs)}, "
            f"rhs {sp.sstr(r.expr.rhs)})"
        )
    else:
        lines.append(f"terms ({len(r.terms)}, as written):")
        lines += [f"  {sp.sstr(e):40s} {r.term_sources[k]}" for k, e in r.terms.items()]
    lines.append("symbols:")
    for key, target in r.symbols.items():
        names = {str(s) for s in getattr(target, "free_symbols", ())}
        note = (
            "UNKNOWN"
            if names & set(r.unknown)
            else ""
            if names <= set(SYMBOLS)
            else "the claim's own symbol (give its value)"
        )
        lines.append(f"  {key:24s} -> {sp.sstr(target):24s} {note}".rstrip())
    if r.unknown:
        lines.append(
            "unknown: "
            + ", ".join(f"{_latex_of(n)} (position {p})" for n, p in r.unknown.items())
            + " — map them (--map) or give them as the claim's own values"
        )
    else:
        lines.append("unknown: none")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """The ``claims`` subcommand."""
    if args.action == "parse":
        if not args.id:
            raise ValueError("claims parse needs a LaTeX formula, e.g. afltheory claims parse '\\frac{L}{T}'")
        print(parse(args.id, args.map))
        return 0
    if args.action == "markdown":  # docs/claims.md: the paper's own claims (and --file's)
        print(markdown(collect(args.file)))
        return 0
    registered = getattr(args, "registered", None)
    if args.action == "registry":
        if registered is None:
            raise ValueError("claims registry needs the registry (run it as `afltheory claims registry`)")
        print(registry_markdown(registered()))
        return 0
    claims = collect(args.file, registered)
    if args.action == "list":
        for c in claims.values():
            run_ = "" if c.runnable else ", not run"
            print(f"{c.id:28s} {c.title}  [{c.kind}, {c.confidence}{run_}]")
        return 0
    if not args.id:
        raise ValueError("claims show needs a claim id; known: " + ", ".join(claims))
    if args.id not in claims:
        raise ValueError(f"claim id={args.id!r} is unknown; known: {', '.join(claims)}")
    print(show(claims[args.id]))
    return 0
