"""PEP solve times (afltheory.pep): Gram dimension, total / cvxpy-compile / Clarabel seconds, per size.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/pep.py [--sizes m,K,T,tau,M ...] [--heterogeneity server|all]
Used for the size limit (core.MAX_GRAM, core.estimate_seconds) and the cvxpy pin (docs/pep.md). The numbers
depend on the machine's load (2 shared cores here); run it alone for a fair comparison.
"""

from __future__ import annotations

import argparse
import sys

import cvxpy

from afltheory.pep import worst_case
from afltheory.pep.theorems import default_schedule, step_sizes

SIZES = ("3,2,5,1,4", "3,3,6,2,4", "4,2,8,2,5")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", default=list(SIZES))
    ap.add_argument("--heterogeneity", default="server")
    ap.add_argument("--max-gram", type=int, default=400)
    a = ap.parse_args(argv)
    print(f"cvxpy {cvxpy.__version__}, python {sys.version.split()[0]}")
    print(f"{'m,K,T,tau,M':>12} {'gram':>5} {'total s':>8} {'compile s':>9} {'clarabel s':>10}  value  "
          f"status")
    from afltheory.algorithms import AFACD

    for size in a.sizes:
        m, K, T, tau, M = map(int, size.split(","))
        S = default_schedule("thm2", M=M, m=m, K=K, T=T, tau=tau)
        eta, eta_L = step_sizes("thm2", L=1.0, K=K, tau=tau, M=M)
        r = worst_case(AFACD(eta=eta, eta_L=eta_L), S, dict(L=1.0, sigma_G=0.1), delta=1.0,
                       heterogeneity=a.heterogeneity, max_gram=a.max_gram)
        print(f"{size:>12} {r.gram_size:>5} {r.seconds:>8.1f} {r.compile_seconds or float('nan'):>9.1f} "
              f"{r.solver_seconds or float('nan'):>10.1f}  {r.value:.6g}  {r.status}", flush=True)


if __name__ == "__main__":
    main()
