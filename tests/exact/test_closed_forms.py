"""Exact moments against closed forms, equivalences, steady states and refusals (no Monte Carlo here)."""

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import AFACD, AFACS, SCAFFOLD, AsySG, FedAvg, FedProx
from afltheory.anarchy import (
    Behaviour,
    BiasedArrivals,
    ConstantSteps,
    CyclicArrivals,
    EventDriven,
    FixedArrivals,
    FixedDelay,
    MarkovAvailability,
    NoDelay,
    Replay,
    TimeVaryingSteps,
    UniformArrivals,
    UniformDelay,
    UniformSteps,
)
from afltheory.exact import ExactUnavailable, estimate_memory, moments, rounds_to_epsilon, steady_state
from afltheory.problems import HeterogeneousQuadratic, LowerBoundPair


def _curvature(**kw):
    mod = pytest.importorskip("afltheory.problems.curvature")
    return mod.HeterogeneousCurvatureQuadratic(**kw)


@pytest.mark.parametrize("family", ["shared", "curvature"])
def test_gradient_descent_matches_matrix_power(family):
    # σ_L = 0, m = M, K = 1, τ = 0: every worker sees x_t, and the mean of H_i x_t − b_i is ∇f(x_t), so
    # x̃_{t+1} = (I − η η_L H̄) x̃_t exactly (also with per-worker Hessians: K = 1 has no drift).
    if family == "shared":
        prob = HeterogeneousQuadratic(
            dim=5, num_workers=4, L=1.0, mu=0.1, sigma_L=0.0, sigma_G=1.0, seed=3, hessian="dense"
        )
    else:
        prob = _curvature(
            dim=5, num_workers=4, L=1.0, mu=0.1, sigma_L=0.0, sigma_G=1.0, seed=3, hessian="dense"
        )
    eta, eta_L, T = 1.5, 0.4, 60
    ex = moments(prob, AFACD(eta, eta_L), Behaviour(UniformArrivals(4)), T)
    Hbar, xs = prob.linear_gaussian().hessian_mean, prob.constants.x_star
    e = prob.default_x0() - xs
    Mstep = np.eye(5) - eta * eta_L * Hbar
    for t in range(T + 1):
        g = Hbar @ e
        assert ex.grad_norm_sq[t] == pytest.approx(g @ g, rel=1e-12, abs=1e-300)
        assert ex.loss[t] == pytest.approx(prob.value(e + xs), rel=1e-12)
        np.testing.assert_allclose(ex.x_mean[t], e + xs, rtol=1e-12, atol=1e-12)
        e = Mstep @ e


def test_sgd_additive_noise_scalar_recursion():
    # 1-D, h = L = μ = 2, M = 3 workers all arriving (m = M), K = 1, τ = 0, noise ξ_i ~ N(0, σ²) (d = 1).
    # e_t = x_t − x*:  e_{t+1} = e_t − γ (1/M) Σ_i (h x_t − b_i + ξ_i) = (1 − γh) e_t − γ ξ̄,  Var ξ̄ = σ²/M,
    # so v_t = E e_t² obeys v_{t+1} = (1 − γh)² v_t + γ² σ²/M, and
    # E‖∇f(x_t)‖² = h² v_t,  E f(x_t) = f* + h v_t / 2,  v_∞ = γ²σ²/(M (1 − (1 − γh)²)).
    h, M, sigma, eta, eta_L = 2.0, 3, 0.7, 1.0, 0.1
    prob = HeterogeneousQuadratic(dim=1, num_workers=M, L=h, mu=h, sigma_L=sigma, sigma_G=1.0, seed=0)
    g, T = eta * eta_L, 80
    for algo in (AFACD(eta, eta_L), FedAvg(eta, eta_L), AsySG(eta, eta_L)):
        ex = moments(prob, algo, Behaviour(UniformArrivals(M)), T)
        v = float((prob.default_x0() - prob.constants.x_star)[0] ** 2)
        for t in range(T + 1):
            assert ex.grad_norm_sq[t] == pytest.approx(h * h * v, rel=1e-12)
            assert ex.loss[t] == pytest.approx(prob.constants.f_star + h * v / 2, rel=1e-12)
            v = (1 - g * h) ** 2 * v + g * g * sigma**2 / M
        ss = steady_state(prob, algo, Behaviour(UniformArrivals(M)))
        v_inf = g * g * sigma**2 / (M * (1 - (1 - g * h) ** 2))
        assert ss.stable and ss.grad_norm_sq == pytest.approx(h * h * v_inf, rel=1e-10)


def test_theorem1_lower_bound_is_attained_exactly():
    # Only worker 1 ever participates: x_t → −G, so lim E‖∇f(x_t)‖² = 4G² = σ_G² [Yang et al. 2022, Thm 1].
    G = 1.5
    prob = LowerBoundPair(G=G)
    beh = Behaviour(FixedArrivals([0]), NoDelay(), ConstantSteps(3))
    ss = steady_state(prob, AFACD(1.0, 0.2), beh)
    assert ss.method == "lyapunov"
    assert ss.grad_norm_sq == pytest.approx(prob.constants.sigma_G**2, rel=1e-12)
    np.testing.assert_allclose(ss.x_mean, [-G], rtol=1e-12)
    ex = moments(prob, AFACD(1.0, 0.2), beh, 400)
    assert ex.grad_norm_sq[-1] == pytest.approx(4 * G * G, rel=1e-9)


def test_fedavg_equals_afacd_scaled_and_afacs_full_participation():
    prob = _curvature(dim=3, num_workers=4, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=1)
    K = 3
    beh = Behaviour(UniformArrivals(2), NoDelay(), ConstantSteps(K))
    a = moments(prob, FedAvg(0.5, 0.1), beh, 30)
    b = moments(prob, AFACD(0.5 * K, 0.1), beh, 30)
    np.testing.assert_allclose(a.grad_norm_sq, b.grad_norm_sq, rtol=1e-11)
    full = Behaviour(UniformArrivals(4), NoDelay(), UniformSteps(1, 3))
    c = moments(prob, AFACS(1.0, 0.2), full, 30)
    d = moments(prob, AFACD(1.0, 0.2), full, 30)
    np.testing.assert_allclose(c.grad_norm_sq, d.grad_norm_sq, rtol=1e-10)
    np.testing.assert_allclose(c.x_mean, d.x_mean, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "algo", [AFACD(1.0, 0.3), AFACS(1.0, 0.3), FedAvg(1.0, 0.1), AFACD(1.0, 0.3, worker=FedProx(0.5))]
)
def test_steady_state_dense_gmres_and_long_run_agree(algo):
    prob = _curvature(dim=2, num_workers=3, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=2)
    beh = Behaviour(BiasedArrivals(2, [0.5, 0.3, 0.2]), UniformDelay(1), UniformSteps(1, 3))
    dense = steady_state(prob, algo, beh, dense_limit=10**6)
    gm = steady_state(prob, algo, beh, dense_limit=0)
    assert dense.method == "dense" and gm.method == "gmres" and dense.stable
    assert gm.grad_norm_sq == pytest.approx(dense.grad_norm_sq, rel=1e-8)
    assert gm.spectral_radius == pytest.approx(dense.spectral_radius, rel=1e-5)
    long = moments(prob, algo, beh, 4000)
    assert long.grad_norm_sq[-1] == pytest.approx(dense.grad_norm_sq, rel=1e-8)
    assert long.loss[-1] == pytest.approx(dense.loss, rel=1e-10)
    np.testing.assert_allclose(long.x_mean[-1], dense.x_mean, rtol=1e-8)


def test_unstable_steady_state_is_reported_not_solved():
    prob = HeterogeneousQuadratic(dim=2, num_workers=3, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=0)
    ss = steady_state(prob, AFACD(10.0, 0.5), Behaviour(UniformArrivals(2), UniformDelay(1)))
    assert not ss.stable and ss.spectral_radius > 1 and ss.grad_norm_sq == np.inf


def test_rounds_to_epsilon_matches_trajectory():
    prob = HeterogeneousQuadratic(dim=3, num_workers=4, L=1.0, mu=0.2, sigma_L=0.3, sigma_G=1.0, seed=0)
    algo, beh = AFACD(1.0, 0.3), Behaviour(UniformArrivals(2), UniformDelay(2), UniformSteps(1, 3))
    ex = moments(prob, algo, beh, 200)
    ss = steady_state(prob, algo, beh)
    eps = 2 * ss.grad_norm_sq
    t = rounds_to_epsilon(prob, algo, beh, eps)
    assert t == ex.rounds_to_epsilon(eps) and t is not None
    assert ex.grad_norm_sq[t] <= eps < ex.grad_norm_sq[t - 1]
    assert rounds_to_epsilon(prob, algo, beh, 0.5 * ss.grad_norm_sq, max_rounds=300) is None
    tl = rounds_to_epsilon(prob, algo, beh, 1e-1, what="loss")
    assert ex.loss[tl] - prob.constants.f_star <= 1e-1 < ex.loss[tl - 1] - prob.constants.f_star


# ------------------------------------------------------------------------------------------------ refusals
PROB = HeterogeneousQuadratic(dim=2, num_workers=4, L=1.0, mu=0.2, sigma_L=0.3, sigma_G=1.0, seed=0)


@pytest.mark.parametrize(
    "beh, word",
    [
        (Behaviour(CyclicArrivals(2)), "not i.i.d"),
        (Behaviour(MarkovAvailability(2)), "not i.i.d"),
        (Behaviour(UniformArrivals(2), local_steps=TimeVaryingSteps([1, 2, 3])), "pmf"),
        (EventDriven(m=2), "round-mode"),
    ],
)
def test_refuses_non_iid_behaviours(beh, word):
    with pytest.raises(ExactUnavailable, match=word) as info:
        moments(PROB, AFACD(1.0, 0.1), beh, 5)
    assert "simulate" in str(info.value)


def test_refuses_replay_scaffold_nonlinear_and_large_states():
    sched = Behaviour(UniformArrivals(2)).sample(5, 1, 4, 0)
    with pytest.raises(ExactUnavailable, match="simulate"):
        moments(PROB, AFACD(1.0, 0.1), Replay(sched), 5)
    with pytest.raises(TypeError, match="simulate"):
        moments(PROB, AFACD(1.0, 0.1, worker=SCAFFOLD()), Behaviour(UniformArrivals(2)), 5)
    nonconvex = pytest.importorskip("afltheory.problems.nonconvex")
    names = [n for n in dir(nonconvex) if n.startswith("Nonconvex")]
    if names:
        prob = getattr(nonconvex, names[0])(dim=2, num_workers=4)
        with pytest.raises(TypeError, match="not linear-Gaussian.*simulate"):
            moments(prob, AFACD(1.0, 0.1), Behaviour(UniformArrivals(2)), 5)
    # dense Hessians: a diagonal problem of this size runs per coordinate (exact/diagonal.py)
    big = HeterogeneousQuadratic(dim=200, num_workers=100, mu=0.2, sigma_G=1.0, seed=0, hessian="dense")
    need = estimate_memory(200, 100, 4, True)
    with pytest.raises(ExactUnavailable, match=r"GiB") as info:
        moments(big, AFACS(1.0, 0.1), Behaviour(UniformArrivals(5), UniformDelay(4)), 5)
    assert f"{need / 1024**3:.2f} GiB" in str(info.value)
    with pytest.raises(ValueError, match="x0 has shape"):
        moments(PROB, AFACD(1.0, 0.1), Behaviour(UniformArrivals(2)), 5, x0=np.zeros((3, 2)))


def test_fixed_delay_history_and_biased_inclusion_are_used():
    # sanity: a fixed delay of 2 with K = 1, σ = 0, m = M is the deterministic recursion x_{t+1} = x_t −
    # γ∇f(x_{t−2})
    prob = HeterogeneousQuadratic(dim=2, num_workers=3, L=1.0, mu=0.3, sigma_L=0.0, sigma_G=1.0, seed=4)
    g = 0.5
    ex = moments(prob, AFACD(1.0, g), Behaviour(UniformArrivals(3), FixedDelay(2)), 25)
    H, xs = prob.linear_gaussian().hessian_mean, prob.constants.x_star
    hist = [prob.default_x0() - xs]
    for t in range(25):
        hist.append(hist[-1] - g * H @ hist[max(t - 2, 0)])
    np.testing.assert_allclose(ex.x_mean, np.array(hist) + xs, rtol=1e-12, atol=1e-13)
    with pytest.raises(ExactUnavailable, match="num_workers <= 20"):
        moments(
            HeterogeneousQuadratic(dim=1, num_workers=21, L=1.0, mu=1.0, sigma_G=1.0),
            AFACD(1.0, 0.1),
            Behaviour(BiasedArrivals(2, np.full(21, 1 / 21))),
            3,
        )


def test_top_level_access():
    assert aft.exact.moments is moments


def test_overflowing_step_is_divergence_not_overflow_error():
    """η_L = 1e300 (issue 28): the exact recursion reports divergence (+inf from round 1), never a bare
    OverflowError from Python float arithmetic."""
    import warnings

    import afltheory as aft
    from afltheory.algorithms import AFACD
    from afltheory.anarchy import Behaviour, UniformArrivals

    p = aft.problems.HeterogeneousQuadratic(dim=2, num_workers=3, sigma_L=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = aft.exact.moments(p, AFACD(1.0, 1e300), Behaviour(UniformArrivals(2)), rounds=5)
    assert m.divergence_round == 1 and np.isinf(m.grad_norm_sq[1:]).all() and np.isfinite(m.grad_norm_sq[0])
