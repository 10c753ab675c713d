"""Dynamic FedAvg [Rizk, Vlaski, Sayed 2020]: equivalences, a plain-loop reference, pinned closed forms, exact
vs Monte Carlo mean-square deviation, the Stein solver vs the generic exact engine, and bad input.

Monte Carlo rule (``test_mc_msd_*``): each compared quantity is a mean over R independent replicates; it
must lie within 4 standard errors of the exact value. Under normality P(|Z| > 4) = 6.3e-5 per comparison;
with at most 8 comparisons per test the false-failure probability is < 5e-4 per test (Bonferroni). Seeds
are fixed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import DynamicFedAvg, FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.exact import drift as dr
from afltheory.exact import moments, steady_state
from afltheory.problems import DriftingQuadratic, HeterogeneousQuadratic
from afltheory.problems.drifting import AgentSampleNoise

Z_MAX = 4.0


def small(hessian="agent", sigma_q=0.1, data="gaussian", K=5, d=3, seed=0, N=(6, 9)):
    rng = np.random.default_rng(seed)
    H = rng.uniform(0.5, 2.0, size=(K, d) if hessian == "agent" else (d,))
    c = rng.standard_normal((K, d)) * 0.5
    kw = {}
    if data == "gaussian":
        kw["sample_cov"] = np.stack([np.diag(rng.uniform(0.1, 0.5, d)) for _ in range(K)])
    elif data == "finite":
        offs = []
        for _ in range(K):
            o = rng.standard_normal((int(rng.integers(N[0], N[1] + 1)), d)) * 0.6
            offs.append(o - o.mean(0))
        kw["sample_offsets"] = offs
    return DriftingQuadratic.federated(
        hessians=H, offsets=c, w0=rng.standard_normal(d), sigma_q=sigma_q, **kw
    )


def quiet_sim(*a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return aft.simulate(*a, **k)


# ------------------------------------------------------------------------------------------------
# equivalences
@pytest.mark.parametrize("E", [1, 3])
def test_equals_fedavg_with_eta_one_and_local_step_mu_over_E(E):
    """Equal epochs: DynamicFedAvg(μ, E) is FedAvg(η = 1, η_L = μ/E) with K = E — identical traces (same
    streams), and identical exact moments."""
    p = small(hessian="agent", data="gaussian")
    mu, L = 0.3, 2
    beh = Behaviour(UniformArrivals(L), local_steps=ConstantSteps(E))
    a = aft.simulate(p, DynamicFedAvg(mu=mu, epochs=E), beh, rounds=20, replicates=5, seed=3)
    b = aft.simulate(p, FedAvg(eta=1.0, eta_L=mu / E), beh, rounds=20, replicates=5, seed=3)
    np.testing.assert_allclose(a.x_final, b.x_final, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(a.tracking_error, b.tracking_error, rtol=1e-12)
    ma = moments(p, DynamicFedAvg(mu=mu, epochs=E), beh, 15)
    mb = moments(p, FedAvg(eta=1.0, eta_L=mu / E), beh, 15)
    np.testing.assert_allclose(ma.msd, mb.msd, rtol=1e-12)
    np.testing.assert_allclose(ma.grad_norm_sq, mb.grad_norm_sq, rtol=1e-12)


def test_engine_equals_plain_loop_with_per_agent_epochs_and_drift():
    """Per-agent E_k (so per-agent steps μ/E_k), drift before the update, model averaging: the vectorized
    engine equals a plain loop over the realized schedule and drift path (exact gradients, so no noise
    stream involved)."""
    p = small(hessian="agent", data=None, sigma_q=0.2)
    E = (1, 2, 3, 1, 4)
    alg = DynamicFedAvg(mu=0.4, epochs=E)
    tr = aft.simulate(p, alg, DynamicFedAvg.participation(3), rounds=12, replicates=4, seed=7, record_x=True)
    base, xs = p.base, p.constants.x_star
    np.testing.assert_array_equal(tr.schedule.local_steps, np.asarray(E)[tr.schedule.workers])
    for r in range(4):
        x = tr.x0.copy()
        for t in range(12):
            w = tr.drift[r, t + 1]  # the optimum moves first, then the round updates
            ys = []
            for k in tr.schedule.workers[r, t]:
                y = x.copy()
                for _ in range(E[k]):
                    y = y - (0.4 / E[k]) * base.local_grad(y - w, int(k))
                ys.append(y)
            x = np.mean(ys, axis=0)
            np.testing.assert_allclose(tr.x[r, t + 1], x, rtol=1e-12, atol=1e-12)
            assert tr.tracking_error[r, t + 1] == pytest.approx(np.sum((x - w - xs) ** 2), rel=1e-12)


def test_per_worker_runner_equals_scalar_runner_when_steps_are_equal():
    """The per-worker-step runner, forced with equal steps, reproduces the ordinary runner to 1e-12."""
    p = small(hessian="agent", data="gaussian")
    beh = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(3))

    class Forced(DynamicFedAvg):
        def local_step_sizes(self, num_workers):
            s = super().local_step_sizes(num_workers)
            s[0] *= 1 + 1e-16  # not all equal bitwise -> the per-worker runner
            return s

    a = aft.simulate(p, Forced(mu=0.3, epochs=3), beh, rounds=15, replicates=3, seed=2)
    b = aft.simulate(p, DynamicFedAvg(mu=0.3, epochs=3), beh, rounds=15, replicates=3, seed=2)
    np.testing.assert_allclose(a.tracking_error, b.tracking_error, rtol=1e-10)


# ------------------------------------------------------------------------------------------------ closed
# forms
def test_pinned_two_agents_one_sampled():
    """K = 2, L = 1, d = 1, shared h = 2, offsets ±0.5, exact gradients, σ_q² = 0.01, μ = 0.1, one epoch: e' =
    (1 − μh)(e − q) − μ b_k with b_k = ∓h·0.5, so P = [(1 − μh)² σ_q² + μ² h² 0.25] / (1 − (1 − μh)²) =
    (0.64·0.01 + 0.01) / 0.36 = 0.0455…; first order (μ/2)(h²/4)/h + σ_q²/(2μh) = 0.025 + 0.025 = 0.05."""
    p = DriftingQuadratic.federated(hessians=[2.0], offsets=[[0.5], [-0.5]], sigma_q=0.1)
    alg = DynamicFedAvg(mu=0.1)
    want = (0.64 * 0.01 + 0.01) / 0.36
    assert dr.stein_steady_state(p, alg, 1).msd == pytest.approx(want, rel=1e-12)
    ss = steady_state(p, alg, DynamicFedAvg.participation(1))
    assert ss.msd == pytest.approx(want, rel=1e-10) and ss.stable
    fo = dr.first_order(p, alg, 1)
    assert fo["msd"](0.1) == pytest.approx(0.05, rel=1e-12)
    assert fo["mu_star"] == pytest.approx(np.sqrt(0.01 / 2 / (0.25 * 4 / 2)), rel=1e-12)
    # drift applied after the update (a wrong convention) adds exactly tr Q to the steady state
    assert dr.stein_steady_state(p, alg, 1, drift_after=True).msd == pytest.approx(want + 0.01, rel=1e-12)


def test_sampling_moments_and_model_factor():
    n1, n2 = dr.sampling_moments(20, 7)
    assert n2[0, 0] == pytest.approx(7 / 20) and n2[0, 1] == pytest.approx(7 * 6 / (20 * 19))
    assert n1.sum() == pytest.approx(7)
    n1r, n2r = dr.sampling_moments(20, 7, replace=True)
    assert n2r.sum() == pytest.approx(7 + 7 * 6)  # E (Σ N_k)² = L² for a fixed multiset size
    p = small(hessian="shared", data=None, sigma_q=0.0, K=6)
    for L in range(1, 7):
        fo = dr.first_order(p, DynamicFedAvg(mu=0.1), L)
        assert fo["model_factor"] == pytest.approx((6 - L) / (L * 5))
    assert dr.stein_steady_state(p, DynamicFedAvg(mu=0.1), 6).msd == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize(
    "hessian,data,E",
    [("shared", "finite", 1), ("agent", "gaussian", (1, 2, 3, 2, 1)), ("agent", "finite", 2)],
)
def test_stein_solver_equals_generic_exact_engine(hessian, data, E):
    """Two independent solvers of the same steady state (direct d²×d² Stein system vs the generic engine's
    second-moment map) agree to 1e-9; the generic finite-horizon recursion converges to the same value."""
    p = small(hessian=hessian, data=data)
    alg = DynamicFedAvg(mu=0.25, epochs=E, batch=2)
    st = dr.stein_steady_state(p, alg, 3)
    ss = steady_state(p, alg, DynamicFedAvg.participation(3))
    assert ss.msd == pytest.approx(st.msd, rel=1e-9)
    assert ss.spectral_radius == pytest.approx(st.spectral_radius, rel=1e-9)
    m = moments(p, alg, DynamicFedAvg.participation(3), 400)
    assert m.msd[-1] == pytest.approx(st.msd, rel=1e-6)


def test_first_order_law_is_the_small_step_limit():
    p = small(hessian="agent", data="finite", sigma_q=0.0)
    alg = DynamicFedAvg(mu=1e-3, batch=2)
    fo = dr.first_order(p, alg, 2)
    assert dr.stein_steady_state(p, alg, 2).msd / fo["msd"](1e-3) == pytest.approx(1.0, abs=5e-3)


# ------------------------------------------------------------------------------------------------ MC vs exact
def test_mc_msd_agrees_with_exact_curve_and_steady_state():
    """Per-agent Hessians, finite-sum mini-batches without replacement, per-agent epochs, drift: the MC mean
    of ``Trace.tracking_error`` at rounds 1, 5, 20, 60 and the per-replicate time average over rounds
    60..119 against the exact values (R = 1024, 4-SE rule, module docstring)."""
    p = small(hessian="agent", data="finite", sigma_q=0.15)
    alg = DynamicFedAvg(mu=0.3, epochs=(1, 2, 1, 3, 2), batch=(1, 2, 3, 2, 4))
    beh = DynamicFedAvg.participation(2)
    tr = aft.simulate(p, alg, beh, rounds=120, replicates=1024, seed=11)
    ex = moments(p, alg, beh, 120)
    for t in (1, 5, 20, 60):
        s = tr.tracking_error[:, t]
        assert abs(s.mean() - ex.msd[t]) <= Z_MAX * s.std(ddof=1) / np.sqrt(s.size), t
    avg = tr.tracking_error[:, 60:].mean(axis=1)
    assert abs(avg.mean() - ex.msd[60:].mean()) <= Z_MAX * avg.std(ddof=1) / np.sqrt(avg.size)
    assert ex.msd[60:].mean() == pytest.approx(dr.stein_steady_state(p, alg, 2).msd, rel=1e-3)


def test_mc_detects_sampling_with_replacement():
    """Negative control: the exact value of the with-replacement variant is rejected by the same MC rule."""
    p = small(hessian="shared", data=None, sigma_q=0.0, K=6, d=2)
    alg = DynamicFedAvg(mu=0.3)
    tr = aft.simulate(p, alg, DynamicFedAvg.participation(3), rounds=80, replicates=512, seed=5)
    avg = tr.tracking_error[:, 40:].mean(axis=1)
    se = avg.std(ddof=1) / np.sqrt(avg.size)
    right, wrong = (dr.stein_steady_state(p, alg, 3, replace=r).msd for r in (False, True))
    assert abs(avg.mean() - right) <= Z_MAX * se
    assert abs(avg.mean() - wrong) > Z_MAX * se


def test_finite_sum_noise_covariance_without_replacement():
    """Empirical covariance of 200,000 mini-batch means vs (N − B)/(B(N − 1)) S (each entry within 5 SE)."""
    rng = np.random.default_rng(0)
    o = rng.standard_normal((7, 2))
    o -= o.mean(0)
    nz = AgentSampleNoise([o, o[:5] - o[:5].mean(0)], batch=[3, 5])
    xs = nz.sample(np.random.default_rng(1), np.zeros(200_000, dtype=int), 2)
    emp = xs.T @ xs / len(xs)
    want = nz.covariance(0, 2)
    np.testing.assert_allclose(want, (7 - 3) / (3 * 6) * (o.T @ o) / 7)
    prod = xs[:, :, None] * xs[:, None, :]
    se = prod.reshape(len(xs), -1).std(0).reshape(2, 2) / np.sqrt(len(xs))
    assert np.all(np.abs(emp - want) <= 5 * se)
    # B=N
    full = nz.sample(np.random.default_rng(1), np.ones(10, dtype=int), 2)
    np.testing.assert_allclose(full, 0.0, atol=1e-15)


def test_anisotropic_drift_covariance():
    Q = np.array([[0.02, 0.01, 0.0], [0.01, 0.03, 0.0], [0.0, 0.0, 0.0]])
    p = DriftingQuadratic.federated(hessians=[1.0, 2.0, 0.5], offsets=np.eye(3)[:2] - 0.5, drift_cov=Q)
    assert p.sigma_q**2 == pytest.approx(0.05)
    q = p.increments(np.random.default_rng(0), 100_000)
    np.testing.assert_allclose(q.T @ q / len(q), Q, atol=5e-4)
    fo = dr.first_order(p, DynamicFedAvg(mu=0.1), 1)
    assert fo["tr_q"] == pytest.approx(0.02 + 0.03 / 2.0)


# ------------------------------------------------------------------------------------------------ divergence
def test_unstable_step_is_reported_with_spectral_radius():
    """μ > 2/λ_max(H): steady_state says unstable (inf, spectral radius > 1), moments and simulate report inf,
    never NaN, and simulate warns."""
    p = DriftingQuadratic.federated(hessians=[2.0, 0.5], offsets=[[0.5, 0.0], [-0.5, 0.0]], sigma_q=0.1)
    alg = DynamicFedAvg(mu=1.2)  # 2/λ_max = 1
    ss = steady_state(p, alg, DynamicFedAvg.participation(2))
    assert not ss.stable and ss.msd == np.inf and ss.spectral_radius > 1
    st = dr.stein_steady_state(p, alg, 2)
    assert not st.stable and st.spectral_radius == pytest.approx(ss.spectral_radius, rel=1e-9)
    with pytest.warns(aft.engine.DivergenceWarning, match="diverged"):
        m = moments(p, alg, DynamicFedAvg.participation(2), 3000)
    assert np.isinf(m.msd[-1]) and not np.any(np.isnan(m.msd))
    with pytest.warns(aft.engine.DivergenceWarning):
        tr = aft.simulate(p, alg, DynamicFedAvg.participation(2), rounds=400, replicates=2, seed=0)
    assert tr.diverged.all() and not np.any(np.isnan(tr.grad_norm_sq))


# ------------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: DynamicFedAvg(mu=0.0), r"mu=0\.0"),
        (lambda: DynamicFedAvg(mu=-1.0), r"mu=-1\.0"),
        (lambda: DynamicFedAvg(mu=0.1, epochs=0), r"epochs=0"),
        (lambda: DynamicFedAvg(mu=0.1, epochs=(1, 0, 2)), r"epochs\[1\]=0"),
        (lambda: DynamicFedAvg(mu=0.1, batch=0), r"batch=0"),
        (
            lambda: DriftingQuadratic.federated(hessians=[1.0], offsets=[[1.0], [0.0]], sigma_q=-0.1),
            r"sigma_q=-0\.1",
        ),
        (lambda: DriftingQuadratic.slides(sigma_q2=-1.0), r"sigma_q2=-1\.0"),
        (lambda: DynamicFedAvg.participation(0), r"L=0"),
        (lambda: DynamicFedAvg.participation(21, K=20), r"L=21 is outside the allowed range \[1, 20\]"),
    ],
)
def test_bad_input_names_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_input_against_the_problem():
    p = small(hessian="agent", data="finite", N=(6, 6))  # every agent holds 6 samples
    with pytest.raises(ValueError, match=r"batch\[0\]=7 is outside the allowed range \[1, 6\]"):
        aft.simulate(p, DynamicFedAvg(mu=0.1, batch=7), DynamicFedAvg.participation(2), rounds=2)
    with pytest.raises(ValueError, match=r"epochs has 3 entries; expected one per agent \(num_workers=5\)"):
        aft.simulate(p, DynamicFedAvg(mu=0.1, epochs=(1, 2, 3)), DynamicFedAvg.participation(2), rounds=2)
    with pytest.raises(ValueError, match=r"m=6 exceeds num_workers=5"):
        aft.simulate(p, DynamicFedAvg(mu=0.1), DynamicFedAvg.participation(6), rounds=2)
    with pytest.raises(ValueError, match=r"L=6 is outside the allowed range \[1, 5\]"):
        dr.stein_steady_state(p, DynamicFedAvg(mu=0.1), 6)
    plain = HeterogeneousQuadratic(dim=2, num_workers=3, seed=0)
    with pytest.raises(ValueError, match="per-agent data"):
        aft.simulate(plain, DynamicFedAvg(mu=0.1, batch=2), DynamicFedAvg.participation(2), rounds=2)
