"""Wang et al. 2020 (FedNova) — the test of ``afltheory.published.fednova2020``'s own checks: Theorem 1's
closed-form FedAvg fixed point against a plain loop of FedAvg rounds, its limit argmin F̃ by hand, the
verdict and its control."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.published import SELF_CHECKED
from afltheory.published import fednova2020 as fn

H, C, TAU = np.array(fn.THM1_HESSIANS), np.array(fn.THM1_CENTRES), np.array(fn.THM1_TAUS)


def fedavg_rounds(eta_L, rounds, eta=1.0):
    """Plain FedAvg with τ_i local full-gradient steps: x + η (1/M) Σ_i Δ_i."""
    x = np.zeros(2)
    for _ in range(rounds):
        delta = np.zeros(2)
        for h, c, tau in zip(H, C, TAU, strict=True):
            y = x.copy()
            for _ in range(tau):
                y = y - eta_L * h * (y - c)
            delta += (y - x) / len(H)
        x = x + eta * delta
    return x


def test_fixed_point_is_the_limit_of_plain_fedavg_rounds_whatever_the_server_step():
    x_hat = fn.fedavg_fixed_point(H, C, TAU, 0.05)
    assert np.allclose(fedavg_rounds(0.05, 2000), x_hat, atol=1e-12)
    assert np.allclose(fedavg_rounds(0.05, 4000, eta=0.5), x_hat, atol=1e-12)


def test_surrogate_minimiser_by_hand():
    """Coordinate 1: w_i ∝ τ_i h_i = (1, 1.6, 4, 5.6), centres (1, 0, −1, 0): (1 − 4)/12.2; coordinate 2:
    τ_i h_i = (.5, 2, 2.4, 7.2), centres (0, 1, 0, −1): (2 − 7.2)/12.1. With τ = 1: argmin F."""
    assert np.allclose(fn.surrogate_minimiser(H, C, TAU), [-3 / 12.2, -5.2 / 12.1])
    assert np.allclose(fn.surrogate_minimiser(H, C, (1, 1, 1, 1)), [(1 - 1) / 3.5, (1 - 0.9) / 3.0])


def test_thm1_verdict_passes_and_its_control_fails():
    assert fn in SELF_CHECKED
    vs = {v.id: v for v in fn.verify()}
    v = vs["published.fednova2020.thm1"]
    assert v.passed and v.inside_conditions and v.measured == pytest.approx(1.0, abs=fn.THM1_TOL)
    assert v.negative_control is not None and not v.negative_control.passed
    assert abs(v.negative_control.measured) < 0.05  # FedAvg keeps its distance to argmin F
    x_hat = fn.fedavg_fixed_point(H, C, TAU, 1e-4)
    assert np.linalg.norm(x_hat - fn.surrogate_minimiser(H, C, TAU)) < 1e-3
    assert np.linalg.norm(x_hat - fn.surrogate_minimiser(H, C, (1, 1, 1, 1))) > 0.1


def test_bad_input_is_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="eta_L="):
        fn.fedavg_fixed_point(H, C, TAU, 1.5)
    with pytest.raises(ValueError, match="taus"):
        fn.fedavg_fixed_point(H, C, TAU[:2], 0.1)


def test_thm2_floor_by_hand_and_attained_up_to_its_factor_2():
    """h = (1, .5), c = (1, −1), τ = (1, 4), p = (½, ½): w = (.2, .8), argmin F̃ = (.2 − .4)/(.2 + .4) = −1/3;
    ∇F_1 = −4/3, ∇F_2 = 1/3, ∇F = −1/2 (‖·‖² = 1/4); χ² = .09/.2 + .09/.8 = .5625; κ² = .2·16/9 + .8/9 = 4/9;
    2χ²κ² = 1/2: the ratio is exactly 1/2 (Cauchy–Schwarz tight in 1-d with two clients)."""
    g2, chi2, kap2 = fn.inconsistency_floor(fn.THM2_H, fn.THM2_C, fn.THM2_TAUS, [-1 / 3])
    assert (g2, chi2, kap2) == pytest.approx((0.25, 0.5625, 4 / 9), rel=1e-12)
    (v,) = [v for v in fn.verify() if v.id == "published.fednova2020.thm2"]
    assert v.passed and v.inside_conditions and v.measured / v.theoretical == pytest.approx(0.5, rel=1e-5)
    assert not v.negative_control.passed


@pytest.mark.parametrize("seed", range(4))
def test_thm2_floor_holds_at_the_limit_on_random_heterogeneous_clients(seed):
    """Random diagonal clients and local steps: ‖∇F(argmin F̃)‖² ≤ χ²κ² (Cauchy–Schwarz), so ≤ 2χ²κ²."""
    rng = np.random.default_rng(seed)
    h, c = rng.uniform(0.2, 1.0, size=(5, 3)), rng.normal(size=(5, 3))
    taus = rng.integers(1, 9, size=5)
    x = fn.surrogate_minimiser(h, c, taus)
    g2, chi2, kap2 = fn.inconsistency_floor(h, c, taus, x)
    assert g2 <= chi2 * kap2 * (1 + 1e-12)
