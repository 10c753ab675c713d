import math

import numpy as np
import pytest

from afltheory.problems import LowerBoundPair
from afltheory.theory import inconsistencies, lemmas, theorem1
from afltheory.theory import yu_local_sgd as yu


# ------------------------------------------------------------------ lemmas
def test_lemma1_and_2_monte_carlo():
    rng = np.random.default_rng(0)
    K, d, sig, n = 4, 3, 0.7, 20000
    true = rng.standard_normal((K, d))
    noise = rng.standard_normal((n, K, d)) * sig / math.sqrt(d)  # E‖ξ‖² = σ²
    G = (true + noise).mean(axis=1)
    mean = lemmas.lemma1_mean(true)
    np.testing.assert_allclose(G.mean(0), mean, atol=0.02)
    var = np.mean(np.sum((G - mean) ** 2, -1))
    assert var == pytest.approx(float(lemmas.lemma1_variance_bound(sig, K)), rel=0.05)
    # Lemma 2 with m = 2 workers, K = (1, 4)
    EG = rng.standard_normal((2, d))
    Ks = np.array([1, 4])
    draws = EG + rng.standard_normal((n, 2, d)) * sig / math.sqrt(d) / np.sqrt(Ks)[:, None]
    lhs = np.mean(np.sum(draws.sum(1) ** 2, -1))
    b = lemmas.lemma2_bound(EG, Ks, sig)
    assert lhs <= b
    assert b == pytest.approx(2 * np.sum(EG.sum(0) ** 2) + 2 * (1 + 0.25) * sig**2)


def test_drift_bound_on_local_sgd_quadratic():
    # f_i(y) = ½ L ‖y − c‖², local SGD from x with noise σ_L; drift must stay below bound (1) under (C1)
    rng = np.random.default_rng(1)
    L, K, eta_L, sig, d, n = 1.0, 5, 0.05, 0.5, 2, 4000
    c = np.array([1.0, -0.5])
    x = np.zeros(d)
    y = np.broadcast_to(x, (n, d)).copy()
    traj = [y.copy()]
    for _ in range(K):
        y = y - eta_L * (L * (y - c) + rng.standard_normal((n, d)) * sig / math.sqrt(d))
        traj.append(y.copy())
    drift = lemmas.local_drift(np.stack(traj, 1), x).mean(0)
    gn2 = np.sum((L * (x - c)) ** 2)  # ‖∇f(x)‖² (single worker: σ_G = 0)
    b = lemmas.drift_bound(gn2, K, eta_L, sig, 0.0, L=L)
    assert np.all(drift <= b) and drift[0] == 0
    assert lemmas.drift_condition(L, eta_L, K)
    with pytest.raises(ValueError, match=r"\(C1\)"):
        lemmas.drift_bound(gn2, K, 0.5, sig, 0.0, L=L)
    with pytest.raises(ValueError, match="sigma_L"):
        lemmas.drift_bound(gn2, K, 0.1, -1.0, 0.0)
    with pytest.raises(ValueError, match="K"):
        lemmas.drift_bound(gn2, 0, 0.1, 1.0, 0.0)


# ------------------------------------------------------------------ Theorem 1
def test_theorem1_limit():
    G = 1.5
    assert theorem1.predicted_limit(G) == pytest.approx(LowerBoundPair(G).constants.sigma_G ** 2)
    assert theorem1.problem(G).constants.sigma_G == 3.0
    g = theorem1.expected_grad_norm_sq(x0=2.0, G=G, eta=1.0, eta_L=0.1, K=5, T=400)
    assert g[0] == pytest.approx(16.0) and g[-1] == pytest.approx(4 * G**2, rel=1e-10)
    assert theorem1.limit_point(G) == -G
    assert theorem1.ARRIVALS == {"kind": "FixedArrivals", "workers": [0]}
    with pytest.raises(ValueError, match="G"):
        theorem1.predicted_limit(-1)


# ------------------------------------------------------------------ Yu et al.
def test_yu_conditions_and_bounds():
    assert yu.conditions(s=0.5, L=2)[0].holds and not yu.conditions(s=0.5 + 1e-9, L=2)[0].holds
    c = yu.conditions(setting="noniid", s=0.01, L=2, K=8)  # 1/(6*2*0.01) = 8.33
    assert all(x.holds for x in c)
    assert not yu.conditions(setting="noniid", s=0.01, L=2, K=9)[1].holds
    a = yu.admissible_step_sizes(setting="noniid", L=2, K=5)
    assert a.eta_max == pytest.approx(1 / 60) and a.binding == "K<=1/(6Ls)"
    # iid: 2*3/(0.1*10) + 4*0.01*4*1*1 + (1/2)*0.1*4 = 6 + 0.16 + 0.2
    assert yu.bound(T=10, s=0.1, L=1, K=2, N=2, sigma=2, G=1, f0=3, f_star=0) == pytest.approx(6.36)
    # noniid: 6 + 0.2 + 4*0.01*2*1*1 + 9*1*0.01*4*0.25 = 6 + .2 + .08 + .09
    assert yu.bound(
        setting="noniid", T=10, s=0.1, L=1, K=2, N=2, sigma=2, G=1, sigma_G=0.5, f0=3, f_star=0
    ) == pytest.approx(6.37)
    with pytest.raises(ValueError, match="T"):
        yu.bound(T=0, s=0.1, L=1, K=2, N=2, sigma=2, G=1, f0=3, f_star=0)
    with pytest.raises(ValueError, match="setting"):
        yu.rate("weird")
    import sympy as sp

    from afltheory.theory import symbols as S

    r = yu.rate("iid")
    assert (
        sp.simplify(
            r
            - (
                2 * S.Delta * S.L / sp.sqrt(S.N * S.T)
                + 4 * S.N * S.K**2 * S.G**2 / S.T
                + S.sigma**2 / sp.sqrt(S.N * S.T)
            )
        )
        == 0
    )


# ------------------------------------------------------------------ inconsistencies
@pytest.mark.parametrize("entry", inconsistencies.REGISTER, ids=lambda e: e.id)
def test_inconsistency_demonstrations(entry):
    out = entry.demonstrate()
    assert out["shown"] is True
    assert entry.where and entry.description


def test_inconsistency_1_numbers():
    out = inconsistencies.get("#1").demonstrate()
    assert out["rho_printed"] == pytest.approx(-2.0) and out["rho_proved"] == pytest.approx(0.7)
    assert out["conditions_hold"] and abs(out["x_T_printed"]) > 1e5
    with pytest.raises(ValueError, match="id"):
        inconsistencies.get("#9")


def test_theorem1_construction():
    anarchy = pytest.importorskip("afltheory.anarchy")
    if not hasattr(anarchy, "FixedArrivals"):
        pytest.skip("FixedArrivals not available yet")
    prob, arr = theorem1.construction(G=2.0)
    assert isinstance(prob, LowerBoundPair) and prob.constants.sigma_G == 4.0
    assert type(arr).__name__ == "FixedArrivals"
