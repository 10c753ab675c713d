"""Exact moments on diagonal structure (issue 41): CPU time of ``afltheory.exact.moments`` along d on one
instance family, the default path (per coordinate, batched over the coordinates, when projected cheaper), the
per-coordinate recursion forced, and the dense recursion (``structure=False``). Not run as a test.

Usage (from the repo root):  python benchmarks/exact_structure.py [--reps 3] [--dense-max 40] [--dims 20 80]
                             python benchmarks/exact_structure.py --calibrate   (the batched path's constants)

Family: ``HeterogeneousCurvatureQuadratic(dim=d, num_workers=20, sigma_L=0.5, seed=0)`` (per-worker diagonal
Hessians), ``Behaviour(UniformArrivals(5), FixedDelay(2), ConstantSteps(3))``, T = 60 rounds, AFA-CD(0.5,
0.05) and AFA-CS(0.5, 0.05). Each number is the min over ``reps`` of time.process_time around one call, the
three contenders interleaved per repetition, one BLAS thread; the load average is printed. The forced
per-coordinate path runs ``exact.diagonal.diagonal_system(..., rounds=None)`` through the same loop as
``moments`` (initial / step / observe). Every contender's E‖∇f‖² is compared with the dense one's (max
relative difference) where the dense one runs (d <= --dense-max).
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

from afltheory.algorithms import AFACD, AFACS  # noqa: E402
from afltheory.anarchy import Behaviour, ConstantSteps, FixedDelay, UniformArrivals  # noqa: E402
from afltheory.exact import ExactSystem, moments  # noqa: E402
from afltheory.exact.diagonal import diagonal_system  # noqa: E402
from afltheory.problems.curvature import HeterogeneousCurvatureQuadratic  # noqa: E402

T = 60
BEHAVIOUR = Behaviour(UniformArrivals(5), FixedDelay(2), ConstantSteps(3))


def forced(problem, rule, rounds):
    """E‖∇f(x_t)‖², t = 0..rounds, by the per-coordinate recursion whatever its projection."""
    sys_ = diagonal_system(problem, rule, BEHAVIOUR, ExactSystem)
    S = sys_.initial(problem.default_x0())
    g = [sys_.observe(S)[0]]
    for t in range(rounds):
        S = sys_.step(S, t)
        g.append(sys_.observe(S)[0])
    return np.array(g)


def calibrate(reps: int) -> None:
    """Measured against projected time per round of the batched per-coordinate recursion
    (``exact.cost.BATCHED_SECONDS_PER``): AFA-CD and AFA-CS, M = 20 / 80, fixed or random (K, τ), d = 2 ..
    320; min CPU over ``reps`` of 40 rounds after the operators are built."""
    from afltheory.anarchy import UniformDelay, UniformSteps

    fixed = Behaviour(UniformArrivals(5), FixedDelay(2), ConstantSteps(3))
    rand = Behaviour(UniformArrivals(5), UniformDelay(2), UniformSteps(1, 3))
    print(
        f"{'rule':6s} {'M':>3s} {'K, tau':>7s} {'d':>4s} {'n1':>3s} {'measured us':>12s} "
        f"{'projected us':>13s}"
    )
    for rule in (AFACD(0.5, 0.05), AFACS(0.5, 0.05)):
        for M, beh, kind in ((20, fixed, "fixed"), (20, rand, "random"), (80, fixed, "fixed")):
            for d in (2, 20, 80, 320):
                p = HeterogeneousCurvatureQuadratic(dim=d, num_workers=M, sigma_L=0.5, seed=0)
                s = diagonal_system(p, rule, beh, ExactSystem)
                S = s.initial(p.default_x0())
                for t in range(3):
                    S = s.step(S, t)
                best = np.inf
                for _ in range(reps):
                    t0 = time.process_time()
                    for t in range(3, 43):
                        S = s.step(S, t)
                        s.observe(S), s.msd(S)
                    best = min(best, (time.process_time() - t0) / 40)
                us = (best * 1e6, s.projected_cost(60).seconds_per_round * 1e6)
                name = type(rule).__name__
                print(f"{name:6s} {M:3d} {kind:>7s} {d:4d} {s.n_coordinate:3d} {us[0]:12.0f} {us[1]:13.0f}")


def cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dense-max", type=int, default=40, help="largest d the dense recursion runs at")
    ap.add_argument("--dims", type=int, nargs="+", default=[10, 20, 40, 80])
    ap.add_argument(
        "--calibrate", action="store_true", help="per-round time of the batched path, measured vs projected"
    )
    a = ap.parse_args(argv)
    if a.calibrate:
        print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        calibrate(a.reps)
        return 0
    load = os.getloadavg()
    print(
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"T = {T}, M = 20, m = 5, FixedDelay(2), K = 3"
    )
    print(
        f"{'rule':6s} {'d':>4s} {'default s':>10s} {'path':>9s} {'per-coord s':>12s} {'dense s':>9s} "
        f"{'max rel':>9s}"
    )
    for rule in (AFACD(0.5, 0.05), AFACS(0.5, 0.05)):
        base = {}
        for d in a.dims:
            p = HeterogeneousCurvatureQuadratic(dim=d, num_workers=20, sigma_L=0.5, seed=0)
            best = {"default": np.inf, "forced": np.inf, "dense": np.inf}
            vals = {}
            for _ in range(a.reps):
                t, m = cpu(lambda p=p, rule=rule: moments(p, rule, BEHAVIOUR, T))
                best["default"], vals["default"], path = (
                    min(best["default"], t),
                    m.grad_norm_sq,
                    m.config["structure"],
                )
                t, g = cpu(lambda p=p, rule=rule: forced(p, rule, T))
                best["forced"], vals["forced"] = min(best["forced"], t), g
                if d <= a.dense_max:
                    t, m = cpu(lambda p=p, rule=rule: moments(p, rule, BEHAVIOUR, T, structure=False))
                    best["dense"], vals["dense"] = min(best["dense"], t), m.grad_norm_sq
            rel = (
                max(
                    float(np.max(np.abs(vals[k] - vals["dense"]) / vals["dense"]))
                    for k in ("default", "forced")
                )
                if "dense" in vals
                else float("nan")
            )
            base[d] = best
            name = type(rule).__name__
            print(
                f"{name:6s} {d:4d} {best['default']:10.3f} {path:>9s} {best['forced']:12.3f} "
                f"{best['dense']:9.3f} {rel:9.1e}"
            )
        lo, hi = min(a.dims), max(a.dims)
        for k in ("default", "forced", "dense"):
            if np.isfinite(base[hi][k]):
                print(
                    f"  {type(rule).__name__} {k}: time(d={hi}) / time(d={lo}) = "
                    f"{base[hi][k] / base[lo][k]:.2f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
