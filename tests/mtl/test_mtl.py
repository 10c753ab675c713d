"""Federated multi-task learning (issue 18): MOCHA's problem (primal, dual, gap, closed form), its W-step with
exact θ, the Ω-step, the theorem's pieces, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import afltheory as aft
from afltheory.mtl import MultiTaskProblem, local_maximizer, mocha, omega_step, synthetic_tasks
from afltheory.theory import mocha as TM

LAP = np.eye(4) - np.ones((4, 4)) / 4


def small(loss="squared", **kw):
    kw.setdefault("lam1", 0.5)
    kw.setdefault("Omega", LAP)
    return synthetic_tasks(m=4, d=3, n=12, loss=loss, seed=1, **kw)


def test_pinned_one_task_one_sample():
    """m = 1, d = 1, one sample x = 1, y = 2, λ₁ = 0, λ₂ = 1, squared loss: P(w) = ½(w − 2)² + w², so w* =
    2/3, P* = ½(4/3)² + 4/9 = 4/3; the dual D(α) = −(½α² − 2α) − ¼α² is maximized at α* = 4/3 with D* = 4/3;
    W(α) = α/2."""
    p = MultiTaskProblem([np.array([[1.0]])], [np.array([2.0])], lam1=0.0, lam2=1.0)
    assert np.isclose(p.solve_exact()[0, 0], 2 / 3)
    assert np.isclose(p.primal(np.array([[2 / 3]])), 4 / 3)
    assert np.isclose(p.dual([np.array([4 / 3])]), 4 / 3)
    assert np.isclose(p.primal_point([np.array([4 / 3])])[0, 0], 2 / 3)
    assert np.isclose(p.solve_dual_exact()[0][0], 4 / 3)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["squared", "hinge", "smoothed_hinge"]), st.integers(0, 10_000))
def test_weak_duality_for_random_feasible_dual_points(loss, seed):
    """P(W(α)) ≥ D(α) for every feasible α (Fenchel–Young), any loss."""
    p = small(loss)
    rng = np.random.default_rng(seed)
    if loss == "squared":
        alpha = [rng.normal(size=len(y)) for y in p.y]
    else:
        alpha = [rng.uniform(0, 1, size=len(y)) * y for y in p.y]
    assert p.duality_gap(p.primal_point(alpha), alpha) >= -1e-9


def test_closed_form_is_a_stationary_point_and_strong_duality_holds():
    p = small()
    W = p.solve_exact()
    grad = np.stack([x.T @ (x @ W[:, t] - y) for t, (x, y) in enumerate(zip(p.X, p.y, strict=True))], axis=1)
    grad += 2 * W @ p.A
    assert np.abs(grad).max() < 1e-10
    a = p.solve_dual_exact()
    assert abs(p.duality_gap(W, a)) < 1e-10 and np.allclose(p.primal_point(a), W)


def test_mocha_reaches_the_closed_form_and_each_round_ascends():
    p = small()
    r = mocha(p, 150, update_omega=False)
    assert np.abs(r.W - p.solve_exact()).max() < 1e-8
    assert np.all(np.diff(r.dual) >= -1e-10)  # σ' = σ'_min is safe: monotone dual ascent


def test_theta_is_exact_for_the_squared_loss():
    """Δ = (1 − √θ)Δ*: the realized relative suboptimality of every local solve is exactly θ."""
    r = mocha(small(), 5, theta=0.37, update_omega=False)
    assert np.allclose(r.theta, 0.37, atol=1e-10)
    r = mocha(small("smoothed_hinge"), 5, theta=0.37, update_omega=False, local_passes=30)
    assert np.all(r.theta <= 0.37 + 1e-9)  # concavity: at most θ for non-quadratic G


def test_decoupled_contraction_is_theta_bar_exactly_for_deterministic_theta():
    p = small(lam1=0.0, Omega=None)
    Ds = p.dual(p.solve_dual_exact())
    sub = Ds - mocha(p, 6, theta=0.3, update_omega=False).dual
    assert np.allclose(sub[1:] / sub[:-1], 0.3, rtol=1e-9)


def test_sigma_prime_min_is_safe_and_tight():
    """σ'_min = λ_max(D^{-1/2}CD^{-1/2}): ¼ uᵀ(C⊗I)u ≤ σ'_min Σ_t ¼ C_tt‖u_t‖² for random u, attained by the
    top eigenvector; σ'_min ≤ m."""
    p = small()
    C, sp = p.C, p.constants.sigma_prime_min
    assert 1.0 <= sp <= p.m
    rng = np.random.default_rng(0)
    for _ in range(200):
        U = rng.normal(size=(p.d, p.m))
        assert np.trace(U @ C @ U.T) <= sp * np.sum(np.diag(C) * (U**2).sum(0)) * (1 + 1e-12)
    dg = np.sqrt(np.diag(C))
    v = np.linalg.eigh(C / np.outer(dg, dg))[1][:, -1] / dg
    U = np.outer(np.ones(p.d), v)
    assert np.isclose(np.trace(U @ C @ U.T), sp * np.sum(np.diag(C) * (U**2).sum(0)))


def test_sigma_prime_below_the_safe_value_diverges():
    with np.errstate(all="ignore"):
        r = mocha(small(), 40, update_omega=False, sigma_prime=1.0)
    assert not np.all(np.isfinite(r.dual)) or r.dual[-1] < r.dual[0]


def test_omega_step_is_a_descent_step_on_the_primal():
    """Ω = Σ⁻¹ with Σ = (WᵀW)^{1/2}/tr(·) minimizes tr(WΩWᵀ) over {Ω = Σ⁻¹, tr Σ = 1}: the primal at fixed W
    does not increase (checked against 200 random feasible Σ too)."""
    p = small()
    W = p.solve_exact()
    Omega, Sigma = omega_step(W, eps=1e-12)
    assert np.isclose(np.trace(Sigma), 1.0)
    best = np.trace(W @ Omega @ W.T)
    rng = np.random.default_rng(0)
    for _ in range(200):
        B = rng.normal(size=(p.m, p.m))
        S = B @ B.T + 1e-3 * np.eye(p.m)
        S /= np.trace(S)
        assert best <= np.trace(W @ np.linalg.inv(S) @ W.T) * (1 + 1e-9)
    r = mocha(p, 20, update_omega=True)
    assert r.primal[-1] < r.primal[0]


def test_stragglers_from_a_behaviour_and_the_never_arriving_node():
    p = small()
    beh = aft.anarchy.Behaviour(aft.anarchy.FixedArrivals([1, 2, 3]))
    r = mocha(p, 30, behaviour=beh, update_omega=False)
    assert not r.arrived[:, 0].any() and r.arrived[:, 1:].all()
    assert np.all(r.alpha[0] == 0) and np.all(r.theta[:, 0] == 1.0)
    beh = aft.anarchy.Behaviour(aft.anarchy.UniformArrivals(2))
    r = mocha(p, 200, behaviour=beh, update_omega=False, seed=3)
    assert np.allclose(r.arrived.mean(0), 0.5, atol=0.12)  # 200 rounds: sd 0.035, 3.4-sigma band


def test_local_maximizer_maximizes_the_local_subproblem():
    p = small("smoothed_hinge")
    alpha = p.zero_alpha()
    W = p.primal_point(alpha)
    sp = p.constants.sigma_prime_min
    d = local_maximizer(p, 0, alpha[0], W[:, 0], sp, local_passes=200)
    from afltheory.mtl.mocha import _G

    q = sp * p.C[0, 0] / 4
    g = _G(p, 0, alpha[0], W[:, 0], d, q)
    rng = np.random.default_rng(0)
    for _ in range(100):  # random feasible perturbations never do better (β stays in [0, 1])
        beta = np.clip((alpha[0] + d) * p.y[0] + 0.05 * rng.normal(size=len(d)), 0, 1)
        assert _G(p, 0, alpha[0], W[:, 0], beta * p.y[0] - alpha[0], q) <= g + 1e-9


def test_theorem_pieces():
    assert TM.theta_bar(0.2, 0.5) == pytest.approx(0.6)
    p = small()
    s = TM.s_smooth(p)
    assert 0 < s <= 1
    assert TM.rate(0.0, 1.0) == 0.0 and TM.rate(1.0, s) == 1.0
    assert TM.rounds_to_epsilon(100, 1e-2, 0.5, 0.5) == pytest.approx(np.log(1e4) / 0.25)
    with pytest.raises(ValueError, match="smooth"):
        TM.s_smooth(small("hinge"))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(lam1=-1.0), "lam1"),
        (dict(lam2=-0.1), "lam2"),
        (dict(loss="logistic"), "loss"),
        (dict(Omega=-np.eye(4)), "positive semidefinite"),
        (dict(Omega=np.ones((3, 3))), "Omega"),
        (dict(lam1=0.0, lam2=0.0), "positive definite"),
    ],
)
def test_bad_problem_input(kwargs, match):
    base = dict(X=[np.ones((3, 2))] * 4, y=[np.ones(3)] * 4, lam1=0.1, lam2=0.1)
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        MultiTaskProblem(**base)


def test_bad_shapes_and_labels_and_mocha_arguments():
    with pytest.raises(ValueError, match="rows"):
        MultiTaskProblem([np.ones((3, 2))], [np.ones(4)])
    with pytest.raises(ValueError, match="features"):
        MultiTaskProblem([np.ones((3, 2)), np.ones((3, 3))], [np.ones(3), np.ones(3)])
    with pytest.raises(ValueError, match="labels"):
        MultiTaskProblem([np.ones((3, 2))], [np.array([0.0, 1, 1])], loss="hinge")
    p = small()
    for kw, match in (
        (dict(theta=1.5), "theta"),
        (dict(theta=(0.5, 0.2)), "theta"),
        (dict(drop=1.0), "drop"),
        (dict(sigma_prime=0.0), "sigma_prime"),
    ):
        with pytest.raises(ValueError, match=match):
            mocha(p, 2, **kw)


def test_arrival_probabilities_and_theta_bar_from_a_behaviour():
    """UniformArrivals(2) of 4 nodes: each arrives with probability exactly 1/2 (inclusion probabilities);
    with an independent drop of 0.2 it is 0.4, so p_max = 0.6 and Θ̄ = 0.6 + 0.4·θ."""
    from afltheory.mtl import arrival_probabilities, theta_bar

    pi = arrival_probabilities(aft.anarchy.Behaviour(aft.anarchy.UniformArrivals(2)), 4, drop=0.2)
    assert np.allclose(pi, 0.4)
    assert theta_bar(1 - pi.min(), 0.5) == pytest.approx(0.8) and theta_bar is TM.theta_bar
    assert np.allclose(arrival_probabilities(None, 3), 1.0)
