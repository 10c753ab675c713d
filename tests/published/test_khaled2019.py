"""Khaled, Mishchenko, Richtárik 2019 (workshop), Theorem 1 — the one test of the one module
``afltheory.published.khaled2019`` (issue 38's "a published theorem is one module plus one test").

The plain loop here is Algorithm 1 of the paper written out in numpy (no afltheory engine): local GD with
averaging every H steps, the output x̄_T = (1/T) Σ_{t<T} x̂_t over ALL steps."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.published import SELF_CHECKED, khaled2019

HESS = np.array([[1.0, 0.5], [0.8, 1.0], [1.0, 0.6], [0.7, 0.9]])  # diagonal Hessians h_m
CENTERS = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
X_STAR = (HESS * CENTERS).sum(0) / HESS.sum(0)  # argmin of (1/M) Σ ½ (x − c_m)ᵀ diag(h_m) (x − c_m)


def gap(x):
    v = x - X_STAR
    return 0.5 * float(v @ (HESS.mean(0) * v))


def local_gd(x0, H, T, gamma):
    """Algorithm 1 with t_p = pH: returns f(x̄_T) − f* with x̄_T the average of x̂_0..x̂_{T−1}."""
    x = np.tile(np.asarray(x0, float), (len(HESS), 1))
    total = np.zeros(2)
    for t in range(T):
        total += x.mean(0)
        x = x - gamma * HESS * (x - CENTERS)
        if (t + 1) % H == 0:
            x[:] = x.mean(0)
    return gap(total / T)


def _bound(x0, H, T, gamma):
    sigma2 = float(np.mean(np.sum((HESS * (X_STAR - CENTERS)) ** 2, axis=1)))  # (1/M) Σ ‖∇f_m(x*)‖²
    d0 = float(np.sum((np.asarray(x0) - X_STAR) ** 2))
    return khaled2019.THM1.value(dict(D0=d0, eta=gamma, T=T, sigma_dif=np.sqrt(sigma2), H=H, L=1.0))


def test_the_module_is_registered_everywhere():
    from afltheory.checks import CHECKS
    from afltheory.published import registry as claims_registry
    from paper_checks import registry

    registry.load_all()
    assert khaled2019 in SELF_CHECKED
    for st in khaled2019.STATEMENTS:  # registered once; the engine form is found under its verdict id
        assert claims_registry.get(st.id) is st and claims_registry.get(st.engine().id) is st
    assert set(claims_registry.engine_forms()) >= {"published.khaled2019.thm1", "published.khaled2019.cor1"}
    assert "published.khaled2019" in CHECKS


def test_verdict_passes_control_fails_and_equals_the_plain_loop():
    v, _ = khaled2019.verify()
    assert v.passed
    assert v.negative_control is not None and not v.negative_control.passed
    x0 = X_STAR + np.array([3.0, 0.0])
    assert v.measured == pytest.approx(local_gd(x0, 1, 5, 0.25), rel=1e-9)
    assert v.theoretical == pytest.approx(_bound(x0, 1, 5, 0.25), rel=1e-12)
    # the init term is attained best here: ratio 0.1045 (hand: the table of T = 1..12 in the module)
    assert 0.1 < v.measured / v.theoretical < 0.11


@pytest.mark.parametrize("H", [1, 2, 3, 5])
@pytest.mark.parametrize("T_rounds", [1, 4, 20])
def test_theorem1_holds_on_plain_local_gd_with_H_local_steps(H, T_rounds):
    """Beyond the engine form (H = 1): the paper's own setting, H local steps, γ = 1/(4LH) (L = 1)."""
    T = H * T_rounds
    for x0 in (X_STAR + [3.0, 0.0], X_STAR + [0.0, -2.0], np.zeros(2)):
        assert local_gd(x0, H, T, 1 / (4 * H)) <= _bound(x0, H, T, 1 / (4 * H))


def test_a_bound_with_a_smaller_constant_is_violated():
    """Control of the plain check: the bound divided by 10 is violated on the same instance."""
    x0 = X_STAR + np.array([3.0, 0.0])
    assert local_gd(x0, 1, 5, 0.25) > _bound(x0, 1, 5, 0.25) / 10


def test_corollary1_is_theorem1_at_its_step():
    """Corollary 1 = Theorem 1 with γ = √M/(4L√T) and H ≤ √T/√M (then γ ≤ 1/(4HL)): 2D/(γT) = 8LD/√(MT)
    exactly, and 24γ²σ²H²L = (3/2)Mσ²H²/(LT)."""
    import sympy as sp

    th, co = khaled2019.THM1, khaled2019.COR1
    at = th.total().subs(khaled2019.eta, co.definitions["eta"])
    assert sp.simplify(at - co.total()) == 0
    v = dict(M=4, T=400, H=10, L=2.0, D0=1.0, sigma_dif=0.5)
    assert co.conditions_hold(v) == {"H": True}
    assert th.conditions_hold(
        {
            **v,
            "eta": float(co.definitions["eta"].subs({khaled2019.M: 4, khaled2019.T: 400, khaled2019.L: 2.0})),
        }
    )["step"]


def test_corollary1_verdict_passes_control_fails_and_equals_the_plain_loop():
    """Corollary 1's engine form at its own step γ = √M/(4L√T) = 1/(2√5) (M = 4, L = 1, T = 5 ≥ M: H = 1 ≤
    √T/√M), x_0 = x* + 10e_1: the engine's measurement is Algorithm 1's, the bound is the printed
    8L‖x_0 − x*‖²/√(MT) + 3Mσ²H²/(2LT), and bound / 10 is violated (ratio 0.1117)."""
    _, v = khaled2019.verify()
    assert v.id == "published.khaled2019.cor1" and v.passed and v.inside_conditions
    assert v.negative_control is not None and not v.negative_control.passed
    x0 = X_STAR + np.array([10.0, 0.0])
    gamma = 1 / (2 * np.sqrt(5))
    assert v.measured == pytest.approx(local_gd(x0, 1, 5, gamma), rel=1e-9)
    sigma2 = float(np.mean(np.sum((HESS * (X_STAR - CENTERS)) ** 2, axis=1)))
    bound = 8 * 100.0 / np.sqrt(4 * 5) + 3 * 4 * sigma2 / (2 * 5)
    assert v.theoretical == pytest.approx(bound, rel=1e-12)
    assert 0.11 < v.measured / v.theoretical < 0.113
