"""Pinned tiny cases with hand-derived numbers (derivations in the comments)."""

import numpy as np
import pytest
from scipy.optimize import brentq

from afltheory.problems import (
    DriftingQuadratic,
    HeterogeneousCurvatureQuadratic,
    HeterogeneousQuadratic,
    LowerBoundPair,
    NonconvexSinusoidal,
)


def test_shared_quadratic_2_workers_3_dims():
    # A = diag(1, 2, 4), c_1 = (1, 0, 2), c_2 = (−1, 2, 0)  ⇒  c̄ = (0, 1, 1) = x*.
    # c_1 − c̄ = (1, −1, 1): A(c_1 − c̄) = (1, −2, 4), norm √21; c_2 − c̄ = −(c_1 − c̄), same norm ⇒ σ_G =
    # √21.
    # f* = mean_i ½ (c_i − c̄)ᵀA(c_i − c̄) = ½ (1 + 2 + 4) = 3.5.   L = 4, μ = 1.
    # At x = 0: f_1 = ½(1·1 + 2·0 + 4·4) = 8.5, f_2 = ½(1·1 + 2·4 + 4·0) = 4.5, f = 6.5 = 3.5 + ½(0 + 2 + 4).
    # ∇f_1(0) = A(0 − c_1) = (−1, 0, −8), ∇f_2(0) = (1, −4, 0), ∇f(0) = (0, −2, −4).
    prob = HeterogeneousQuadratic.from_arrays(hessian_diag=[1.0, 2.0, 4.0], centers=[[1, 0, 2], [-1, 2, 0]])
    c = prob.constants
    assert (c.L, c.mu, c.f_star) == (4.0, 1.0, 3.5)
    assert c.sigma_G == pytest.approx(np.sqrt(21), rel=1e-15)
    np.testing.assert_allclose(c.x_star, [0, 1, 1], atol=1e-15)
    x = np.zeros(3)
    np.testing.assert_allclose(prob.local_value(x, np.array([0, 1])), [8.5, 4.5])
    assert prob.value(x) == pytest.approx(6.5)
    np.testing.assert_allclose(prob.local_grad(x, 0), [-1, 0, -8])
    np.testing.assert_allclose(prob.local_grad(x, 1), [1, -4, 0])
    np.testing.assert_allclose(prob.grad(x), [0, -2, -4])
    # the dense form of the same Hessian gives the same problem
    dense = HeterogeneousQuadratic.from_arrays(
        hessian=np.diag([1.0, 2.0, 4.0]), centers=[[1, 0, 2], [-1, 2, 0]]
    )
    np.testing.assert_allclose(dense.local_grad(x, 0), [-1, 0, -8])
    assert dense.constants.sigma_G == pytest.approx(np.sqrt(21), rel=1e-14)


def test_lower_bound_pair_at_one():
    # f_1 = (x + G)², f_2 = (x − G)², G = 0.5, x = 1: f = 1 + G² = 1.25, ∇f = 2, ∇f_1 = 2(1 + G) = 3,
    # ∇f_2 = 2(1 − G) = 1; σ_G = 2G = 1; x* = 0, f* = G² = 0.25.
    prob = LowerBoundPair(G=0.5)
    x = np.array([1.0])
    assert prob.value(x) == pytest.approx(1.25)
    np.testing.assert_allclose(prob.grad(x), [2.0])
    np.testing.assert_allclose(prob.local_grad(x, 0), [3.0])
    np.testing.assert_allclose(prob.local_grad(x, 1), [1.0])
    c = prob.constants
    assert (c.L, c.mu, c.sigma_G, c.f_star) == (2.0, 2.0, 1.0, 0.25)
    # Theorem 1: only worker 1 participating ends at x̂ = −G, where ‖∇f(x̂)‖² = 4G² = σ_G²
    assert prob.local_grad(np.array([-0.5]), 0)[0] == 0.0
    assert prob.grad(np.array([-0.5]))[0] ** 2 == pytest.approx(c.sigma_G**2)


def test_curvature_quadratic_2_workers_2_dims():
    # A_1 = diag(1, 3), A_2 = diag(3, 1), c_1 = (1, 0), c_2 = (0, 1), radius 2.
    # Ā = 2I; mean A_i c_i = ½((1, 0) + (0, 1)) ⇒ x* = (¼, ¼).  L = 3, μ = 2.
    # ∇f_1(x*) = diag(1, 3)(−¾, ¼) = (−¾, ¾), ∇f_2(x*) = (¾, −¾): norms ¾√2.  A_1 − Ā = diag(−1, 1): norm 1.
    # σ_G bound = 1·2 + ¾√2; here it is attained at x* + 2(1, 1)/√2 for worker 1 (D v is parallel to
    # ∇f_1(x*)).
    # f* = ½[(¾)²·1 + (¼)²·3] = 0.375 for both workers.
    prob = HeterogeneousCurvatureQuadratic.from_arrays(
        hessians=[[1.0, 3.0], [3.0, 1.0]], centers=[[1, 0], [0, 1]], radius=2.0
    )
    c = prob.constants
    assert (c.L, c.mu, c.radius) == (3.0, 2.0, 2.0)
    np.testing.assert_allclose(c.x_star, [0.25, 0.25])
    assert c.f_star == pytest.approx(0.375)
    assert c.sigma_G == pytest.approx(2 + 0.75 * np.sqrt(2))
    xw = c.x_star + 2 * np.array([1.0, 1.0]) / np.sqrt(2)
    assert prob.in_certified_region(xw)
    assert np.linalg.norm(prob.local_grad(xw, 0) - prob.grad(xw)) == pytest.approx(c.sigma_G)
    lg = prob.linear_gaussian()
    np.testing.assert_allclose(lg.hessian_mean, 2 * np.eye(2))


def test_curvature_quadratic_client_drift_vs_shared():
    """Two local GD steps from x* on each worker, then average: the shared-Hessian quadratic stays at x*
    (averaging is linear), the curvature quadratic moves away (client drift). Hand check for the pinned case:
    y1_i = x* − η ∇f_i(x*); the mean of y1 is x* (Σ ∇f_i(x*) = 0), the second step adds −η² (A_i − Ā)∇f_i(x*)
    terms: with η = 0.1, mean y2 = x* + η²·mean_i A_i ∇f_i(x*) = (¼, ¼) + 0.01·(0.75, 0.75)."""
    cur = HeterogeneousCurvatureQuadratic.from_arrays(
        hessians=[[1.0, 3.0], [3.0, 1.0]], centers=[[1, 0], [0, 1]], radius=2.0
    )
    sh = HeterogeneousQuadratic.from_arrays(hessian_diag=[2.0, 2.0], centers=[[1, 0], [0, 1]])
    eta, w = 0.1, np.arange(2)
    for prob, expect in ((cur, [0.2575, 0.2575]), (sh, [0.5, 0.5])):
        y = np.broadcast_to(prob.constants.x_star, (2, 2)).copy()
        for _ in range(2):
            y = y - eta * prob.local_grad(y, w)
        np.testing.assert_allclose(y.mean(axis=0), expect, atol=1e-15)


def test_nonconvex_pinned_cancelling_phases():
    # d = 1, c = (1, −1), φ = (0, π), μ0 = 1, β = ½, ω = 1: m = (1 + e^{iπ})/2 = 0 ⇒ f(x) = ½(x² + 1), f* = ½
    # at 0.
    # L = μ0 + βω² = 1.5; μ (of f) = 1; μ_local = 0.5; δ_i = |±1 − 0| = 1, |c̄ − c_i| = 1 ⇒ σ_G = 1 + ½ = 1.5.
    prob = NonconvexSinusoidal.from_arrays(
        centers=[[1.0], [-1.0]], phases=[[0.0], [np.pi]], mu0=1.0, beta=0.5, omega=1.0
    )
    c = prob.constants
    assert (c.L, c.mu, prob.mu_local) == (1.5, 1.0, 0.5)
    assert c.sigma_G == pytest.approx(1.5, rel=1e-15)
    assert prob.value(np.array([0.0])) == pytest.approx(0.5)
    assert 0.5 - 1e-9 <= c.f_star <= 0.5
    assert c.x_star[0] == pytest.approx(0.0, abs=1e-6)


def test_nonconvex_pinned_double_well():
    # d = 1, c = (1, −1), φ = (0, 0), μ0 = 1, β = 2, ω = 1: f(x) = ½(x² + 1) + 2 cos x, f'' = 1 − 2cos x.
    # L = 3, μ = −1 (both exact); ∇f_i − ∇f = ∓1 for all x ⇒ σ_G = 1. Minimizers solve x = 2 sin x: ±1.8955.
    prob = NonconvexSinusoidal.from_arrays(
        centers=[[1.0], [-1.0]], phases=[[0.0], [0.0]], mu0=1.0, beta=2.0, omega=1.0
    )
    c = prob.constants
    assert (c.L, c.mu, c.sigma_G) == (3.0, -1.0, 1.0)
    xs = brentq(lambda t: t - 2 * np.sin(t), 1.0, 3.0)
    fs = 0.5 * (xs**2 + 1) + 2 * np.cos(xs)
    assert fs - 1e-9 <= c.f_star <= fs
    assert abs(c.x_star[0]) == pytest.approx(xs, abs=1e-7)
    assert prob.f_best == pytest.approx(fs, abs=1e-12)


def test_drifting_quadratic_translates_exactly():
    base = HeterogeneousQuadratic.from_arrays(hessian_diag=[1.0, 2.0, 4.0], centers=[[1, 0, 2], [-1, 2, 0]])
    drift = DriftingQuadratic.from_problem(base, sigma_q=0.3)
    delta = np.array([0.5, -1.0, 2.0])
    moved = drift.shift(delta)
    c0, c1 = base.constants, moved.constants
    assert (c1.L, c1.mu, c1.f_star) == (c0.L, c0.mu, c0.f_star)
    assert c1.sigma_G == pytest.approx(c0.sigma_G, rel=1e-14)
    np.testing.assert_allclose(c1.x_star, c0.x_star + delta)
    x = np.array([0.1, 0.2, 0.3])
    assert moved.value(x + delta) == pytest.approx(base.value(x))
    np.testing.assert_allclose(drift.local_grad(x + delta, 1, delta), base.local_grad(x, 1))
    assert drift.value(x + delta, delta) == pytest.approx(base.value(x))
    w = drift.walk(np.random.default_rng(0), rounds=4)
    assert w.shape == (5, 3) and np.all(w[0] == 0)
    np.testing.assert_allclose(drift.at_round(3, w).constants.x_star, c0.x_star + w[3])
    np.testing.assert_allclose(drift.optimum(w[3]), c0.x_star + w[3])


def test_drifting_increment_variance():
    """E‖q_t‖² = σ_q²: z-test at 1e-6 two-sided (|z| < 4.89), N = 100,000 increments, fixed seed."""
    drift = DriftingQuadratic(dim=4, num_workers=3, sigma_q=0.3, seed=1)
    q = drift.increments(np.random.default_rng(11), rounds=1000, batch=(100,))
    assert q.shape == (100, 1000, 4)
    s = np.sum(q**2, axis=-1).ravel()
    assert abs(s.mean() - 0.09) <= 4.89 * s.std(ddof=1) / np.sqrt(s.size)
    w = drift.walk(np.random.default_rng(11), rounds=1000, batch=(100,))
    np.testing.assert_allclose(w[:, 1:], np.cumsum(q, axis=1))
