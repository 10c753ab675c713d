"""The adversary's batched exact recursion and its components against independent references.

References: ``afltheory.exact.moments`` (the general exact engine, a separate implementation of the same
second-moment recursion) to 1e-10 relative error; ``BiasedArrivals.inclusion`` (a separate subset DP) to
1e-12; sampling tests of ``PmfDelay``/``PmfSteps``/``CovarianceNoise`` with fixed seeds (chi-square / moment
tests at the 1e-4 level, so a false failure has probability < 1e-3 across this file)."""

import zlib

import numpy as np
import pytest
from scipy import stats

from afltheory.adversary import CovarianceNoise, PmfDelay, PmfSteps, biased_inclusion
from afltheory.adversary.fastexact import Batch, grad_norm_sq
from afltheory.algorithms import AFACD, AFACS, FedAvg
from afltheory.anarchy import Behaviour, BiasedArrivals, FixedArrivals, UniformArrivals
from afltheory.exact import moments
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic


def _problem(rng, d, M, shared):
    if shared:
        A = rng.standard_normal((d, d))
        H = np.broadcast_to(A @ A.T / d + 0.2 * np.eye(d), (M, d, d)).copy()
    else:
        A = rng.standard_normal((M, d, d))
        H = A @ A.transpose(0, 2, 1) / d + 0.2 * np.eye(d)
    C = rng.standard_normal((M, d))
    Z = rng.standard_normal((M, d, d))
    noise = CovarianceNoise(Z @ Z.transpose(0, 2, 1) * 0.1)
    if shared:
        return HeterogeneousQuadratic.from_arrays(hessian=H[0], centers=C, sigma_L=noise)
    return HeterogeneousCurvatureQuadratic.from_arrays(hessians=H, centers=C, sigma_L=noise, radius=5.0)


def _batch(p, arr, dp, kp, eta, eta_L, x0, weight_by_K, rule=None):
    lg = p.linear_gaussian()
    xs = lg.x_star
    pi, pij = arr.inclusion(p.num_workers)
    if rule is None:
        rule = (FedAvg if weight_by_K else AFACD)(eta, eta_L)
    return Batch(
        hessians=lg.hessians[None],
        b_tilde=(lg.b - np.einsum("mij,j->mi", lg.hessians, xs))[None],
        noise_cov=lg.noise_cov[None],
        hbar=lg.hessian_mean[None],
        x0=(x0 - xs)[None],
        m=arr.m,
        pi=pi[None],
        pij=pij[None],
        delay_pmf=dp[None],
        k_pmf=kp[None],
        rules=(rule,),
    )


@pytest.mark.parametrize("kind", ["uniform", "biased", "fixed", "all"])
@pytest.mark.parametrize("algo", ["AFACD", "FedAvg"])
@pytest.mark.parametrize("shared", [True, False])
def test_batched_recursion_equals_exact_moments(kind, algo, shared):
    rng = np.random.default_rng(zlib.crc32(f"{kind}{algo}{shared}".encode()))
    d, M, m, D, Kmax = 3, 4, 2, 2, 3
    p = _problem(rng, d, M, shared)
    arr = {
        "uniform": UniformArrivals(m),
        "biased": BiasedArrivals(m, rng.dirichlet(np.ones(M))),
        "fixed": FixedArrivals([1, 3]),
        "all": UniformArrivals(M),
    }[kind]
    dp = rng.dirichlet(np.ones(D + 1))
    kp = rng.dirichlet(np.ones(Kmax), size=M)
    x0 = rng.standard_normal(d)
    alg = (AFACD if algo == "AFACD" else FedAvg)(0.7, 0.05)
    ex = moments(p, alg, Behaviour(arr, PmfDelay(dp), PmfSteps(kp)), 25, x0=x0).grad_norm_sq
    g = grad_norm_sq(_batch(p, arr, dp, kp, 0.7, 0.05, x0, algo == "FedAvg"), 25)[0]
    np.testing.assert_allclose(g, ex, rtol=1e-10)


def test_afacs_full_participation_equals_batched_afacd():
    """AFA-CS with m = M (every slot refreshed each round) is the stateless rule the adversary uses for
    Thm 4."""
    rng = np.random.default_rng(3)
    p = _problem(rng, 2, 3, True)
    dp, kp = np.array([0.5, 0.3, 0.2]), np.array([[0.6, 0.4]] * 3)
    x0 = rng.standard_normal(2)
    ex = moments(p, AFACS(0.9, 0.1), Behaviour(UniformArrivals(3), PmfDelay(dp), PmfSteps(kp)), 20, x0=x0)
    g = grad_norm_sq(_batch(p, UniformArrivals(3), dp, kp, 0.9, 0.1, x0, False), 20)[0]
    np.testing.assert_allclose(g, ex.grad_norm_sq, rtol=1e-10)


def test_batch_rows_are_independent():
    """Evaluating candidates together equals evaluating them one by one."""
    rng = np.random.default_rng(4)
    p1, p2 = _problem(rng, 2, 3, True), _problem(rng, 2, 3, False)
    dp, kp = np.array([0.2, 0.8]), np.array([[0.5, 0.5]] * 3)
    b1 = _batch(p1, UniformArrivals(2), dp, kp, 0.5, 0.1, np.ones(2), False)
    b2 = _batch(p2, UniformArrivals(2), dp, kp, 0.8, 0.05, -np.ones(2), False)

    def cat(k):
        a = getattr(b1, k)
        if isinstance(a, tuple):
            return a + getattr(b2, k)
        return np.concatenate([a, getattr(b2, k)]) if isinstance(a, np.ndarray) else a

    both = Batch(**{k: cat(k) for k in b1.__dataclass_fields__})
    g = grad_norm_sq(both, 15)
    np.testing.assert_allclose(g[0], grad_norm_sq(b1, 15)[0], rtol=1e-13)
    np.testing.assert_allclose(g[1], grad_norm_sq(b2, 15)[0], rtol=1e-13)


def test_divergence_is_inf_not_nan():
    rng = np.random.default_rng(5)
    p = _problem(rng, 2, 2, True)
    b = _batch(p, UniformArrivals(1), np.array([1.0]), np.array([[1.0]] * 2), 400.0, 0.1, np.ones(2), False)
    g = grad_norm_sq(b, 300)[0]
    assert not np.any(np.isnan(g)) and np.isinf(g[-1])


@pytest.mark.parametrize("M,m", [(3, 1), (5, 2), (6, 4), (7, 7)])
def test_biased_inclusion_equals_subset_dp(M, m):
    probs = np.random.default_rng(M * 10 + m).dirichlet(np.ones(M))
    pi, pij = biased_inclusion(probs, m)
    rpi, rpij = BiasedArrivals(m, probs).inclusion(M)
    np.testing.assert_allclose(pi, rpi, atol=1e-12)
    np.testing.assert_allclose(pij, rpij, atol=1e-12)
    assert np.isclose(pi.sum(), m)


def test_pmf_delay_clips_at_t_and_samples_its_pmf():
    d = PmfDelay([0.2, 0.0, 0.5, 0.3, 0.0])
    assert d.max_delay == 3
    np.testing.assert_allclose(d.pmf(0), [1.0])
    np.testing.assert_allclose(d.pmf(1), [0.2, 0.8])
    np.testing.assert_allclose(d.pmf(5), [0.2, 0.0, 0.5, 0.3])
    w = np.zeros((20000, 6, 1), dtype=np.int64)
    s = d.sample(np.random.default_rng(0), w)
    assert np.all(s <= np.arange(6)[:, None])
    counts = np.bincount(s[:, 5, 0], minlength=4)
    assert stats.chisquare(counts[[0, 2, 3]], 20000 * np.array([0.2, 0.5, 0.3])).pvalue > 1e-4
    assert counts[1] == 0


def test_pmf_steps_per_worker_samples_its_pmf():
    k = PmfSteps([[1.0, 0.0, 0.0], [0.1, 0.3, 0.6]])
    assert k.K_max == 3 and k.pmf(0) == {1: 1.0}
    w = np.broadcast_to(np.array([0, 1]), (40000, 1, 2))
    s = k.sample(np.random.default_rng(1), w)
    assert np.all(s[..., 0] == 1)
    counts = np.bincount(s[..., 1].ravel(), minlength=4)[1:]
    assert stats.chisquare(counts, 40000 * np.array([0.1, 0.3, 0.6])).pvalue > 1e-4


def test_covariance_noise_sigma_L_and_second_moment():
    covs = np.array([np.diag([0.5, 0.1]), [[0.3, 0.1], [0.1, 0.2]]])
    n = CovarianceNoise(covs)
    assert np.isclose(n.sigma_L, np.sqrt(0.6))
    z = n.sample(np.random.default_rng(2), np.ones(200000, dtype=int), 2)
    np.testing.assert_allclose(np.cov(z.T), covs[1], atol=0.006)  # ~5 standard errors
    with pytest.raises(ValueError, match="positive semidefinite"):
        CovarianceNoise(-np.eye(2)[None])


def test_bad_pmfs_are_rejected():
    with pytest.raises(ValueError, match="sum to 1"):
        PmfDelay([0.5, 0.2])
    with pytest.raises(ValueError, match="negative"):
        PmfSteps([1.2, -0.2])


def test_periodic_arrivals_match_monte_carlo_cyclic():
    """Cyclic arrivals (a periodic deterministic sequence of sets, which ``exact.moments`` refuses) against
    ``simulate`` with ``CyclicArrivals``: R = 4000 replicates, |z| ≤ 4.5 at 5 checkpoints (false-failure
    probability < 5·7e-6 under normality)."""
    from afltheory import simulate
    from afltheory.anarchy import CyclicArrivals

    rng = np.random.default_rng(11)
    p = _problem(rng, 2, 4, False)
    dp, kp = np.array([0.6, 0.4]), np.array([[0.5, 0.5]] * 4)
    x0 = rng.standard_normal(2)
    lg = p.linear_gaussian()
    xs = lg.x_star
    P, m, M = 2, 2, 4
    pi = np.zeros((1, P, M))
    for ph in range(P):
        pi[0, ph, (ph * m + np.arange(m)) % M] = 1.0
    b = Batch(
        hessians=lg.hessians[None],
        b_tilde=(lg.b - np.einsum("mij,j->mi", lg.hessians, xs))[None],
        noise_cov=lg.noise_cov[None],
        hbar=lg.hessian_mean[None],
        x0=(x0 - xs)[None],
        m=m,
        pi=pi,
        pij=pi[..., :, None] * pi[..., None, :],
        delay_pmf=dp[None],
        k_pmf=kp[None],
        rules=(AFACD(0.8, 0.1),),
    )
    g = grad_norm_sq(b, 12)[0]
    tr = simulate(
        p, AFACD(0.8, 0.1), Behaviour(CyclicArrivals(m), PmfDelay(dp), PmfSteps(kp)), 12, 4000, seed=5, x0=x0
    )
    t = np.array([1, 3, 5, 8, 12])
    z = (tr.mean()[t] - g[t]) / tr.sem()[t]
    assert np.all(np.abs(z) < 4.5), z
    # and a one-phase sequence is FixedArrivals
    pi1 = np.zeros((1, 1, M))
    pi1[0, 0, [1, 3]] = 1.0
    b1 = Batch(**{**b.__dict__, "pi": pi1, "pij": pi1[..., :, None] * pi1[..., None, :]})
    ex = moments(p, AFACD(0.8, 0.1), Behaviour(FixedArrivals([1, 3]), PmfDelay(dp), PmfSteps(kp)), 12, x0=x0)
    np.testing.assert_allclose(grad_norm_sq(b1, 12)[0], ex.grad_norm_sq, rtol=1e-10)


def test_periodic_schedule_matches_monte_carlo_and_bound_terms():
    """An adversarial periodic schedule (per phase: a worker set, a delay, a K) in Theorem 2's class: the
    batched recursion against ``simulate`` replaying the same schedule (R = 4000, |z| ≤ 4.5 at 5 checkpoints,
    false-failure probability < 4e-5), and the expected bound terms against ``theorem2.bound_terms`` on that
    (deterministic) schedule, to rounding."""
    from afltheory import simulate
    from afltheory.adversary import get_claim, make_instance
    from afltheory.adversary.space import Structure

    c = get_claim("thm2")
    cls = c.default_class().replace(rounds=30, min_rounds=1)
    st = Structure(2, "schedule", {"P": 3})
    U = np.random.default_rng(0).random((1, c.num_params(cls, st)))
    dec = c.decode(cls, st, U)
    inst = make_instance(c, cls, st, U[0], 30)
    assert inst.arrivals["kind"] == "schedule" and len(inst.arrivals["workers"]) == 3
    g = grad_norm_sq(c.batch(cls, dec), 30)[0]
    tr = simulate(inst.problem(), inst.algorithm(), inst.behaviour(), 30, 4000, seed=3, x0=inst.x0)
    t = np.array([1, 5, 10, 20, 30])
    z = (tr.mean()[t] - g[t]) / tr.sem()[t]
    assert np.all(np.abs(z) < 4.5), z
    p = inst.problem()
    got = c.module.bound_terms(
        tr.schedule,
        p.constants,
        eta=inst.eta,
        eta_L=inst.eta_L,
        f0=p.value(inst.x0),
        num_workers=inst.num_workers,
        tau=inst.tau,
    )
    exp = c.expected_terms(cls, dec, np.array([30]))
    for k in got:
        np.testing.assert_allclose(got[k], exp[k][0, 0], rtol=1e-12)
