"""Adversary throughput against the dimension d (not run as a test; issue 31 item 4).

Usage (from the repo root):  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/adversary_growth.py
[--dims 2 5 10 20 40] [--repeat 3]

At the issue's target sizes except d (M = 10, τ = 4, K ≤ 4, T = 200; AFA-CD, Theorem 3, uniform m = M/2, full
delay and K support), exact evaluations per CPU second (time.process_time, best of ``--repeat`` after one
warm-up) of the adversary's batched evaluator on batches of 64 candidates, i.e. ``Claim.evaluate`` (decode,
constants, step sizes, rules, recursion, bound): on the default class (diagonal Hessians: the evaluator's
one-dimensional reduction) and with rotated (dense) Hessians. Complements benchmarks/adversary.py, which
varies all sizes together.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from afltheory.adversary import get_claim  # noqa: E402
from afltheory.adversary.space import Structure  # noqa: E402


def best(f, repeat):
    f()
    out = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        f()
        out = min(out, time.process_time() - t)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--dims", type=int, nargs="+", default=[2, 5, 10, 20, 40])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| Hessians | d | M | τ | K | T | evaluations / CPU s (batch 64) |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    c = get_claim("thm3")
    M, tau, K, T = 10, 4, 4, 200
    for label, over in (("diagonal", {}), ("dense", {"rotate": True})):
        for d in args.dims:
            cls = c.default_class().replace(
                dim=d, num_workers=M, max_delay=tau, K_max=K, rounds=T, min_rounds=T, m=M // 2, **over
            )
            st = Structure(M // 2, "uniform", {})
            U = rng.random((64, c.num_params(cls, st)))
            U[:, -2 - K - tau - 1 :] = 0.9  # full delay/K support: the most expensive law
            t = best(lambda c=c, cls=cls, st=st, U=U: c.evaluate(cls, st, U), args.repeat)
            print(f"| {label} | {d} | {M} | {tau} | {K} | {T} | {64 / t:.1f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
