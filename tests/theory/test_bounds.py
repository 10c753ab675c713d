"""bound(...) on a tiny hand-written schedule equals a hand computation of docs/theorems.md's formulas.

Common numbers: L = 2, sigma_L = 1, sigma_G = 0.5, f_* = 0, f0 = 3, eta = 1, eta_L = 0.05 (x = eta*eta_L =
0.05), T = 2, m = 2, M = 3, tau = 1.  Leading term 4 (f0 - f*)/(eta eta_L T) = 12 / 0.1 = 120.
Per round (over M_t):  1/Kbar_0 = (1 + 1/2)/2 = 3/4,  Ktil_0 = 3/2,  Khat2_0 = (1 + 4)/2 = 5/2
                       1/Kbar_1 = (1/3 + 1)/2 = 2/3,  Ktil_1 = 2,    Khat2_1 = (9 + 1)/2 = 5
"""

from fractions import Fraction as F

import numpy as np
import pytest

from afltheory.anarchy.schedule import Schedule
from afltheory.theory import symbols as S
from afltheory.theory import theorem2, theorem3, theorem4

KW = dict(eta=1.0, eta_L=0.05, f0=3.0)


def test_theorem2_hand(tiny, consts):
    L, x, eL, tau, m = F(2), F(1, 20), F(1, 20), 1, 2
    # alpha_L per round: (L x + 3 tau^2 L^2 x^2)/m * (1/Kbar_t) + 15/2 L^2 eta_L^2 Ktil_t
    #   (0.1 + 0.03)/2 = 0.065;  t0: 0.065*3/4 + 0.075*3/2 = 0.16125;  t1: 0.065*2/3 + 0.075*2 = 0.19333..
    c = (L * x + 3 * tau**2 * L**2 * x**2) / m
    aL = (c * F(3, 4) + F(15, 2) * L**2 * eL**2 * F(3, 2) + c * F(2, 3) + F(15, 2) * L**2 * eL**2 * 2) / 2
    # alpha_G = 3/2 + 45 L^2 eta_L^2 * mean(5/2, 5) = 1.5 + 0.45 * 3.75 = 3.1875
    aG = F(3, 2) + 45 * L**2 * eL**2 * F(15, 4)
    want = 120 + 4 * (aL * 1 + aG * F(1, 4))  # = 123.89666...
    got = theorem2.bound(tiny, consts, num_workers=3, **KW)
    assert got.shape == (1,)
    assert got[0] == pytest.approx(float(want), rel=1e-13)
    assert float(want) == pytest.approx(123.8966666666, rel=1e-10)


def test_theorem3_hand_statement_and_proof(tiny, consts):
    L, x, eL, tau, m = F(2), F(1, 20), F(1, 20), 1, 2
    # alpha_L = (L x/m + 2 tau^2 L^2 x^2/m) * mean(1/Kbar) + 5 eta_L^2 L^2 mean(Ktil) = 0.06*17/24 + 0.05*7/4
    # = 0.13
    pre = (L * x / m + 2 * tau**2 * L**2 * x**2 / m) * F(17, 24)
    aL = pre + 5 * eL**2 * L**2 * F(7, 4)
    aG = 30 * L**2 * eL**2 * F(15, 4)  # 0.3 * 3.75 = 1.125
    want = 120 + 4 * (aL + aG / 4)  # 121.645
    assert theorem3.bound(tiny, consts, num_workers=3, **KW)[0] == pytest.approx(float(want), rel=1e-13)
    assert float(want) == pytest.approx(121.645)
    # proof reading (#3): means over all M slots with memory K (warm start K = 1):
    #   round 0 slots K = [1, 2, 1] -> Ktil 4/3, Khat2 2;  round 1 slots K = [1, 3, 1] -> Ktil 5/3, Khat2 11/3
    aLp = pre + 5 * eL**2 * L**2 * F(3, 2)
    aGp = 30 * L**2 * eL**2 * F(17, 6)
    wantp = 120 + 4 * (aLp + aGp / 4)  # 121.32
    got = theorem3.bound(tiny, consts, num_workers=3, averaging="proof", **KW)[0]
    assert got == pytest.approx(float(wantp), rel=1e-13)
    assert float(wantp) == pytest.approx(121.32)


def test_theorem4_hand(tiny, consts):
    # memory after round 0: slots K [1, 2, 1], staleness [0, 0, 0] -> m'_0 = 3
    # memory after round 1: slot0 (from t=0) stale 1 K 1; slot1 computed at x_0 stale 1 K 3; slot2 fresh K 1
    # -> m'_1 = 1
    stale, Ks = tiny.memory()
    assert stale[0].tolist() == [[0, 0, 0], [1, 1, 0]] and Ks[0].tolist() == [[1, 2, 1], [1, 3, 1]]
    L, x, eL, tau, M = F(2), F(1, 20), F(1, 20), 1, 3
    # per round: 5 L^2 eL^2 Kavg_t + (L/2 + x (M-m'_t)^2/M^2 L^2 tau^2) * 2 x (1/Kbar_t) / M
    t0 = 5 * L**2 * eL**2 * F(4, 3) + (L / 2 + x * 0 * L**2 * tau**2) * 2 * x * F(5, 6) / M
    t1 = 5 * L**2 * eL**2 * F(5, 3) + (L / 2 + x * F(4, 9) * L**2 * tau**2) * 2 * x * F(7, 9) / M
    aL = 4 * (t0 + t1) / 2  # 0.41201646...
    aG = 120 * L**2 * eL**2 / M * F(6 + 11, 2)  # Khat2_t = sum of slot K^2: 6, 11 -> 3.4
    want = 120 + aL * 1 + aG * F(1, 4)  # 121.26201646...
    assert theorem4.bound(tiny, consts, num_workers=3, **KW)[0] == pytest.approx(float(want), rel=1e-13)
    # khat="mean": Khat2_t = 2, 11/3
    aGm = 120 * L**2 * eL**2 / M * F(2 + F(11, 3), 2)
    wantm = 120 + aL + aGm / 4
    assert theorem4.bound(tiny, consts, khat="mean", **KW)[0] == pytest.approx(float(wantm), rel=1e-13)
    # f_T given: numerator f0 - f_T
    assert theorem4.bound(tiny, consts, f_T=1.0, **KW)[0] == pytest.approx(float(want) - 40, rel=1e-13)


@pytest.mark.parametrize("mod", [theorem2, theorem3, theorem4])
def test_bound_expr_matches_numeric_for_constant_K(mod, consts):
    R, T, m, M, K = 2, 4, 2, 4, 3
    rng = np.random.default_rng(0)
    w = np.stack([np.stack([rng.permutation(M)[:m] for _ in range(T)]) for _ in range(R)])
    d = np.zeros_like(w)
    d[:, 1:, 0] = 1
    k = np.full_like(w, K)
    sch = Schedule(w, d, k, num_workers=M, init_local_steps=np.full(M, K))
    got = mod.bound(sch, consts, eta=0.7, eta_L=0.02, f0=2.0)
    assert got.shape == (R,)
    subs = {
        S.Delta: 2.0,
        S.eta: 0.7,
        S.eta_L: 0.02,
        S.T: T,
        S.L: 2.0,
        S.sigma_L: 1.0,
        S.sigma_G: 0.5,
        S.m: m,
        S.M: M,
        S.K: K,
    }
    if mod is theorem4:
        # Theorem 4's rate() assumes a constant m'; compare against the per-round numeric with a constant-m'
        # schedule
        stale, Ks, mf, tau = theorem4.realized(sch)
        expr = mod.bound_expr().subs({S.Kbar: K, S.Ktil: K, S.Khat2: M * K**2})
        vals = []
        for r in range(R):
            per_t = [
                float(expr.subs({**subs, S.m_fresh: int(mf[r, t]), S.tau: float(tau[r])})) for t in range(T)
            ]
            # the sum over t is linear in the (M-m'_t)^2 part; averaging the per-round closed forms is exact
            vals.append(np.mean(per_t))
        np.testing.assert_allclose(got, vals, rtol=1e-12)
    else:
        expr = mod.rate().subs({**subs, S.tau: float(sch.tau[0])})
        np.testing.assert_allclose(got, float(expr), rtol=1e-12)


@pytest.mark.parametrize("mod", [theorem2, theorem3, theorem4])
def test_bound_bad_input(mod, tiny, consts):
    empty = Schedule(
        np.zeros((1, 0, 2), int), np.zeros((1, 0, 2), int), np.ones((1, 0, 2), int), num_workers=3
    )
    with pytest.raises(ValueError, match="T=0"):
        mod.bound(empty, consts, **KW)
    with pytest.raises(ValueError, match="f0"):
        mod.bound(tiny, consts, eta=1.0, eta_L=0.05)
    with pytest.raises(ValueError, match="eta_L"):
        mod.bound(tiny, consts, eta=1.0, eta_L=float("nan"), f0=1.0)
    with pytest.raises(ValueError, match="eta"):
        mod.bound(tiny, consts, eta=-1.0, eta_L=0.1, f0=1.0)
    with pytest.raises(ValueError, match="num_workers"):
        mod.bound(tiny, consts, num_workers=5, **KW)
    with pytest.raises(ValueError, match="tau"):
        mod.bound(tiny, consts, tau=0, **KW)
    with pytest.raises(ValueError, match="f0"):
        mod.bound(tiny, consts, eta=1.0, eta_L=0.05, f0=-1.0)  # below f_star
    with pytest.raises(ValueError, match="f0"):
        mod.bound(tiny, consts, eta=1.0, eta_L=0.05, f0=float("inf"))
