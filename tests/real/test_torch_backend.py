"""Torch backend: cross-backend equivalence with the NumPy LR (same data, replayed schedule, σ = 0, float64),
the paper's models' shapes, and a minibatch run."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch backend needs PyTorch (pip install afltheory[torch])")

import afltheory as aft  # noqa: E402
from afltheory.algorithms import AFACD, AFACS, SCAFFOLD, AsySG, DynamicFedAvg, FedAvg, FedBuff, FedProx  # noqa: E402
from afltheory.anarchy import (  # noqa: E402
    Behaviour,
    BiasedArrivals,
    EventDriven,
    Replay,
    UniformArrivals,
    UniformDelay,
    UniformSteps,
)
from afltheory.compression import DIANA, BernoulliMask, ErrorFeedback, RandK, TopK  # noqa: E402
from afltheory.datasets import load_digits_federated  # noqa: E402
from afltheory.torch_backend import (  # noqa: E402
    CharLSTM,
    LogisticRegressionModel,
    PaperCNN,
    TorchTask,
    make_model,
    run,
)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def setup():
    ds = load_digits_federated(classes_per_worker=2, samples_per_worker=30, seed=1)
    prob = aft.problems.LogisticRegression.from_dataset(ds, l2=0.01)
    task = TorchTask.from_dataset(
        LogisticRegressionModel(64, 10), ds, dtype=torch.float64, device="cpu", l2=0.01
    )
    return ds, prob, task


ALGOS = [
    AFACD(1.0, 0.1),
    AFACS(1.0, 0.1),
    AFACS(1.0, 0.1, memory_init="zeros"),
    FedAvg(0.5, 0.1),
    FedBuff(0.5, 0.1),
    AsySG(1.0, 0.1),
    AFACD(1.0, 0.1, worker=FedProx(0.1)),
    AFACD(1.0, 0.1, worker=SCAFFOLD()),
    AFACS(1.0, 0.1, worker=SCAFFOLD()),
    # a step-size schedule in the round t and client weights (issue 25): the same per-round rule
    FedAvg(eta=1.0, eta_L="0.2/(1 + t)", weights=tuple(np.arange(1, 11) / 55.0)),
]


@pytest.mark.parametrize("algo", ALGOS, ids=lambda a: f"{type(a).__name__}-{type(a.worker).__name__}")
def test_torch_lr_matches_numpy_lr_on_replayed_schedule(setup, algo):
    ds, prob, task = setup
    beh = Behaviour(BiasedArrivals.paper(5), UniformDelay(4), UniformSteps(1, 4))
    sched = beh.sample(10, 2, 10, seed=7)
    np_tr = aft.simulate(prob, algo, Replay(sched), rounds=10, replicates=2, record_x=True)
    t_tr = run(task, algo, sched, rounds=10, replicates=2, record_x=True, eval_every=5, train_loss=True)
    assert np.abs(np_tr.x - t_tr.x).max() < 1e-6
    assert np.abs(np_tr.x[:, -1] - np_tr.x[:, 0]).max() > 1e-2  # the models actually moved
    np.testing.assert_allclose(t_tr.train_loss, np_tr.loss[:, t_tr.eval_rounds], atol=1e-9)
    np_acc = prob.accuracy(np_tr.x[:, t_tr.eval_rounds], ds.X_test, ds.y_test)
    np.testing.assert_allclose(t_tr.accuracy, np_acc)


def test_event_driven_schedule_and_minibatches(setup):
    ds, prob, _ = setup
    task = TorchTask.from_dataset(LogisticRegressionModel(64, 10), ds, batch_size=8, device="cpu")
    tr = run(task, AFACD(1.0, 0.1), EventDriven(5), rounds=20, replicates=2, seed=0, eval_every=10)
    assert tr.accuracy.shape == (2, 3) and tr.wall_clock.shape == (2, 21)
    assert np.all(tr.diverged_round == -1) and tr.accuracy[:, -1].mean() > tr.accuracy[:, 0].mean()
    tr2 = run(task, AFACD(1.0, 0.1), EventDriven(5), rounds=20, replicates=2, seed=0, eval_every=10)
    np.testing.assert_array_equal(tr.x_final, tr2.x_final)  # reproducible


def test_paper_models_shapes():
    assert PaperCNN(1, 8, 10)(torch.zeros(2, 1, 8, 8)).shape == (2, 10)
    cnn = PaperCNN(3, 32, 10)
    assert cnn(torch.zeros(2, 3, 32, 32)).shape == (2, 10)
    assert cnn.classifier[0].in_features == 64 * 5 * 5  # Table 1 on CIFAR: 5×5×64 → 512
    lstm = CharLSTM()
    assert lstm(torch.zeros(3, 80, dtype=torch.long)).shape == (3, 80)
    assert lstm.embed.embedding_dim == 8 and lstm.lstm.hidden_size == 100 and lstm.lstm.num_layers == 2


def test_cnn_trains_a_few_rounds_on_digits():
    ds = load_digits_federated(classes_per_worker=5, samples_per_worker=50, images=True)
    task = TorchTask.from_dataset(make_model("cnn", ds, seed=0), ds, batch_size=16, device="cpu")
    beh = Behaviour(UniformArrivals(5), UniformDelay(4), UniformSteps.paper(1))
    tr = run(task, AFACD(1.0, 0.05), beh, rounds=6, replicates=1, seed=0, eval_every=3)
    assert np.isfinite(tr.test_loss).all() and tr.test_loss[0, -1] < tr.test_loss[0, 0]


def test_unsupported_inputs(setup):
    _, _, task = setup
    with pytest.raises(ValueError, match="x0 has shape"):
        run(task, AFACD(1.0, 0.1), Behaviour(UniformArrivals(2)), rounds=1, x0=np.zeros(3))
    with pytest.raises(ValueError, match="model="):
        make_model("rnn", load_digits_federated())


@pytest.mark.parametrize("comp", [RandK(8), ErrorFeedback(TopK(16)), DIANA(BernoulliMask(0.5))], ids=repr)
@pytest.mark.parametrize("Alg", [AFACD, AFACS])
def test_torch_compression_matches_numpy(setup, comp, Alg):
    """Compressed updates: the torch backend draws replicate r's compression randomness as simulate does
    (same stream and block position), so replayed runs agree to float64 precision; bits agree exactly."""
    ds, prob, task = setup
    algo = Alg(1.0, 0.1, compressor=comp)
    sched = Behaviour(UniformArrivals(3), UniformDelay(2), UniformSteps(1, 3)).sample(6, 2, 10, seed=7)
    np_tr = aft.simulate(prob, algo, Replay(sched), rounds=6, replicates=2, seed=4, record_x=True)
    t_tr = run(task, algo, sched, rounds=6, replicates=2, seed=4, record_x=True, eval_every=3)
    assert np.abs(np_tr.x - t_tr.x).max() < 1e-6
    assert np.array_equal(np_tr.bits, t_tr.bits)


def test_divergence_is_reported_never_nan(setup):
    """η_L = 1e30 (issue 28): the run is reported diverged (the parameters leave 1e12·max(1, ‖x_0‖) before
    they overflow), losses are +inf and accuracy 0 from that round on — no NaN anywhere."""
    ds, prob, task = setup
    t_tr = run(
        task,
        AFACD(1.0, 1e30),
        Behaviour(UniformArrivals(3)),
        rounds=6,
        replicates=2,
        eval_every=1,
        train_loss=True,
        record_x=True,
    )
    assert (t_tr.diverged_round >= 0).all()
    for a in (t_tr.accuracy, t_tr.test_loss, t_tr.train_loss, t_tr.x_final, t_tr.x):
        assert not np.isnan(a).any()
    late = t_tr.eval_rounds >= t_tr.diverged_round[0]
    assert np.isinf(t_tr.test_loss[0, late]).all() and (t_tr.accuracy[0, late] == 0).all()


@pytest.mark.parametrize(
    "algo",
    [DynamicFedAvg(mu=0.3, epochs=(1, 2, 3, 1, 2, 3, 1, 2, 3, 4)), DynamicFedAvg(mu=0.3, epochs=2)],
    ids=["per-agent-epochs", "equal-epochs"],
)
def test_torch_dynamic_fedavg_matches_numpy(setup, algo):
    """Dynamic FedAvg with per-agent epochs E_k (K_i = E_k, η_i = μ/E_k, read through the rule's one
    ``local_view``) on torch equals ``simulate`` on the replayed schedule (deterministic, same tolerance
    as the plain rules: 1e-6 on x); the schedule's own K is overridden by the epochs in both backends."""
    ds, prob, task = setup
    sched = Behaviour(UniformArrivals(4), UniformDelay(2), UniformSteps(1, 4)).sample(8, 2, 10, seed=7)
    np_tr = aft.simulate(prob, algo, Replay(sched), rounds=8, replicates=2, record_x=True)
    t_tr = run(task, algo, sched, rounds=8, replicates=2, record_x=True, eval_every=4, train_loss=True)
    E = np.asarray(algo.fixed_local_steps)
    assert np.array_equal(t_tr.schedule.local_steps, np.broadcast_to(E, (10,))[sched.workers])
    assert np.abs(np_tr.x - t_tr.x).max() < 1e-6
    assert np.abs(np_tr.x[:, -1] - np_tr.x[:, 0]).max() > 1e-2  # the models actually moved
    np.testing.assert_allclose(t_tr.train_loss, np_tr.loss[:, t_tr.eval_rounds], atol=1e-9)


def test_torch_per_agent_epochs_control_differs(setup):
    """Control that can fail: per-agent epochs (1, …, 4) are not the equal-epochs run (E = 2), so the
    agreement above is not an artefact of ignoring the epochs."""
    _, _, task = setup
    sched = Behaviour(UniformArrivals(4), UniformDelay(2)).sample(8, 1, 10, seed=7)
    a = run(
        task, DynamicFedAvg(mu=0.3, epochs=(1, 2, 3, 1, 2, 3, 1, 2, 3, 4)), sched, rounds=8, record_x=True
    )
    b = run(task, DynamicFedAvg(mu=0.3, epochs=2), sched, rounds=8, record_x=True)
    assert np.abs(a.x - b.x).max() > 1e-3


def test_torch_bad_per_worker_tuple_length(setup):
    """A per-worker tuple of the wrong length is a ValueError naming the parameter (not a numpy broadcast
    error), both for DynamicFedAvg's epochs and for any rule's ``fixed_local_steps``."""
    _, _, task = setup
    beh = Behaviour(UniformArrivals(2))
    with pytest.raises(ValueError, match=r"epochs has 3 entries; expected one per agent \(num_workers=10\)"):
        run(task, DynamicFedAvg(mu=0.3, epochs=(1, 2, 3)), beh, rounds=1)

    class PerWorker(AFACD):
        fixed_local_steps = (1, 2, 3)

    with pytest.raises(ValueError, match=r"fixed_local_steps has 3 per-worker local-step counts.*=10"):
        run(task, PerWorker(1.0, 0.1), beh, rounds=1)
