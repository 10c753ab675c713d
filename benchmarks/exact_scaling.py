"""Exact-moments scaling and MC-vs-exact agreement table (not run as a test).

Usage (from the repo root):  .venv/bin/python benchmarks/exact_scaling.py [--rounds 100] [--budget 10]
[--table]

Scaling: wall time (time.perf_counter, one cold call, after imports) of ``afltheory.exact.moments`` for
``rounds`` rounds on ``HeterogeneousCurvatureQuadratic`` (per-worker diagonal Hessians, σ_L = 0.5) with
UniformArrivals(m = ⌈M/2⌉), UniformDelay(max_delay), UniformSteps(1, 3) — random K and τ, with one BLAS thread
(the machine is shared), i.e. the most expensive per-round path. Starting from (dim, M, max_delay) = (10, 10,
4) one axis at a time is doubled while the call finishes within ``budget`` seconds; the largest size per axis
is reported, for AFA-CD and AFA-CS. Table: for every configuration of tests/exact/test_agreement.py, max over
t = 1..10 of |z| (MC mean of ‖∇f(x_t)‖² with 2000 replicates vs exact, in MC standard errors), plus the
negative controls.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy is imported: avoid
    os.environ.setdefault(_v, "1")  # BLAS oversubscription (shared machine)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from afltheory.algorithms import AFACD, AFACS  # noqa: E402
from afltheory.anarchy import Behaviour, UniformArrivals, UniformDelay, UniformSteps  # noqa: E402
from afltheory.exact import ExactUnavailable, moments  # noqa: E402
from afltheory.problems.curvature import HeterogeneousCurvatureQuadratic  # noqa: E402


def timed(dim, M, D, algo, rounds):
    prob = HeterogeneousCurvatureQuadratic(
        dim=dim, num_workers=M, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=0
    )
    beh = Behaviour(UniformArrivals(math.ceil(M / 2)), UniformDelay(D), UniformSteps(1, 3))
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        ex = moments(prob, algo, beh, rounds, max_memory=16 * 1024**3)
    except ExactUnavailable:
        return math.inf, None
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    timed.cpu = cpu
    return wall, ex.config["state_size"]


def scaling(rounds, budget):
    base = {"dim": 10, "M": 10, "D": 4}
    for name, algo in (("AFA-CD", AFACD(1.0, 0.1)), ("AFA-CS", AFACS(1.0, 0.1))):
        s, n = timed(base["dim"], base["M"], base["D"], algo, rounds)
        print(f"{name} base (dim=10, M=10, max_delay=4): {s:.2f} s, state n={n}")
        for axis in ("dim", "M", "D"):
            cur, best = dict(base), None
            while True:
                s, n = timed(cur["dim"], cur["M"], cur["D"], algo, rounds)
                print(
                    f"  {name} dim={cur['dim']:4d} M={cur['M']:4d} max_delay={cur['D']:4d}  n={n}  "
                    f"wall {s:7.2f} s  cpu {timed.cpu:7.2f} s  load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                if s > budget:
                    break
                best = (dict(cur), s, n)
                cur[axis] *= 2
            if best and best[0][axis] * 2 == cur[axis]:  # one bisection step between good and too slow
                mid = dict(cur)
                mid[axis] = (best[0][axis] + cur[axis]) // 2
                s, n = timed(mid["dim"], mid["M"], mid["D"], algo, rounds)
                print(
                    f"  {name} dim={mid['dim']:4d} M={mid['M']:4d} max_delay={mid['D']:4d}  n={n}  "
                    f"wall {s:7.2f} s  cpu {timed.cpu:7.2f} s  load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                if s <= budget:
                    best = (mid, s, n)
            if best:
                b, s, n = best
                print(
                    f"  -> largest along {axis}: dim={b['dim']} M={b['M']} max_delay={b['D']} (n={n}) "
                    f"in {s:.2f} s for {rounds} rounds"
                )


def table():
    from tests.exact import test_agreement as ta

    class _MP:  # minimal monkeypatch for the negative controls
        def __init__(self):
            self.undo = []

        def setattr(self, obj, name, value):
            self.undo.append((obj, name, obj.__dict__.get(name, None)))
            setattr(obj, name, value)

        def restore(self):
            for obj, name, old in reversed(self.undo):
                if old is None:
                    delattr(obj, name)
                else:
                    setattr(obj, name, old)

    print("| configuration | suite | max |z| (t = 1..10) |")
    print("|---|---|---|")
    for suite, cfgs in (("fast", ta.FAST), ("slow", ta.SLOW)):
        for name, make, algo, beh in cfgs:
            print(f"| {name} | {suite} | {ta.max_abs_z(make(), algo, beh):.2f} |", flush=True)
    for nc in ("wrong_inclusion_probabilities", "wrong_delay_pmf", "wrong_local_step_pmf"):
        fn = getattr(ta, f"test_negative_control_{nc}")
        mp, zs = _MP(), []
        orig = ta.max_abs_z

        def spy(*a, zs=zs, orig=orig, **k):
            zs.append(orig(*a, **k))
            return zs[-1]

        ta.max_abs_z = spy
        try:
            fn(mp)
        finally:
            ta.max_abs_z = orig
            mp.restore()
        print(f"| negative control: {nc.replace('_', ' ')} | control | {zs[0]:.2f} → perturbed {zs[1]:.2f} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--budget", type=float, default=10.0)
    ap.add_argument("--table", action="store_true", help="only print the agreement table")
    ap.add_argument("--scaling", action="store_true", help="only run the scaling search")
    a = ap.parse_args()
    if not a.table:
        scaling(a.rounds, a.budget)
    if not a.scaling:
        table()
