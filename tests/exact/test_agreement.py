"""Exact moments agree with the Monte Carlo engine, and a perturbed exact engine is caught (negative control).

The rule: for each configuration, with R ≥ 2000 replicates of ``afltheory.simulate``, the Monte Carlo mean of
‖∇f(x_t)‖² lies within 4 standard errors of the exact E‖∇f(x_t)‖² at every checkpoint t = 1..10 (t = 0 is
deterministic). Confidence: under normality of the Monte Carlo mean, P(|Z| > 4) = 6.3e-5 per checkpoint, so
with 10 checkpoints the false-failure probability of one configuration is < 10 · 6.3e-5 = 6.3e-4 < 1e-3
(Bonferroni; checkpoints are positively correlated, so the true value is smaller), and for the whole suite of
N configurations it is < N · 6.3e-4 (< 1e-2 for the default run, < 2e-2 including the slow suite). Normality
is an approximation (‖∇f‖² is skewed), reasonable at R ≥ 2000 for these moderate-variance settings. Seeds are
fixed, so the outcome is reproducible. Each negative control perturbs only the exact engine (wrong inclusion
probabilities, wrong delay pmf, wrong K pmf) and must fail the same rule.
"""

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import AFACD, AFACS, AsySG, FedAvg, FedBuff, FedProx
from afltheory.anarchy import (
    Behaviour,
    BiasedArrivals,
    ConstantSteps,
    FixedArrivals,
    FixedDelay,
    GeometricDelay,
    NoDelay,
    PerWorkerDelay,
    PerWorkerSteps,
    Synchronous,
    UniformArrivals,
    UniformDelay,
    UniformSteps,
)
from afltheory.exact import moments, zscores
from afltheory.problems import HeterogeneousQuadratic, LowerBoundPair

Z_MAX = 4.0
ROUNDS = 10
BIASED = [0.45, 0.3, 0.1, 0.1, 0.05]


def shared(dim=3, M=5, hessian="diag", seed=0):
    return HeterogeneousQuadratic(
        dim=dim, num_workers=M, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=seed, hessian=hessian
    )


def curvature(dim=3, M=5, hessian="diag", seed=0):
    mod = pytest.importorskip("afltheory.problems.curvature")
    return mod.HeterogeneousCurvatureQuadratic(
        dim=dim, num_workers=M, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=seed, hessian=hessian
    )


def max_abs_z(prob, algo, beh, replicates=2000, seed=11, rounds=ROUNDS):
    """max over t = 1..rounds of |MC mean − exact| / MC standard error for E‖∇f(x_t)‖²."""
    ex = moments(prob, algo, beh, rounds)
    tr = aft.simulate(prob, algo, beh, rounds, replicates=replicates, seed=seed)
    z = zscores(tr, ex)[1:]
    assert np.all(np.isfinite(z))
    return float(np.max(np.abs(z)))


# (id, problem factory, algorithm, behaviour); every arrival type, delays on/off, constant/random K, each
# server
FAST = [
    (
        "cd-uniform-udelay-randK",
        shared,
        AFACD(1.0, 0.3),
        Behaviour(UniformArrivals(2), UniformDelay(2), UniformSteps(1, 3)),
    ),
    (
        "fedavg-biased-nodelay-randK",
        shared,
        FedAvg(1.0, 0.1),
        Behaviour(BiasedArrivals(2, BIASED), NoDelay(), UniformSteps(1, 3)),
    ),
    (
        "cs-warm-uniform-udelay-constK-curv",
        curvature,
        AFACS(1.0, 0.3),
        Behaviour(UniformArrivals(2), UniformDelay(2), ConstantSteps(2)),
    ),
    (
        "cd-fixed-geodelay-randK-curv",
        curvature,
        AFACD(1.0, 0.3),
        Behaviour(FixedArrivals([0, 3]), GeometricDelay(0.5, 2), UniformSteps(1, 3)),
    ),
    (
        "cs-zeros-biased-fixeddelay-randK-curv",
        curvature,
        AFACS(1.0, 0.3, memory_init="zeros"),
        Behaviour(BiasedArrivals(2, BIASED), FixedDelay(1), UniformSteps(1, 3)),
    ),
]

SLOW = [
    (
        "cd-biased-udelay-constK-dense-curv",
        lambda: curvature(hessian="dense"),
        AFACD(1.0, 0.3),
        Behaviour(BiasedArrivals(3, BIASED), UniformDelay(3), ConstantSteps(3)),
    ),
    (
        "fedavg-uniform-udelay-randK-curv",
        curvature,
        FedAvg(1.0, 0.1),
        Behaviour(UniformArrivals(3), UniformDelay(2), UniformSteps(1, 4)),
    ),
    (
        "fedavg-fixed-nodelay-constK-curv",
        curvature,
        FedAvg(1.0, 0.1),
        Behaviour(FixedArrivals([1, 2, 4]), NoDelay(), ConstantSteps(3)),
    ),
    (
        "cs-warm-biased-geodelay-randK-dense",
        lambda: shared(hessian="dense"),
        AFACS(1.0, 0.3),
        Behaviour(BiasedArrivals(2, BIASED), GeometricDelay(0.4, 3), UniformSteps(1, 3)),
    ),
    (
        "cs-warm-fixed-nodelay-randK-curv",
        curvature,
        AFACS(1.0, 0.3),
        Behaviour(FixedArrivals([0, 2]), NoDelay(), UniformSteps(1, 3)),
    ),
    (
        "fedbuff-uniform-perworkerdelay-perworkerK-curv",
        curvature,
        FedBuff(1.0, 0.1),
        Behaviour(UniformArrivals(2), PerWorkerDelay([0, 1, 2, 3, 1]), PerWorkerSteps([1, 2, 3, 1, 2])),
    ),
    (
        "asysg-uniform-udelay",
        shared,
        AsySG(0.3),
        Behaviour(UniformArrivals(2), UniformDelay(3), UniformSteps(1, 5)),
    ),
    (
        "fedprox-biased-udelay-randK-curv",
        curvature,
        AFACD(1.0, 0.3, worker=FedProx(0.5)),
        Behaviour(BiasedArrivals(3, BIASED), UniformDelay(2), UniformSteps(1, 3)),
    ),
    (
        "synchronous-fedavg-uniform",
        curvature,
        FedAvg(1.0, 0.1),
        Synchronous(UniformArrivals(2), local_steps=UniformSteps(1, 3)),
    ),
    (
        "lowerbound-fixed-noisy",
        lambda: LowerBoundPair(G=1.0, sigma_L=0.5),
        AFACD(1.0, 0.2),
        Behaviour(FixedArrivals([0]), UniformDelay(2), UniformSteps(1, 3)),
    ),
]


@pytest.mark.parametrize("name, make, algo, beh", FAST, ids=[c[0] for c in FAST])
def test_exact_matches_monte_carlo(name, make, algo, beh):
    assert max_abs_z(make(), algo, beh) < Z_MAX


@pytest.mark.slow
@pytest.mark.parametrize("name, make, algo, beh", SLOW, ids=[c[0] for c in SLOW])
def test_exact_matches_monte_carlo_slow(name, make, algo, beh):
    assert max_abs_z(make(), algo, beh, replicates=4000) < Z_MAX


# -------------------------------------------------------------------------------------- negative controls
def test_negative_control_wrong_inclusion_probabilities(monkeypatch):
    # the exact engine is told arrivals are uniform while the engine samples the biased law
    beh = Behaviour(BiasedArrivals(2, BIASED), NoDelay(), UniformSteps(1, 3))
    prob, algo = shared(), AFACD(1.0, 0.3)
    assert max_abs_z(prob, algo, beh) < Z_MAX
    monkeypatch.setattr(beh.arrivals, "inclusion", UniformArrivals(2).inclusion)
    assert max_abs_z(prob, algo, beh) > Z_MAX


def test_negative_control_wrong_delay_pmf(monkeypatch):
    # uniform delays on {0..min(t,2)} but the exact engine is given the pmf of a fixed delay min(t, 2)
    beh = Behaviour(UniformArrivals(2), UniformDelay(2), ConstantSteps(2))
    prob, algo = curvature(), AFACS(1.0, 0.3)
    assert max_abs_z(prob, algo, beh) < Z_MAX
    monkeypatch.setattr(beh.delays, "pmf", FixedDelay(2).pmf)
    assert max_abs_z(prob, algo, beh) > Z_MAX


def test_negative_control_wrong_local_step_pmf(monkeypatch):
    # K uniform on {1, 2, 3} but the exact engine is told K = 2 always (same mean, wrong law)
    beh = Behaviour(UniformArrivals(2), NoDelay(), UniformSteps(1, 3))
    prob, algo = curvature(), FedAvg(1.0, 0.15)
    assert max_abs_z(prob, algo, beh) < Z_MAX
    monkeypatch.setattr(beh.local_steps, "pmf", ConstantSteps(2).pmf)
    assert max_abs_z(prob, algo, beh) > Z_MAX
