"""Li et al. 2020 — the test of ``afltheory.published.li2020``'s own checks beyond the engine agreement
(tests/published/test_engine_agreement.py): Theorem 4's lower bound on a closed-form FedAvg fixed point,
against a plain loop of FedAvg rounds and the hand-derived constant."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.published import SELF_CHECKED, li2020


def fedavg_rounds(h, c, eta, E, rounds):
    """Plain FedAvg: every client runs E full-gradient steps from w, the server averages (uniform)."""
    w = np.zeros(h.shape[1])
    for _ in range(rounds):
        x = np.tile(w, (len(h), 1))
        for _ in range(E):
            x = x - eta * h * (x - c)
        w = x.mean(0)
    return w


def test_fixed_point_is_the_limit_of_plain_fedavg_rounds():
    h, c = np.array(li2020.THM4_HESSIANS), np.array(li2020.THM4_CENTRES)
    wt, ws = li2020.fixed_point(h, c, 0.1, 3)
    assert np.allclose(fedavg_rounds(h, c, 0.1, 3, 3000), wt, rtol=0, atol=1e-12)
    assert np.allclose(ws, [5 / 6, 5 / 6])
    assert np.linalg.norm(wt - ws) > 1e-3  # E > 1: biased
    wt1, _ = li2020.fixed_point(h, c, 0.1, 1)
    assert np.allclose(wt1, ws, atol=1e-14)  # E = 1: FedAvg is gradient descent on f, unbiased


@pytest.mark.parametrize("E", [2, 3, 5])
def test_the_bias_constant_is_one_fifteenth_by_hand(E):
    """1 − (1 − ηh)^E = Eηh (1 − (E−1)ηh/2) + O(η²): per coordinate w̃ − w* = −(E−1)η/18 + O(η²), so
    ‖w̃* − w*‖ / ((E − 1)η‖w*‖) → (√2/18)/(√2·5/6) = 1/15 as η → 0 — the Ω constant of this witness."""
    h, c = np.array(li2020.THM4_HESSIANS), np.array(li2020.THM4_CENTRES)
    eta = 1e-5
    wt, ws = li2020.fixed_point(h, c, eta, E)
    assert np.linalg.norm(wt - ws) / ((E - 1) * eta * np.linalg.norm(ws)) == pytest.approx(1 / 15, rel=1e-3)


def test_thm4_verdict_passes_and_its_control_fails():
    assert li2020 in SELF_CHECKED
    (v,) = [v for v in li2020.verify() if v.id == "published.li2020.thm4"]
    assert v.passed and v.inside_conditions
    assert v.measured == pytest.approx(1.0, abs=li2020.THM4_TOL)
    assert v.details["slope_E"] == pytest.approx(1.0, abs=li2020.THM4_TOL)
    assert v.negative_control is not None and not v.negative_control.passed


def test_a_fixed_point_decaying_like_eta_squared_would_fail_the_lower_bound():
    """The criterion can fail: a bias O(η²) (exponent 2) is not Ω(η)."""
    from afltheory.checks.criteria import AtMost

    assert not AtMost(tol=li2020.THM4_TOL).judge(2.0, 1.0)


def test_bad_input_is_refused_with_the_parameter_named():
    h, c = np.array(li2020.THM4_HESSIANS), np.array(li2020.THM4_CENTRES)
    with pytest.raises(ValueError, match="eta="):
        li2020.fixed_point(h, c, 2.0, 2)
    with pytest.raises(ValueError, match="hessians"):
        li2020.fixed_point(h[:1], c, 0.1, 2)
