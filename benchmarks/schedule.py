"""Timing of round-mode schedule sampling, ``Behaviour.sample`` (part of every ``simulate`` call).

    .venv/bin/python benchmarks/schedule.py [--repeat 5] [--rounds 50] [--workers 100] [--m 10]

Prints the best-of-``repeat`` wall time of ``Behaviour.sample(rounds, R, M, seed)`` for R ∈ {64, 1024}, delays
NoDelay / UniformDelay(4), and ConstantSteps(5) / the paper's dynamic steps UniformSteps.paper(5) = U{1..10},
with UniformArrivals(m). Not part of the test run. Each call returns a fresh schedule, so the timings include
first-touch page faults on its output arrays, which are a large part of the cost on some virtual machines.
"""

from __future__ import annotations

import argparse
import time

from afltheory import anarchy as an


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--workers", type=int, default=100)
    ap.add_argument("--m", type=int, default=10)
    args = ap.parse_args(argv)
    T, M, m = args.rounds, args.workers, args.m
    delays = {"NoDelay": an.NoDelay(), "UniformDelay(4)": an.UniformDelay(4)}
    steps = {"ConstantSteps(5)": an.ConstantSteps(5), "UniformSteps.paper(5)": an.UniformSteps.paper(5)}
    print(f"Behaviour.sample: T={T} rounds, M={M} workers, UniformArrivals({m}); best of {args.repeat}")
    for R in (64, 1024):
        for dname, d in delays.items():
            for kname, k in steps.items():
                beh = an.Behaviour(an.UniformArrivals(m), d, k)
                beh.sample(T, R, M, seed=0)  # warm-up
                s = best_of(lambda beh=beh, R=R: beh.sample(T, R, M, seed=1), args.repeat)
                print(f"  R={R:5d}  {dname:16s} {kname:22s} {s * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
