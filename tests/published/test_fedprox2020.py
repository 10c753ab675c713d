"""FedProx (Li, Sahu et al. 2020), Theorem 4 — the one test of ``afltheory.published.fedprox2020``'s check:
the closed-form expected decrease against hand numbers and a Monte Carlo run of the sampling with
replacement (fixed seed), Theorem 4 on further iterates, and its control."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.published import SELF_CHECKED, fedprox2020
from afltheory.published.symbols import B_dis, L, gamma_inexact, m, mu_prox

C = np.array([[1.0, 0.0], [-1.0, 0.0]])


def test_closed_form_decrease_equals_the_hand_derivation():
    """w = 10e_2, c_k = ±e_1, h = 1, μ = 3: z_k = (c_k + 3w)/4 = (±1/4, 7.5), f = ½‖x‖² (x* = 0), so
    E f(w⁺) = ½·7.5² + ½·(1/16)/K and f(w) = 50; ‖∇f(w)‖² = 100; B² = (100 + 1)/100."""
    dec, g2, B = fedprox2020.expected_decrease(C, np.ones_like(C), (0.0, 10.0), 3.0, 1000)
    assert dec == pytest.approx(50 - 28.125 - 0.5 / 16 / 1000, rel=1e-12)
    assert g2 == pytest.approx(100.0) and B == pytest.approx(np.sqrt(1.01), rel=1e-12)


def test_closed_form_agrees_with_monte_carlo_sampling_with_replacement():
    """K = 3 devices drawn with replacement from M = 3 heterogeneous clients, 200,000 draws (seed 1): the
    Monte Carlo mean of f(w⁺) is within 4 standard errors (≈ 99.99 %) of the closed form."""
    rng = np.random.default_rng(1)
    c = np.array([[1.0, 2.0], [-1.0, 0.5], [0.0, -3.0]])
    h = np.array([[1.0, 0.5], [0.3, 1.0], [0.8, 0.8]])
    w, mu, K = np.array([2.0, -1.0]), 0.7, 3
    dec, _, _ = fedprox2020.expected_decrease(c, h, w, mu, K)
    hf, xs = h.mean(0), (h * c).mean(0) / h.mean(0)
    z = (h * c + mu * w) / (h + mu)
    picks = rng.integers(0, 3, size=(200_000, K))
    wp = z[picks].mean(1)
    fv = 0.5 * np.sum(hf * (wp - xs) ** 2, axis=1)
    f_w = 0.5 * np.sum(hf * (w - xs) ** 2)
    assert abs((f_w - fv.mean()) - dec) <= 4 * fv.std() / np.sqrt(len(fv))


def test_verdict_passes_inside_the_conditions_and_its_control_fails():
    assert fedprox2020 in SELF_CHECKED
    v = fedprox2020.verify()[0]
    assert v.passed and v.inside_conditions
    assert v.negative_control is not None and not v.negative_control.passed
    assert v.measured == pytest.approx(0.2187496875, rel=1e-9)  # 21.87496875 / 100 (the hand case above)
    assert 0.14 < v.theoretical < v.measured < v.negative_control.theoretical


@pytest.mark.parametrize("seed", range(5))
def test_theorem4_holds_at_random_iterates_where_rho_is_positive(seed):
    """Random heterogeneous diagonal clients (L = max h = 1), random iterates; wherever ρ(B(w)) > 0 the
    achieved constant is ≥ ρ (μ = 3, K = 1000)."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(4, 3)) * 0.2
    h = np.clip(rng.uniform(0.3, 1.0, size=(4, 3)), 0, 1)
    h[0, 0] = 1.0
    hits = 0
    for _ in range(20):
        w = rng.normal(size=3) * 10
        dec, g2, B = fedprox2020.expected_decrease(c, h, w, 3.0, 1000)
        rho = float(fedprox2020.RHO.subs({mu_prox: 3.0, m: 1000, L: 1.0, gamma_inexact: 0.0, B_dis: B}))
        if rho > 0:
            hits += 1
            assert dec / g2 >= rho
    assert hits >= 5


def test_bad_input_is_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="mu="):
        fedprox2020.expected_decrease(C, np.ones_like(C), (0.0, 1.0), 0.0, 3)
    with pytest.raises(ValueError, match="centres"):
        fedprox2020.expected_decrease(C, np.ones((3, 2)), (0.0, 1.0), 1.0, 3)


def test_thm6_telescoped_verdict_by_hand_and_its_control():
    """Identical clients ½‖w‖², μ = 3: the prox point is 3w/4, so ‖∇f(w^t)‖² = 100 (9/16)^t from w⁰ = 10e_2
    and (1/T) Σ_{t<20} = (100/20)(1 − (9/16)^20)/(7/16); Δ = 50, ρ = ρ(μ = 3, K = 1000, B = 1, γ = 0)."""
    v = [v for v in fedprox2020.verify() if v.id == "published.fedprox2020.thm6"][0]
    assert v.measured == pytest.approx(5 * (1 - (9 / 16) ** 20) / (7 / 16), rel=1e-12)
    rho = float(fedprox2020.RHO.subs({mu_prox: 3.0, m: 1000, L: 1.0, gamma_inexact: 0.0, B_dis: 1.0}))
    assert v.theoretical == pytest.approx(50 / (rho * 20), rel=1e-12)
    assert v.passed and v.inside_conditions and not v.negative_control.passed
