"""`afltheory` command line: `check` (paper checks and report), `sweep` (grid sweeps), `theory` (conditions)."""

from __future__ import annotations

import argparse
import sys


def _add_check_parser(sub):
    p = sub.add_parser("check", help="run the paper checks, print verdicts, write report.md/report.html")
    tier = p.add_mutually_exclusive_group()
    tier.add_argument("--quick", dest="tier", action="store_const", const="quick", help="quick tier (default)")
    tier.add_argument("--full", dest="tier", action="store_const", const="full", help="full tier")
    p.set_defaults(tier="quick")
    p.add_argument("--only", nargs="+", metavar="ID", help="run only these check ids")
    p.add_argument("--out", default="report", help="output directory for report.md, report.html, figures")
    p.add_argument("--json", metavar="FILE", help="also write the verdicts as JSON")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--list", action="store_true", help="list the registered checks and exit")
    from afltheory.mutants import cli as mutants_cli
    mutants_cli.add_arguments(p)

    def run(args):
        from paper_checks.runner import main as check_main
        return mutants_cli.main(args, check_main) if mutants_cli.wanted(args) else check_main(args)

    p.set_defaults(func=run)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="afltheory", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_check_parser(sub)
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


if __name__ == "__main__":
    sys.exit(main())
