"""Run the test suite on several cores: ``python tools/run_tests.py [--jobs N] [--record] [-- PYTEST_ARGS]``.

The test modules are dealt into N shards by the recorded durations of their selected tests (``--shard I/N``;
tests/conftest.py ``module_costs`` and ``deal``: longest first, each to the least-loaded shard, from
tests/test_durations.json, seconds per test); each shard is
one ``pytest`` process with its own ``--basetemp``. Their outputs are printed one after the other when all
have finished, and the exit status is the first non-zero one (0 when every shard passed; 5, "no tests
collected", counts as a pass for a shard that received no module of a narrowed selection). ``--jobs 1`` runs
a single plain ``pytest`` in this process's place. ``make test`` runs it with the machine's cores
(docs/performance.md: the suite's wall time on 2 cores); each shard gets one BLAS/OpenMP thread unless
``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` are set. ``--record`` updates
tests/test_durations.json with this run's seconds per test (only when every shard passed; tests of modules
that no longer exist are dropped): run it on an idle machine after adding heavy tests, once for the default
tier and once with ``-- -m slow``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    """Run ``pytest`` in ``--jobs`` shards; return the combined exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="shards (default: cores)")
    parser.add_argument(
        "--record", action="store_true", help="rewrite the durations file from this run (all shards passed)"
    )
    parser.add_argument(
        "--durations-file",
        type=Path,
        default=ROOT / "tests" / "test_durations.json",
        help="where --record writes (default: tests/test_durations.json, which the deal reads)",
    )
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: arguments for pytest")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    extra = [a for a in args.pytest_args if a != "--"] if args.pytest_args[:1] == ["--"] else args.pytest_args
    base = [sys.executable, "-m", "pytest", *extra]
    if args.jobs == 1 and not args.record:
        return subprocess.call(base, cwd=ROOT)
    start = time.monotonic()
    # one BLAS/OpenMP thread per shard unless the caller chose: N shards on N cores, no oversubscription
    env = {**os.environ}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    with tempfile.TemporaryDirectory(prefix="afltheory-shards-") as tmp:
        procs = []
        for i in range(args.jobs):
            log = open(Path(tmp) / f"shard{i}.log", "w+b")  # noqa: SIM115 - closed below
            cmd = [*base, f"--shard={i}/{args.jobs}", f"--basetemp={Path(tmp) / f'basetemp{i}'}"]
            if args.record:
                cmd.append(f"--durations-out={Path(tmp) / f'durations{i}.json'}")
            procs.append(
                (subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT), log)
            )
        codes = []
        for i, (proc, log) in enumerate(procs):
            codes.append(proc.wait())
            log.seek(0)
            sys.stdout.write(f"===== shard {i + 1}/{args.jobs} (exit {codes[-1]}) =====\n")
            sys.stdout.write(log.read().decode(errors="replace"))
            log.close()
        if args.record and all(c in (0, 5) for c in codes) and 0 in codes:  # 5: a shard got no test
            _record([Path(tmp) / f"durations{i}.json" for i in range(args.jobs)], args.durations_file)
    failed = [c for c in codes if c not in (0, 5)]
    if all(c == 5 for c in codes):
        failed = [5]
    print(f"===== {args.jobs} shards, exit codes {codes}, {time.monotonic() - start:.1f} s wall =====")
    return failed[0] if failed else 0


def _record(files: list[Path], out: Path) -> None:
    """Merge the shards' seconds per test into ``out`` (JSON {node id: seconds}, sorted): this run's tests
    replace their old records, the other records stay unless their module file is gone."""
    try:
        merged = json.loads(out.read_text())
    except (OSError, ValueError):
        merged = {}
    merged = {k: v for k, v in merged.items() if (ROOT / k.split("::", 1)[0]).exists()}
    new: dict[str, float] = {}
    for f in files:
        new.update(json.loads(f.read_text()))
    merged.update(new)
    out.write_text(json.dumps(dict(sorted(merged.items())), indent=0) + "\n")
    print(f"recorded {len(new)} test durations ({sum(new.values()):.1f} s; {len(merged)} in all) in {out}")


if __name__ == "__main__":
    sys.exit(main())
