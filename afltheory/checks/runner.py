"""Running registered checks: ``run_check`` / ``run_checks``, and the ``afltheory check`` and ``afltheory
verify`` commands (verdict table on stdout, report.md / report.html / figures in ``--out``).

Exit code 0 iff every verdict passes and every negative control fails (and no check crashed).
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
import time
import traceback
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TextIO

from .._io import check_output_dir, check_output_file, write_json
from .provenance import SCHEMA_VERSION, provenance
from .registry import CHECKS, Context, load_all, load_file, ordered_ids
from .report import ProgressLines, print_summary, print_table, write_html, write_markdown
from .verdict import Verdict, json_safe

__all__ = [
    "add_check_parser",
    "add_verify_parser",
    "check_main",
    "run_check",
    "run_checks",
    "select_checks",
    "verify_main",
    "write_reports",
]


#: optional modules -> the extra that installs them (a check needing a missing one is SKIPPED, not crashed)
OPTIONAL_EXTRAS = {
    "PEPit": "pep",
    "cvxpy": "pep",
    "clarabel": "pep",
    "torch": "torch",
    "torchvision": "torch",
    "dask": "dask",
    "distributed": "dask",
}


def missing_extra(exc: BaseException) -> str | None:
    """The install hint (``pip install 'afltheory[pep]'``) when ``exc`` (or its cause/context chain) is an
    ImportError of an optional extra; None for any other exception (a genuine crash)."""
    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, ImportError):
            m = re.search(r"pip install '?afltheory\[(\w+)\]'?", str(e))
            if m:
                return f"pip install 'afltheory[{m.group(1)}]'"
            name = (e.name or "").split(".")[0]
            if name in OPTIONAL_EXTRAS:
                return f"pip install 'afltheory[{OPTIONAL_EXTRAS[name]}]'"
        e = e.__cause__ or e.__context__
    return None


def crash_site(exc: BaseException, files: Sequence[str] = ()) -> str:
    """``file:line`` where ``exc`` was raised, preferring the deepest frame in one of ``files`` (the user's
    check module) over library frames."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    wanted = {os.path.abspath(f) for f in files if f}
    mine = [f for f in frames if os.path.abspath(f.filename) in wanted]
    f = (mine or frames)[-1]
    return f"{f.filename}:{f.lineno}"


def _crash_note(exc: BaseException, site: str) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, SystemExit):
        msg = f"the check called sys.exit({exc.code!r})"
    name = "TypeError" if isinstance(exc, _BadReturn) else type(exc).__name__
    return f"{name}: {msg} (at {site})" if msg else f"{name} (at {site})"


class _BadReturn(TypeError):
    """A check returned something other than a list of Verdicts."""


def _func_site(func) -> str:
    try:
        return f"{inspect.getsourcefile(func)}:{inspect.getsourcelines(func)[1]}"
    except (TypeError, OSError):
        return getattr(func, "__qualname__", "?")


def _failed(check_id: str, spec, claim: str, notes: str) -> Verdict:
    return Verdict(
        id=check_id,
        claim=claim,
        reference=spec.reference,
        measured=None,
        theoretical=None,
        tolerance="no crash, at least one Verdict",
        passed=False,
        notes=notes,
    )


def run_check(
    check_id: str, tier: str = "quick", seed: int = 0, out: str = "report", files: Sequence[str] = ()
) -> dict:
    """Run one check (after loading the plugins and the user ``files``); returns {"spec", "verdicts" (list of
    Verdict dicts), "elapsed" (wall s), "cpu" (this process's CPU s), "error", "refused", "skipped", "doc"}.

    The check runs isolated: an exception, ``SystemExit`` (``sys.exit`` in a check), a return that is not a
    list/tuple of Verdicts, or an empty list ("no verdict") is that check's failure (one failing verdict whose
    notes give the exception type, message and file:line; printed on stderr too) and never stops the other
    checks. "refused": the crash was a backend refusing a rule it cannot represent
    (``afltheory.algorithms.UnsupportedRule``). "skipped": the install hint when the check needs an optional
    extra that is not installed (an ImportError naming it): no verdict, not a failure."""
    for f in files:
        load_file(f)
    if check_id not in CHECKS:  # a plugin's check (a user file's is registered above)
        load_all()
    if check_id not in CHECKS:
        raise ValueError(f"check id={check_id!r} is not registered; known ids: {', '.join(CHECKS)}")
    spec = CHECKS[check_id]
    ctx = Context(tier=tier, seed=seed, out=out)
    t0, c0 = time.perf_counter(), time.process_time()
    err = None
    refused = False
    skipped = None
    verdicts: list = []
    mod = sys.modules.get(spec.module)
    mod_file = getattr(mod, "__file__", None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = spec.func(ctx)
        if not isinstance(got, (list, tuple)):
            raise _BadReturn(
                f"check {check_id!r} returned {type(got).__name__}; it must return a list of Verdicts"
            )
        bad = [type(v).__name__ for v in got if not isinstance(v, Verdict)]
        if bad:
            raise _BadReturn(
                f"check {check_id!r} returned {', '.join(sorted(set(bad)))} item(s); it must return Verdicts"
            )
        verdicts = list(got)
        if not verdicts:
            note = (
                f"no verdict: the check returned an empty list (at {_func_site(spec.func)}; a check must "
                "return at least one Verdict, and an empty result is not a pass)"
            )
            print(f"afltheory: check {check_id}: {note}", file=sys.stderr, flush=True)
            verdicts = [_failed(check_id, spec, f"check {check_id} returned no verdict", note)]
            err = note
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: a crashing check is its own failure
        skipped = missing_extra(exc)
        if skipped is None:
            site = (
                _func_site(spec.func)
                if isinstance(exc, _BadReturn)
                else crash_site(exc, [mod_file] if mod_file else [])
            )
            note = _crash_note(exc, site)
            err = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            from ..algorithms.base import UnsupportedRule

            refused = isinstance(exc, UnsupportedRule)  # a backend cannot represent the rule (no bug found)
            print(f"afltheory: check {check_id} crashed: {note}", file=sys.stderr, flush=True)
            verdicts = [_failed(check_id, spec, f"check {check_id} crashed", note)]
        else:
            verdicts = []
    doc = (inspect.getdoc(mod) if mod is not None else "") or ""
    return {
        "spec": {"id": spec.id, "title": spec.title, "reference": spec.reference},
        "verdicts": [v.to_dict() for v in verdicts],
        "elapsed": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "error": err,
        "refused": refused,
        "skipped": skipped,
        "doc": doc,
    }


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
        raise ValueError(
            f"--only: unknown check id(s) or verdict id(s) {unknown}; known check ids: "
            f"{', '.join(pool)} (a verdict id such as thm2.quadratic selects its check)"
        )
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
            raise ValueError(
                f"--only: no verdict of check {cid!r} is named {sorted(named)}; its verdicts: {ids}"
            )
    return results


def _lost(check_id: str, exc: BaseException) -> dict:
    """The result of a check whose worker process died (no Verdict could come back)."""
    spec = CHECKS.get(check_id)
    ref = spec.reference if spec is not None else ""
    note = f"{type(exc).__name__}: the process running the check died ({exc})"
    print(f"afltheory: check {check_id} crashed: {note}", file=sys.stderr, flush=True)
    v = Verdict(
        id=check_id,
        claim=f"check {check_id} crashed",
        reference=ref,
        measured=None,
        theoretical=None,
        tolerance="no crash, at least one Verdict",
        passed=False,
        notes=note,
    )
    return {
        "spec": {"id": check_id, "title": spec.title if spec else check_id, "reference": ref},
        "verdicts": [v.to_dict()],
        "elapsed": 0.0,
        "error": note,
        "refused": False,
        "skipped": None,
        "doc": "",
    }


def run_checks(
    ids: Sequence[str],
    tier: str = "quick",
    seed: int = 0,
    out: str = "report",
    jobs: int = 1,
    files: Sequence[str] = (),
    progress_file: TextIO | None = None,
) -> list[dict]:
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
            state = (
                f"SKIPPED (needs: {r['skipped']})"
                if r.get("skipped")
                else "CRASHED"
                if r["error"]
                else f"{ok}/{len(vs)} verdicts pass"
            )
            print(
                f"[{done}/{n}] {r['spec']['id']}: {state} ({r['elapsed']:.1f} s)",
                file=progress_file,
                flush=True,
            )

    if jobs > 1 and len(ids) > 1:
        by_id = {}
        broken: list[str] = []
        # the slow checks first (a stable order otherwise): the long ones do not end up last on one core
        order = sorted(ids, key=lambda i: not getattr(CHECKS.get(i), "slow", False))
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            futs = {ex.submit(run_check, i, tier, seed, out, files): i for i in order}
            for f in as_completed(futs):
                try:
                    by_id[futs[f]] = f.result()
                except BrokenProcessPool:  # a worker died (os._exit, a signal): the culprit is unknown yet
                    broken.append(futs[f])
                    continue
                except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result: that check's failure
                    by_id[futs[f]] = _lost(futs[f], exc)
                progress(by_id[futs[f]])
        for i in broken:  # rerun each alone in its own process: only the check that kills it fails
            with ProcessPoolExecutor(max_workers=1) as ex1:
                try:
                    by_id[i] = ex1.submit(run_check, i, tier, seed, out, files).result()
                except Exception as exc:  # noqa: BLE001 - it died again, alone: its own failure
                    by_id[i] = _lost(i, exc)
            progress(by_id[i])
        res = [by_id[i] for i in ids]
    else:
        res = []
        for i in ids:
            res.append(run_check(i, tier, seed, out, files))
            progress(res[-1])
    for r in res:
        r["verdicts"] = [Verdict.from_dict(d) for d in r["verdicts"]]
    return res


def write_reports(
    out: str,
    results: list[dict],
    meta: dict,
    json_path: str | None = None,
    title: str = "afltheory check",
    verbose: bool = False,
) -> int:
    """Print the summary (with ``verbose``, or a kill matrix in ``meta``, the full verdict table first), write
    report.md / report.html (and the verdicts as JSON); return the exit code."""
    allv = [v for r in results for v in r["verdicts"]]
    # summaries on stdout, unless stdout carries the JSON (`--json -`): then the table goes to stderr
    summary = sys.stderr if json_path == "-" else sys.stdout
    if verbose or meta.get("kills") is not None:
        print_table(results, file=summary, kills=meta.get("kills"))
        print("", file=summary)
    md = write_markdown(os.path.join(out, "report.md"), results, meta, title=title)
    ht = write_html(os.path.join(out, "report.html"), out, results, meta, title=title)
    if json_path:
        skipped = [
            {"id": r["spec"]["id"], "status": "SKIPPED", "needs": r["skipped"]}
            for r in results
            if r.get("skipped")
        ]
        doc = {
            "schema_version": SCHEMA_VERSION,
            "provenance": meta.get("provenance", {}),
            "summary": {
                "verdicts": len(allv),
                "pass": meta["n_ok"],
                "tier": meta["tier"],
                "seed": meta["seed"],
                "skipped": len(skipped),
            },
            "verdicts": [v.to_dict() for v in allv],
            "skipped": skipped,
        }
        write_json(json_path, json_safe(doc))
    print_summary(results, meta, (md, ht), file=summary)
    bad = [v for v in allv if not v.ok]
    crashed = [r["spec"]["id"] for r in results if r["error"]]
    return 0 if not bad and not crashed else 1


def check_outputs(out: str, json_path: str | None) -> None:
    """Refuse unusable output paths *before* running anything (ValueError naming the option; see
    ``afltheory._io``): ``--out`` a writable directory (created), ``--json`` a regular file or new path in a
    writable directory, or ``-``."""
    check_output_dir(out, "--out")
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    if json_path:
        check_output_file(json_path, "--json", stdout_ok=True)


def validate_args(args: argparse.Namespace) -> None:
    """Refuse bad ``--jobs``/``--seed`` and unusable ``--out``/``--json`` before anything runs
    (ValueError)."""
    if args.jobs < 1:
        raise ValueError(f"--jobs={args.jobs} must be >= 1")
    if args.seed < 0:
        raise ValueError(f"--seed={args.seed} must be >= 0")
    check_outputs(args.out, args.json)


def _run_and_report(ids, args, files=(), title="afltheory check", extra=()) -> int:
    tier = args.tier or "quick"
    validate_args(args)
    t0 = time.perf_counter()
    quiet, verbose = getattr(args, "quiet", False), getattr(args, "verbose", False)
    lines = None if quiet or verbose else ProgressLines(sys.stderr)  # condensed unless --verbose
    results = run_checks(
        ids, tier, args.seed, args.out, args.jobs, files, progress_file=None if quiet else lines or sys.stderr
    )
    if lines is not None:
        lines.finish()
    results = _keep_verdicts(results, getattr(args, "only", None), ordered_ids(None) + list(ids))
    results = list(extra) + results
    elapsed = time.perf_counter() - t0
    allv = [v for r in results for v in r["verdicts"]]
    meta = {
        "tier": tier,
        "seed": args.seed,
        "n_verdicts": len(allv),
        "n_ok": sum(v.ok for v in allv),
        "elapsed": elapsed,
        "provenance": provenance(tier=tier, seed=args.seed, elapsed=elapsed),
    }
    return write_reports(args.out, results, meta, args.json, title=title, verbose=verbose)


def check_main(args: argparse.Namespace) -> int:
    """``afltheory check``: run the registered checks of every installed plugin."""
    load_all()
    if args.list:
        for i in ordered_ids():
            spec = CHECKS[i]
            print(f"{spec.id:16s} {spec.title}  [{spec.reference}]")
        return 0
    if not CHECKS:
        raise ValueError(
            "no checks are registered: install a check plugin (entry-point group 'afltheory.checks', "
            "e.g. `pip install .` in the afltheory repository) or use `afltheory verify FILE.py`"
        )
    validate_args(args)
    return _run_and_report(select_checks(args.only), args)


def verify_main(args: argparse.Namespace) -> int:
    """``afltheory verify FILE.py ...``: run the checks the user files register and write the same report.
    A file that fails to load (syntax error, exception at import) is that file's failing verdict; the other
    files' checks still run."""
    validate_args(args)
    ids: list[str] = []
    good: list[str] = []
    broken: list[dict] = []
    for f in args.files:
        try:
            got = load_file(f)
        except ValueError:
            raise  # the file does not exist / is not Python: bad input (exit 2)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a syntax error or a crash while importing: its own failure
            broken.append(_file_failure(f, exc))
            continue
        if not got:
            raise ValueError(
                f"file={f!r} registers no check (decorate a function run(ctx) -> list[Verdict] "
                f"with @afltheory.checks.register(id, title, reference))"
            )
        ids += got
        good.append(f)
    if args.only and broken:
        select_checks(args.only, ids)  # unknown ids are refused even when a file failed to load
    return _run_and_report(
        select_checks(args.only, ids) if ids else [], args, files=good, title="afltheory verify", extra=broken
    )


def _file_failure(path: str, exc: BaseException) -> dict:
    """The result standing for a user file that failed to load (syntax error, exception at import): one
    failing verdict ``file:<name>`` with the exception type, message and file:line; printed on stderr."""
    if isinstance(exc, SyntaxError) and exc.filename:
        site = f"{exc.filename}:{exc.lineno}"
        msg = f"{type(exc).__name__}: {exc.msg} (at {site})"
    else:
        msg = _crash_note(exc, crash_site(exc, [os.path.abspath(path)]))
    print(f"afltheory: {path} failed to load: {msg}", file=sys.stderr, flush=True)
    fid = f"file:{os.path.basename(path)}"
    v = Verdict(
        id=fid,
        claim=f"{path} loads and registers its checks",
        reference=path,
        measured=None,
        theoretical=None,
        tolerance="the file imports without error",
        passed=False,
        notes=msg,
    )
    return {
        "spec": {"id": fid, "title": f"loading {path}", "reference": path},
        "verdicts": [v],
        "elapsed": 0.0,
        "error": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        "refused": False,
        "skipped": None,
        "doc": "",
    }


def _common_args(p: argparse.ArgumentParser) -> None:
    tier = p.add_mutually_exclusive_group()
    tier.add_argument(
        "--quick", dest="tier", action="store_const", const="quick", help="quick tier (default)"
    )
    tier.add_argument("--full", dest="tier", action="store_const", const="full", help="full tier")
    p.set_defaults(tier="quick")
    p.add_argument(
        "--only",
        nargs="+",
        action="extend",
        metavar="ID",
        help="run only these checks: check ids (thm2) or verdict ids as the table shows them "
        "(thm2.quadratic: runs its check, reports that verdict); repeatable",
    )
    p.add_argument(
        "--out",
        default="report",
        help="output directory for report.md, report.html, figures (created; must not be a file)",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="also write a JSON object {schema_version, provenance, summary, verdicts} to FILE "
        "('-' for stdout; the table then goes to stderr)",
    )
    p.add_argument("--seed", type=int, default=0, help="base seed of every check (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="run checks in this many processes (default 1)")
    p.add_argument("--quiet", action="store_true", help="no per-check progress lines on stderr")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="print the full verdict table (and every progress line) before the summary",
    )


def add_check_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``afltheory check``."""
    p = sub.add_parser(
        "check",
        help="run the registered checks (the paper's claims), print verdicts, write report.md/report.html",
    )
    _common_args(p)
    p.add_argument("--list", action="store_true", help="list the registered checks and exit")
    p.set_defaults(func=check_main)
    return p


def add_verify_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``afltheory verify FILE.py``."""
    p = sub.add_parser(
        "verify", help="run the checks registered by your own file(s) and write the same report"
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE.py",
        help="Python file(s) registering checks with @afltheory.checks.register",
    )
    _common_args(p)
    p.set_defaults(func=verify_main)  # --mutants is added by afltheory.cli (mutants is a higher layer)
    return p
