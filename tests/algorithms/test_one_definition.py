"""One definition per algorithm: a new stateless server rule is one small class (this file defines it) and
every backend runs it — ``simulate``, the exact engine and the PEP (which read its hooks) and the torch
backend (which calls them) — with no engine edit. Also: a rule overriding an imperative hook is refused by
the exact engine and the PEP."""

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import afltheory as aft
from afltheory.algorithms import AFACD, SGD, FedAvg, NoState, ServerRule
from afltheory.anarchy import Behaviour, UniformArrivals, UniformDelay, UniformSteps
from afltheory.exact import moments, zscores
from afltheory.problems import HeterogeneousQuadratic


@dataclass(frozen=True)
class PolyStaleAvg(ServerRule):
    """A new rule, defined only here: x_{t+1} = x_t − η η_L (1/m) Σ G_i / (1 + τ_i) (staleness-discounted
    AFA-CD, no K factor)."""

    eta: float
    eta_L: float
    worker: object = field(default_factory=SGD)
    compressor: object = None

    def staleness_weight(self, tau):
        return 1.0 / (1.0 + np.asarray(tau, dtype=float))


@dataclass(frozen=True)
class Opaque(AFACD):
    """Overrides the imperative ``aggregate``: not representable by the exact engine."""

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - self.step_size * G[:, 0], state


PROB = HeterogeneousQuadratic(dim=3, num_workers=5, L=1.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=3)
BEH = Behaviour(UniformArrivals(2), delays=UniformDelay(2), local_steps=UniformSteps(1, 3))


def test_pinned_step():
    """One step from x = 0, G = (1, 3), τ = (0, 3), γ = 1.5: −γ (1/1 + 3/4)/2 = −1.3125 (hand-derived)."""
    rule = PolyStaleAvg(3.0, 0.5)
    state = rule.init(1, 4, 1)
    assert isinstance(state, NoState)
    x, _ = rule.aggregate(
        state,
        np.zeros((1, 1)),
        np.array([[[1.0], [3.0]]]),
        np.array([[0, 2]]),
        np.array([[1, 2]]),
        np.array([[0, 3]]),
        4,
    )
    assert x[0, 0] == pytest.approx(-1.3125, rel=1e-15)


def test_new_rule_simulate_matches_exact():
    """Monte Carlo (R = 4000, seed 5) against exact moments of the same new rule: |z| < 5 at every round (a
    false alarm over 8 rounds has probability < 1e-5); and the rule differs from AFA-CD (the weights are
    used)."""
    rule = PolyStaleAvg(1.5, 0.2)
    ex = moments(PROB, rule, BEH, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = aft.simulate(PROB, rule, BEH, rounds=8, replicates=4000, seed=5)
    assert np.all(np.abs(zscores(tr, ex)[1:]) < 5)
    assert not np.allclose(ex.grad_norm_sq[2:], moments(PROB, AFACD(1.5, 0.2), BEH, 8).grad_norm_sq[2:])


def test_exact_refuses_an_overridden_imperative_hook():
    with pytest.raises(TypeError, match="overrides aggregate"):
        moments(PROB, Opaque(1.0, 0.2), BEH, 3)


def test_fedavg_is_afacd_times_K_through_the_hooks():
    """FedAvg's only difference is ``local_steps_weight = K``: with constant K it equals AFA-CD(η·K)
    exactly."""
    beh = Behaviour(UniformArrivals(2), local_steps=UniformSteps(3, 3))
    a = moments(PROB, FedAvg(0.5, 0.2), beh, 6).grad_norm_sq
    b = moments(PROB, AFACD(1.5, 0.2), beh, 6).grad_norm_sq
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_new_rule_runs_in_the_torch_backend():
    """The torch backend calls the rule's hooks: float64 logistic regression, full batch, replayed schedule —
    equal to simulate of the same new rule to 1e-9."""
    torch = pytest.importorskip("torch")
    from afltheory.datasets import load_digits_federated
    from afltheory.torch_backend import LogisticRegressionModel, TorchTask, run

    ds = load_digits_federated(classes_per_worker=2, samples_per_worker=20, seed=1)
    prob = aft.problems.LogisticRegression.from_dataset(ds, l2=0.01)
    task = TorchTask.from_dataset(
        LogisticRegressionModel(64, 10), ds, dtype=torch.float64, device="cpu", l2=0.01
    )
    sched = Behaviour(UniformArrivals(3), UniformDelay(2), UniformSteps(1, 3)).sample(6, 1, 10, seed=4)
    rule = PolyStaleAvg(1.0, 0.1)
    x0 = task.initial_params().numpy().copy()
    np_tr = aft.simulate(prob, rule, aft.anarchy.Replay(sched), rounds=6, replicates=1, x0=x0)
    t_tr = run(task, rule, sched, rounds=6, replicates=1, x0=x0)
    np.testing.assert_allclose(t_tr.x_final, np_tr.x_final, rtol=1e-9, atol=1e-12)


def test_new_rule_runs_in_the_pep():
    """The PEP skeleton reads the same hooks: the new rule's worst case on a 3-round schedule is certified,
    its skeleton carries the weights 1/(1 + τ), and the recovered instance replayed through the rule's own
    ``aggregate`` reproduces the PEP's primal value (rel. 1e-6). A rule overriding ``aggregate`` is refused.
    Deterministic (interior-point SDP)."""
    pytest.importorskip("PEPit")
    from afltheory.algorithms import UnsupportedRule
    from afltheory.pep import replay, worst_case

    sched = BEH.sample(3, 1, 5, seed=1)
    C = {"L": 1.0, "sigma_G": 0.3}
    r = worst_case(PolyStaleAvg(1.0, 0.2), sched, C, delta=1.0, heterogeneity="server")
    assert r.certified
    np.testing.assert_allclose(r.skeleton.weights, 1.0 / (1.0 + np.asarray(sched.delays[0])))
    assert replay(r)[2] == pytest.approx(r.primal, rel=1e-6)
    with pytest.raises(UnsupportedRule, match="overrides aggregate"):
        worst_case(Opaque(1.0, 0.2), sched, C, delta=1.0)
