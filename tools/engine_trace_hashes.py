"""Hash simulate's traces over a small grid of problems × rules × collapse modes (bit-identity of engine
refactors, issue 27).

    python tools/engine_trace_hashes.py > before.txt   # on the base commit
    python tools/engine_trace_hashes.py > after.txt    # on the branch; ``diff`` them: equal
    python tools/engine_trace_hashes.py --reference    # the first section only

One line per configuration: its name and the SHA-256 of the trace's x, grad_norm_sq and loss arrays (bytes),
or the error raised (an invalid collapse request raises the same ValueError before and after).

First section: the reference path (``fast=False``; its lines are those of the engine before ``fast="auto"``
became the default, issue 41). Second section, after a line ``# fast path``: every configuration of the
grid that the fast path covers (``fast=True``; the others are not listed), run once with the numba kernel
when numba is importable and once with its numpy loop, which must give the same hash (a line ``MISMATCH``
otherwise), and a few larger runs (several chunks of rounds, partial noise blocks).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import afltheory as aft  # noqa: E402
from afltheory import algorithms as al  # noqa: E402
from afltheory import anarchy as an  # noqa: E402
from afltheory import engine  # noqa: E402
from afltheory.problems import (  # noqa: E402
    HeterogeneousCurvatureQuadratic,
    HeterogeneousQuadratic,
    LogisticRegression,
    LowerBoundPair,
    NonconvexSinusoidal,
)


def logistic():
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((12, 3)) for _ in range(3)]
    y = [rng.integers(0, 3, 12) for _ in range(3)]
    return LogisticRegression(X, y, num_classes=3, batch_size=4)


PROBLEMS = {
    "quad-iso-diag": lambda: HeterogeneousQuadratic(dim=5, num_workers=6, sigma_L=0.5, sigma_G=1.0, seed=1),
    "quad-dense": lambda: HeterogeneousQuadratic(
        dim=5, num_workers=6, L=2.0, mu=0.2, sigma_L=0.5, seed=2, hessian="dense"
    ),
    "quad-noiseless": lambda: HeterogeneousQuadratic(dim=4, num_workers=6, sigma_L=0.0, seed=3),
    "curv-diag": lambda: HeterogeneousCurvatureQuadratic(dim=5, num_workers=6, sigma_L=0.4, seed=4),
    "curv-dense": lambda: HeterogeneousCurvatureQuadratic(
        dim=4, num_workers=6, sigma_L=0.4, seed=5, hessian="dense"
    ),
    "finite-sum": lambda: HeterogeneousQuadratic.finite_sum(dim=4, num_workers=6, seed=6),
    "logistic": logistic,
    "lower-bound": lambda: LowerBoundPair(G=1.0, sigma_L=0.3),
    "nonconvex": lambda: NonconvexSinusoidal(dim=4, num_workers=6, sigma_L=0.3, seed=7),
}


def algos(M):
    return {
        "AFACD": al.AFACD(0.5, 0.05),
        "AFACS": al.AFACS(0.5, 0.05),
        "FedAvg-prox": al.FedAvg(0.3, 0.05, worker=al.FedProx(0.1)),
        "SCAFFOLD": al.FedAvg(0.3, 0.05, worker=al.SCAFFOLD()),
        "FedBuff": al.FedBuff(0.3, 0.05),
        "DynFedAvg": al.DynamicFedAvg(0.1, epochs=tuple(1 + (i % 3) for i in range(M))),
    }


def behaviour(M):
    m = min(3, M)
    return an.Behaviour(an.UniformArrivals(m), an.UniformDelay(2), an.UniformSteps(1, 4))


def digest(tr) -> str:
    h = hashlib.sha256()
    for a in (tr.x, tr.grad_norm_sq, tr.loss):
        if a is not None:
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    warnings.simplefilter("ignore")
    for pname, make in PROBLEMS.items():
        p = make()
        for aname, alg in algos(p.num_workers).items():
            for collapse in (None, "steps", False):
                key = f"{pname:15s} {aname:12s} collapse={collapse!s:6s}"
                try:
                    tr = aft.simulate(
                        p,
                        alg,
                        behaviour(p.num_workers),
                        rounds=12,
                        replicates=5,
                        seed=3,
                        record_x=True,
                        collapse=collapse,
                        fast=False,
                    )
                    print(key, digest(tr), flush=True)
                except Exception as e:  # the same error before and after
                    print(key, "ERR", type(e).__name__, str(e)[:80], flush=True)
    # many replicates, larger d: several chunks and a partial last noise block
    for pname, p in (
        ("big-diag", HeterogeneousQuadratic(dim=40, num_workers=8, sigma_L=0.5, seed=8)),
        ("big-curv", HeterogeneousCurvatureQuadratic(dim=40, num_workers=8, sigma_L=0.5, seed=9)),
    ):
        for aname, alg in (
            ("AFACD", al.AFACD(0.5, 0.05)),
            ("SCAFFOLD", al.FedAvg(0.3, 0.05, worker=al.SCAFFOLD())),
        ):
            for collapse in (None, False):
                tr = aft.simulate(
                    p,
                    alg,
                    an.Behaviour(an.UniformArrivals(8), an.UniformDelay(2), an.UniformSteps(1, 4)),
                    rounds=4,
                    replicates=901,
                    seed=5,
                    record_x=True,
                    collapse=collapse,
                    fast=False,
                )
                print(f"{pname:15s} {aname:12s} collapse={collapse!s:6s}", digest(tr), flush=True)


def fast_digest(*args, **kw) -> str | None:
    """The fast path's hash of ``simulate(*args, **kw, fast=True)``: with numba's kernel (when importable)
    and with the numpy loop; "MISMATCH …" when they differ; None when the fast path does not cover it."""
    try:
        tr = aft.simulate(*args, **kw, fast=True)
    except ValueError as e:
        if "fast=True is unavailable" in str(e):
            return None
        raise
    kernel, engine._fast_kernel = engine._fast_kernel, lambda: None
    try:
        ref = aft.simulate(*args, **kw, fast=True)
    finally:
        engine._fast_kernel = kernel
    a, b = digest(tr), digest(ref)
    return a if a == b else f"MISMATCH {tr.config['fast']} {a} numpy {b}"


def main_fast() -> None:
    """The second section: the fast path's hashes (see the module docstring)."""
    warnings.simplefilter("ignore")
    print("# fast path (fast=True; the numba kernel, when importable, and the numpy loop)", flush=True)
    if importlib.util.find_spec("numba") is None:
        print("numba is not importable: the numpy loop's hashes only", file=sys.stderr)
    for pname, make in PROBLEMS.items():
        p = make()
        for aname, alg in algos(p.num_workers).items():
            h = fast_digest(p, alg, behaviour(p.num_workers), rounds=12, replicates=5, seed=3, record_x=True)
            if h is not None:
                print(f"{pname:15s} {aname:12s} fast", h, flush=True)
    # larger runs: d = 40, R = 901 (a partial last noise block), FedBuff's weights, several chunks of rounds
    for pname, p in (
        ("big-diag", HeterogeneousQuadratic(dim=40, num_workers=8, sigma_L=0.5, seed=8)),
        ("big-curv", HeterogeneousCurvatureQuadratic(dim=40, num_workers=8, sigma_L=0.5, seed=9)),
    ):
        for aname, alg in (("AFACD", al.AFACD(0.5, 0.05)), ("FedBuff", al.FedBuff(0.3, 0.05))):
            beh = an.Behaviour(an.UniformArrivals(8), an.UniformDelay(2), an.UniformSteps(1, 4))
            h = fast_digest(p, alg, beh, rounds=4, replicates=901, seed=5, record_x=True)
            print(f"{pname:15s} {aname:12s} fast", h, flush=True)
    chunk, engine._FAST_CHUNK_VALUES = engine._FAST_CHUNK_VALUES, 40 * 64 * 7  # chunks of 7 rounds
    try:
        p = HeterogeneousQuadratic(dim=40, num_workers=8, sigma_L=0.5, seed=8)
        beh = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(4), an.ConstantSteps(2))
        h = fast_digest(p, al.AFACD(0.5, 0.05), beh, rounds=30, replicates=64, seed=6, record_x=True)
        print(f"{'big-diag':15s} {'AFACD':12s} fast chunks=7", h, flush=True)
    finally:
        engine._FAST_CHUNK_VALUES = chunk


if __name__ == "__main__":
    main()
    if "--reference" not in sys.argv[1:]:
        main_fast()
