"""Heavy-ball server momentum in the exact engine (issue #39 item 3): u_t = β u_{t−1} + s_t,
x_{t+1} = x_t − u_t (``ServerMomentum``, η constant) with the buffer u in the stacked moment vector.

Hand-derived case: f(x) = ½x² (one worker, d = 1), FedAvg η = 1, η_L = ½, one local step, β = ½, x_0 = 1, no
noise: s_t = x_t/2, so u_0 = ½, x_1 = ½; u_1 = ¼ + ¼ = ½, x_2 = 0; u_2 = ¼, x_3 = −¼; u_3 = ⅛ − ⅛ = 0,
x_4 = −¼; u_4 = −⅛, x_5 = −⅛ — E‖∇f(x_t)‖² = x_t² = 1, ¼, 0, 1/16, 1/16, 1/64.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from afltheory import simulate
from afltheory.algorithms import AFACD, FedAvg
from afltheory.algorithms.base import UnsupportedRule
from afltheory.algorithms.schedules import StepSize, t
from afltheory.algorithms.server_opt import ServerAdam, ServerMomentum, with_server_optimizer
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals, UniformDelay
from afltheory.exact import moments
from afltheory.problems import HeterogeneousQuadratic


def test_pinned_heavy_ball():
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(1), centers=np.zeros((1, 1)), sigma_L=0.0)
    rule = with_server_optimizer(FedAvg(eta=1.0, eta_L=0.5), ServerMomentum(0.5))
    beh = Behaviour(UniformArrivals(1), local_steps=ConstantSteps(1))
    ex = moments(p, rule, beh, rounds=5, x0=np.ones(1))
    want = [1, 0.25, 0, 1 / 16, 1 / 16, 1 / 64]
    np.testing.assert_allclose(ex.grad_norm_sq, want, rtol=1e-12, atol=1e-15)
    tr = simulate(p, rule, beh, rounds=5, x0=np.ones(1))
    np.testing.assert_allclose(tr.grad_norm_sq[0], want, rtol=1e-12, atol=1e-15)
    # without momentum: x_t = 2^(−t), another trajectory (the buffer is not ignored)
    plain = moments(p, FedAvg(eta=1.0, eta_L=0.5), beh, rounds=5, x0=np.ones(1)).grad_norm_sq
    np.testing.assert_allclose(plain, 4.0 ** -np.arange(6), rtol=1e-12)


@pytest.mark.parametrize(
    "rule,beh",
    [
        # partial participation (2 of 4), random delays ≤ 2, two local steps: every term of the recursion
        (AFACD(eta=1.0, eta_L=0.1), Behaviour(UniformArrivals(2), UniformDelay(2), ConstantSteps(2))),
        # client weights and a step-size schedule in η_L (η constant), full participation
        (
            FedAvg(eta=1.0, eta_L=StepSize(0.2 / (1 + t / 10)), weights=(0.1, 0.2, 0.3, 0.4)),
            Behaviour(UniformArrivals(4), local_steps=ConstantSteps(3)),
        ),
    ],
    ids=["afacd-partial-delays", "fedavg-weights-schedule"],
)
def test_exact_matches_monte_carlo(rule, beh):
    """Exact E‖∇f(x_t)‖² within 4 standard errors of simulate's mean at every round (R = 4000, seed 11; a
    false alarm has probability < 1e-4 per point), and the momentum changes the values (> 10 standard errors
    from the rule without it at some round)."""
    C = np.random.default_rng(2).normal(0, 1.0, (4, 3))
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0, 0.5, 2.0]), centers=C, sigma_L=1.0)
    mom = with_server_optimizer(rule, ServerMomentum(0.6))
    x0 = np.array([1.0, -2.0, 0.5])
    ex = moments(p, mom, beh, rounds=15, x0=x0).grad_norm_sq
    R = 4000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = simulate(p, mom, beh, rounds=15, replicates=R, seed=11, x0=x0).grad_norm_sq
    se = g.std(axis=0) / np.sqrt(R)
    assert np.all(np.abs(g.mean(axis=0) - ex)[1:] <= 4 * se[1:])
    base = moments(p, rule, beh, rounds=15, x0=x0).grad_norm_sq
    assert np.max(np.abs(base - ex)[1:] / se[1:]) > 10


def test_refusals_name_the_reason():
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(2), centers=np.zeros((2, 2)), sigma_L=1.0)
    beh = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(1))
    with pytest.raises(UnsupportedRule, match="ServerAdam.*nonlinear in the updates"):
        moments(p, with_server_optimizer(FedAvg(eta=1.0, eta_L=0.1), ServerAdam()), beh, rounds=3)
    sched = with_server_optimizer(FedAvg(eta=StepSize(1 / (1 + t)), eta_L=0.1), ServerMomentum(0.5))
    with pytest.raises(UnsupportedRule, match="scheduled server step eta"):
        moments(p, sched, beh, rounds=3)
    from afltheory.exact.moments import steady_state

    with pytest.raises(UnsupportedRule, match="ServerMomentum.*does not"):
        steady_state(p, with_server_optimizer(FedAvg(eta=1.0, eta_L=0.1), ServerMomentum(0.5)), beh)
