"""``afltheory sweep ...`` subcommands. The lead's ``afltheory/cli.py`` calls :func:`add_sweep_parser`.

    afltheory sweep run SPEC --store FILE [--jobs N] [--executor local|dask] [--scheduler ADDR] [--extend]
    afltheory sweep status --store FILE [--json]
    afltheory sweep export --store FILE --csv OUT
    afltheory sweep copy --store FILE --to COPY      (one self-contained file, write-ahead log included)
    afltheory sweep plot --store FILE --out PNG [--x PARAM] [--metric NAME]
    afltheory sweep fit --store FILE --x PARAM [--metric NAME] [--level P] [--json]

Exit codes: 0 ok; 1 some tasks failed; 2 bad spec / bad arguments / store mismatch.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import signal
import sqlite3
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._io import check_output_file, path_arg, refuse_overlap
from .executors import add_executor_arguments

__all__ = ["add_sweep_parser", "main"]


def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if not 1 <= v <= 4096:
        raise argparse.ArgumentTypeError(f"{v} is outside the allowed range 1 .. 4096")
    return v


def add_sweep_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``sweep`` (with run/status/export/plot) to an argparse subparsers object; sets ``func``."""
    p = subparsers.add_parser(
        "sweep",
        help="run grid sweeps into a resumable SQLite store",
        description="Grid sweeps from TOML specs, resumable SQLite results store.",
    )
    sub = p.add_subparsers(dest="sweep_command", metavar="{run,status,export,copy,plot,fit}")
    sub.required = True

    r = sub.add_parser("run", help="run (or resume) a sweep spec into a store")
    r.add_argument("spec", help="TOML spec file")
    r.add_argument(
        "--store", required=True, help="SQLite store file (created if missing; resumed if present)"
    )
    add_executor_arguments(
        r,
        jobs_help="local processes or LocalCluster workers",
        executor_help="local process pool (default) or Dask (LocalCluster, or --scheduler ADDR)",
        jobs_type=_positive_int,
    )
    r.add_argument("--extend", action="store_true", help="allow a store that holds tasks of another spec")
    r.add_argument(
        "--progress",
        choices=("auto", "bar", "lines", "none"),
        default="auto",
        help="progress display on stderr (auto: a bar on a terminal, lines otherwise)",
    )
    r.add_argument("--check", action="store_true", help="validate the spec and print the task count only")
    r.add_argument("--task", choices=("simulate", "synthetic"), default="simulate", help=argparse.SUPPRESS)
    r.set_defaults(func=_cmd_run)

    s = sub.add_parser("status", help="counts, timings and divergences of a store")
    s.add_argument("--store", required=True)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=_cmd_status)

    e = sub.add_parser("export", help="write one CSV row per finished task")
    e.add_argument("--store", required=True)
    e.add_argument("--csv", required=True)
    e.set_defaults(func=_cmd_export)

    c = sub.add_parser(
        "copy",
        help="copy a store into one self-contained file (its write-ahead log "
        "included); safe while a runner writes",
    )
    c.add_argument("--store", required=True)
    c.add_argument("--to", required=True, help="the copy (a new file, or a regular file to replace)")
    c.set_defaults(func=_cmd_copy)

    pl = sub.add_parser("plot", help="plot curves (or a metric against --x) from a store")
    pl.add_argument("--store", required=True)
    pl.add_argument("--out", required=True, help="PNG file")
    pl.add_argument("--x", default=None, help="dotted parameter for the x axis, e.g. algorithm.eta_L")
    _add_metric(pl, "with --x: the plotted metric, with per-point CIs and the fitted line")
    pl.set_defaults(func=_cmd_plot)

    f = sub.add_parser(
        "fit",
        help="log-log slope of a metric against a swept parameter, with bootstrap CI",
        description="Fit log(metric) = a + b log(x) per combination of the other varying "
        "parameters. "
        "The CI is a percentile bootstrap over the stored per-replicate values: "
        "it covers "
        "Monte Carlo noise only; the end slopes (first/last pair of points) show "
        "the "
        "finite-range bias (equal for a pure power law).",
    )
    f.add_argument("--store", required=True, help="SQLite store written by `sweep run`")
    f.add_argument("--x", required=True, help="dotted swept parameter, e.g. rounds or behaviour.arrivals.m")
    _add_metric(f, "avg_grad_norm_sq = (1/T) Σ_t ‖∇f(x_t)‖² per replicate (default)")
    f.add_argument("--level", type=float, default=0.95, help="CI level in (0, 1) (default 0.95)")
    f.add_argument("--json", action="store_true", help="print the fits as JSON on stdout")
    f.set_defaults(func=_cmd_fit)
    return p


def _add_metric(parser: argparse.ArgumentParser, help: str) -> None:
    """``--metric``: the stored per-replicate metric ``plot`` and ``fit`` read (default the average ‖∇f‖²)."""
    parser.add_argument(
        "--metric",
        default="avg_grad_norm_sq",
        choices=("avg_grad_norm_sq", "final_grad_norm_sq", "final_loss"),
        help=help,
    )


def _store_inputs(store: str) -> list[tuple[str, str]]:
    """The files a store is read from: the store and its write-ahead log / shared-memory files."""
    return [("--store", store), ("--store", store + "-wal"), ("--store", store + "-shm")]


def _err(msg: str) -> int:
    print(f"afltheory sweep: error: {msg}", file=sys.stderr)
    return 2


def _with_store(args, use: Callable[[Any], Any], output: tuple[str, str] | None = None) -> tuple[int, Any]:
    """``use(store)`` on ``--store`` opened read-only: (0, what it returns), or (2, None) after one error
    line. With ``output`` = (option, path), the file ``use`` writes: checked first (a writable file that is
    not one of the store's files), and an I/O failure reads "<option> <path>: ...; nothing was written"."""
    from .store import Store, StoreError

    # reading only: a database failure; writing: also an I/O failure (e.g. a full disk)
    failures = sqlite3.Error if output is None else (OSError, sqlite3.Error)
    try:
        path_arg(args.store, "--store", reading=True)
        if output is not None:
            check_output_file(output[1], output[0])
            refuse_overlap(_store_inputs(args.store), [output])
        with Store(args.store, readonly=True) as st:
            return 0, use(st)
    except (StoreError, ValueError) as exc:
        return _err(str(exc)), None
    except failures as exc:
        if output is None:
            return _err(f"store {args.store}: {exc}"), None
        return _err(f"{output[0]} {output[1]}: {exc}; nothing was written"), None


def _cmd_run(args) -> int:
    from .runner import run_sweep
    from .spec import SpecError, load_spec
    from .store import StoreError

    if args.scheduler and args.executor != "dask":
        return _err("--scheduler needs --executor dask")
    if not args.check:
        try:  # before the spec is even read: a FIFO, a device or a missing directory is refused at once
            path_arg(args.spec, "SPEC", reading=True)
            check_output_file(args.store, "--store", create_parents=False)
            refuse_overlap([("SPEC", args.spec)], _store_inputs(args.store))
        except ValueError as exc:
            return _err(str(exc))
    try:
        spec = load_spec(args.spec, check_objects=args.task == "simulate")
    except SpecError as exc:
        return _err(str(exc))
    if args.check:
        print(
            f"{args.spec}: ok, {len(spec.tasks)} task(s), {len({t.point_id for t in spec.tasks})} grid "
            f"point(s), spec hash {spec.hash[:12]}"
        )
        return 0
    try:

        def on_wait(holder):
            print(
                f"afltheory sweep: store {args.store} is being written by {holder}; waiting for it to "
                f"finish, then running only the tasks still missing",
                file=sys.stderr,
                flush=True,
            )

        with warnings.catch_warnings(), _terminate_gracefully():
            warnings.simplefilter("ignore", UserWarning)  # the report below says the same
            rep = run_sweep(
                spec,
                args.store,
                jobs=args.jobs,
                executor=args.executor,
                scheduler=args.scheduler,
                task=args.task,
                progress=None if args.progress == "auto" else args.progress,
                extend=args.extend,
                on_wait=on_wait,
            )
    except (StoreError, ImportError, ValueError) as exc:
        return _err(str(exc))
    except sqlite3.Error as exc:  # disk full, I/O error: every committed row is kept; rerun resumes
        return _err(_store_failure(args.store, exc))
    except OSError as exc:  # e.g. an unreachable Dask scheduler: one line, no traceback
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS):
            return _err(_store_failure(args.store, exc))
        where = f" (scheduler {args.scheduler})" if args.executor == "dask" and args.scheduler else ""
        return _err(f"{type(exc).__name__}{where}: {exc}")
    for line in rep.damage:
        print(f"afltheory sweep: {line}", file=sys.stderr)
    if rep.waited_for:
        print(f"afltheory sweep: waited for {rep.waited_for}", file=sys.stderr)
    if rep.pool_rebuilds:
        print(
            f"afltheory sweep: {rep.pool_rebuilds} worker process(es) died; the pool was rebuilt and their "
            f"tasks rerun",
            file=sys.stderr,
        )
    print(
        f"sweep {spec.name or args.spec}: {rep.ran} ran, {rep.skipped} already stored, {rep.failed} failed, "
        f"{rep.total} total ({rep.executor}, {rep.jobs} job(s), {rep.seconds:.1f} s) -> {args.store}",
        file=sys.stderr,
    )
    for tid, last in rep.failures[:10]:
        print(f"  failed {tid[:12]}: {last}", file=sys.stderr)
    return 0 if rep.ok else 1


def _store_failure(store: str, exc: BaseException) -> str:
    msg = str(exc) or type(exc).__name__
    kept = "every task committed before this is kept"
    with contextlib.suppress(Exception):  # say how many (a read-only look; the disk may still be full)
        from .store import Store

        with Store(store, readonly=True) as st:
            n = st.status()["finished"]
        kept = f"{n} finished task(s) committed before this are kept" + (
            f" (in {store}-wal until the next run checkpoints it)" if _wal_bytes(store) else ""
        )
    return (
        f"store {store}: {msg}; {kept} — free space (or fix the cause) and rerun the same command to resume"
    )


def _wal_bytes(store: str) -> int:
    """Size of the store's write-ahead log (0 when absent)."""
    try:
        return os.path.getsize(store + "-wal")
    except OSError:
        return 0


@contextlib.contextmanager
def _terminate_gracefully():
    """SIGTERM/SIGHUP raise SystemExit(128 + signum) in the runner, so its cleanup runs: the pool workers
    are stopped at once and the store's write-ahead log is checkpointed into the store file."""

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None:
                old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def _cmd_status(args) -> int:
    rc, got = _with_store(args, lambda st: (st.status(), st.failures()))
    if rc:
        return rc
    s, fails = got
    s["wal_bytes"] = _wal_bytes(args.store)
    if args.json:
        print(json.dumps(s, indent=2))
        return 0
    if not s["specs"] and not s["finished"]:  # not "planned 0 finished 0", which reads like a done sweep
        print(
            f"store {s['store']}: no spec planned yet (a run stopped before planning its tasks, e.g. on a "
            "full disk); `afltheory sweep run SPEC --store` plans and runs them"
        )
        return 0
    print(
        f"store {s['store']}  spec {s['spec_name'] or '?'} ({(s['spec_hash'] or '?')[:12]}"
        + (f", {s['specs']} specs" if s["specs"] > 1 else "")
        + ")"
    )
    print(
        f"  planned {s['planned']}  finished {s['finished']}  pending "
        f"{s['pending']}  failed {s['failed']}  diverged {s['diverged_tasks']}"
    )
    if s["mean_task_seconds"] is not None:
        wall = (s["last_finished"] or 0) - (s["first_started"] or 0)
        print(
            f"  task time {s['task_seconds']:.1f} s total, {s['mean_task_seconds']:.3f} s/task; "
            f"wall span {wall:.1f} s"
        )
    for tid, err in fails[:5]:
        print(f"  failed {tid[:12]}: {err.strip().splitlines()[-1]}")
    if s["wal_bytes"]:
        print(
            f"  {s['wal_bytes']} bytes of committed rows are still in {s['store']}-wal (not checkpointed: a "
            "runner is writing, or one was stopped by SIGKILL or a full disk): copy both files, or "
            "`afltheory sweep copy`"
        )
    return 0


def _cmd_export(args) -> int:
    from .analysis import export_csv

    rc, n = _with_store(args, lambda st: export_csv(st, args.csv), ("--csv", args.csv))
    if rc == 0:
        print(f"wrote {n} row(s) to {args.csv}", file=sys.stderr)
    return rc


def _cmd_copy(args) -> int:
    def copy(st):
        st.copy_to(args.to)
        return st.status()["finished"]

    rc, n = _with_store(args, copy, ("--to", args.to))
    if rc == 0:
        print(f"copied {n} finished task(s) to {args.to} (one self-contained file)", file=sys.stderr)
    return rc


def _cmd_plot(args) -> int:
    from .analysis import plot_store

    rc, _ = _with_store(
        args, lambda st: plot_store(st, args.out, x=args.x, metric=args.metric), ("--out", args.out)
    )
    if rc == 0:
        print(f"wrote {args.out}", file=sys.stderr)
    return rc


def _cmd_fit(args) -> int:
    from .analysis import fit_store

    if not 0 < args.level < 1:
        return _err(f"--level {args.level} must lie in (0, 1)")
    rc, fits = _with_store(args, lambda st: fit_store(st, x=args.x, metric=args.metric, level=args.level))
    if rc:
        return rc
    if args.json:
        out = []
        for f in fits:
            fit = f["fit"]
            out.append(
                {
                    "series": f["series"],
                    "x": f["x"].tolist(),
                    "mean": f["mean"].tolist(),
                    "diverged_points": f["diverged_points"],
                    "slope": None if fit is None else fit.slope,
                    "ci": None if fit is None else list(fit.ci),
                    "end_slopes": (None if fit is None or fit.end_slopes is None else list(fit.end_slopes)),
                }
            )
        print(json.dumps({"x": args.x, "metric": args.metric, "level": args.level, "fits": out}, indent=2))
        return 0
    print(
        f"{args.metric} against {args.x} ({args.level:.0%} bootstrap CI over replicates: Monte Carlo noise "
        "only)"
    )
    for f in fits:
        fit = f["fit"]
        head = f"  [{f['series'] or 'all'}]"
        if fit is None:
            print(f"{head} not enough finite points to fit (diverged at {f['diverged_points']})")
            continue
        pts = " ".join(f"{x:g}:{m:.4g}" for x, m in zip(f["x"], f["mean"], strict=True))
        print(
            f"{head} slope {fit.slope:.4f} [{fit.ci[0]:.4f}, {fit.ci[1]:.4f}]; end slopes "
            f"{fit.end_slopes[0]:.4f} / {fit.end_slopes[1]:.4f}; points {pts}"
            + (f"; diverged at {f['diverged_points']}" if f["diverged_points"] else "")
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry (``python -m afltheory.sweep ...``): the same subcommands without the ``sweep``
    word."""
    parser = argparse.ArgumentParser(prog="python -m afltheory.sweep")
    sub = parser.add_subparsers(dest="command")
    add_sweep_parser(sub)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "sweep":
        argv = ["sweep"] + argv
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. `... status | head`: the reader left; no traceback
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's final flush
        return 1
