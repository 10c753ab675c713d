"""Claims for every step (issue 39 item 3): ``eta=None`` / ``eta_L=None`` leave a step free inside the
claim's conditions; ``verify(..., steps=...)`` takes it or sweeps it."""

import numpy as np
import pytest

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import D0, Assumptions, Claim, L, T, eta_L, mu, verify
from afltheory.problems import HeterogeneousQuadratic

C = np.random.default_rng(3).normal(0, 1.0, (4, 3))
P = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0, 0.5, 0.25]), centers=C, sigma_L=0.0)
BEH = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(1))
X0 = P.constants.x_star + np.array([0.1, 0.0, 1.0])  # mostly along the μ = 0.25 direction: the bound is tight
# GD (FedAvg, K = 1, full participation, shared Hessian): ‖x_T − x*‖² ≤ (1 − η_L μ)^{2T} D0 for η_L ≤ 1/L
GD = Claim(
    id="gd.every_step",
    title="GD contracts for every step η_L ≤ 1/L",
    rule=FedAvg,
    eta=1,
    eta_L=None,
    measured="last_dist_sq",
    bound=(1 - eta_L * mu) ** (2 * T) * D0,
    conditions={"step": eta_L * L <= 1},
    assumptions=Assumptions(function="strongly_convex", participation="full", heterogeneity=None),
)


def test_one_step_and_a_sweep():
    v = verify(GD, P, BEH, rounds=10, x0=X0, steps={"eta_L": 0.5})
    assert v.passed and v.inside_conditions and v.method == "exact moments"
    # by hand: coordinates decay by (1 − 0.5 h)^(2·10): 0.1² · 0.5^20 + 1 · 0.875^20; bound (0.875)^20 · 1.01
    assert v.measured == pytest.approx(0.01 * 0.5**20 + 0.875**20, rel=1e-10)
    assert v.theoretical == pytest.approx(0.875**20 * 1.01, rel=1e-10)
    sw = verify(GD, P, BEH, rounds=10, x0=X0, steps={"eta_L": [0.2, 0.5, 1.0, 1.5]})
    assert sw.passed and "3 of 4 swept steps inside the conditions, 3 hold" in sw.notes
    assert "outside the conditions (not judged): eta_L=1.5" in sw.notes
    assert set(sw.details["steps"]) == {"eta_L=0.2", "eta_L=0.5", "eta_L=1"}


def test_a_false_claim_fails_at_some_step():
    # the rate (1 − 2 η_L μ)^{2T}: too fast; it fails at every swept step, the verdict names one
    fast = Claim(**{**GD.__dict__, "id": "gd.too_fast", "bound": (1 - 2 * eta_L * mu) ** (2 * T) * D0})
    sw = verify(fast, P, BEH, rounds=10, x0=X0, steps={"eta_L": [0.2, 0.5]})
    assert not sw.passed and "2 of 2 swept steps inside the conditions, 0 hold" in sw.notes


def test_bad_free_steps_are_one_line_errors():
    with pytest.raises(ValueError, match=r"steps\['eta'\]: claim 'gd.every_step' fixes eta=1"):
        verify(GD, P, BEH, rounds=5, steps={"eta": 0.5})
    loose = Claim(**{**GD.__dict__, "conditions": {}})
    with pytest.raises(
        ValueError, match=r"steps\['eta_L'\]: .* leaves eta_L free but no condition bounds it"
    ):
        verify(loose, P, BEH, rounds=5, steps={"eta_L": 0.5})
    with pytest.raises(ValueError, match=r"steps\['eta_L'\]=-1 must be a positive step"):
        verify(GD, P, BEH, rounds=5, steps={"eta_L": -1})
    with pytest.raises(ValueError, match="no swept step is inside"):
        verify(GD, P, BEH, rounds=5, steps={"eta_L": [2.0, 3.0]})
