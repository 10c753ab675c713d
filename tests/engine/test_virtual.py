"""The virtual averaged model at every local step (issue 39 item 4): ``simulate(record_virtual=True)``
against plain numpy loops, its refusals, and the tutorial's quantity."""

from pathlib import Path

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.problems import HeterogeneousQuadratic

ROOT = Path(__file__).resolve().parents[2]


def _problem(sigma_L=0.0, weights=None, centers=None):
    C = np.random.default_rng(3).normal(0, 1.0, (4, 3)) if centers is None else centers
    return HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.array([1.0, 0.5, 0.25]), centers=C, sigma_L=sigma_L, weights=weights
    )


def _plain_virtual(p, eta, eta_L, K, rounds, weights=None):
    """Full participation, K local GD steps: ‖∇f(x̄_{t,k})‖² with x̄_{t,k} = Σ_i p_i y_{i,k} before step k."""
    M = p.num_workers
    w = np.full(M, 1.0 / M) if weights is None else np.asarray(weights)
    x, out = p.default_x0().astype(float), np.empty((rounds, K))
    for t in range(rounds):
        ys = [x.copy() for _ in range(M)]
        for k in range(K):
            xb = sum(w[i] * ys[i] for i in range(M))
            g = sum(w[i] * p.local_grad(xb, i) for i in range(M))
            out[t, k] = g @ g
            ys = [y - eta_L * p.local_grad(y, i) for i, y in enumerate(ys)]
        x = x + eta * sum(w[i] * (ys[i] - x) for i in range(M))
    return out


@pytest.mark.parametrize("K,weights", [(1, None), (3, None), (3, (0.1, 0.2, 0.3, 0.4))])
def test_virtual_model_equals_a_plain_loop(K, weights):
    p = _problem(weights=weights)
    beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(K))
    tr = aft.simulate(p, FedAvg(0.8, 0.1, weights=weights), beh, rounds=6, replicates=2, record_virtual=True)
    want = _plain_virtual(p, 0.8, 0.1, K, 6, weights)
    for r in range(2):
        np.testing.assert_allclose(tr.virtual_grad_norm_sq[r], want, rtol=1e-12)
    # the virtual model at k = 0 is the server model: the same ‖∇f(x_t)‖² the trace records per round
    np.testing.assert_allclose(tr.virtual_grad_norm_sq[0, :, 0], tr.grad_norm_sq[0, :6], rtol=1e-12)


def test_recording_does_not_change_the_run_and_refusals_are_named():
    p = _problem(sigma_L=0.5)
    beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(2))
    a = aft.simulate(p, FedAvg(1.0, 0.1), beh, rounds=5, replicates=3, seed=1, collapse=False)
    b = aft.simulate(p, FedAvg(1.0, 0.1), beh, rounds=5, replicates=3, seed=1, record_virtual=True)
    np.testing.assert_array_equal(a.loss, b.loss)  # the step path, same draws
    assert a.virtual_grad_norm_sq is None and b.virtual_grad_norm_sq.shape == (3, 5, 2)
    with pytest.raises(ValueError, match="record_virtual=True is unavailable here: collapse=True"):
        aft.simulate(p, FedAvg(1.0, 0.1), beh, rounds=5, record_virtual=True, collapse=True)
    from afltheory.anarchy import UniformSteps

    varying = Behaviour(UniformArrivals(4), local_steps=UniformSteps(1, 3))
    with pytest.raises(ValueError, match="number of local steps varies"):
        aft.simulate(p, FedAvg(1.0, 0.1), varying, rounds=5, replicates=2, record_virtual=True)


def test_tutorial_quantity_agrees_with_a_plain_numpy_monte_carlo():
    # docs/tutorial/local_sgd_virtual.py's instance at T = 16: simulate's Monte Carlo mean of the virtual
    # time average and an independent plain-numpy Monte Carlo (its own RNG), R = 300 each, fixed seeds:
    # they agree within 4 standard errors of the difference
    text = (ROOT / "docs" / "tutorial" / "local_sgd_virtual.py").read_text()
    assert "centers=np.zeros((4, 3))" in text and "ConstantSteps(4)" in text  # the instance rebuilt below
    p = _problem(sigma_L=1.0, centers=np.zeros((4, 3)))
    beh, T, K, R = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(4)), 16, 4, 300
    eta_L = 1 / (2 * float(p.constants.L) * np.sqrt(T))
    tr = aft.simulate(p, FedAvg(1.0, eta_L), beh, rounds=T, replicates=R, seed=5, record_virtual=True)
    ours = tr.virtual_grad_norm_sq.reshape(R, -1).mean(axis=1)
    rng = np.random.default_rng(11)
    h, sig, M = np.array([1.0, 0.5, 0.25]), 1.0, 4
    plain = np.empty(R)
    for r in range(R):
        x, acc = p.default_x0().astype(float), 0.0
        for _ in range(T):
            Y = np.repeat(x[None], M, axis=0)
            for _ in range(K):
                xb = Y.mean(axis=0)
                acc += float(np.sum((h * xb) ** 2))  # ∇f(x) = h ⊙ x (centers 0)
                Y = Y - eta_L * (h * Y + sig / np.sqrt(3) * rng.standard_normal(Y.shape))
            x = Y.mean(axis=0)
        plain[r] = acc / (T * K)
    se = np.sqrt(ours.var(ddof=1) / R + plain.var(ddof=1) / R)
    assert abs(ours.mean() - plain.mean()) <= 4 * se, (ours.mean(), plain.mean(), se)
