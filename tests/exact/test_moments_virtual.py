"""The virtual averaged model at every local step in exact moments (issue #39 item 2):
``moments(..., record_virtual=True)`` gives E‖∇f(x̄_{t,k})‖², x̄_{t,k} = (1/m) Σ_{i∈M_t} w_i y_{i,k}, the
expectation of ``simulate(record_virtual=True)``'s ``Trace.virtual_grad_norm_sq``.

Hand-derived case: f(x) = ½x² (one worker, d = 1), FedAvg η = 1, η_L = ½, K = 2, no noise, x_0 = 1: the
local iterates of round t are x_t, x_t/2 and x_{t+1} = x_t/4, so x̄_{t,0} = 4^(−t), x̄_{t,1} = 4^(−t)/2 and
E‖∇f(x̄_{t,k})‖² = 16^(−t) (1, ¼).
"""

from __future__ import annotations

import numpy as np
import pytest

from afltheory import simulate
from afltheory.algorithms import AFACS, FedAvg, FedProx
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals, UniformDelay, UniformSteps
from afltheory.exact import moments
from afltheory.exact.law import ExactUnavailable
from afltheory.problems import HeterogeneousQuadratic


def test_pinned_one_worker():
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(1), centers=np.zeros((1, 1)), sigma_L=0.0)
    beh = Behaviour(UniformArrivals(1), local_steps=ConstantSteps(2))
    ex = moments(p, FedAvg(eta=1.0, eta_L=0.5), beh, rounds=3, x0=np.ones(1), record_virtual=True)
    want = np.array([[1, 0.25], [1 / 16, 1 / 64], [1 / 256, 1 / 1024]])
    np.testing.assert_allclose(ex.virtual_grad_norm_sq, want, rtol=1e-12)
    tr = simulate(p, FedAvg(eta=1.0, eta_L=0.5), beh, rounds=3, x0=np.ones(1), record_virtual=True)
    np.testing.assert_allclose(tr.virtual_grad_norm_sq[0], want, rtol=1e-12)


@pytest.mark.parametrize(
    "rule,arrivals",
    [
        (FedAvg(eta=1.0, eta_L=0.1, weights=(0.1, 0.2, 0.3, 0.4)), UniformArrivals(4)),  # client weights
        (FedAvg(eta=0.8, eta_L=0.15, worker=FedProx(0.5)), UniformArrivals(2)),  # partial, FedProx
        (AFACS(eta=1.0, eta_L=0.1), UniformArrivals(2)),  # memory slots: x̄ uses the arrivals only
    ],
    ids=["fedavg-weights", "fedprox-partial", "afacs-partial"],
)
def test_exact_matches_monte_carlo(rule, arrivals):
    """Exact within 4 standard errors of simulate's mean at every (t, k) (R = 4000, seed 13: a false alarm
    has probability < 1e-4 per point), heterogeneous centres, σ_L = 1, K = 3."""
    C = np.random.default_rng(5).normal(0, 1.0, (4, 2))
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0, 0.4]), centers=C, sigma_L=1.0)
    beh = Behaviour(arrivals, local_steps=ConstantSteps(3))
    x0 = np.array([1.5, -1.0])
    ex = moments(p, rule, beh, rounds=8, x0=x0, record_virtual=True).virtual_grad_norm_sq
    R = 4000
    v = simulate(
        p, rule, beh, rounds=8, replicates=R, seed=13, x0=x0, record_virtual=True
    ).virtual_grad_norm_sq
    se = v.std(axis=0) / np.sqrt(R)
    assert ex.shape == (8, 3)
    assert np.all(np.abs(v.mean(axis=0) - ex) <= 4 * se + 1e-12)


def test_refusals_name_record_virtual():
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(2), centers=np.zeros((2, 2)), sigma_L=1.0)
    for beh, why in [
        (Behaviour(UniformArrivals(1), UniformDelay(2), ConstantSteps(2)), "delays"),
        (Behaviour(UniformArrivals(2), local_steps=UniformSteps(1, 3)), "local-step count varies"),
    ]:
        with pytest.raises(ExactUnavailable, match=f"record_virtual=True .*{why}"):
            moments(p, FedAvg(eta=1.0, eta_L=0.1), beh, rounds=3, record_virtual=True)
