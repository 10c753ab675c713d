"""The new published rules (afltheory/algorithms/published.py) against the independent plain loops
(tests/published/reference_loops.py): deterministic runs agree to 1e-12 on replayed schedules; stochastic runs
agree in distribution (two-sample z-test on E‖x_T − x*‖², |z| < 5: false-failure probability < 1e-6 per test,
fixed seeds)."""

from __future__ import annotations

import numpy as np
import pytest

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory.algorithms.base import UnsupportedRule
from afltheory.algorithms.published import FedNova, SCAFFOLDServer
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic

from .reference_loops import Quadratics, fedbuff_loop, fednova_replay, scaffold_loop


def _plain(p, sigma=0.0):
    return Quadratics(p.dense_hessians(), p.centers, sigma=sigma)


BEH = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(2), an.UniformSteps(1, 5))


@pytest.mark.parametrize("problem", ["shared", "curvature"])
def test_fednova_matches_plain_loop_deterministic(problem):
    p = (
        HeterogeneousQuadratic(dim=3, num_workers=5, L=2.0, mu=0.3, sigma_G=1.0, seed=2)
        if problem == "shared"
        else HeterogeneousCurvatureQuadratic(dim=3, num_workers=5, seed=2)
    )
    alg = FedNova(0.7, 0.1)
    tr = aft.simulate(p, alg, BEH, rounds=20, replicates=3, seed=4, record_x=True, collapse=False)
    Q = _plain(p)
    s = tr.schedule
    for r in range(3):
        xs = np.array(
            fednova_replay(
                Q,
                tr.x0[r] if tr.x0.ndim == 2 else tr.x0,
                s.workers[r],
                s.delays[r],
                s.local_steps[r],
                0.7,
                0.1,
                np.random.default_rng(0),
            )
        )
        np.testing.assert_allclose(tr.x[r], xs, rtol=1e-12, atol=1e-12 * np.abs(xs).max())


def test_fednova_equals_fedavg_with_constant_local_steps():
    p = HeterogeneousQuadratic(dim=3, num_workers=5, sigma_L=0.5, seed=1)
    beh = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(2), an.ConstantSteps(4))
    a = aft.simulate(p, FedNova(0.5, 0.1), beh, rounds=15, replicates=20, seed=3)
    b = aft.simulate(p, al.FedAvg(0.5, 0.1), beh, rounds=15, replicates=20, seed=3)
    np.testing.assert_allclose(a.grad_norm_sq, b.grad_norm_sq, rtol=1e-10)


def test_fednova_matches_plain_loop_in_distribution():
    """σ_L > 0: E‖x_T − x*‖² of simulate (2000 replicates) vs the plain loop (2000 replicates, independent
    generator, the same behaviour law): |z| < 5."""
    p = HeterogeneousQuadratic(dim=2, num_workers=4, L=1.0, mu=0.3, sigma_L=1.0, sigma_G=1.0, seed=5)
    R, T = 2000, 6
    tr = aft.simulate(p, FedNova(1.0, 0.15), BEH, rounds=T, replicates=R, seed=8, record_x=True)
    a = np.sum((tr.x[:, -1] - p.constants.x_star) ** 2, axis=1)
    sched = BEH.sample(T, R, p.num_workers, seed=99)
    Q = _plain(p, sigma=1.0)
    rng = np.random.default_rng(7)
    x0 = tr.x0[0] if tr.x0.ndim == 2 else tr.x0
    b = np.array(
        [
            np.sum(
                (
                    fednova_replay(
                        Q, x0, sched.workers[r], sched.delays[r], sched.local_steps[r], 1.0, 0.15, rng
                    )[-1]
                    - p.constants.x_star
                )
                ** 2
            )
            for r in range(R)
        ]
    )
    z = (a.mean() - b.mean()) / np.sqrt(a.var() / R + b.var() / R)
    assert abs(z) < 5, z


def test_fednova_refused_by_exact_engine():
    from afltheory.exact.local import server_rule

    with pytest.raises(UnsupportedRule):
        server_rule(FedNova(1.0, 0.1))


@pytest.mark.parametrize("eta_g", [1.0, 2.5])
def test_scaffold_server_rate_matches_plain_loop(eta_g):
    """SCAFFOLD with a server step η_g ≠ 1 and client sampling (3 of 5, no delay, K = 4): simulate equals the
    plain Algorithm-1 loop on the replayed arrival sets to 1e-12 (deterministic gradients)."""
    p = HeterogeneousCurvatureQuadratic(dim=3, num_workers=5, seed=3)
    beh = an.Behaviour(an.UniformArrivals(3), an.NoDelay(), an.ConstantSteps(4))
    tr = aft.simulate(
        p, SCAFFOLDServer(eta_g, 0.05), beh, rounds=15, replicates=2, seed=1, record_x=True, collapse=False
    )
    Q = _plain(p)
    for r in range(2):
        x0 = tr.x0[r] if tr.x0.ndim == 2 else tr.x0
        xs = np.array(
            scaffold_loop(
                Q, x0, 4, 15, 0.05, eta_g, np.random.default_rng(0), m=3, sets=tr.schedule.workers[r]
            )
        )
        np.testing.assert_allclose(tr.x[r], xs, rtol=1e-12, atol=1e-12 * np.abs(xs).max())


def test_fedbuff_matches_plain_loop_deterministic():
    """afltheory's FedBuff (staleness weight 1/sqrt(1+τ)) equals the plain Nguyen et al. loop on replayed
    asynchronous schedules (delays ≤ 2, K ∈ {1..5}) to 1e-12."""
    p = HeterogeneousCurvatureQuadratic(dim=3, num_workers=5, seed=4)
    tr = aft.simulate(
        p,
        al.FedBuff(0.8, 0.1, staleness="sqrt"),
        BEH,
        rounds=20,
        replicates=2,
        seed=6,
        record_x=True,
        collapse=False,
    )
    Q = _plain(p)
    s = tr.schedule
    for r in range(2):
        x0 = tr.x0[r] if tr.x0.ndim == 2 else tr.x0
        xs = np.array(
            fedbuff_loop(
                Q, x0, s.workers[r], s.delays[r], s.local_steps[r], 0.8, 0.1, np.random.default_rng(0)
            )
        )
        np.testing.assert_allclose(tr.x[r], xs, rtol=1e-12, atol=1e-12 * np.abs(xs).max())
