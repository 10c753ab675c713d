"""The quadratic family's collapsed K-step law (``problems.quadratic.local_sgd_k_step_law``, issue 27 item 2):
the (drift, noise) table the engine's collapsed runner draws K local SGD steps from. Checked against a plain
K-step loop (mean, exactly), the covariance summed step by step (exactly, and against
``afltheory.exact.local_maps`` in any basis) and a Monte Carlo loop (fixed seed, 5-standard-error bands: each
comparison fails by chance with probability < 6e-7 under the law, 24 comparisons in all)."""

import numpy as np
import pytest

from afltheory.exact.local import local_maps
from afltheory.problems import HeterogeneousQuadratic
from afltheory.problems.quadratic import local_sgd_k_step_law

ETA = 0.1
#: η_L λ across the regimes of a = 1 − η_L λ: tiny (a ≈ 1, expm1 branch), (0, 1), a = 0, a < 0, a = −1
LAMBDAS = np.array([1e-9, 0.5, 3.0, 10.0, 15.0, 20.0]) / 1.0


def _loop(lam, eta, K, e0, xi):
    """K plain local SGD steps on f(y) = ½ λ y² per coordinate (c = 0): G = (y_0 − y_K)/(η K); xi: (K, …)."""
    y = e0.copy()
    for k in range(K):
        y = y - eta * (lam * y + xi[k])
    return (e0 - y) / (eta * K)


@pytest.mark.parametrize("K", [1, 2, 5, 20])
def test_drift_is_the_mean_of_a_plain_loop(K):
    """Without noise G = drift·(y_0 − c): against the loop (where it has no cancellation, η_L λ ≥ 0.05) and
    against the geometric sum λ/K Σ_{j<K} a^j summed term by term (every regime, tiny η_L λ included)."""
    drift, noise = local_sgd_k_step_law(LAMBDAS, ETA, K, sigma_L=0.0, dim=LAMBDAS.size)
    assert np.all(noise == 0.0)
    e0 = np.linspace(-2.0, 3.0, LAMBDAS.size)
    G = _loop(LAMBDAS, ETA, K, e0, np.zeros((K, LAMBDAS.size)))
    ok = ETA * LAMBDAS >= 0.05
    np.testing.assert_allclose((drift * e0)[ok], G[ok], rtol=1e-12)
    series = LAMBDAS / K * sum((1.0 - ETA * LAMBDAS) ** j for j in range(K))
    # a = 1 − η_L λ is rounded before the law sees it: 1 − a carries a relative error up to ε/(η_L λ)
    # (8e-8 at η_L λ = 1e-10), the law's precision floor; elsewhere 1e-12
    tol = 1e-12 + np.finfo(float).eps / (ETA * LAMBDAS)
    assert np.all(np.abs(drift - series) <= tol * np.abs(series))


@pytest.mark.parametrize("K", [1, 3, 8])
def test_noise_is_the_summed_covariance(K):
    """noise² = (σ_L²/d)/K² Σ_{j<K} a^{2j}, summed step by step; and the same map as exact.local_maps
    (C = drift, Cov = noise² in H's eigenbasis) for a shared dense Hessian."""
    sigma, d = 0.7, LAMBDAS.size
    drift, noise = local_sgd_k_step_law(LAMBDAS, ETA, K, sigma, d)
    a = 1.0 - ETA * LAMBDAS
    var = sigma**2 / d / K**2 * sum(a ** (2 * j) for j in range(K))
    tol = 1e-12
    assert np.all(np.abs(noise**2 - var) <= tol * var)
    p = HeterogeneousQuadratic(dim=4, num_workers=3, L=5.0, mu=0.3, sigma_L=sigma, seed=2, hessian="dense")
    eig, Q = p.hessian_eigensystem()
    drift, noise = local_sgd_k_step_law(eig[0], ETA, K, sigma, p.dim)
    lm = local_maps(p.hessian[0], np.zeros(p.dim), np.eye(p.dim) * sigma**2 / p.dim, ETA, 0.0, [K])[K]
    np.testing.assert_allclose(lm.C, (Q * drift) @ Q.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lm.Q, (Q * noise**2) @ Q.T, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("K", [2, 6])
def test_monte_carlo_loop_has_the_law(K):
    """A noisy plain loop (N = 40 000 runs, seed 7): the mean of G − drift·e_0 is 0 and its variance noise²
    per coordinate, each within 5 standard errors (variance: SE = noise²·sqrt(2/(N − 1)), Gaussian)."""
    lam = np.array([0.5, 3.0, 15.0])
    sigma, N = 0.9, 40_000
    drift, noise = local_sgd_k_step_law(lam, ETA, K, sigma, lam.size)
    rng = np.random.default_rng(7)
    e0 = np.array([1.0, -2.0, 0.5])
    xi = rng.standard_normal((K, N, lam.size)) * (sigma / np.sqrt(lam.size))
    G = _loop(lam, ETA, K, np.broadcast_to(e0, (N, lam.size)), xi)
    r = G - drift * e0
    assert np.all(np.abs(r.mean(axis=0)) <= 5 * noise / np.sqrt(N))
    assert np.all(np.abs(r.var(axis=0, ddof=1) / noise**2 - 1.0) <= 5 * np.sqrt(2.0 / (N - 1)))
    # control: a law with one step too few is rejected by the same band
    _, wrong = local_sgd_k_step_law(lam, ETA, K - 1, sigma, lam.size)
    assert np.any(
        np.abs(r.var(axis=0, ddof=1) / (wrong * (K - 1) / K) ** 2 - 1.0) > 5 * np.sqrt(2.0 / (N - 1))
    )


def test_near_unit_a_branch_is_exact():
    """η_L λ = 1e-6, K = 1000: Σ_{j<K} a^{2j} = K(1 − ~1e-3); the law's variance matches the plain sum to 1e-9
    (it used to take K there: off by 1e-3). Control: the old value K misses the same tolerance."""
    lam, K = np.array([1e-5]), 1000
    _, noise = local_sgd_k_step_law(lam, ETA, K, 1.0, 1)
    a = 1.0 - ETA * lam
    var = 1.0 / K**2 * sum(a ** (2 * j) for j in range(K))
    np.testing.assert_allclose(noise**2, var, rtol=1e-9)
    assert abs(1.0 / K - var[0]) > 1e-4 * var[0]  # the old branch's value 1/K is ~1e-3 off: it fails the 1e-9
    # λ = 0 exactly (a = 1): K, not 0/0; and a ≈ −1 (η_L λ ≈ 2) is the same series
    _, n0 = local_sgd_k_step_law(np.array([0.0]), ETA, K, 1.0, 1)
    assert n0[0] == np.sqrt(float(K)) / K
    lam2 = np.array([(2.0 - 1e-6) / ETA])
    _, n2 = local_sgd_k_step_law(lam2, ETA, K, 1.0, 1)
    a2 = 1.0 - ETA * lam2
    np.testing.assert_allclose(n2**2, 1.0 / K**2 * sum(a2 ** (2 * j) for j in range(K)), rtol=1e-8)
