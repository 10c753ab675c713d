"""`afltheory` command line: `check` (registered checks and report), `verify` (checks of your own file),
`sweep` (grid sweeps), `adversary`, `published` (the table of published theorems), `pep`, and the
subcommands of installed plugins (entry-point group `afltheory.commands`; e.g. `real`, the real-data
experiments of the top-level `experiments` package).

A plugin command is an entry point naming a callable ``add_parser(subparsers) -> argparse.ArgumentParser``
that adds one subcommand and sets its ``func(args) -> int`` default, as the built-in ones do::

    [project.entry-points."afltheory.commands"]
    mycommand = "mypackage.cli:add_parser"
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

__all__ = ["BUILTIN_COMMANDS", "COMMANDS_GROUP", "build_parser", "main"]

COMMANDS_GROUP = "afltheory.commands"


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("afltheory")
    except metadata.PackageNotFoundError:  # running from a source tree without installation
        return "unknown (not installed)"


def _add_plugin_commands(sub: argparse._SubParsersAction) -> None:
    """Add every subcommand of the entry-point group ``afltheory.commands`` (sorted by entry-point name). A
    plugin that fails to load or clashes with an existing command is reported with a warning, never silently
    skipped, and never hides the other commands."""
    import warnings
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        try:
            ep.load()(sub)
        except Exception as exc:  # a broken plugin must not take the built-in commands down with it
            warnings.warn(
                f"command plugin {ep.name!r} ({ep.value}) failed to load: {exc!r}",
                RuntimeWarning,
                stacklevel=2,
            )


def _add_check(sub: argparse._SubParsersAction) -> None:
    from afltheory.checks.runner import add_check_parser
    from afltheory.mutants import cli as mutants_cli

    check = add_check_parser(sub)
    mutants_cli.add_arguments(check)  # afltheory check --mutants: the kill matrix
    check_main = check.get_default("func")
    check.set_defaults(
        func=lambda args: (
            mutants_cli.main(args, check_main)
            if mutants_cli.wanted(args)
            else mutants_cli.plain(args, check_main)
        )
    )


def _add_verify(sub: argparse._SubParsersAction) -> None:
    from afltheory.checks.runner import add_verify_parser
    from afltheory.mutants import cli as mutants_cli

    verify = add_verify_parser(sub)
    mutants_cli.add_arguments(verify)  # afltheory verify FILE.py --mutants: what the file's checks kill
    verify_main = verify.get_default("func")
    verify.set_defaults(
        func=lambda args: (
            mutants_cli.main(args) if mutants_cli.wanted(args) else mutants_cli.plain(args, verify_main)
        )
    )


def _add_adversary(sub: argparse._SubParsersAction) -> None:
    from afltheory.adversary.cli import add_parser

    add_parser(sub)


def _add_published(sub: argparse._SubParsersAction) -> None:
    from afltheory.adversary.published_table import add_parser

    add_parser(sub)  # `afltheory published`: the table of published theorems (issue 26)


def _registered_claims() -> dict:
    """id -> claim: the one registry's claims (imported when a claims action reads them)."""
    from afltheory.published.registry import CLAIMS

    return dict(CLAIMS)


def _add_claims(sub: argparse._SubParsersAction) -> None:
    from afltheory.claims.cli import add_parser

    add_parser(sub, registered=_registered_claims)  # the registry sits above `claims` in the layers


def _add_sweep(sub: argparse._SubParsersAction) -> None:
    from afltheory.sweep.cli import add_sweep_parser

    add_sweep_parser(sub)


def _add_pep(sub: argparse._SubParsersAction) -> None:
    from afltheory.pep.cli import add_parser

    add_parser(sub)  # PEPit imported only when run


# The built-in commands: name -> (the help line of `afltheory --help`, the function adding the real parser).
# Only the command being run has its parser built (and its modules imported: the checks, the adversary and
# the claims pull in sympy and scipy); the others are one-line entries, so `afltheory --help`/`--version`
# import none of them. tests/test_cli_imports.py keeps each help line equal to the real parser's.
BUILTIN_COMMANDS: dict[str, tuple[str, Callable[[argparse._SubParsersAction], None]]] = {
    "check": (
        "run the registered checks (the paper's claims), print verdicts, write report.md/report.html",
        _add_check,
    ),
    "verify": ("run the checks registered by your own file(s) and write the same report", _add_verify),
    "adversary": ("search a claim's assumption class for its worst case (exact engine)", _add_adversary),
    "published": ("the table of published FL theorems: verdicts, worst ratios, PEP", _add_published),
    "claims": ("list or show the stated claims (theorems as Claim objects)", _add_claims),
    "sweep": ("run grid sweeps into a resumable SQLite store", _add_sweep),
    "pep": ("PEP worst case (certified upper bound) vs a theorem's bound, sigma_L = 0", _add_pep),
}


def _command_of(argv: list[str]) -> str | None:
    """The subcommand argparse will pick: the first argument not starting with ``-`` (the top-level parser's
    only options, ``-h``/``--help``/``--version``, take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``afltheory`` parser for ``argv``: the real parser of the built-in command ``argv`` names (of every
    built-in command when ``argv`` is None), a one-line entry for each other built-in, and the plugins'."""
    parser = argparse.ArgumentParser(prog="afltheory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"afltheory {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = None if argv is None else _command_of(argv)
    for name, (hlp, add) in BUILTIN_COMMANDS.items():
        if argv is None or name == chosen:
            add(sub)
        else:
            sub.add_parser(name, help=hlp, add_help=False)  # never parsed: `name` is not the command
    _add_plugin_commands(sub)  # e.g. `real` (experiments/ registers it)
    return parser


def single_threaded_blas() -> bool:
    """Run OpenBLAS on one thread in this process and its children (``OPENBLAS_NUM_THREADS=1``) unless the
    user set the variable; True when it was set here. The commands' matrices are small (d ≤ a few hundred):
    OpenBLAS's second thread only spins, and with ``--jobs 2`` it competes with the other check process.
    The quick tier's three BLAS-heaviest checks (``check --quick --only pep mtl compression --jobs 1``) took
    26.0 s user CPU with the default threads and 15.3 s with one (2026-12-08, 2 shared cores, load 4). Too
    late once numpy is loaded (a caller that imported it keeps its threads): nothing is set then."""
    if "OPENBLAS_NUM_THREADS" in os.environ or "numpy" in sys.modules:
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return True


def main(argv: list[str] | None = None) -> int:
    """Run ``afltheory ARGS`` (``argv`` defaults to ``sys.argv[1:]``); return the exit status: the
    subcommand's, 2 on bad input (a ``ValueError``, one line on stderr), 1 on an ``OSError`` (disk full: one
    line), 130 when interrupted."""
    argv = sys.argv[1:] if argv is None else list(argv)
    single_threaded_blas()
    args = build_parser(argv).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:  # bad input: one clear line, exit 2
        print(f"afltheory: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `afltheory check --json - | head`: the reader left; no traceback
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's final flush
        except OSError:
            pass
        return 1
    except KeyboardInterrupt:
        print("afltheory: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a full disk, an I/O error: one line, exit 1 (outputs are written atomically)
        print(f"afltheory: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
