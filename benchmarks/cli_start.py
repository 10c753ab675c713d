"""Start-up cost of the command line (issue 41: ``afltheory --version`` and ``--help`` <= 0.3 s CPU, and each
subcommand's ``--help``). Not run as a test.

Usage (from the repo root):  python benchmarks/cli_start.py [--reps 7] [--limit 0.3]

For each command line below, runs ``python ARGS`` ``reps`` times in a fresh interpreter (from the repo root,
so this checkout is the one imported), the cases interleaved (a load spike hits every case alike), and reports
the child's CPU time (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)`` around each run): min and
median over the repetitions, the min as a multiple of the floor ``python -c pass`` (the interpreter alone),
and whether the min is within ``--limit`` CPU seconds; plus the load average before and after. The cases:
the floor, ``import afltheory`` (the package root), ``afltheory --version``, ``afltheory --help`` and
``afltheory CMD --help`` for every built-in command (``afltheory.cli.BUILTIN_COMMANDS``) and every installed
plugin command (entry-point group ``afltheory.commands``). The CPU time, not the wall time, is the number
compared: the machine is shared. Exit status 0 whatever the times (a benchmark, not a test).
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


def cases() -> list[tuple[str, list[str]]]:
    """(label, python argv) of every command line measured: the floor, the package root, ``--version``,
    ``--help``, then ``CMD --help`` for each built-in command and each plugin command, in help order."""
    from importlib.metadata import entry_points

    sys.path.insert(0, str(ROOT))  # this checkout's afltheory (its command list), as the children import
    from afltheory.cli import BUILTIN_COMMANDS, COMMANDS_GROUP

    plugins = sorted(ep.name for ep in entry_points(group=COMMANDS_GROUP))
    out = [
        ("floor: python -c pass", ["-c", "pass"]),
        ("import afltheory", ["-c", "import afltheory"]),
        ("afltheory --version", ["-m", "afltheory", "--version"]),
        ("afltheory --help", ["-m", "afltheory", "--help"]),
    ]
    for name in [*BUILTIN_COMMANDS, *(p for p in plugins if p not in BUILTIN_COMMANDS)]:
        out.append((f"afltheory {name} --help", ["-m", "afltheory", name, "--help"]))
    return out


def child_cpu(args: list[str]) -> float:
    """CPU seconds (user + system) of one run of ``python ARGS``; raises if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    """Measure every case of ``cases()`` and print the table; 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7, help="runs per command line (default 7)")
    ap.add_argument("--limit", type=float, default=0.3, help="CPU seconds a command may take (default 0.3)")
    a = ap.parse_args(argv)
    if a.reps < 1:
        raise SystemExit(f"--reps must be >= 1, got {a.reps}")
    if not a.limit > 0:
        raise SystemExit(f"--limit must be > 0 CPU seconds, got {a.limit}")
    todo = cases()
    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (before)")
    times: dict[str, list[float]] = {label: [] for label, _ in todo}
    for _ in range(a.reps):  # interleaved: a load spike hits every case alike
        for label, args in todo:
            times[label].append(child_cpu(args))
    floor = min(times[todo[0][0]])
    head = f"{'command':32s} {'min CPU s':>10s} {'median':>8s} {'min/floor':>10s}"
    print(f"{head}  ≤ {a.limit:g} s  (over {a.reps} runs)")
    for label, _ in todo:
        t = min(times[label])
        ok = "yes" if t <= a.limit else "NO"
        print(f"{label:32s} {t:10.3f} {statistics.median(times[label]):8.3f} {t / floor:10.1f}  {ok}")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
