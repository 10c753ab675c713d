"""`afltheory` command line: `check` (registered checks and report), `verify` (checks of your own file),
`sweep` (grid sweeps), `real` (real-data experiments)."""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]


def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version("afltheory")
    except metadata.PackageNotFoundError:  # running from a source tree without installation
        return "unknown (not installed)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="afltheory", description=__doc__)
    parser.add_argument("--version", action="version", version=f"afltheory {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    from afltheory.checks.runner import add_check_parser, add_verify_parser
    from afltheory.mutants import cli as mutants_cli
    check = add_check_parser(sub)
    mutants_cli.add_arguments(check)   # afltheory check --mutants: the kill matrix
    check_main = check.get_default("func")
    check.set_defaults(func=lambda args: (mutants_cli.main(args, check_main) if mutants_cli.wanted(args)
                                          else check_main(args)))
    add_verify_parser(sub)
    from afltheory.adversary.cli import add_parser as add_adversary_parser
    add_adversary_parser(sub)
    try:
        from afltheory.sweep.cli import add_sweep_parser
    except ImportError:
        add_sweep_parser = None
    if add_sweep_parser is not None:
        add_sweep_parser(sub)
    try:
        from afltheory.datasets.cli import add_real_parser
    except ImportError:
        add_real_parser = None
    if add_real_parser is not None:
        add_real_parser(sub)
    __import__("afltheory.pep.cli", fromlist=["add_parser"]).add_parser(sub)   # PEPit imported only when run
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
