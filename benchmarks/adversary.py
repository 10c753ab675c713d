"""Adversary throughput: exact evaluations per second (not run as a test).

Usage (from the repo root):  .venv/bin/python benchmarks/adversary.py [--repeat 3]

For (dim, M, max_delay, K_max, T) from small to the issue's target (5, 10, 4, 4, 200) with one BLAS thread,
for AFA-CD (thm3, uniform m = M/2) and AFA-CS with m < M (thm4, round-robin m = M/2, memory slots), each on
the default class (diagonal Hessians and noise: the evaluator's one-dimensional reduction) and with rotated
(dense) Hessians: (a) the general engine ``afltheory.exact.moments`` on one candidate (the baseline; one call
per candidate; n/a for round-robin arrivals), (b) the adversary's batched evaluator
``afltheory.adversary.fastexact.grad_norm_sq`` (built from the rules' declarative view) at batch sizes 1, 16,
64, (c) a whole ``Claim.evaluate`` batch of 64 (decode + constants + step sizes + rules + recursion + bound),
i.e. what the search pays per candidate. Time by ``--clock``: "cpu" (time.process_time, this process's CPU
seconds: evaluations per second of one core, little affected by other processes' load; the default) or "wall"
(time.perf_counter); best of ``--repeat`` runs after one warm-up. The load average is printed."""

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

from afltheory.adversary import get_claim, make_instance  # noqa: E402
from afltheory.adversary.fastexact import grad_norm_sq  # noqa: E402
from afltheory.adversary.space import Structure  # noqa: E402
from afltheory.exact import moments  # noqa: E402

SIZES = [(2, 4, 1, 2, 100), (3, 5, 2, 3, 200), (5, 10, 4, 4, 200)]
#: (label, claim, structure kind, class overrides): AFA-CD (Theorem 3, uniform m = M/2) and AFA-CS with m < M
#: (Theorem 4, round-robin m = M/2, memory slots, warm start); "diag" = the default classes (unrotated
#: spectra, diagonal noise: the evaluator's B·d one-dimensional reduction), "dense" = rotated Hessians;
#: "periodic": Theorem 4 with adversarial periodic arrival sets of the longest period ⌈M/m⌉ + 3 (diagonal)
CASES = [
    ("AFA-CD diag", "thm3", "uniform", {}),
    ("AFA-CD dense", "thm3", "uniform", {"rotate": True}),
    ("AFA-CS m<M diag", "thm4", "cyclic", {}),
    ("AFA-CS m<M dense", "thm4", "cyclic", {"rotate": True}),
    ("AFA-CS periodic", "thm4", "periodic", {}),
]


CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}


def best(f, repeat, clock="cpu"):
    f()
    ts = []
    tick = CLOCK[clock]
    for _ in range(repeat):
        t = tick()
        f()
        ts.append(tick() - t)
    return min(ts)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clock", choices=sorted(CLOCK), default="cpu")
    ap.add_argument(
        "--sizes",
        choices=("all", "target"),
        default="all",
        help="'target': only the issue's (5, 10, 4, 4, 200)",
    )
    args = ap.parse_args(argv)
    print(f"clock={args.clock}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    head = (
        "case               d   M tau  K    T |  moments 1 |  batch 1 batch 16 batch 64 | evaluate 64"
        "   (exact evaluations per second)"
    )
    print(head)
    sizes = SIZES if args.sizes == "all" else SIZES[-1:]
    for label, cid, kind, over in CASES:
        c = get_claim(cid)
        for d, M, tau, K, T in sizes:
            cls = c.default_class().replace(
                dim=d, num_workers=M, max_delay=tau, K_max=K, rounds=T, min_rounds=T, m=M // 2, **over
            )
            st = Structure(M // 2, kind, {"P": -(-M // (M // 2)) + 3} if kind == "periodic" else {})
            U = rng.random((64, c.num_params(cls, st)))
            U[:, -2 - K - tau - 1 :] = 0.9  # full delay/K support: the most expensive law
            if kind == "uniform":
                inst = make_instance(c, cls, st, U[0], T)
                prob, algo, beh = inst.problem(), inst.algorithm(), inst.behaviour()
                r_mom = 1 / best(
                    lambda p=prob, a=algo, b=beh, T=T, x0=inst.x0: moments(p, a, b, T, x0=x0),
                    args.repeat,
                    args.clock,
                )
            else:
                r_mom = float("nan")  # exact.moments needs i.i.d. arrival rounds
            rates = []
            for B in (1, 16, 64):
                batch = c.batch(cls, c.decode(cls, st, U[:B]))
                rates.append(
                    B / best(lambda batch=batch, T=T: grad_norm_sq(batch, T), args.repeat, args.clock)
                )
            t_ev = best(lambda c=c, cls=cls, st=st, U=U: c.evaluate(cls, st, U), args.repeat, args.clock)
            print(
                f"{label:<16} {d:>2} {M:>3} {tau:>3} {K:>2} {T:>4} | {r_mom:>10.1f} | {rates[0]:>8.1f} "
                f"{rates[1]:>8.1f} {rates[2]:>8.1f} | {64 / t_ev:>11.1f}"
            )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
