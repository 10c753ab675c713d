"""Engine benchmark (issues 3 and 8): throughput, the random-number floor, and a plain per-replicate loop.

    python benchmarks/engine.py [--json FILE] [--quick] [--rounds N] [--state]

For each configuration it measures, in one process and one run:
  engine  — afltheory.simulate, in replicate·round·worker·local-step per second ("units/s");
  floor   — drawing the same number of Gaussian values (units × d) with the same generator (SFC64), the
            fastest way numpy offers: ``standard_normal(out=buffer)`` into one preallocated (R·m·d) buffer per
            local step; ``draw`` is the same with a fresh array per call (``standard_normal(size)``, the
            definition used before 2026-11-21: ~15-25% slower here because fresh arrays page-fault);
  loop    — a plain per-replicate loop (numpy over workers within one replicate, Python over replicates);
  collapsed — simulate with exact collapsed local steps (linear-Gaussian problems): simulate's default path
              for these quadratics (collapse=None picks it whenever valid; ``fast="auto"`` then runs it as
              the fast path, one compiled kernel, issue 41);
  reference — the same with ``fast=False`` (the collapsed law computed round by round in numpy);
and prints engine/floor and engine/draw (generic step-by-step path), loop/eng (loop vs generic path), loop/def
(loop vs the default, collapsed path), step/coll, ref/def (reference vs default path), sched% (share of
the generic run spent sampling the schedule) and the run's peak memory (tracemalloc, generic engine run)
next to the size of the recorded trace plus the max_delay+1 models.
Timings are the best of ``--repeat`` runs (default 3).

``--state`` instead measures what rules returning new state would cost if they COPIED their state instead of
reusing the donated arrays (afltheory.algorithms.base): simulate with AFA-CS (memory (R, M, d)) and with
FedAvg + SCAFFOLD (control variates (R, M, d) + (R, d)), the built-in donating rules against subclasses that
copy the state before each update, in one run; prints copy/donate time ratios.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import afltheory as aft  # noqa: E402
from afltheory import algorithms as al  # noqa: E402
from afltheory import anarchy as an  # noqa: E402
from afltheory.problems import HeterogeneousQuadratic  # noqa: E402


def best_of(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def plain_loop(problem, algo, schedule, x0, seed):
    """Per-replicate reference-style loop (vectorized over a round's workers only)."""
    rng = np.random.default_rng(seed)
    d = problem.dim
    scale = problem.noise.sigma_L / np.sqrt(d)
    H = int(schedule.delays.max()) + 1
    out = np.empty((schedule.replicates, schedule.rounds + 1))
    for r in range(schedule.replicates):
        hist = [x0.copy()]
        x = x0.copy()
        out[r, 0] = np.sum(problem.grad(x) ** 2)
        for t in range(schedule.rounds):
            W, D, K = schedule.workers[r, t], schedule.delays[r, t], schedule.local_steps[r, t]
            y0 = np.stack([hist[-1 - int(tau)] for tau in D])
            y = y0.copy()
            gsum = np.zeros_like(y)
            for k in range(int(K.max())):
                act = (k < K)[:, None]
                g = (problem.local_grad(y, W) + scale * rng.standard_normal(y.shape)) * act
                gsum += g
                y -= algo.eta_L * g
            x = x - algo.eta * algo.eta_L * (gsum / K[:, None]).mean(axis=0)
            hist.append(x)
            hist = hist[-H:]
            out[r, t + 1] = np.sum(problem.grad(x) ** 2)
    return out


@dataclass(frozen=True)
class CopyingAFACS(al.AFACS):
    """AFA-CS that copies its memory before each update (what a non-donating state would cost)."""

    def update_memory(self, state, workers, U):
        return super().update_memory(al.MemoryState(state.memory.copy()), workers, U)


@dataclass(frozen=True)
class CopyingSCAFFOLD(al.SCAFFOLD):
    """SCAFFOLD that copies its control variates before each update."""

    def finish(self, state, y0, yK, K, eta_L, rows, workers, num_workers):
        fresh = state.map_arrays(np.copy)
        return super().finish(fresh, y0, yK, K, eta_L, rows, workers, num_workers)


def state_cost(d, M, m, K, max_delay, R, rounds, repeat):
    """copy/donate time ratios of simulate for the stateful rules (see ``--state``)."""
    p = HeterogeneousQuadratic(dim=d, num_workers=M, L=1.0, mu=0.1, sigma_L=1.0, sigma_G=1.0, seed=0)
    beh = an.Behaviour(an.UniformArrivals(m), an.UniformDelay(max_delay), an.ConstantSteps(K))
    cases = {
        "AFACS step-by-step": (al.AFACS(1.0, 0.05), CopyingAFACS(1.0, 0.05), False),
        "AFACS collapsed": (al.AFACS(1.0, 0.05), CopyingAFACS(1.0, 0.05), None),
        "SCAFFOLD": (
            al.FedAvg(1.0, 0.05, worker=al.SCAFFOLD()),
            al.FedAvg(1.0, 0.05, worker=CopyingSCAFFOLD()),
            None,
        ),
    }
    out = {}
    for name, (donate, copy, collapse) in cases.items():

        def timed(alg, collapse=collapse):
            t0 = time.perf_counter()
            aft.simulate(p, alg, beh, rounds=rounds, replicates=R, seed=1, collapse=collapse)
            return time.perf_counter() - t0

        t_d, t_c = np.inf, np.inf
        for _ in range(repeat):  # interleaved: both see the same machine load
            t_d, t_c = min(t_d, timed(donate)), min(t_c, timed(copy))
        out[name] = dict(donate_s=t_d, copy_s=t_c, copy_over_donate=t_c / t_d)
    return out


def run_config(d, M, m, K, max_delay, R, rounds, repeat, loop_reps):
    p = HeterogeneousQuadratic(dim=d, num_workers=M, L=1.0, mu=0.1, sigma_L=1.0, sigma_G=1.0, seed=0)
    beh = an.Behaviour(an.UniformArrivals(m), an.UniformDelay(max_delay), an.ConstantSteps(K))
    algo = al.AFACD(1.0, 0.05)
    units = R * rounds * m * K
    sim = lambda **kw: aft.simulate(p, algo, beh, rounds=rounds, replicates=R, seed=1, **kw)
    t_engine = best_of(lambda: sim(collapse=False), repeat)
    t_collapsed = best_of(lambda: sim(collapse=True), repeat)
    t_reference = best_of(lambda: sim(collapse=True, fast=False), repeat)
    # the engine's noise generator (SFC64: afltheory._rng.SFC64BlockStreams)
    gen = np.random.Generator(np.random.SFC64(0))
    n_values = units * d
    chunk = R * m * d
    buf = np.empty(chunk)
    t_floor = best_of(lambda: [gen.standard_normal(out=buf) for _ in range(rounds * K)], repeat)
    t_draw = best_of(lambda: [gen.standard_normal(chunk) for _ in range(rounds * K)], repeat)
    t_sched = best_of(lambda: beh.sample(rounds, R, M, seed=1), repeat)
    assert n_values == chunk * rounds * K
    sched = beh.sample(rounds, loop_reps, M, seed=1)
    t_loop = best_of(lambda: plain_loop(p, algo, sched, p.default_x0(), 0), 1) * (R / loop_reps)
    tracemalloc.start()
    sim(collapse=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    trace_bytes = 2 * R * (rounds + 1) * 8 + 3 * R * rounds * m * 8
    models_bytes = (max_delay + 1) * R * d * 8
    return dict(
        d=d,
        M=M,
        m=m,
        K=K,
        max_delay=max_delay,
        replicates=R,
        rounds=rounds,
        engine_units_per_s=units / t_engine,
        engine_s=t_engine,
        floor_s=t_floor,
        draw_s=t_draw,
        schedule_s=t_sched,
        collapsed_s=t_collapsed,
        reference_s=t_reference,
        reference_over_default=t_reference / t_collapsed,
        loop_s_extrapolated=t_loop,
        engine_over_floor=t_engine / t_floor,
        engine_over_draw=t_engine / t_draw,
        schedule_share=t_sched / t_engine,
        loop_over_engine=t_loop / t_engine,
        loop_over_default=t_loop / t_collapsed,
        step_by_step_over_collapsed=t_engine / t_collapsed,
        peak_mem_mb=peak / 2**20,
        trace_plus_models_mb=(trace_bytes + models_bytes) / 2**20,
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="write the results as JSON")
    ap.add_argument("--quick", action="store_true", help="only the issue-3 headline configuration")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--loop-replicates", type=int, default=8, help="replicates actually run by the loop")
    ap.add_argument("--only", default="", help="keep grid rows matching e.g. 'd=10,K=20,R=64' (comma = and)")
    ap.add_argument("--state", action="store_true", help="cost of copying rule states instead of donating")
    args = ap.parse_args(argv)
    if args.state:
        print(f"{'d':>4} {'M':>4} {'m':>3} {'K':>3} {'tau':>3} {'R':>5} | {'rule':<20} {'copy/donate':>11}")
        res = {}
        for cfg in [(50, 100, 10, 5, 4, 256), (10, 100, 10, 1, 4, 1024), (100, 100, 10, 5, 0, 1024)]:
            for name, r in state_cost(*cfg, rounds=args.rounds, repeat=args.repeat).items():
                res[f"{cfg} {name}"] = r
                print(" ".join(f"{v:>{w}}" for v, w in zip(cfg, (4, 4, 3, 3, 3, 5), strict=True)), end=" | ")
                print(f"{name:<20} {r['copy_over_donate']:>11.3f}", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2))
        return 0
    if args.quick:
        grid = [(50, 100, 10, 5, 4, 256)]
    else:
        grid = [(50, 100, 10, 5, 4, 256)] + list(
            itertools.product([10, 100], [100], [10], [1, 5, 20], [0, 4], [64, 1024])
        )
    names = ("d", "M", "m", "K", "tau", "R")
    want = dict(kv.split("=") for kv in args.only.split(",") if kv)
    grid = [g for g in grid if all(str(dict(zip(names, g, strict=False))[k]) == v for k, v in want.items())]
    rows = []
    cols = ("Munit/s", 8), ("eng/floor", 9), ("eng/draw", 8), ("sched%", 6), ("loop/eng", 8), ("loop/def", 8)
    cols += ("step/coll", 9), ("ref/def", 7), ("peakMB", 7), ("trace+models MB", 15)
    hdr = f"{'d':>4} {'M':>4} {'m':>3} {'K':>3} {'tau':>3} {'R':>5} | " + " ".join(
        f"{c:>{w}}" for c, w in cols
    )
    print(hdr)
    print("-" * len(hdr))
    for cfg in grid:
        res = run_config(*cfg, rounds=args.rounds, repeat=args.repeat, loop_reps=args.loop_replicates)
        rows.append(res)
        print(
            f"{res['d']:>4} {res['M']:>4} {res['m']:>3} {res['K']:>3} {res['max_delay']:>3} "
            f"{res['replicates']:>5} | {res['engine_units_per_s'] / 1e6:>8.3f} "
            f"{res['engine_over_floor']:>9.2f} {res['engine_over_draw']:>8.2f} "
            f"{100 * res['schedule_share']:>6.1f} {res['loop_over_engine']:>8.1f} "
            f"{res['loop_over_default']:>8.1f} {res['step_by_step_over_collapsed']:>9.1f} "
            f"{res['reference_over_default']:>7.2f} "
            f"{res['peak_mem_mb']:>7.1f} {res['trace_plus_models_mb']:>15.1f}",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
