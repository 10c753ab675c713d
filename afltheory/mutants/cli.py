"""``afltheory check --mutants [NAME ...]``: the report of ``afltheory check`` plus the mutant × check kill
matrix.

Runs the selected checks (``--only``) on the correct code and under every catalogued mutant (or the ``NAME``s
given) in ``--jobs`` processes, prints the mutation score, and appends the kill matrix to ``report.md`` /
``report.html`` (``--out``); the matrix as JSON goes to ``<out>/kill_matrix.json``. Exit code 1 if a verdict
fails or a mutant survives.
"""

from __future__ import annotations

import os
import sys

__all__ = ["add_arguments", "main"]


def add_arguments(p) -> None:
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


def wanted(args) -> bool:
    return getattr(args, "mutants", None) is not None or getattr(args, "list_mutants", False)


def _append_html(path: str, fragment: str) -> None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    text = text.replace("</body>", fragment + "</body>", 1) if "</body>" in text else text + fragment
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def main(args, check_main) -> int:
    """``check_main(args)``: the ordinary ``afltheory check`` (writes the report); then the kill matrix."""
    from . import CATALOGUE, get
    from .run import kill_matrix

    if getattr(args, "list_mutants", False):
        for m in CATALOGUE.values():
            print(f"{m.name:28s} {m.kind:6s} {m.category:24s} {m.description}")
        return 0
    names = [get(n).name for n in args.mutants] if args.mutants else None   # None: catalogue + controls
    if args.jobs < 1:
        raise ValueError(f"--jobs={args.jobs} must be >= 1")
    code = check_main(args)
    n = len(names) if names is not None else len(CATALOGUE)
    print(f"\nmutation analysis: {n} mutants × checks, {args.jobs} job(s) …", flush=True)
    last = {}

    def progress(done, total, mutant, check):
        if mutant is not None:
            last[mutant] = last.get(mutant, 0) + 1
            print(f"  [{done}/{total}] {mutant} {check}", file=sys.stderr, flush=True)

    km = kill_matrix(
        names, only=args.only, tier=args.tier or "quick", seed=args.seed, jobs=args.jobs, progress=progress
    )
    out = args.out
    os.makedirs(out, exist_ok=True)
    md_path, html_path = os.path.join(out, "report.md"), os.path.join(out, "report.html")
    md = km.to_markdown()
    if os.path.exists(md_path):
        with open(md_path, "a", encoding="utf-8") as fh:
            fh.write("\n" + md)
    else:
        with open(md_path, "w", encoding="utf-8") as fh:
            fh.write(md)
    if os.path.exists(html_path):
        _append_html(html_path, km.to_html())
    js = km.write_json(os.path.join(out, "kill_matrix.json"))
    print("\n" + km.summary())
    for c, ms in km.check_kills().items():
        print(f"  {c:16s} kills {len(ms):2d}: {', '.join(ms) if ms else '— (kills no mutant)'}")
    print(f"kill matrix: {md_path}, {html_path}, {js} ({km.elapsed:.0f} s)")
    return code or (1 if km.survivors else 0)  # a surviving mutant fails the run like a failing verdict
