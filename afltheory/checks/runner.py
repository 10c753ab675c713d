"""Running registered checks: ``run_check`` / ``run_checks``, and the ``afltheory check`` and ``afltheory
verify`` commands (verdict table on stdout, report.md / report.html / figures in ``--out``).

Exit code 0 iff every verdict passes and every negative control fails (and no check crashed).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TextIO

from .._io import MAX_SEED, check_output_dir, check_output_file, describe_path, path_arg, write_json
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
    "run_files_isolated",
    "select_checks",
    "verify_main",
    "write_reports",
]


#: seconds one check may run before it is stopped and recorded as a failing verdict (``--timeout``)
DEFAULT_TIMEOUT = 1800.0

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


def _failed(
    check_id: str, reference: str, claim: str, notes: str, tolerance: str = "no crash, at least one Verdict"
) -> Verdict:
    """The failing verdict standing for a check (or a user file) that reported none of its own."""
    return Verdict(
        id=check_id,
        claim=claim,
        reference=reference,
        measured=None,
        theoretical=None,
        tolerance=tolerance,
        passed=False,
        notes=notes,
    )


def _failure_record(
    v: Verdict, title: str, said: str, error: str | None = None, elapsed: float = 0.0
) -> dict:
    """A result record holding only the failing verdict ``v`` (``_failed``), after printing ``said`` on
    stderr (after ``afltheory: ``); its "error" is ``error``, else ``v.notes``."""
    print(f"afltheory: {said}", file=sys.stderr, flush=True)
    return {
        "spec": {"id": v.id, "title": title, "reference": v.reference},
        "verdicts": [v],
        "elapsed": elapsed,
        "cpu": None,
        "error": error or v.notes,
        "refused": False,
        "skipped": None,
        "doc": "",
    }


class CheckTimeout(Exception):
    """A check ran past its ``--timeout`` (in-process: raised by SIGALRM inside the check)."""


class _Interrupted(Exception):
    """A real Ctrl-C (SIGINT) arrived while a check ran: the run stops (not that check's failure)."""


@contextlib.contextmanager
def _guards(timeout: float | None):
    """While one check runs in this process: SIGALRM after ``timeout`` s raises CheckTimeout in it; a real
    SIGINT is told apart from a KeyboardInterrupt the check raises itself (``flag["sigint"]``). Main thread
    only (elsewhere a no-op); the previous handlers are restored."""
    flag = {"sigint": False}
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def on_int(signum, frame):
        flag["sigint"] = True
        raise KeyboardInterrupt

    def on_alarm(signum, frame):
        raise CheckTimeout(f"the check ran past --timeout {timeout:g} s")

    old_int = signal.signal(signal.SIGINT, on_int)
    old_alarm = None
    if timeout and hasattr(signal, "setitimer"):
        old_alarm = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield flag
    finally:
        if old_alarm is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_alarm)
        signal.signal(signal.SIGINT, old_int)


def _restore_std(saved_fds: tuple[int, int]) -> None:
    """A check that closed sys.stdout/sys.stderr (or fds 1/2) does not take the report with it."""
    for k, (name, fd) in enumerate((("stdout", 1), ("stderr", 2))):
        stream = getattr(sys, name)
        try:
            os.fstat(fd)
        except OSError:
            os.dup2(saved_fds[k], fd)
        if stream is None or getattr(stream, "closed", False):
            setattr(sys, name, os.fdopen(os.dup(fd), "w", buffering=1))


def run_check(
    check_id: str,
    tier: str = "quick",
    seed: int = 0,
    out: str = "report",
    files: Sequence[str] = (),
    timeout: float | None = None,
) -> dict:
    """Run one check (after loading the plugins and the user ``files``); returns {"spec", "verdicts" (list of
    Verdict dicts), "elapsed" (wall s), "cpu" (this process's CPU s), "error", "refused", "skipped", "doc"}.

    The check runs isolated: an exception, ``SystemExit`` (``sys.exit`` in a check), a return that is not a
    list/tuple of Verdicts, or an empty list ("no verdict") is that check's failure (one failing verdict whose
    notes give the exception type, message and file:line; printed on stderr too) and never stops the other
    checks. "refused": the crash was a backend refusing a rule it cannot represent
    (``afltheory.algorithms.UnsupportedRule``). "skipped": the install hint when the check needs an optional
    extra that is not installed (an ImportError naming it): no verdict, not a failure.

    ``timeout`` (s): past it the check is interrupted (SIGALRM, main thread) and recorded as one failing
    verdict. A KeyboardInterrupt the check raises itself is its failure; a real Ctrl-C stops the run. A
    check that forks: the copy ends silently when the check returns in it (one report). A check that closes
    stdout/stderr: they are reopened for the report. A Verdict subclass is rebuilt as a plain Verdict."""
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
    pid = os.getpid()
    saved_fds = (os.dup(1), os.dup(2))
    try:
        with _guards(timeout) as flag, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = spec.func(ctx)
            except KeyboardInterrupt:
                if flag["sigint"]:
                    raise _Interrupted() from None
                raise
            finally:
                if os.getpid() != pid:  # a forked copy of this process: it must not report (twice)
                    os._exit(0)
                _restore_std(saved_fds)
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
            verdicts = [_failed(check_id, spec.reference, f"check {check_id} returned no verdict", note)]
            err = note
    except _Interrupted:
        raise KeyboardInterrupt from None
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt raised by the check too
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
            what = "timed out" if isinstance(exc, CheckTimeout) else "crashed"
            verdicts = [_failed(check_id, spec.reference, f"check {check_id} {what}", note)]
        else:
            verdicts = []
    finally:
        for fd in saved_fds:
            os.close(fd)
    try:  # a Verdict subclass (or a patched class) becomes plain, validated data here
        dicts = [Verdict.from_dict(v.to_dict()).to_dict() for v in verdicts]
    except Exception as exc:  # noqa: BLE001 - its verdicts do not validate: that check's failure
        note = f"{type(exc).__name__}: a returned verdict does not validate ({str(exc)[:200]})"
        print(f"afltheory: check {check_id} crashed: {note}", file=sys.stderr, flush=True)
        err = note
        dicts = [_failed(check_id, spec.reference, f"check {check_id} crashed", note).to_dict()]
    doc = (inspect.getdoc(mod) if mod is not None else "") or ""
    return {
        "spec": {"id": spec.id, "title": spec.title, "reference": spec.reference},
        "verdicts": dicts,
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
    """The result of a check whose worker process died (no Verdict could come back), as a worker's record
    (verdict dicts)."""
    spec = CHECKS.get(check_id)
    note = f"{type(exc).__name__}: the process running the check died ({exc})"
    ref = spec.reference if spec is not None else ""
    v = _failed(check_id, ref, f"check {check_id} crashed", note)
    r = _failure_record(v, spec.title if spec else check_id, f"check {check_id} crashed: {note}")
    return {**r, "verdicts": [v.to_dict() for v in r["verdicts"]]}


def _progress_printer(n: int, progress_file: TextIO | None):
    """``progress(result)``: one line per completed check on ``progress_file`` (none when it is None)."""
    done = 0

    def progress(r):
        nonlocal done
        done += 1
        if progress_file is not None:
            vs = r["verdicts"]
            ok = sum(1 for v in vs if (v.get("ok") if isinstance(v, dict) else getattr(v, "ok", False)))
            state = (
                f"SKIPPED (needs: {r['skipped']})"
                if r.get("skipped")
                else "CRASHED"
                if r["error"]
                else f"{ok}/{len(vs)} verdicts pass"
            )
            print(
                f"[{done}/{n}] {r['spec']['id']}: {state} ({r['elapsed']:.1f} s)"
                if n
                else f"[{done}] {r['spec']['id']}: {state} ({r['elapsed']:.1f} s)",
                file=progress_file,
                flush=True,
            )

    return progress


def run_checks(
    ids: Sequence[str],
    tier: str = "quick",
    seed: int = 0,
    out: str = "report",
    jobs: int = 1,
    files: Sequence[str] = (),
    progress_file: TextIO | None = None,
    timeout: float | None = None,
) -> list[dict]:
    """Run ``ids`` (in ``jobs`` processes when > 1); results as ``run_check`` with Verdict objects. With
    ``progress_file`` (e.g. ``sys.stderr``) one line is printed as each check completes. In-process mode:
    the checks (and ``files``) are trusted code (docs/reliability.md); ``afltheory verify`` runs user files
    isolated instead (``run_files_isolated``)."""
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    files = tuple(os.path.abspath(f) for f in files)
    progress = _progress_printer(len(ids), progress_file)
    if jobs > 1 and len(ids) > 1:
        by_id = {}
        broken: list[str] = []
        # the slow checks first (a stable order otherwise): the long ones do not end up last on one core
        order = sorted(ids, key=lambda i: not getattr(CHECKS.get(i), "slow", False))
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            futs = {ex.submit(run_check, i, tier, seed, out, files, timeout): i for i in order}
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
                    by_id[i] = ex1.submit(run_check, i, tier, seed, out, files, timeout).result()
                except Exception as exc:  # noqa: BLE001 - it died again, alone: its own failure
                    by_id[i] = _lost(i, exc)
            progress(by_id[i])
        res = [by_id[i] for i in ids]
    else:
        res = []
        for i in ids:
            res.append(run_check(i, tier, seed, out, files, timeout))
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
    ``afltheory._io``): ``--out`` a writable directory (or creatable: made when the checks run), ``--json``
    a regular file or new path in a writable directory, or ``-``."""
    check_output_dir(out, "--out")  # creates nothing: a refused --json leaves no empty --out (D18)
    if json_path is not None:  # "" is refused, not taken as "no JSON"
        check_output_file(json_path, "--json", stdout_ok=True)


def validate_args(args: argparse.Namespace) -> None:
    """Refuse bad ``--jobs``/``--seed`` and unusable ``--out``/``--json`` before anything runs
    (ValueError)."""
    if args.jobs < 1:
        raise ValueError(f"--jobs={args.jobs} must be >= 1")
    if args.jobs > 4096:
        raise ValueError(f"--jobs={args.jobs} is outside the allowed range 1 .. 4096")
    if not 0 <= args.seed <= MAX_SEED:
        raise ValueError(f"--seed={args.seed} must lie in [0, {MAX_SEED}]")
    t = getattr(args, "timeout", None)
    if t is not None and not (t == t and 0 <= t <= 10**7):
        raise ValueError(f"--timeout={t} must be a number of seconds in [0, 1e7] (0: no timeout)")
    check_outputs(args.out, args.json)


def _run_and_report(ids, args, files=(), title="afltheory check", extra=()) -> int:
    tier = args.tier or "quick"
    validate_args(args)
    t0 = time.perf_counter()
    quiet, verbose = getattr(args, "quiet", False), getattr(args, "verbose", False)
    lines = None if quiet or verbose else ProgressLines(sys.stderr)  # condensed unless --verbose
    results = run_checks(
        ids,
        tier,
        args.seed,
        args.out,
        args.jobs,
        files,
        progress_file=None if quiet else lines or sys.stderr,
        timeout=_timeout_of(args),
    )
    if lines is not None:
        lines.finish()
    results = _keep_verdicts(results, getattr(args, "only", None), ordered_ids(None) + list(ids))
    return _report(list(extra) + results, args, tier, t0, title=title)


def _report(results: list[dict], args: argparse.Namespace, tier: str, t0: float, title: str) -> int:
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
    verbose = getattr(args, "verbose", False)
    code = write_reports(args.out, results, meta, args.json, title=title, verbose=verbose)
    _drop_empty_dir(os.path.join(args.out, "figures"))  # made for the checks' figures; none were written
    if not allv:  # nothing reported is never a pass
        print("FAILED: no verdict was produced", file=sys.stderr)
        return 1
    return code


def _drop_empty_dir(path: str) -> None:
    """Remove ``path`` if it is an empty directory (the run made it and wrote nothing into it)."""
    try:
        if os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path):
            os.rmdir(path)
    except OSError:  # a race with another writer, or no permission: leaving it is harmless
        pass


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

    Each FILE runs isolated, in a child process of its own (``run_files_isolated``): its verdicts come back
    as plain data, validated and rebuilt here, so no file can patch another file's verdicts, the Verdict
    class or the report. A file that fails to load (syntax error, exception at import), a child that dies,
    calls ``os._exit``, exits early or reports nothing, and a check past ``--timeout`` are failing verdicts;
    the other files' and checks' verdicts are kept. Exit 0 only when every loaded check reported and every
    verdict passes."""
    validate_args(args)
    for f in args.files:
        path_arg(f, "FILE.py", reading=True)  # "-" is not stdin here, "" no file
        if not os.path.isfile(f):
            raise ValueError(
                f"file={os.path.abspath(f)!r} does not exist"
                + (
                    ""
                    if not os.path.exists(f)
                    else f" as a regular file (it is {describe_path(f) or 'not one'})"
                )
            )
    tier = args.tier or "quick"
    t0 = time.perf_counter()
    quiet = getattr(args, "quiet", False)
    results, ids = run_files_isolated(
        args.files,
        tier,
        args.seed,
        args.out,
        jobs=args.jobs,
        only=args.only,
        timeout=_timeout_of(args),
        progress_file=None if quiet else sys.stderr,
    )
    if args.only:
        unknown = [i for i in args.only if check_of(i, ids) is None]
        if unknown:
            raise ValueError(
                f"--only: unknown check id(s) or verdict id(s) {unknown}; known check ids: {', '.join(ids)} "
                "(a verdict id such as thm2.quadratic selects its check)"
            )
    loaded = [r for r in results if not r["spec"]["id"].startswith("file:")]
    results = [r for r in results if r["spec"]["id"].startswith("file:")] + _keep_verdicts(
        loaded, args.only, ids
    )
    return _report(results, args, tier, t0, title="afltheory verify")


def _timeout_of(args: argparse.Namespace) -> float | None:
    t = getattr(args, "timeout", DEFAULT_TIMEOUT)
    return None if t == 0 else t


def _file_result(
    path: str,
    msg: str,
    err: str | None = None,
    *,
    claim: str | None = None,
    tolerance: str = "the file imports without error and every check reports",
    said: str | None = None,
) -> dict:
    """The result standing for user file ``path`` as a whole (it failed to load, or its process ended
    before any check reported): one failing verdict ``file:<name>`` with ``msg`` as its notes; ``said``
    (default ``"<path>: <msg>"``) is printed on stderr after ``afltheory: ``."""
    fid = f"file:{os.path.basename(path)}"
    v = _failed(fid, path, claim or f"{path} loads and registers its checks", msg, tolerance)
    return _failure_record(v, f"loading {path}", f"{path}: {msg}" if said is None else said, err)


def _check_failure(path: str, check_id: str, title: str, msg: str, elapsed: float = 0.0) -> dict:
    """One check of ``path`` that produced no verdict of its own (timed out, its process died): failing."""
    tolerance = "no crash, no timeout, at least one Verdict"
    v = _failed(check_id, path, f"check {check_id} reports its verdicts", msg, tolerance)
    return _failure_record(v, title, f"check {check_id} ({path}): {msg}", elapsed=elapsed)


def _rebuild(path: str, r: object) -> dict:
    """A child's result record, validated field by field, with its verdicts rebuilt here
    (``Verdict.from_dict``: schema-checked, ``ok`` recomputed); a record that does not validate is that
    check's failure."""
    try:
        if not isinstance(r, dict) or not isinstance(r.get("spec"), dict):
            raise TypeError("the result is not an object with a spec")
        sp = r["spec"]
        cid, title, ref = (str(sp.get(k, "")) for k in ("id", "title", "reference"))
        if not cid:
            raise TypeError("the result names no check id")
        vs = r.get("verdicts")
        if not isinstance(vs, list):
            raise TypeError("verdicts is not a list")
        verdicts = [Verdict.from_dict(d) for d in vs]
        num = lambda k: float(r[k]) if isinstance(r.get(k), (int, float)) else None  # noqa: E731
        err, skipped = r.get("error"), r.get("skipped")
        return {
            "spec": {"id": cid, "title": title, "reference": ref},
            "verdicts": verdicts,
            "elapsed": num("elapsed") or 0.0,
            "cpu": num("cpu"),
            "error": None if err is None else str(err),
            "refused": r.get("refused") is True,
            "skipped": None if skipped is None else str(skipped),
            "doc": str(r.get("doc") or ""),
        }
    except (TypeError, ValueError, KeyError) as exc:
        cid = r.get("spec", {}).get("id") if isinstance(r, dict) and isinstance(r.get("spec"), dict) else None
        return _check_failure(
            path,
            str(cid or f"file:{os.path.basename(path)}"),
            "invalid result",
            f"its result does not validate ({type(exc).__name__}: {str(exc)[:200]})",
        )


def _child_env() -> dict:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run_one_file(
    path: str, tier: str, seed: int, out: str, only, timeout: float | None, progress, ids_out: list
) -> list[dict]:
    """Run the checks of user file ``path`` in child processes (one per run; a new one for the checks left
    after a timeout); the results in order."""
    results: list[dict] = []
    todo: list[str] | None = None  # None: every selected check (known once the child has loaded the file)
    titles: dict[str, str] = {}
    while True:
        rfd, wfd = os.pipe()
        job = {"file": path, "tier": tier, "seed": seed, "out": out, "only": only, "ids": todo, "fd": wfd}
        cmd = [sys.executable, "-c", "from afltheory.checks.runner import _child_main; _child_main()"]
        proc = subprocess.Popen(
            [*cmd, json.dumps(job)],
            stdin=subprocess.DEVNULL,
            stdout=sys.__stderr__ if sys.__stderr__ is not None else subprocess.DEVNULL,
            pass_fds=(wfd,),
            env=_child_env(),
            start_new_session=True,  # its forks too are ended with it (killpg)
        )
        os.close(wfd)
        buf, selected, done, timed_out = b"", None, False, False
        current = time.monotonic()
        try:
            eof = False
            while not eof:
                wait = 0.2 if timeout is None else max(0.0, min(0.2, current + timeout - time.monotonic()))
                ready, _, _ = select.select([rfd], [], [], wait)
                if ready:
                    chunk = os.read(rfd, 1 << 16)
                    if not chunk:
                        eof = True
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        try:
                            msg = json.loads(line)
                        except ValueError:
                            continue
                        current = time.monotonic()
                        if not isinstance(msg, dict):
                            continue
                        if msg.get("no_checks"):
                            raise ValueError(
                                f"file={path!r} registers no check (decorate a function run(ctx) -> "
                                "list[Verdict] with @afltheory.checks.register(id, title, reference))"
                            )
                        if "load_error" in msg:
                            results.append(_file_result(path, f"failed to load: {msg['load_error']}"))
                            done = True
                        elif "selected" in msg:
                            selected = [str(i) for i in msg["selected"]]
                            titles.update({str(k): str(v) for k, v in dict(msg.get("titles", {})).items()})
                            ids_out.extend(str(i) for i in msg.get("loaded", selected))
                        elif "result" in msg:
                            r = _rebuild(path, msg["result"])
                            results.append(r)
                            progress(r)
                        elif msg.get("done"):
                            done = True
                elif proc.poll() is not None:
                    break
                if timeout is not None and time.monotonic() - current > timeout and not done:
                    timed_out = True
                    break
        finally:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
            else:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)  # a fork left behind
            proc.wait()
            os.close(rfd)
        if done:
            return results
        if selected is None:  # it ended (or hung) before it had loaded the file
            how = (
                f"timed out after {timeout:g} s while loading (--timeout)"
                if timed_out
                else f"its process ended ({_exit_text(proc.returncode)}) before it registered any check"
            )
            results.append(_file_result(path, how))
            return results
        reported = {r["spec"]["id"] for r in results}
        left = [i for i in selected if i not in reported]
        if not left:
            return results
        # the first check that did not report was running: it hung or killed its process; the rest run on
        msg = (
            f"timed out: no verdict within --timeout {timeout:g} s; the file's other checks ran on"
            if timed_out
            else f"no verdict: the process running it died ({_exit_text(proc.returncode)}) before it "
            "reported; the file's other checks ran on in a new process"
        )
        results.append(
            _check_failure(
                path, left[0], titles.get(left[0], left[0]), msg, float(timeout or 0) if timed_out else 0.0
            )
        )
        progress(results[-1])
        todo = left[1:]
        if not todo:
            return results


def _exit_text(code: int | None) -> str:
    if code is None:
        return "killed"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def run_files_isolated(
    files: Sequence[str],
    tier: str = "quick",
    seed: int = 0,
    out: str = "report",
    *,
    jobs: int = 1,
    only: Sequence[str] | None = None,
    timeout: float | None = None,
    progress_file: TextIO | None = None,
) -> tuple[list[dict], list[str]]:
    """Run the checks of each user file in its own child process (``jobs`` files at once); returns (results
    in file order, with Verdict objects rebuilt here; the check ids the files registered). Nothing of a
    file is imported into this process."""
    from concurrent.futures import ThreadPoolExecutor

    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    paths = [os.path.abspath(f) for f in files]
    progress = _progress_printer(0, progress_file)
    lock = threading.Lock()

    def locked(r):
        with lock:
            progress(r)

    ids: list[list[str]] = [[] for _ in paths]
    args = [
        (p, tier, seed, out, list(only) if only else None, timeout, locked, ids[k])
        for k, p in enumerate(paths)
    ]
    if jobs > 1 and len(paths) > 1:
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            per_file = list(ex.map(lambda a: _run_one_file(*a), args))
    else:
        per_file = [_run_one_file(*a) for a in args]
    return [r for rs in per_file for r in rs], [i for k in ids for i in k]


def _child_main() -> None:
    """The child process of ``run_files_isolated``: load one user file, run its selected checks, and send
    each result as one JSON line on the pipe fd it was given (nothing else goes there)."""
    job = json.loads(sys.argv[1])
    chan = os.fdopen(job["fd"], "w", buffering=1, encoding="utf-8")
    pid = os.getpid()

    def send(obj: dict) -> None:
        if os.getpid() != pid:  # a forked copy: it must not report
            os._exit(0)
        chan.write(json.dumps(json_safe(obj), allow_nan=False) + "\n")
        chan.flush()

    path = job["file"]
    try:
        got = load_file(path)
    except BaseException as exc:  # noqa: BLE001 - a syntax error or a crash while importing
        if os.getpid() != pid:
            os._exit(0)
        if isinstance(exc, SyntaxError) and exc.filename:
            msg = f"{type(exc).__name__}: {exc.msg} (at {exc.filename}:{exc.lineno})"
        else:
            msg = _crash_note(exc, crash_site(exc, [path]))
        send({"load_error": msg})
        return
    if not got:
        send({"no_checks": True})
        return
    order = ordered_ids(got)
    if job["ids"] is not None:
        selected = [i for i in order if i in job["ids"]]
    elif job["only"]:
        wanted = {check_of(i, order) for i in job["only"]}
        selected = [i for i in order if i in wanted]
    else:
        selected = order
    send({"loaded": order, "selected": selected, "titles": {i: CHECKS[i].title for i in order}})
    for i in selected:
        send({"result": run_check(i, job["tier"], job["seed"], job["out"])})
    send({"done": True})
    chan.close()


def _file_failure(path: str, exc: BaseException) -> dict:
    """The result standing for a user file that failed to load (syntax error, exception at import): one
    failing verdict ``file:<name>`` with the exception type, message and file:line; printed on stderr."""
    if isinstance(exc, SyntaxError) and exc.filename:
        site = f"{exc.filename}:{exc.lineno}"
        msg = f"{type(exc).__name__}: {exc.msg} (at {site})"
    else:
        msg = _crash_note(exc, crash_site(exc, [os.path.abspath(path)]))
    return _file_result(
        path,
        msg,
        "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        tolerance="the file imports without error",
        said=f"{path} failed to load: {msg}",
    )


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
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"per check: past S seconds it is stopped and recorded as a failing verdict, the other checks "
        f"run on (default {DEFAULT_TIMEOUT:g}; 0: none)",
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
