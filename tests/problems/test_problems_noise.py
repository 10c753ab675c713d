"""Stochastic gradients (Assumptions 2 and 3 first part): unbiased, E‖ξ‖² = σ_L² exactly.

Monte Carlo checks are z-tests at 1e-6 two-sided (|z| < 4.89) with a fixed seed, so they cannot flake; the
standard error is the empirical one (CLT with N = 200,000 draws). Covariance entries use a Bonferroni
correction over the d² entries (|z| < 5.7 for d ≤ 4 at family-wise level 1e-6).
"""

import itertools

import numpy as np
import pytest

from afltheory.problems import FiniteSumNoise, GaussianNoise, HeterogeneousQuadratic, NonconvexSinusoidal
from afltheory.problems.noise import without_replacement_factor

Z_1E6 = 4.89
N = 200_000


def _ztest(samples, expected, z=Z_1E6):
    se = samples.std(ddof=1) / np.sqrt(samples.size)
    assert abs(samples.mean() - expected) <= z * se, (samples.mean(), expected, se)


def test_gaussian_noise_variance():
    prob = HeterogeneousQuadratic(dim=4, num_workers=3, L=2.0, mu=0.5, sigma_L=0.7, sigma_G=1.0, seed=0)
    rng = np.random.default_rng(123)
    x = np.zeros((N, 4))
    xi = prob.stochastic_grad(x, np.full(N, 1), rng) - prob.local_grad(x, 1)
    _ztest(np.sum(xi**2, axis=-1), 0.49)
    for k in range(4):
        _ztest(xi[:, k], 0.0)  # unbiased (Assumption 2)
    np.testing.assert_allclose(GaussianNoise(0.7).covariance(0, 4), np.eye(4) * 0.49 / 4)


def test_nonconvex_noise_variance():
    prob = NonconvexSinusoidal(dim=3, num_workers=2, L=1.0, mu=-0.5, sigma_L=1.3, sigma_G=0.5, seed=1)
    rng = np.random.default_rng(7)
    x = np.ones((N, 3))
    xi = prob.stochastic_grad(x, np.zeros(N, dtype=int), rng) - prob.local_grad(x, 0)
    _ztest(np.sum(xi**2, axis=-1), 1.69)
    assert prob.linear_gaussian() is None


def _small_finite_sum():
    rng = np.random.default_rng(5)
    o = rng.standard_normal((3, 5, 2)) * np.array([1.0, 2.0, 0.5])[:, None, None]
    return FiniteSumNoise(o - o.mean(axis=1, keepdims=True), batch_size=2)


def test_finite_sum_formula_by_enumeration():
    """Exact: averaging the covariance over all C(5, 2) = 10 equally likely batches equals covariance()."""
    noise = _small_finite_sum()
    for i in range(3):
        o = noise.offsets[i]
        means = np.array([o[list(s)].mean(axis=0) for s in itertools.combinations(range(5), 2)])
        exact = means.T @ means / len(means)
        np.testing.assert_allclose(noise.covariance(i, 2), exact, rtol=1e-12, atol=1e-14)
        assert np.trace(exact) == pytest.approx(noise.variance_per_worker[i], rel=1e-12)
    assert noise.sigma_L == pytest.approx(np.sqrt(noise.variance_per_worker.max()), rel=1e-15)
    assert without_replacement_factor(5, 2) == pytest.approx(3 / 8)
    assert without_replacement_factor(5, 5) == 0.0 and not noise.gaussian


def test_finite_sum_sampling_matches_covariance():
    noise = _small_finite_sum()
    rng = np.random.default_rng(99)
    for i in range(3):
        xi = noise.sample(rng, np.full(N, i), 2)
        _ztest(np.sum(xi**2, axis=-1), noise.variance_per_worker[i])
        cov = noise.covariance(i, 2)
        for a in range(2):
            _ztest(xi[:, a], 0.0)
            for b in range(2):
                _ztest(xi[:, a] * xi[:, b], cov[a, b], z=5.7)


def test_finite_sum_batch_one_and_full_batch():
    o = _small_finite_sum().offsets
    rng = np.random.default_rng(3)
    xi = FiniteSumNoise(o, 1).sample(rng, np.zeros((4, 1000), dtype=int), 2)
    assert xi.shape == (4, 1000, 2)
    # B = 1: every draw is one of worker 0's offsets, each with frequency ≈ 1/5
    match = np.all(np.isclose(xi.reshape(-1, 1, 2), o[0][None]), axis=-1)
    assert np.all(match.sum(axis=1) == 1)
    _ztest(match[:, 0].astype(float), 0.2)
    assert np.all(FiniteSumNoise(o, 5).sample(rng, np.zeros(3, dtype=int), 2) == 0.0)
    assert FiniteSumNoise(o, 5).sigma_L == 0.0


def test_finite_sum_quadratic_minibatch_is_mean_of_sample_gradients():
    """HeterogeneousQuadratic.finite_sum: σ_L as requested, and the noise model's covariance is exactly the
    covariance of a minibatch gradient of the per-sample quadratics f_{i,s}(x) = ½(x − c_is)ᵀA(x − c_is)."""
    prob = HeterogeneousQuadratic.finite_sum(
        dim=3,
        num_workers=4,
        L=2.0,
        mu=0.5,
        sigma_L=0.8,
        sigma_G=1.0,
        seed=2,
        hessian="dense",
        samples_per_worker=6,
        batch_size=3,
    )
    assert prob.constants.sigma_L == pytest.approx(0.8, rel=1e-12)
    A, S = prob.hessian[0], prob.sample_centers
    x = np.array([0.3, -1.0, 2.0])
    for i in range(4):
        g = (x - S[i]) @ A  # per-sample gradients (6, 3)
        np.testing.assert_allclose(g.mean(axis=0), prob.local_grad(x, i), atol=1e-12)
        batches = np.array([g[list(s)].mean(axis=0) for s in itertools.combinations(range(6), 3)])
        dev = batches - prob.local_grad(x, i)
        np.testing.assert_allclose(dev.T @ dev / len(dev), prob.noise.covariance(i, 3), atol=1e-12)
    lg = prob.linear_gaussian()
    assert lg is not None and lg.noise_cov.shape == (4, 3, 3)
    assert max(np.trace(c) for c in lg.noise_cov) == pytest.approx(0.64, rel=1e-12)
