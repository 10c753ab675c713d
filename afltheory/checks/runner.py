"""Running registered checks: ``run_check`` / ``run_checks``, and the ``afltheory check`` and ``afltheory
verify`` commands (verdict table on stdout, report.md / report.html / figures in ``--out``).

Exit code 0 iff every verdict passes and every negative control fails (and no check crashed).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from .registry import CHECKS, Context, load_all, load_file, ordered_ids
from .report import print_table, write_html, write_markdown
from .verdict import Verdict

__all__ = ["add_check_parser", "add_verify_parser", "check_main", "run_check", "run_checks", "select_checks",
           "verify_main", "write_reports"]


def run_check(check_id: str, tier: str = "quick", seed: int = 0, out: str = "report",
              files: Sequence[str] = ()) -> dict:
    """Run one check (after loading the plugins and the user ``files``); returns {"spec", "verdicts" (list of
    Verdict dicts), "elapsed", "error", "doc"}. A crashing check yields one failing verdict."""
    load_all()
    for f in files:
        load_file(f)
    if check_id not in CHECKS:
        raise ValueError(f"check id={check_id!r} is not registered; known ids: {', '.join(CHECKS)}")
    spec = CHECKS[check_id]
    ctx = Context(tier=tier, seed=seed, out=out)
    t0 = time.perf_counter()
    err = None
    verdicts = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdicts = list(spec.func(ctx))
        for v in verdicts:
            if not isinstance(v, Verdict):
                raise TypeError(f"check {check_id!r} returned {type(v).__name__}; it must return Verdicts")
    except Exception:  # a crashing check is a failing verdict, never a silent skip
        err = traceback.format_exc()
        verdicts = [Verdict(id=check_id, claim=f"check {check_id} crashed", reference=spec.reference,
                            measured=None, theoretical=None, tolerance="no crash", passed=False,
                            notes=err.strip().splitlines()[-1])]
    mod = sys.modules.get(spec.module)
    doc = (inspect.getdoc(mod) if mod is not None else "") or ""
    return {"spec": {"id": spec.id, "title": spec.title, "reference": spec.reference},
            "verdicts": [v.to_dict() for v in verdicts], "elapsed": time.perf_counter() - t0, "error": err,
            "doc": doc}


def select_checks(only: Sequence[str] | None = None, among: Sequence[str] | None = None) -> list[str]:
    """The registered check ids (of every plugin, or ``among``) in report order, restricted to ``only``;
    ValueError naming unknown ids."""
    load_all()
    pool = ordered_ids(among)
    if not only:
        return pool
    unknown = [i for i in only if i not in pool]
    if unknown:
        raise ValueError(f"--only: unknown check id(s) {unknown}; known ids: {', '.join(pool)}")
    return [i for i in pool if i in set(only)]


def run_checks(ids: Sequence[str], tier: str = "quick", seed: int = 0, out: str = "report", jobs: int = 1,
               files: Sequence[str] = ()) -> list[dict]:
    """Run ``ids`` (in ``jobs`` processes when > 1); results as ``run_check`` with Verdict objects."""
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    files = tuple(os.path.abspath(f) for f in files)
    if jobs > 1 and len(ids) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            futs = [ex.submit(run_check, i, tier, seed, out, files) for i in ids]
            res = [f.result() for f in futs]
    else:
        res = [run_check(i, tier, seed, out, files) for i in ids]
    for r in res:
        r["verdicts"] = [Verdict.from_dict(d) for d in r["verdicts"]]
    return res


def write_reports(out: str, results: list[dict], meta: dict, json_path: str | None = None,
                  title: str = "afltheory check") -> int:
    """Print the verdict table, write report.md / report.html (and the verdicts as JSON); return the exit
    code."""
    allv = [v for r in results for v in r["verdicts"]]
    print_table(results, kills=meta.get("kills"))
    for r in results:
        print(f"  {r['spec']['id']:16s} {r['elapsed']:6.1f} s" + ("  CRASHED" if r["error"] else ""))
    md = write_markdown(os.path.join(out, "report.md"), results, meta, title=title)
    ht = write_html(os.path.join(out, "report.html"), out, results, meta, title=title)
    if json_path:
        d = os.path.dirname(os.path.abspath(json_path))
        os.makedirs(d, exist_ok=True)
        with open(json_path, "w", encoding="utf-8") as fh:
            json.dump([v.to_dict() for v in allv], fh, indent=2)
    bad = [v for v in allv if not v.ok]
    crashed = [r["spec"]["id"] for r in results if r["error"]]
    print(f"\n{meta['n_ok']}/{len(allv)} verdicts pass ({meta['elapsed']:.1f} s); reports: {md}, {ht}")
    if bad:
        print("FAILED: " + ", ".join(v.id for v in bad))
    if crashed:
        print("CRASHED: " + ", ".join(crashed))
    return 0 if not bad and not crashed else 1


def _run_and_report(ids, args, files=(), title="afltheory check") -> int:
    tier = args.tier or "quick"
    if args.jobs < 1:
        raise ValueError(f"--jobs={args.jobs} must be >= 1")
    if args.seed < 0:
        raise ValueError(f"--seed={args.seed} must be >= 0")
    t0 = time.perf_counter()
    results = run_checks(ids, tier, args.seed, args.out, args.jobs, files)
    elapsed = time.perf_counter() - t0
    allv = [v for r in results for v in r["verdicts"]]
    meta = {"tier": tier, "seed": args.seed, "n_verdicts": len(allv), "n_ok": sum(v.ok for v in allv),
            "elapsed": elapsed}
    return write_reports(args.out, results, meta, args.json, title=title)


def check_main(args: argparse.Namespace) -> int:
    """``afltheory check``: run the registered checks of every installed plugin."""
    load_all()
    if args.list:
        for i in ordered_ids():
            spec = CHECKS[i]
            print(f"{spec.id:16s} {spec.title}  [{spec.reference}]")
        return 0
    if not CHECKS:
        raise ValueError("no checks are registered: install a check plugin (entry-point group "
                         "'afltheory.checks', e.g. `pip install .` in the afltheory repository) or use "
                         "`afltheory verify FILE.py`")
    return _run_and_report(select_checks(args.only), args)


def verify_main(args: argparse.Namespace) -> int:
    """``afltheory verify FILE.py ...``: run the checks the user files register and write the same report."""
    ids: list[str] = []
    for f in args.files:
        got = load_file(f)
        if not got:
            raise ValueError(f"file={f!r} registers no check (decorate a function run(ctx) -> list[Verdict] "
                             f"with @afltheory.checks.register(id, title, reference))")
        ids += got
    return _run_and_report(select_checks(args.only, ids), args, files=args.files, title="afltheory verify")


def _common_args(p: argparse.ArgumentParser) -> None:
    tier = p.add_mutually_exclusive_group()
    tier.add_argument("--quick", dest="tier", action="store_const", const="quick",
                      help="quick tier (default)")
    tier.add_argument("--full", dest="tier", action="store_const", const="full", help="full tier")
    p.set_defaults(tier="quick")
    p.add_argument("--only", nargs="+", metavar="ID", help="run only these check ids")
    p.add_argument("--out", default="report", help="output directory for report.md, report.html, figures")
    p.add_argument("--json", metavar="FILE", help="also write the verdicts as JSON")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1)


def add_check_parser(sub) -> argparse.ArgumentParser:
    """Register ``afltheory check``."""
    p = sub.add_parser("check", help="run the registered checks (the paper's claims), print verdicts, write "
                                     "report.md/report.html")
    _common_args(p)
    p.add_argument("--list", action="store_true", help="list the registered checks and exit")
    p.set_defaults(func=check_main)
    return p


def add_verify_parser(sub) -> argparse.ArgumentParser:
    """Register ``afltheory verify FILE.py``."""
    p = sub.add_parser("verify",
                       help="run the checks registered by your own file(s) and write the same report")
    p.add_argument("files", nargs="+", metavar="FILE.py", help="Python file(s) registering checks with "
                                                                "@afltheory.checks.register")
    _common_args(p)
    p.set_defaults(func=verify_main)
    return p
