"""Engine contract (issue 3): reference-loop equality, algorithm equivalences, determinism, divergence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic
from paper_checks._reference import reference_iterates


def quad(sigma_L=0.0, M=6, d=4, hessian="diag", seed=3):
    return HeterogeneousQuadratic(
        dim=d, num_workers=M, L=2.0, mu=0.2, sigma_L=sigma_L, sigma_G=1.0, seed=seed, hessian=hessian
    )


BEHAVIOURS = {
    "uniform-delay-dynamic": an.Behaviour(an.UniformArrivals(3), an.UniformDelay(3), an.UniformSteps(1, 4)),
    "biased-fixeddelay": an.Behaviour(
        an.BiasedArrivals(2, [0.4, 0.3, 0.1, 0.1, 0.05, 0.05]), an.FixedDelay(2), an.ConstantSteps(3)
    ),
    "fixed": an.Behaviour(
        an.FixedArrivals([0, 4]), an.GeometricDelay(0.5, 4), an.PerWorkerSteps([1, 2, 3, 1, 2, 3])
    ),
}
ALGOS = {
    "AFACD": al.AFACD(1.0, 0.1),
    "AFACS": al.AFACS(0.8, 0.1),
    "AFACS-zeros": al.AFACS(0.8, 0.1, memory_init="zeros"),
    "FedAvg": al.FedAvg(0.4, 0.1),
    "FedBuff": al.FedBuff(0.4, 0.1, staleness="sqrt"),
    "AsySG": al.AsySG(1.0, 0.1),
}


@pytest.mark.parametrize(
    "hessian, collapse",
    [
        (h, c)
        for h in ("diag", "dense", "per-worker-diag", "per-worker-dense")
        for c in (False, True)
        if (h, c) != ("per-worker-dense", True)
    ],
)
@pytest.mark.parametrize("beh", sorted(BEHAVIOURS))
@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_engine_equals_reference_loop_without_noise(algo, beh, hessian, collapse):
    """σ_L = 0: the vectorized engine (step by step, and collapsed where valid) equals the plain loop on the
    replayed schedule to 1e-12 relative — shared and per-worker Hessians (the engine's fused local-step
    kernels)."""
    if hessian.startswith("per-worker"):
        p = HeterogeneousCurvatureQuadratic(
            dim=4,
            num_workers=6,
            L=2.0,
            mu=0.2,
            sigma_L=0.0,
            sigma_G=1.0,
            seed=3,
            hessian=hessian.removeprefix("per-worker-"),
        )
    else:
        p = quad(hessian=hessian)
    alg = ALGOS[algo]
    tr = aft.simulate(
        p, alg, BEHAVIOURS[beh], rounds=25, replicates=3, seed=11, record_x=True, collapse=collapse
    )
    for r in range(3):
        xs = reference_iterates(p, alg, tr.schedule, tr.x0, r=r)
        np.testing.assert_allclose(tr.x[r], xs, rtol=1e-12, atol=1e-12 * np.abs(xs).max())
        np.testing.assert_allclose(tr.grad_norm_sq[r], [np.sum(p.grad(x) ** 2) for x in xs], rtol=1e-10)


def test_engine_matches_reference_in_distribution_with_noise():
    """σ_L > 0: engine mean of ‖x_T − x*‖² over 4000 replicates lies within 5 SE of a reference-loop mean over
    4000 replicates driven by an independent generator (two-sample z-test; false-failure prob < 1e-6)."""
    p = quad(sigma_L=1.0, M=4, d=2)
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(2), an.UniformSteps(1, 3))
    alg = al.AFACD(1.0, 0.2)
    R, T = 4000, 8
    tr = aft.simulate(p, alg, beh, rounds=T, replicates=R, seed=5, record_x=True, collapse=False)
    a = np.sum((tr.x[:, -1] - p.constants.x_star) ** 2, axis=1)
    sched = beh.sample(T, R, p.num_workers, seed=99)
    rng = np.random.default_rng(123)
    b = np.empty(R)
    for r in range(R):
        noise = lambda t, j, k: rng.standard_normal(p.dim) * (1.0 / np.sqrt(p.dim))
        xs = reference_iterates(p, alg, sched, tr.x0, r=r, noise=noise)
        b[r] = np.sum((xs[-1] - p.constants.x_star) ** 2)
    z = (a.mean() - b.mean()) / np.sqrt(a.var() / R + b.var() / R)
    assert abs(z) < 5, z


def test_afacd_full_participation_no_delay_k1_is_gradient_descent():
    p = quad()
    beh = an.Behaviour(an.UniformArrivals(p.num_workers), an.NoDelay(), an.ConstantSteps(1))
    tr = aft.simulate(p, al.AFACD(2.0, 0.1), beh, rounds=30, replicates=2, seed=0, record_x=True)
    x = tr.x0.copy()
    for t in range(30):
        x = x - 0.2 * p.grad(x)
        np.testing.assert_allclose(tr.x[0, t + 1], x, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("K", [1, 3, 7])
def test_fedavg_equals_afacd_with_eta_times_K(K):
    p = quad(sigma_L=0.7)
    beh = an.Behaviour(an.UniformArrivals(3), an.NoDelay(), an.ConstantSteps(K))
    a = aft.simulate(p, al.FedAvg(0.3, 0.05), beh, rounds=20, replicates=70, seed=4)
    b = aft.simulate(p, al.AFACD(0.3 * K, 0.05), beh, rounds=20, replicates=70, seed=4)
    np.testing.assert_allclose(a.grad_norm_sq, b.grad_norm_sq, rtol=1e-10)


def test_afacs_with_all_workers_and_no_delay_equals_afacd():
    p = quad(sigma_L=0.5)
    beh = an.Behaviour(an.UniformArrivals(p.num_workers), an.NoDelay(), an.UniformSteps(1, 4))
    a = aft.simulate(p, al.AFACS(1.0, 0.1, memory_init="zeros"), beh, rounds=20, replicates=5, seed=2)
    # the reference path for both (AFA-CS keeps memory: the fast path, which draws other noise, refuses it)
    b = aft.simulate(p, al.AFACD(1.0, 0.1), beh, rounds=20, replicates=5, seed=2, fast=False)
    np.testing.assert_allclose(a.grad_norm_sq, b.grad_norm_sq, rtol=1e-10)


def test_relabelling_workers_preserves_the_trace_distribution():
    """Permuting worker labels (centres and arrival probabilities together) leaves the law of the trace
    unchanged: with σ_L = 0 and FixedArrivals the traces are identical; with uniform arrivals the mean final
    error agrees within 5 SE (two-sample z, false-failure prob < 1e-6)."""
    p = quad(M=5, d=3)
    perm = np.array([3, 0, 4, 1, 2])
    q = HeterogeneousQuadratic.from_arrays(hessian_diag=p.hessian[0], centers=p.centers[perm])
    inv = np.argsort(perm)  # worker w of p is worker inv[w] of q
    a = aft.simulate(
        p, al.AFACD(1.0, 0.1), an.Behaviour(an.FixedArrivals([0, 1])), rounds=15, seed=0, x0=np.zeros(3)
    )
    b = aft.simulate(
        q,
        al.AFACD(1.0, 0.1),
        an.Behaviour(an.FixedArrivals(inv[[0, 1]].tolist())),
        rounds=15,
        seed=0,
        x0=np.zeros(3),
    )
    np.testing.assert_allclose(a.grad_norm_sq, b.grad_norm_sq, rtol=1e-10)
    p2 = quad(M=5, d=3, sigma_L=0.5)
    q2 = HeterogeneousQuadratic.from_arrays(hessian_diag=p2.hessian[0], centers=p2.centers[perm], sigma_L=0.5)
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(2), an.UniformSteps(1, 3))
    ta = aft.simulate(p2, al.AFACD(1.0, 0.1), beh, rounds=10, replicates=3000, seed=1, x0=np.zeros(3))
    tb = aft.simulate(q2, al.AFACD(1.0, 0.1), beh, rounds=10, replicates=3000, seed=2, x0=np.zeros(3))
    fa, fb = ta.grad_norm_sq[:, -1], tb.grad_norm_sq[:, -1]
    z = (fa.mean() - fb.mean()) / np.sqrt(fa.var() / 3000 + fb.var() / 3000)
    assert abs(z) < 5, z


def test_same_seed_identical_and_leading_replicates_stable():
    p = quad(sigma_L=1.0)
    beh = BEHAVIOURS["uniform-delay-dynamic"]
    a = aft.simulate(p, al.AFACS(1.0, 0.1), beh, rounds=12, replicates=150, seed=9)
    b = aft.simulate(p, al.AFACS(1.0, 0.1), beh, rounds=12, replicates=150, seed=9)
    c = aft.simulate(p, al.AFACS(1.0, 0.1), beh, rounds=12, replicates=37, seed=9)
    d = aft.simulate(p, al.AFACS(1.0, 0.1), beh, rounds=12, replicates=150, seed=10)
    np.testing.assert_array_equal(a.grad_norm_sq, b.grad_norm_sq)
    np.testing.assert_array_equal(a.grad_norm_sq[:37], c.grad_norm_sq)
    assert a.schedule.replicate(slice(0, 37)) == c.schedule
    assert not np.array_equal(a.grad_norm_sq, d.grad_norm_sq)


def test_oracle_calls_match_the_schedule():
    p = quad(sigma_L=0.3)
    for name, alg in ALGOS.items():
        tr = aft.simulate(p, alg, BEHAVIOURS["uniform-delay-dynamic"], rounds=10, replicates=4, seed=1)
        expected = tr.schedule.local_steps.sum(axis=(1, 2))
        if alg.needs_warm_start:
            expected = expected + tr.schedule.init_local_steps.sum(axis=1)
        np.testing.assert_array_equal(tr.oracle_calls, expected, err_msg=name)


def test_asysg_uses_one_step_whatever_the_behaviour():
    p = quad()
    tr = aft.simulate(p, al.AsySG(1.0, 0.1), BEHAVIOURS["biased-fixeddelay"], rounds=5, replicates=2)
    assert np.all(tr.schedule.local_steps == 1)


def test_divergence_is_reported_not_hidden():
    p = quad()
    beh = an.Behaviour(an.UniformArrivals(3), an.NoDelay(), an.ConstantSteps(2))
    with pytest.warns(aft.engine.DivergenceWarning, match="diverged"):
        tr = aft.simulate(p, al.AFACD(20.0, 1.0), beh, rounds=60, replicates=4, seed=0)
    assert tr.divergence.any and np.all(tr.divergence.round > 0)
    r = int(np.flatnonzero(tr.diverged)[0])
    k = tr.divergence.round[r]
    assert np.all(np.isposinf(tr.grad_norm_sq[r, k:])) and np.all(np.isfinite(tr.grad_norm_sq[r, :k]))
    assert not np.isnan(tr.grad_norm_sq).any()


def test_converges_on_quadratic_with_known_minimizer():
    """Full participation, σ_L = 0, stale models: every algorithm reaches x* (with m < M and σ_G > 0 AFA-CD
    legitimately hovers at an arrival-sampling error level, so that is not a convergence contract)."""
    for name, alg in ALGOS.items():
        p = quad()
        beh = an.Behaviour(an.UniformArrivals(p.num_workers), an.UniformDelay(2), an.ConstantSteps(2))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tr = aft.simulate(p, alg, beh, rounds=400, replicates=2, seed=0)
        assert tr.grad_norm_sq[:, -1].max() < 1e-3 * tr.grad_norm_sq[:, 0].min(), name


def test_event_mode_trace_carries_wall_clock_and_emergent_delays():
    p = quad(M=10)
    beh = an.EventDriven(m=5, compute_time=an.ExponentialTime(1.0))
    tr = aft.simulate(p, al.AFACD(1.0, 0.1), beh, rounds=300, replicates=3, seed=0)
    wc = tr.wall_clock
    assert wc.shape == (3, 301) and np.all(np.diff(wc, axis=1) > 0)
    assert tr.schedule.delays.max() > 0
    # mean round length is the 5th order statistic of 10 Exp(1): Σ_{k<5} 1/(10−k) = 0.6456; 900 rounds,
    # per-round sd ≈ 0.30 → SE ≈ 0.01: 6 SE tolerance
    assert abs(np.diff(wc, axis=1).mean() - sum(1 / (10 - k) for k in range(5))) < 0.06


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(rounds=0), "rounds"),
        (dict(replicates=0), "replicates"),
        (dict(seed=-1), "seed"),
        (dict(x0=np.zeros(3)), "x0"),
        (dict(x0=np.full(4, np.nan)), "x0"),
    ],
)
def test_bad_simulate_arguments(kw, match):
    p = quad()
    args = dict(rounds=5, replicates=2, seed=0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        aft.simulate(p, al.AFACD(1.0, 0.1), an.Behaviour(an.UniformArrivals(2)), **args)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: al.AFACD(0.0, 0.1), "eta"),
        (lambda: al.AFACD(1.0, -0.1), "eta_L"),
        (lambda: al.AFACS(1.0, 0.1, memory_init="cold"), "memory_init"),
        (lambda: al.FedBuff(1.0, 0.1, staleness="exp"), "staleness"),
    ],
)
def test_bad_algorithm_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_m_larger_than_num_workers_is_rejected():
    with pytest.raises(ValueError, match="m=7 exceeds num_workers=6"):
        aft.simulate(quad(), al.AFACD(1.0, 0.1), an.Behaviour(an.UniformArrivals(7)), rounds=3)


def test_fedbuff_buffer_size_must_match_m():
    with pytest.raises(ValueError, match="buffer_size"):
        aft.simulate(
            quad(), al.FedBuff(1.0, 0.1, buffer_size=4), an.Behaviour(an.UniformArrivals(3)), rounds=3
        )


@pytest.mark.parametrize("hessian", ["diag", "dense"])
def test_collapsed_local_steps_match_step_by_step_in_distribution(hessian):
    """Collapsed (one exact draw per update) vs step-by-step: mean and variance of ‖∇f(x_T)‖² and the mean of
    x_T over 4000 replicates agree (two-sample z < 5 per statistic; false-failure prob < 1e-5 overall)."""
    p = HeterogeneousQuadratic(
        dim=3, num_workers=5, L=2.0, mu=0.3, sigma_L=1.0, sigma_G=1.0, seed=2, hessian=hessian
    )
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(2), an.UniformSteps(1, 6))
    R = 4000
    a = aft.simulate(p, al.AFACD(1.0, 0.3), beh, rounds=6, replicates=R, seed=1, collapse=True, record_x=True)
    b = aft.simulate(
        p, al.AFACD(1.0, 0.3), beh, rounds=6, replicates=R, seed=2, collapse=False, record_x=True
    )
    assert a.config["collapsed"] and not b.config["collapsed"]
    for u, v in [
        (a.grad_norm_sq[:, -1], b.grad_norm_sq[:, -1]),
        *zip(a.x[:, -1].T, b.x[:, -1].T, strict=False),
    ]:
        z = (u.mean() - v.mean()) / np.sqrt(u.var() / R + v.var() / R)
        assert abs(z) < 5, z
    u, v = a.grad_norm_sq[:, -1], b.grad_norm_sq[:, -1]
    su = (u - u.mean()) ** 2
    sv = (v - v.mean()) ** 2
    z = (su.mean() - sv.mean()) / np.sqrt(su.var() / R + sv.var() / R)
    assert abs(z) < 5, z


def test_collapse_true_is_refused_where_invalid():
    p = quad(sigma_L=0.5)
    beh = an.Behaviour(an.UniformArrivals(2))
    with pytest.raises(ValueError, match="SCAFFOLD is not plain SGD"):
        aft.simulate(p, al.AFACD(1.0, 0.1, worker=al.SCAFFOLD()), beh, rounds=2, collapse=True)
    tr = aft.simulate(p, al.AFACD(1.0, 0.1, worker=al.SCAFFOLD()), beh, rounds=2)
    assert not tr.config["collapsed"]


def test_drifting_objective_without_drift_equals_the_base_problem():
    from afltheory.problems import DriftingQuadratic

    base = quad(sigma_L=0.5)
    beh = BEHAVIOURS["uniform-delay-dynamic"]
    a = aft.simulate(
        DriftingQuadratic.from_problem(base, sigma_q=0.0),
        al.AFACD(1.0, 0.1),
        beh,
        rounds=15,
        replicates=4,
        seed=3,
    )
    # the reference path for both (a drifting problem never takes the fast path, which draws other noise)
    b = aft.simulate(base, al.AFACD(1.0, 0.1), beh, rounds=15, replicates=4, seed=3, fast=False)
    np.testing.assert_array_equal(a.grad_norm_sq, b.grad_norm_sq)
    assert np.all(a.drift == 0)


def test_drifting_objective_tracks_the_moving_optimum():
    """With drift the trace reports the round-t objective: ‖∇f_t(x_t)‖² = ‖H̄(x_t − x*_t)‖² exactly, and the
    tracking error (MSD) settles at a level that grows with σ_q (Rizk et al.'s O(σ_q²/μ) tracking term)."""
    from afltheory.problems import DriftingQuadratic

    base = HeterogeneousQuadratic(dim=2, num_workers=4, L=1.0, mu=0.5, sigma_G=0.0, seed=0)
    beh = an.Behaviour(an.UniformArrivals(4))
    msd = []
    for sq in (0.05, 0.2):
        tr = aft.simulate(
            DriftingQuadratic.from_problem(base, sq),
            al.AFACD(1.0, 0.5),
            beh,
            rounds=200,
            replicates=64,
            seed=1,
            record_x=True,
            x0=base.constants.x_star,
        )
        e = tr.x - tr.drift - base.constants.x_star
        np.testing.assert_allclose(
            tr.grad_norm_sq, np.sum(base.grad(e + base.constants.x_star) ** 2, -1), rtol=1e-12, atol=1e-15
        )
        np.testing.assert_allclose(tr.tracking_error, np.sum(e**2, -1), rtol=1e-12)
        msd.append(tr.tracking_error[:, 100:].mean())
    assert msd[1] > 4 * msd[0]


@pytest.mark.parametrize("algo", ["AFACD", "AFACS", "FedAvg"])
def test_collapsed_engine_matches_exact_moments_in_expectation(algo):
    """Collapsed local steps vs afltheory.exact: the MC mean of ‖∇f(x_t)‖² over 3000 replicates is within
    4.5 SE of the exact expectation at every round (13 rounds × 3 algorithms; under normality the family-wise
    false-failure probability is < 3e-4)."""
    p = HeterogeneousQuadratic(dim=3, num_workers=5, L=2.0, mu=0.3, sigma_L=1.0, sigma_G=1.0, seed=2)
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(2), an.UniformSteps(1, 8))
    alg = {"AFACD": al.AFACD(1.0, 0.2), "AFACS": al.AFACS(1.0, 0.2), "FedAvg": al.FedAvg(0.3, 0.2)}[algo]
    ex = aft.exact.moments(p, alg, beh, rounds=12)
    tr = aft.simulate(p, alg, beh, rounds=12, replicates=3000, seed=7, collapse=True)
    assert tr.config["collapsed"]
    z = (tr.mean() - ex.grad_norm_sq)[1:] / tr.sem()[1:]
    assert np.all(np.abs(z) < 4.5), z
