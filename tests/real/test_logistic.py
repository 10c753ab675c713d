"""LogisticRegression: certified L (gradient Lipschitz on drawn points), the minibatch σ_L bound (exactly and
empirically), σ_G, gradients vs finite differences, and a run through ``simulate``."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import afltheory as aft
from afltheory.datasets import load_digits_federated
from afltheory.problems import LogisticRegression
from afltheory.problems.logistic import accuracy


def _problem(batch_size=8, l2=0.0, seed=0, M=4, C=3, d=5, n=(12, 20)):
    rng = np.random.default_rng(seed)
    Xs, ys = [], []
    for i in range(M):
        k = int(rng.integers(*n))
        Xs.append(rng.normal(size=(k, d)) * (1 + i))
        ys.append(rng.integers(0, C, k))
    return LogisticRegression(Xs, ys, C, batch_size=batch_size, l2=l2)


def test_gradients_match_finite_differences():
    p = _problem(l2=0.1)
    rng = np.random.default_rng(1)
    x = rng.normal(size=p.dim)
    for i in range(p.num_workers):
        g = p.local_grad(x, i)
        fd = np.array(
            [(p.local_value(x + 1e-6 * e, i) - p.local_value(x - 1e-6 * e, i)) / 2e-6 for e in np.eye(p.dim)]
        )
        np.testing.assert_allclose(g, fd, atol=1e-6)
    np.testing.assert_allclose(p.grad(x), p.local_grad(x, np.arange(4)).mean(0), atol=1e-12)
    np.testing.assert_allclose(p.value(x), p.local_value(x, np.arange(4)).mean(), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.sampled_from([0.1, 1.0, 10.0]))
def test_certified_L_holds_on_drawn_points(seed, scale):
    p = _problem(l2=0.05)
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(2, 16, p.dim)) * scale
    i = rng.integers(0, p.num_workers, 16)
    lhs = np.linalg.norm(p.local_grad(x, i) - p.local_grad(y, i), axis=-1)
    rhs = p.L_per_worker[i] * np.linalg.norm(x - y, axis=-1)
    assert np.all(lhs <= rhs * (1 + 1e-9))
    assert np.all(p.L_per_worker <= p.constants.L)


def test_L_is_not_vacuous():
    # along the worst direction near x = 0 the Hessian attains a sizeable fraction of the bound
    p = _problem(l2=0.0)
    x = np.zeros(p.dim)
    ratios = []
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.normal(size=p.dim)
        v /= np.linalg.norm(v)
        ratios.append(np.linalg.norm(p.local_grad(x + 1e-4 * v, 3) - p.local_grad(x, 3)) / 1e-4)
    assert 0.05 * p.L_per_worker[3] < max(ratios) <= p.L_per_worker[3]


@pytest.mark.parametrize("B", [1, 4, 8])
def test_sigma_L_bound_exact_and_empirical(B):
    p = _problem(batch_size=B)
    rng = np.random.default_rng(B)
    for x in rng.normal(size=(3, p.dim)) * 2:
        for i in range(p.num_workers):
            exact = p.exact_minibatch_variance(x, i)
            assert exact <= p.sigma_L_per_worker[i] ** 2 * (1 + 1e-12) <= p.constants.sigma_L**2 * (1 + 1e-12)
        # the sampler is unbiased and its variance is the finite-population formula
        i = 1
        n_draws = 4000
        g = p.stochastic_grad(np.broadcast_to(x, (n_draws, p.dim)), np.full(n_draws, i), rng)
        dev = g - p.local_grad(x, i)
        se = np.linalg.norm(dev.mean(0))
        assert se < 6 * np.sqrt(p.exact_minibatch_variance(x, i) / n_draws) + 1e-12
        emp = np.mean(np.sum(dev**2, axis=-1))
        exact = p.exact_minibatch_variance(x, i)
        assert abs(emp - exact) < 0.15 * exact + 1e-12
        assert emp <= p.constants.sigma_L**2 * 1.15


def test_full_batch_has_no_noise_and_sigma_G_holds():
    p = _problem(batch_size=None, l2=0.1)
    assert p.constants.sigma_L == 0.0
    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, p.dim)) * 5
    np.testing.assert_array_equal(p.stochastic_grad(x, 2, rng), p.local_grad(x, 2))
    dev = p.local_grad(x[:, None, :], np.arange(p.num_workers)) - p.grad(x)[:, None, :]
    assert np.sqrt(np.sum(dev**2, -1)).max() <= p.constants.sigma_G
    assert p.constants.certified["L"] == "upper" and p.constants.certified["f_star"] == "lower"


def test_accuracy_helper_and_simulate_runs():
    ds = load_digits_federated(classes_per_worker=5, samples_per_worker=50)
    p = LogisticRegression.from_dataset(ds, batch_size=16)
    beh = aft.anarchy.Behaviour(
        aft.anarchy.UniformArrivals(5), aft.anarchy.UniformDelay(4), aft.anarchy.UniformSteps.paper(2)
    )
    tr = aft.simulate(p, aft.algorithms.AFACD(1.0, 0.1), beh, rounds=30, replicates=3, seed=0, record_x=True)
    acc = p.accuracy(tr.x, ds.X_test, ds.y_test)
    assert acc.shape == (3, 31)
    assert np.allclose(acc[:, 0], np.mean(ds.y_test == 0))  # the zero model predicts class 0
    assert acc[:, -1].mean() > 0.6 and np.all(tr.loss[:, -1] < tr.loss[:, 0])
    np.testing.assert_allclose(accuracy(tr.x_final, ds.X_test, ds.y_test), acc[:, -1])


def test_bad_input():
    with pytest.raises(ValueError, match="labels must lie"):
        LogisticRegression([np.zeros((3, 2))], [np.array([0, 1, 5])], num_classes=3)
    with pytest.raises(ValueError, match="batch_size"):
        LogisticRegression([np.zeros((3, 2))], [np.array([0, 1, 1])], batch_size=0)
    with pytest.raises(ValueError, match="same number of columns"):
        LogisticRegression([np.zeros((3, 2)), np.zeros((3, 3))], [np.array([0, 1, 1])] * 2)
