"""PEP solve times (afltheory.pep): Gram dimension, total / cvxpy-compile / Clarabel seconds, per size; and
the growth in T of the full and the symmetry-reduced PEP (``--scaling``: CPU, wall, cvxpy's compilation time
of the last solve, Clarabel's solve time of the last solve, peak RSS).

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/pep.py [--sizes m,K,T,tau,M ...] [--heterogeneity server|all]
     OPENBLAS_NUM_THREADS=1 python benchmarks/pep.py --scaling [--T 8 12 16 20]
                                                        [--methods reduced direct pepit] [--lower]
Used for the size limit (core.MAX_GRAM, core.estimate_seconds), the cvxpy pin and the horizon table of
docs/pep.md. The numbers depend on the machine's load (2 shared cores here); ``--scaling`` runs every
(method, T) in its own subprocess and reports its CPU seconds (all threads), wall seconds, the solve time
Clarabel reports (its own wall clock; the rest is building and compiling the problem: PEPit, cvxpy) and
peak RSS, which are less load-dependent than wall time.

The ``--scaling`` schedule: (M, m, K, τ) = (4, 3, 2, 1), the same m workers every round (the worst kind of
schedule the searches of docs/pep.md found: biased participation), every delay min(t, τ), AFA-CD at the
Theorem 2 step sizes, σ_G = 0.1, L = Δ = 1, metric (1/T) Σ_t ‖∇f(x_t)‖². Methods: "reduced" = the
orbit-reduced SDP (``worst_case(..., symmetry=True)``), "direct" = the same builder without the reduction
(``reduced_worst_case(..., reduce=False)``), "pepit" = the PEPit formulation (``worst_case``, server
heterogeneity). ``--lower`` adds the replay of the recovered instance through the rule's ``aggregate`` and the
quadratic lower bound (a certified member of the class) for the reduced method.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _schedule(T: int, M: int = 4, m: int = 3, K: int = 2, tau: int = 1):
    import numpy as np

    from afltheory.anarchy import Schedule

    W = np.array([list(range(m))] * T)
    D = np.array([[min(t, tau)] * m for t in range(T)])
    return Schedule(W, D, np.full((T, m), K), M, init_local_steps=np.full(M, K))


def _cyclic(T: int, M: int = 4, m: int = 3, K: int = 2, tau: int = 1):
    from afltheory.pep.theorems import default_schedule

    return default_schedule("thm2", M=M, m=m, K=K, T=T, tau=tau)


def one(method: str, T: int, lower: bool = False, schedule: str = "fixed") -> dict:
    """One (method, T) run of the scaling table, in this process. ``method`` "interp" is the lower side:
    the shared-function SDP's instance as an explicit L-smooth function run by ``simulate``
    (``pep.interpolant.interpolated_lower_bound``); "interp-tilt" the same with per-worker linear tilts
    f_i = f + ⟨c_i, ·⟩ (σ_G exact everywhere; a larger SDP)."""
    from afltheory.algorithms import AFACD
    from afltheory.pep import replay, worst_case
    from afltheory.pep.symmetric import reduced_worst_case
    from afltheory.pep.theorems import step_sizes

    eta, eta_L = step_sizes("thm2", L=1.0, K=2, tau=1, M=4)
    S = _schedule(T) if schedule == "fixed" else _cyclic(T)
    algo, C = AFACD(eta=eta, eta_L=eta_L), dict(L=1.0, sigma_G=0.1)
    c0, w0 = time.process_time(), time.perf_counter()
    if method in ("interp", "interp-tilt"):
        from afltheory.pep.interpolant import interpolated_lower_bound

        lb = interpolated_lower_bound(
            algo, S, L=1.0, sigma_G=0.1, delta=1.0, tilt=method == "interp-tilt", max_points=1000
        )
        return dict(
            method=method,
            T=T,
            schedule=schedule,
            gram=lb.points + 1,
            blocks=[lb.points + 1],
            value=lb.value,
            primal=lb.sdp_value,
            certified=True,
            status=lb.sdp_status,
            delta_actual=lb.delta_actual,
            interpolation_error=lb.interpolation_error,
            cpu_s=time.process_time() - c0,
            wall_s=time.perf_counter() - w0,
            peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        )
    if method == "reduced":
        r = worst_case(algo, S, C, delta=1.0, heterogeneity="server", symmetry=True, max_gram=1000)
    elif method == "direct":
        r = reduced_worst_case(algo, S, C, delta=1.0, reduce=False, max_gram=1000)
    else:
        r = worst_case(algo, S, C, delta=1.0, heterogeneity="server", max_gram=1000)
    out = dict(
        method=method,
        T=T,
        gram=r.gram_size,
        blocks=list(r.constants.get("blocks", [r.gram_size])),
        value=r.value,
        primal=r.primal,
        certified=r.certified,
        status=r.status,
        cpu_s=time.process_time() - c0,
        wall_s=time.perf_counter() - w0,
        solver_s=r.solver_seconds,
        compile_s=r.compile_seconds,
        solves=r.constants.get("solves"),
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )
    if lower:
        _, _, out["replay"] = replay(r)
        from afltheory.pep import quadratic_lower_bound

        out["quadratic_lower"] = quadratic_lower_bound(algo, S, L=1.0, sigma_G=0.1, delta=1.0).value
    return out


def scaling(Ts, methods, lower: bool, schedule: str = "fixed") -> None:
    print(
        f"{'method':>8} {'T':>3} {'Gram (blocks)':>16} {'CPU s':>7} {'wall s':>7} {'compile s':>9} "
        f"{'solver s':>8} {'RSS MB':>7}  value  status"
    )
    for method in methods:
        for T in Ts:
            cmd = [sys.executable, __file__, "--one", method, str(T), "--schedule", schedule]
            cmd += ["--lower"] if lower else []
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"{method:>8} {T:>3} failed: {p.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            d = json.loads(p.stdout.strip().splitlines()[-1])
            extra = (
                ""
                if "replay" not in d
                else f"  replay {d['replay']:.7g}  quadratic {d['quadratic_lower']:.7g}"
            )
            print(
                f"{method:>8} {T:>3} {str(d['blocks']):>16} {d['cpu_s']:>7.1f} {d['wall_s']:>7.1f} "
                f"{d.get('compile_s') or float('nan'):>9.2f} {d.get('solver_s') or float('nan'):>8.1f} "
                f"{d['peak_rss_mb']:>7.0f}  {d['value']:.7g}  {d['status']}{extra}",
                flush=True,
            )


SIZES = ("3,2,5,1,4", "3,3,6,2,4", "4,2,8,2,5")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", default=list(SIZES))
    ap.add_argument("--heterogeneity", default="server")
    ap.add_argument("--max-gram", type=int, default=400)
    ap.add_argument("--scaling", action="store_true")
    ap.add_argument("--T", type=int, nargs="+", default=[8, 12, 16, 20])
    ap.add_argument("--methods", nargs="+", default=["reduced", "direct", "pepit"])
    ap.add_argument("--lower", action="store_true")
    ap.add_argument("--one", nargs=2, metavar=("METHOD", "T"))
    ap.add_argument("--schedule", choices=("fixed", "cyclic"), default="fixed")
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(one(a.one[0], int(a.one[1]), a.lower, a.schedule)))
        return
    import cvxpy

    print(f"cvxpy {cvxpy.__version__}, python {sys.version.split()[0]}")
    if a.scaling:
        scaling(a.T, a.methods, a.lower, a.schedule)
        return
    print(
        f"{'m,K,T,tau,M':>12} {'gram':>5} {'total s':>8} {'compile s':>9} {'clarabel s':>10}  value  status"
    )
    from afltheory.algorithms import AFACD
    from afltheory.pep import worst_case
    from afltheory.pep.theorems import default_schedule, step_sizes

    for size in a.sizes:
        m, K, T, tau, M = map(int, size.split(","))
        S = default_schedule("thm2", M=M, m=m, K=K, T=T, tau=tau)
        eta, eta_L = step_sizes("thm2", L=1.0, K=K, tau=tau, M=M)
        r = worst_case(
            AFACD(eta=eta, eta_L=eta_L),
            S,
            dict(L=1.0, sigma_G=0.1),
            delta=1.0,
            heterogeneity=a.heterogeneity,
            max_gram=a.max_gram,
        )
        print(
            f"{size:>12} {r.gram_size:>5} {r.seconds:>8.1f} {r.compile_seconds or float('nan'):>9.1f} "
            f"{r.solver_seconds or float('nan'):>10.1f}  {r.value:.6g}  {r.status}",
            flush=True,
        )


if __name__ == "__main__":
    main()
