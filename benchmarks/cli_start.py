"""Start-up cost of the command line (issue 41: ``afltheory --version`` <= 0.3 s CPU). Not run as a test.

Usage (from the repo root):  python benchmarks/cli_start.py [--reps 7]

For each command line below, runs ``python -m afltheory ARGS`` ``reps`` times in a fresh interpreter (from the
repo root, so this checkout is the one imported) and reports the child's CPU time (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)`` around each run), min and median over the repetitions, plus the load
average at the start. The floor ``python -c pass`` is the interpreter alone; ``python -c "import afltheory"``
is the package root. The CPU time (not the wall time) is the number compared: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES: tuple[tuple[str, list[str]], ...] = (
    ("floor: python -c pass", ["-c", "pass"]),
    ("import afltheory", ["-c", "import afltheory"]),
    ("afltheory --version", ["-m", "afltheory", "--version"]),
    ("afltheory --help", ["-m", "afltheory", "--help"]),
    ("afltheory sweep --help", ["-m", "afltheory", "sweep", "--help"]),
    ("afltheory pep --help", ["-m", "afltheory", "pep", "--help"]),
    ("afltheory check --help", ["-m", "afltheory", "check", "--help"]),
)


def child_cpu(args: list[str]) -> float:
    """CPU seconds (user + system) of one run of ``python ARGS``; raises if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7, help="runs per command line (default 7)")
    a = ap.parse_args(argv)
    if a.reps < 1:
        raise SystemExit(f"--reps must be >= 1, got {a.reps}")
    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'command':28s} {'min CPU s':>10s} {'median':>8s}   (over {a.reps} runs, interleaved)")
    times: dict[str, list[float]] = {label: [] for label, _ in CASES}
    for _ in range(a.reps):  # interleaved: a load spike hits every case alike
        for label, args in CASES:
            times[label].append(child_cpu(args))
    for label, _ in CASES:
        t = times[label]
        print(f"{label:28s} {min(t):10.3f} {statistics.median(t):8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
