"""Exact-moments scaling and MC-vs-exact agreement table (not run as a test).

Usage (from the repo root):  .venv/bin/python benchmarks/exact_scaling.py [--rounds 100] [--budget 10]
[--table] [--calibrate] [--projection]

Calibrate (``--calibrate``): the per-operation constants of the cost projection (afltheory.exact.cost
.SECONDS_PER): CPU seconds (time.process_time, best of 3) per BLAS flop, einsum flop, sparse×dense flop,
elementwise element and per round of a tiny system, on operands of the sizes one round of the recursion uses.
Projection (``--projection``): projected against measured CPU seconds of ``moments`` (best of 2) on a grid
of sizes along d, T, M, max_delay, random K/τ and AFA-CS; prints the ratio measured / projected.

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
import functools
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


def _best(fn, reps=3):
    best = math.inf
    for _ in range(reps):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


def calibrate():
    import numpy as np

    rng = np.random.default_rng(0)
    out = {}
    # BLAS: Y = U @ S_JJ at (M, d, nJ) = (10, 20, 101), 20 repetitions
    U, S = rng.standard_normal((10, 20, 101)), rng.standard_normal((101, 101))
    out["blas_flop"] = _best(lambda: [np.matmul(U, S) for _ in range(20)]) / (20 * 2 * 10 * 20 * 101**2)
    # einsum: the cross-worker contraction "idk,iek->de" at the same sizes
    Y, V = rng.standard_normal((10, 20, 101)), rng.standard_normal((10, 20, 101))
    out["einsum_flop"] = _best(lambda: [np.einsum("idk,iek->de", Y, V) for _ in range(20)]) / (
        20 * 2 * 10 * 20 * 20 * 101
    )
    # sparse: the round operator Ā of AFA-CD on a dense-Hessian problem (d = 40, M = 10, max_delay 4: n = 201,
    # dense 40x40 blocks)
    # times a dense state, as in ExactSystem.step (A @ S, then A @ T.T), 10 repetitions
    from afltheory.exact import ExactSystem
    from afltheory.problems import HeterogeneousQuadratic

    sysA = ExactSystem(
        HeterogeneousQuadratic(dim=40, num_workers=10, seed=0, hessian="dense"),
        AFACD(1.0, 0.1),
        Behaviour(UniformArrivals(5), UniformDelay(4), UniformSteps(1, 3)),
    )
    A, n = sysA.op(4).A, sysA.n
    Sd = rng.standard_normal((n, n))
    out["sparse_flop"] = _best(lambda: [A @ (A @ Sd).T for _ in range(10)]) / (10 * 4 * A.nnz * n)
    # elementwise: the symmetrisation T = S + S.T; T *= 0.5 on n = 801 (3 element passes, one transposed)
    Sb = rng.standard_normal((801, 801))

    def sym():
        for _ in range(10):
            T = Sb + Sb.T
            T *= 0.5

    out["element"] = _best(sym) / (10 * 3 * 801**2)
    # per-round interpreter cost: a tiny system (dim 1, 2 workers, no delay) where the flops are negligible
    prob1, beh1 = (
        HeterogeneousQuadratic(dim=1, num_workers=2, L=1.0, mu=1.0, seed=0),
        Behaviour(UniformArrivals(1)),
    )
    run = functools.partial(moments, prob1, AFACD(1.0, 0.1), beh1, 4000)
    out["round"] = (_best(run) - _best(functools.partial(moments, prob1, AFACD(1.0, 0.1), beh1, 1))) / 3999
    # set-up: local maps of 50 workers with K in 1..20 (Σ (K_max + |K|) = 2000 steps) on dim 2, and a round
    # operator over 50 workers x 3 K x 9 delays (1350 terms)
    prob50 = HeterogeneousQuadratic(dim=2, num_workers=50, seed=0)
    beh50 = Behaviour(UniformArrivals(10), UniformDelay(8), UniformSteps(1, 20))
    out["local_step"] = _best(lambda: ExactSystem(prob50, AFACD(1.0, 0.1), beh50)) / 2000
    sys50 = ExactSystem(
        prob50, AFACD(1.0, 0.1), Behaviour(UniformArrivals(10), UniformDelay(8), UniformSteps(1, 3))
    )
    out["build_term"] = _best(lambda: [sys50._build(sys50._pmfs(8)) for _ in range(5)]) / (5 * 1350)
    for k, v in out.items():
        print(f"  {k:12s} {v:.3g} s")
    return out


def projection(rounds=20):
    from afltheory.anarchy import ConstantSteps, NoDelay
    from afltheory.exact import ExactSystem

    print("| algorithm | Hessians | dim | M | max_delay | K | T | n | projected s | measured CPU s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    base = dict(dim=10, M=10, D=4, random=True, T=rounds, dense=False)
    cases = [dict(base)]
    for k, vals in (("dim", (20, 40, 80, 160)), ("D", (0, 8, 16)), ("M", (40, 160)), ("T", (4 * rounds,))):
        cases += [dict(base, **{k: v}) for v in vals]
    cases += [dict(base, random=False), dict(base, dim=40, random=False)]
    cases += [dict(base, dense=True, dim=v) for v in (20, 40, 80, 160)]
    cs_cases = [dict(base), dict(base, dim=20), dict(base, M=20), dict(base, dim=20, M=40)]
    cs_cases += [dict(base, dense=True), dict(base, dense=True, dim=20, M=40)]
    for name, algo in (("AFA-CD", AFACD(1.0, 0.1)), ("AFA-CS", AFACS(1.0, 0.1))):
        for c in cases if name == "AFA-CD" else cs_cases:
            kw = dict(dim=c["dim"], num_workers=c["M"], L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=0)
            prob = HeterogeneousCurvatureQuadratic(**kw, hessian="dense" if c["dense"] else "diag")
            m = math.ceil(c["M"] / 2)
            beh = (
                Behaviour(
                    UniformArrivals(m), UniformDelay(c["D"]) if c["D"] else NoDelay(), UniformSteps(1, 3)
                )
                if c["random"]
                else Behaviour(UniformArrivals(m), NoDelay(), ConstantSteps(2))
            )
            proj = ExactSystem(prob, algo, beh, max_memory=16 * 1024**3).projected_cost(c["T"])
            run = functools.partial(moments, prob, algo, beh, c["T"], max_memory=16 * 1024**3)
            got = _best(run, reps=2)
            print(
                f"| {name} | {'dense' if c['dense'] else 'diagonal'} | {c['dim']} | {c['M']} | {c['D']} | "
                f"{'1..3' if c['random'] else 2} | {c['T']} | {proj.state_size} | {proj.seconds:.3g} | "
                f"{got:.3g} | {got / proj.seconds:.2f} |",
                flush=True,
            )
    print(f"load {os.getloadavg()[0]:.1f}")


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
    ap.add_argument("--calibrate", action="store_true", help="only measure the projection's constants")
    ap.add_argument("--projection", action="store_true", help="only compare projected and measured runs")
    a = ap.parse_args()
    if a.calibrate or a.projection:
        if a.calibrate:
            print(f"per-operation constants (load {os.getloadavg()[0]:.1f}):")
            calibrate()
        if a.projection:
            projection()
        sys.exit(0)
    if not a.table:
        scaling(a.rounds, a.budget)
    if not a.scaling:
        table()
