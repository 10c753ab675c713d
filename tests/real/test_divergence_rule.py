"""One divergence rule for every Monte Carlo loop (issue 38): ``afltheory._numerics.DivergenceRule``, read by
``simulate`` (x, ‖∇f‖² and f every round) and the torch runner (x every round, f at its evaluation rounds)."""

import warnings

import numpy as np
import pytest

from afltheory._numerics import DIVERGENCE_THRESHOLD, DivergenceRule


def test_rule_hand_computed():
    """threshold 10, x_0 = (3, 4) (‖x_0‖ = 5): x limit 50; ‖∇f(x_0)‖² = (2, NaN): limit 10·max(1, 2) = 20
    (the NaN start is left out of the scale); f(x_0) = (−3, 0.5): |f − f_0| limits 30 and 10."""
    rule = DivergenceRule(
        np.array([[3.0, 4.0], [0.0, 0.0]]), np.array([2.0, np.nan]), np.array([-3.0, 0.5]), 10
    )
    assert rule.grad_limit == 20.0 and list(rule.x_limit) == [50.0, 10.0]
    ok_g, ok_f = np.array([20.0, 20.0]), np.array([27.0, 10.5])
    x = np.array([[30.0, 40.0], [6.0, 8.0]])  # norms 50 and 10: on the limits
    assert not rule(x, ok_g, ok_f).any()
    assert list(rule(np.array([[30.0, 40.1], [6.0, 8.0]]), ok_g, ok_f)) == [True, False]
    assert list(rule(x, np.array([20.5, 20.0]), ok_f)) == [True, False]
    assert list(rule(x, ok_g, np.array([27.0, 10.6]))) == [False, True]
    assert list(rule(x, np.array([np.nan, 1.0]), np.array([1.0, np.inf]))) == [True, True]
    assert list(rule(np.array([[np.nan, 0.0], [np.inf, 0.0]]), ok_g, ok_f)) == [True, True]
    # a loop that records only x (no ∇f, no f) is judged on x alone; a round without f on the others
    only_x = DivergenceRule(np.array([3.0, 4.0]))
    assert only_x.grad_limit is None and only_x.x_limit[0] == 5 * DIVERGENCE_THRESHOLD
    assert not only_x(np.array([3e12, 4e12]))[0] and only_x(np.array([3e12, 4.1e12]))[0]
    assert not rule(x, ok_g, None).any()


def test_engine_and_torch_runner_flag_the_same_diverging_run_at_the_same_round():
    """Logistic regression (digits, l2 = 0.01) with η_L = 1000 on one replayed schedule: the l2 term grows
    geometrically (|1 − η_L l2| = 9 per step) and f crosses 1e12·max(1, |f_0|) first. simulate and the torch
    runner (float64, training loss every round) read it through the same rule: the same round per replicate
    (11 and 11, pinned). The torch runner's former x-only rule (‖x‖ > 1e12 max(1, ‖x_0‖)) flags later
    (22 and 21): the rounds agree because the rule is one."""
    torch = pytest.importorskip("torch", reason="the torch backend needs PyTorch")
    import afltheory as aft
    from afltheory.algorithms import AFACD
    from afltheory.anarchy import Behaviour, Replay, UniformArrivals, UniformDelay
    from afltheory.datasets import load_digits_federated
    from afltheory.torch_backend import LogisticRegressionModel, TorchTask, run

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ds = load_digits_federated(classes_per_worker=2, samples_per_worker=30, seed=1)
        prob = aft.problems.LogisticRegression.from_dataset(ds, l2=0.01)
        task = TorchTask.from_dataset(
            LogisticRegressionModel(64, 10), ds, dtype=torch.float64, device="cpu", l2=0.01
        )
        sched = Behaviour(UniformArrivals(3), UniformDelay(2)).sample(25, 2, 10, seed=3)
        x0 = task.initial_params().numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr = aft.simulate(prob, AFACD(1.0, 1000.0), Replay(sched), rounds=25, replicates=2, x0=x0)
        tt = run(task, AFACD(1.0, 1000.0), sched, rounds=25, replicates=2, train_loss=True, x0=x0)
        x_only = run(task, AFACD(1.0, 1000.0), sched, rounds=25, replicates=2, train_loss=False, x0=x0)
    finally:
        torch.set_num_threads(n)
    assert list(tr.divergence.round) == [11, 11]
    assert list(tt.diverged_round) == list(tr.divergence.round)
    assert list(x_only.diverged_round) == [22, 21]
