"""``afltheory check --mutants [NAME ...]`` and ``afltheory verify FILE.py --mutants [NAME ...]``: the report
plus the mutant × check kill matrix (for ``verify``: which catalogued bugs the file's own checks kill).

Runs the selected checks (``--only``) on the correct code and under every catalogued mutant (or the ``NAME``s
given) in ``--jobs`` processes, prints the mutation score, and appends the kill matrix to ``report.md`` /
``report.html`` (``--out``), whose verdict rows list the mutants each verdict kills; the matrix as JSON goes
to ``<out>/kill_matrix.json``. Exit code 1 if a verdict fails, a mutant survives or an equivalent control is
"killed".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__all__ = ["add_arguments", "check_executor_args", "main", "plain"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--mutants [NAME ...]`` and ``--list-mutants`` to the ``check`` parser."""
    p.add_argument(
        "--mutants",
        nargs="*",
        metavar="NAME",
        default=None,
        help="also run the checks under every catalogued mutant (or the NAMEs given) and write the "
        "kill matrix (mutation score) into the report",
    )
    p.add_argument("--list-mutants", action="store_true", help="list the mutation catalogue and exit")
    p.add_argument(
        "--with-tests",
        action="store_true",
        help="with --mutants: also run every mutant's named tests (the kill matrix's 'killed by tests' "
        "column; by default only those of the mutants fewer than two verdicts kill)",
    )
    p.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="with --mutants: run the (mutant, check) tasks in --jobs local processes (default) "
        "or on Dask (a LocalCluster of --jobs workers, or --scheduler ADDR)",
    )
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --executor dask)")


def check_executor_args(args: argparse.Namespace) -> None:
    """ValueError when --executor/--scheduler are given where they do not apply."""
    executor, scheduler = getattr(args, "executor", "local"), getattr(args, "scheduler", None)
    if scheduler and executor != "dask":
        raise ValueError(f"--scheduler {scheduler!r} needs --executor dask")
    if getattr(args, "with_tests", False) and getattr(args, "mutants", None) is None:
        raise ValueError("--with-tests applies to the mutation analysis (--mutants)")
    if executor != "local" and getattr(args, "mutants", None) is None:
        raise ValueError(
            f"--executor {executor} applies to the mutation analysis (--mutants); a plain "
            f"check run uses --jobs local processes"
        )


def plain(args: argparse.Namespace, check_main: Callable) -> int:
    """A check run without --mutants: refuse --executor/--scheduler there, then ``check_main(args)``."""
    check_executor_args(args)
    return check_main(args)


def wanted(args) -> bool:
    return getattr(args, "mutants", None) is not None or getattr(args, "list_mutants", False)


def _append_html(path: str, fragment: str) -> None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    text = text.replace("</body>", fragment + "</body>", 1) if "</body>" in text else text + fragment
    from afltheory._io import atomic_write

    atomic_write(path, text)


def main(args: argparse.Namespace, check_main: Callable | None = None) -> int:
    """``afltheory check ... --mutants``: the checks on the correct code (the ordinary report, each verdict
    row listing the mutants it kills) and under every mutant (the kill matrix appended to the report).
    ``check_main`` is unused (kept for the parser's signature)."""
    from afltheory.checks.runner import write_reports
    from afltheory.checks.verdict import Verdict

    from . import CATALOGUE, CONTROLS, get
    from .run import kill_matrix

    if getattr(args, "list_mutants", False):
        for m in (*CATALOGUE.values(), *CONTROLS.values()):
            print(f"{m.name:28s} {m.kind:7s} {m.category:24s} {m.description}")
        return 0
    check_executor_args(args)
    if getattr(args, "files", None):  # verify FILE --mutants NAME: the file's generated mutants are named too
        from .generated import generate_for_files

        generate_for_files(args.files)
    names = [get(n).name for n in args.mutants] if args.mutants else None  # None: catalogue + controls
    from afltheory.checks.runner import validate_args

    validate_args(args)  # --jobs, --seed, --out, --json refused before the (long) mutation run
    n = len(names) if names is not None else len(CATALOGUE) + len(CONTROLS)
    print(
        f"mutation analysis: the checks on the correct code, then under {n} mutants ({args.jobs} job(s), "
        f"{getattr(args, 'executor', 'local')} executor) …",
        flush=True,
    )

    def progress(done, total, mutant, check):
        print(f"  [{done}/{total}] {mutant or 'correct code'} {check}", file=sys.stderr, flush=True)

    out = args.out
    user_files = tuple(getattr(args, "files", ()) or ())  # afltheory verify FILE.py --mutants
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    journal = os.path.join(out, "kill_matrix.partial.jsonl")  # an interrupted run resumes from it
    if os.path.exists(journal):
        print(
            f"resuming: runs already recorded in {journal} (same code, tier and seed) are not repeated",
            flush=True,
        )
    km = kill_matrix(
        names,
        only=args.only,
        tier=args.tier or "quick",
        seed=args.seed,
        jobs=args.jobs,
        progress=progress,
        out=out,
        files=getattr(args, "files", ()) or (),
        executor=getattr(args, "executor", "local"),
        scheduler=getattr(args, "scheduler", None),
        journal=journal,
        with_tests=True if getattr(args, "with_tests", False) else (False if user_files else None),
    )
    if os.path.exists(journal):  # complete: a rerun measures afresh
        os.remove(journal)
    results = []
    for c in km.checks:
        r = dict(km.baseline[c]["result"])
        r["verdicts"] = [Verdict.from_dict(d) for d in r["verdicts"]]
        results.append(r)
    allv = [v for r in results for v in r["verdicts"]]
    meta = {
        "tier": args.tier or "quick",
        "seed": args.seed,
        "n_verdicts": len(allv),
        "n_ok": sum(v.ok for v in allv),
        "elapsed": km.elapsed,
        "kills": km.kills(),
    }
    code = write_reports(out, results, meta, args.json)
    md_path, html_path = os.path.join(out, "report.md"), os.path.join(out, "report.html")
    with open(md_path, "a", encoding="utf-8") as fh:
        fh.write("\n" + km.to_markdown())
    _append_html(html_path, km.to_html())
    js = km.write_json(os.path.join(out, "kill_matrix.json"))
    print("\n" + km.summary())
    for c, ms in km.check_kills().items():
        print(f"  {c:16s} kills {len(ms):2d}: {', '.join(ms) if ms else '— (kills no mutant)'}")
    print(f"kill matrix: {md_path}, {html_path}, {js} ({km.elapsed:.0f} s)")
    if user_files:  # a user's file: the analysis is a report; the exit code is the unmutated verdicts'
        return code
    return code or (1 if km.survivors or km.false_kills() else 0)  # a survivor fails the run like a verdict
