"""Sweep machinery scaling, measured in one run (not a test):

1. 2-job speed-up over 1 job: the same 24-task sweep of real ``afltheory.simulate`` tasks, run into fresh
stores
   with ``jobs=1`` (in the calling process) and ``jobs=2`` (ProcessPoolExecutor, forkserver). Wall time of
   ``run_sweep`` end to end (pool start-up included), best of ``--repeat``; stores checked identical.
2. Dask overhead per task: ``--trivial`` near-empty synthetic tasks (no sleep, 5 rounds) on a LocalCluster
   (2 single-threaded worker processes, tcp on 127.0.0.1) versus the same tasks inline:
   (dask wall - inline wall) / tasks, cluster start-up reported separately. The same for the 2-process pool.

    .venv/bin/python benchmarks/sweep_scaling.py [--rounds 600] [--repeat 2] [--trivial 200]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

from afltheory.sweep import DaskExecutor, LocalExecutor, Store, parse_spec, run_sweep

SPEC = """
name = "scaling"
rounds = {rounds}
replicates = 64
seeds = [0, 1, 2]
checkpoints = 50
[problem]
family = "HeterogeneousQuadratic"
dim = 20
num_workers = 32
L = 2.0
sigma_L = 0.5
[behaviour.arrivals]
kind = "UniformArrivals"
m = 8
[behaviour.delays]
kind = "UniformDelay"
max_delay = 4
[behaviour.local_steps]
kind = "ConstantSteps"
K = 4
[algorithm]
name = "AFACD"
eta = 1.0
eta_L = 0.02
[grid]
"algorithm.name" = ["AFACD", "AFACS"]
"algorithm.eta_L" = [0.005, 0.01, 0.02, 0.04]
"""

TRIVIAL = """
name = "trivial"
rounds = 5
replicates = 2
checkpoints = 5
seeds = [{seeds}]
[problem]
family = "none"
[behaviour]
[algorithm]
name = "synthetic"
eta = 0.1
"""


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def fingerprint(path):
    with Store(path, readonly=True) as st:
        return st.fingerprint()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=600)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--trivial", type=int, default=200)
    a = ap.parse_args()
    print(
        f"cpus: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f} (other processes share the "
        "machine: speed-up is bounded by the idle cores)"
    )
    tmp = Path(tempfile.mkdtemp(prefix="sweep_scaling_"))
    spec = parse_spec(SPEC.format(rounds=a.rounds))
    n = len(spec.tasks)
    walls = {1: [], 2: []}
    for r in range(a.repeat):
        for jobs in (1, 2):
            path = tmp / f"real_j{jobs}_{r}.sqlite"
            w, rep = timed(lambda path=path, jobs=jobs: run_sweep(spec, path, jobs=jobs))
            assert rep.ran == n
            walls[jobs].append(w)
    assert fingerprint(tmp / "real_j1_0.sqlite") == fingerprint(tmp / "real_j2_0.sqlite")
    with Store(tmp / "real_j1_0.sqlite", readonly=True) as st:
        per_task = st.status()["mean_task_seconds"]
    w1, w2 = min(walls[1]), min(walls[2])
    print(
        f"[speed-up] {n} simulate tasks ({a.rounds} rounds x 64 replicates, d=20, M=32, m=8, K=4), "
        f"mean task {per_task:.3f} s"
    )
    print(f"  jobs=1 wall {w1:.2f} s  (runs {', '.join(f'{x:.2f}' for x in walls[1])})")
    print(f"  jobs=2 wall {w2:.2f} s  (runs {', '.join(f'{x:.2f}' for x in walls[2])})")
    print(
        f"  speed-up 2 jobs / 1 job = {w1 / w2:.2f}x  (stores identical: yes); load average now "
        f"{os.getloadavg()[0]:.2f}"
    )

    triv = parse_spec(TRIVIAL.format(seeds=", ".join(map(str, range(a.trivial)))), check_objects=False)
    m = len(triv.tasks)
    w_inline, _ = timed(lambda: run_sweep(triv, tmp / "triv_inline.sqlite", task="synthetic"))
    t_pool, ex = timed(lambda: LocalExecutor(2))
    with ex:
        _ = ex.imap_unordered  # pool processes start lazily on first submit
        w_pool, _ = timed(lambda: run_sweep(triv, tmp / "triv_pool.sqlite", task="synthetic", executor=ex))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_start, dex = timed(lambda: DaskExecutor(jobs=2))
        try:
            w_dask, _ = timed(
                lambda: run_sweep(triv, tmp / "triv_dask.sqlite", task="synthetic", executor=dex)
            )
        finally:
            t_close, _ = timed(dex.close)
    assert fingerprint(tmp / "triv_inline.sqlite") == fingerprint(tmp / "triv_dask.sqlite")
    print(
        f"[overhead] {m} trivial tasks; inline {w_inline:.2f} s "
        f"({w_inline / m * 1e3:.2f} ms/task incl. store commit)"
    )
    print(
        f"  process pool (2): {w_pool:.2f} s incl. worker start -> "
        f"{(w_pool - w_inline) / m * 1e3:.2f} ms/task over inline"
    )
    print(
        f"  dask LocalCluster (2 procs, tcp 127.0.0.1): start {t_start:.2f} s, close {t_close:.2f} s, run "
        f"{w_dask:.2f} s -> {(w_dask - w_inline) / m * 1e3:.2f} ms/task over inline"
    )


if __name__ == "__main__":
    main()
