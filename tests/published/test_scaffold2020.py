"""SCAFFOLD (Karimireddy et al. 2020) — the test of ``afltheory.published.scaffold2020``'s own checks beyond
the reading tests (tests/published/test_scaffold_reading.py): Theorem II's lower bound on FedAvg's best-tuned
error, its closed form against a plain loop, the verdict and its control."""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.published import SELF_CHECKED
from afltheory.published import scaffold2020 as sc

H, C = np.array(sc.THM2_HESSIANS), np.array(sc.THM2_CENTRES)


def fedavg_error(eta, K, R):
    """Plain FedAvg from x⁰ = 0: K local full-gradient steps per client, the server averages."""
    x = np.zeros(2)
    for _ in range(R):
        y = np.tile(x, (len(H), 1))
        for _ in range(K):
            y = y - eta * H * (y - C)
        x = y.mean(0)
    hf = H.mean(0)
    xs = (H * C).mean(0) / hf
    return 0.5 * float(np.sum(hf * (x - xs) ** 2))


@pytest.mark.parametrize("eta", [0.3, 0.05, 0.001])
def test_closed_form_equals_the_plain_loop(eta):
    err, best = sc.fedavg_best_error(H, C, 2, 150, [eta])
    assert best == eta
    assert err == pytest.approx(fedavg_error(eta, 2, 150), rel=1e-9, abs=1e-15)


def test_best_error_is_the_grid_minimum_and_positive():
    """K = 2 > 1: FedAvg is biased at every η > 0 (its limit is not x*), so even the best error is > 0; K = 1
    is gradient descent, whose best error over the grid falls much lower."""
    etas = np.logspace(-6, np.log10(0.99), 300)
    e2, b2 = sc.fedavg_best_error(H, C, 2, 1000, etas)
    assert e2 == pytest.approx(min(fedavg_error(b2, 2, 1000), e2), rel=1e-9)
    assert e2 > 0
    e1, _ = sc.fedavg_best_error(H, C, 1, 1000, etas)
    assert e1 < 1e-3 * e2


def test_thm2_verdict_passes_and_its_control_fails():
    assert sc in SELF_CHECKED
    (v,) = [v for v in sc.verify() if v.id == "published.scaffold2020.thm2_lower"]
    assert v.passed and v.inside_conditions
    assert -2.0 <= v.measured < -1.5  # R^(−2) up to the log factor of the best step
    assert v.negative_control is not None and not v.negative_control.passed


def test_bad_input_is_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="etas"):
        sc.fedavg_best_error(H, C, 2, 10, [1.5])
    with pytest.raises(ValueError, match="K="):
        sc.fedavg_best_error(H, C, 0, 10, [0.1])
