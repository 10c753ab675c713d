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
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TextIO

from .provenance import SCHEMA_VERSION, provenance
from .registry import CHECKS, Context, load_all, load_file, ordered_ids
from .report import print_table, write_html, write_markdown
from .verdict import Verdict

__all__ = ["add_check_parser", "add_verify_parser", "check_main", "run_check", "run_checks", "select_checks",
           "verify_main", "write_reports"]


def run_check(check_id: str, tier: str = "quick", seed: int = 0, out: str = "report",
              files: Sequence[str] = ()) -> dict:
    """Run one check (after loading the plugins and the user ``files``); returns {"spec", "verdicts" (list of
    Verdict dicts), "elapsed", "error", "refused", "doc"}. A crashing check yields one failing verdict;
    "refused" says the crash was a backend refusing a rule it cannot represent
    (``afltheory.algorithms.UnsupportedRule``)."""
    for f in files:
        load_file(f)
    if check_id not in CHECKS:   # a plugin's check (a user file's is registered above)
        load_all()
    if check_id not in CHECKS:
        raise ValueError(f"check id={check_id!r} is not registered; known ids: {', '.join(CHECKS)}")
    spec = CHECKS[check_id]
    ctx = Context(tier=tier, seed=seed, out=out)
    t0 = time.perf_counter()
    err = None
    refused = False
    verdicts = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdicts = list(spec.func(ctx))
        for v in verdicts:
            if not isinstance(v, Verdict):
                raise TypeError(f"check {check_id!r} returned {type(v).__name__}; it must return Verdicts")
    except Exception as exc:  # a crashing check is a failing verdict, never a silent skip
        err = traceback.format_exc()
        from ..algorithms.base import UnsupportedRule

        refused = isinstance(exc, UnsupportedRule)  # a backend cannot represent the rule (no bug found)
        verdicts = [Verdict(id=check_id, claim=f"check {check_id} crashed", reference=spec.reference,
                            measured=None, theoretical=None, tolerance="no crash", passed=False,
                            notes=err.strip().splitlines()[-1])]
    mod = sys.modules.get(spec.module)
    doc = (inspect.getdoc(mod) if mod is not None else "") or ""
    return {"spec": {"id": spec.id, "title": spec.title, "reference": spec.reference},
            "verdicts": [v.to_dict() for v in verdicts], "elapsed": time.perf_counter() - t0, "error": err,
            "refused": refused, "doc": doc}


def select_checks(only: Sequence[str] | None = None, among: Sequence[str] | None = None) -> list[str]:
    """The registered check ids (of every plugin, or ``among``) in report order, restricted to ``only``;
    ValueError naming unknown ids."""
    load_all()
    pool = ordered_ids(among)
    if not only:
        return pool
    wanted = {check_of(i, pool) for i in only}
    unknown = [i for i in only if check_of(i, pool) is None]
    if unknown:
        raise ValueError(f"--only: unknown check id(s) or verdict id(s) {unknown}; known check ids: "
                         f"{', '.join(pool)} (a verdict id such as thm2.quadratic selects its check)")
    return [i for i in pool if i in wanted]


def check_of(verdict_or_check_id: str, pool: Sequence[str]) -> str | None:
    """The check id a ``--only`` entry names: itself if it is a check id, else its longest dotted prefix
    that is one (verdict ids are ``<check>.<name>``); None if neither."""
    if verdict_or_check_id in pool:
        return verdict_or_check_id
    parts = verdict_or_check_id.split(".")
    for k in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:k])
        if head in pool:
            return head
    return None


def _keep_verdicts(results: list[dict], only: Sequence[str] | None, pool: Sequence[str]) -> list[dict]:
    """Keep only the verdicts named by ``only`` within checks selected by a verdict id (all of a check
    named by its own id)."""
    if not only:
        return results
    whole = {i for i in only if i in pool}
    named = {i for i in only if i not in pool}
    for r in results:
        cid = r["spec"]["id"]
        if cid in whole:
            continue
        keep = [v for v in r["verdicts"] if v.id in named]
        if keep or r["error"]:
            r["verdicts"] = keep or r["verdicts"]
        else:
            ids = [v.id for v in r["verdicts"]]
            raise ValueError(f"--only: no verdict of check {cid!r} is named {sorted(named)}; "
                             f"its verdicts: {ids}")
    return results


def run_checks(ids: Sequence[str], tier: str = "quick", seed: int = 0, out: str = "report", jobs: int = 1,
               files: Sequence[str] = (), progress_file: TextIO | None = None) -> list[dict]:
    """Run ``ids`` (in ``jobs`` processes when > 1); results as ``run_check`` with Verdict objects. With
    ``progress_file`` (e.g. ``sys.stderr``) one line is printed as each check completes."""
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    files = tuple(os.path.abspath(f) for f in files)
    n = len(ids)
    done = 0

    def progress(r):
        nonlocal done
        done += 1
        if progress_file is not None:
            vs = r["verdicts"]
            ok = sum(1 for v in vs if v.get("ok")) if vs and isinstance(vs[0], dict) else None
            state = "CRASHED" if r["error"] else f"{ok}/{len(vs)} verdicts pass"
            print(f"[{done}/{n}] {r['spec']['id']}: {state} ({r['elapsed']:.1f} s)", file=progress_file,
                  flush=True)

    if jobs > 1 and len(ids) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            futs = {ex.submit(run_check, i, tier, seed, out, files): i for i in ids}
            by_id = {}
            for f in as_completed(futs):
                by_id[futs[f]] = f.result()
                progress(by_id[futs[f]])
            res = [by_id[i] for i in ids]
    else:
        res = []
        for i in ids:
            res.append(run_check(i, tier, seed, out, files))
            progress(res[-1])
    for r in res:
        r["verdicts"] = [Verdict.from_dict(d) for d in r["verdicts"]]
    return res


def write_reports(out: str, results: list[dict], meta: dict, json_path: str | None = None,
                  title: str = "afltheory check") -> int:
    """Print the verdict table, write report.md / report.html (and the verdicts as JSON); return the exit
    code."""
    allv = [v for r in results for v in r["verdicts"]]
    # summaries on stdout, unless stdout carries the JSON (`--json -`): then the table goes to stderr
    summary = sys.stderr if json_path == "-" else sys.stdout
    print_table(results, file=summary, kills=meta.get("kills"))
    for r in results:
        print(f"  {r['spec']['id']:16s} {r['elapsed']:6.1f} s" + ("  CRASHED" if r["error"] else ""),
              file=summary)
    md = write_markdown(os.path.join(out, "report.md"), results, meta, title=title)
    ht = write_html(os.path.join(out, "report.html"), out, results, meta, title=title)
    if json_path:
        doc = {"schema_version": SCHEMA_VERSION, "provenance": meta.get("provenance", {}),
               "summary": {"verdicts": len(allv), "pass": meta["n_ok"], "tier": meta["tier"],
                           "seed": meta["seed"]},
               "verdicts": [v.to_dict() for v in allv]}
        if json_path == "-":
            json.dump(doc, sys.stdout, indent=2)
            sys.stdout.write("\n")
            sys.stdout.flush()
        else:
            d = os.path.dirname(os.path.abspath(json_path))
            os.makedirs(d, exist_ok=True)
            tmp = f"{json_path}.tmp-{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=2)
            os.replace(tmp, json_path)
    bad = [v for v in allv if not v.ok]
    crashed = [r["spec"]["id"] for r in results if r["error"]]
    print(f"\n{meta['n_ok']}/{len(allv)} verdicts pass ({meta['elapsed']:.1f} s); reports: {md}, {ht}",
          file=summary)
    if bad:
        print("FAILED: " + ", ".join(v.id for v in bad), file=summary)
    if crashed:
        print("CRASHED: " + ", ".join(crashed), file=summary)
    return 0 if not bad and not crashed else 1


def check_outputs(out: str, json_path: str | None) -> None:
    """Refuse unusable output paths *before* running anything (ValueError naming the option)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"--out {out!r} is a file; it must be a directory (created if missing)")
    try:
        os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {out!r} cannot be created: {exc.strerror}") from None
    if not os.access(out, os.W_OK):
        raise ValueError(f"--out {out!r} is not writable")
    if json_path and json_path != "-":
        if os.path.isdir(json_path):
            raise ValueError(f"--json {json_path!r} is a directory; give a file path (or '-' for stdout)")
        d = os.path.dirname(os.path.abspath(json_path))
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"--json {json_path!r}: its directory cannot be created: "
                             f"{exc.strerror}") from None
        if not os.access(d, os.W_OK):
            raise ValueError(f"--json {json_path!r}: directory {d!r} is not writable")


def _run_and_report(ids, args, files=(), title="afltheory check") -> int:
    tier = args.tier or "quick"
    if args.jobs < 1:
        raise ValueError(f"--jobs={args.jobs} must be >= 1")
    if args.seed < 0:
        raise ValueError(f"--seed={args.seed} must be >= 0")
    check_outputs(args.out, args.json)
    t0 = time.perf_counter()
    quiet = getattr(args, "quiet", False)
    results = run_checks(ids, tier, args.seed, args.out, args.jobs, files,
                         progress_file=None if quiet else sys.stderr)
    results = _keep_verdicts(results, getattr(args, "only", None), ordered_ids(None) + list(ids))
    elapsed = time.perf_counter() - t0
    allv = [v for r in results for v in r["verdicts"]]
    meta = {"tier": tier, "seed": args.seed, "n_verdicts": len(allv), "n_ok": sum(v.ok for v in allv),
            "elapsed": elapsed, "provenance": provenance(tier=tier, seed=args.seed, elapsed=elapsed)}
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
    p.add_argument("--only", nargs="+", action="extend", metavar="ID",
                   help="run only these checks: check ids (thm2) or verdict ids as the table shows them "
                        "(thm2.quadratic: runs its check, reports that verdict); repeatable")
    p.add_argument("--out", default="report", help="output directory for report.md, report.html, figures "
                                                   "(created; must not be a file)")
    p.add_argument("--json", metavar="FILE",
                   help="also write a JSON object {schema_version, provenance, summary, verdicts} to FILE "
                        "('-' for stdout; the table then goes to stderr)")
    p.add_argument("--seed", type=int, default=0, help="base seed of every check (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="run checks in this many processes (default 1)")
    p.add_argument("--quiet", action="store_true", help="no per-check progress lines on stderr")


def add_check_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``afltheory check``."""
    p = sub.add_parser("check", help="run the registered checks (the paper's claims), print verdicts, write "
                                     "report.md/report.html")
    _common_args(p)
    p.add_argument("--list", action="store_true", help="list the registered checks and exit")
    p.set_defaults(func=check_main)
    return p


def add_verify_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``afltheory verify FILE.py``."""
    p = sub.add_parser("verify",
                       help="run the checks registered by your own file(s) and write the same report")
    p.add_argument("files", nargs="+", metavar="FILE.py", help="Python file(s) registering checks with "
                                                                "@afltheory.checks.register")
    _common_args(p)
    p.set_defaults(func=verify_main)   # --mutants is added by afltheory.cli (mutants is a higher layer)
    return p
