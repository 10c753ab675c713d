"""exact.moments under a step-size schedule builds one ExactSystem per distinct round rule; the systems of one
run share the round-independent parts (linear model, round law, RAM reading): the values are identical to
systems built from scratch every round, and the round law is built once."""

from __future__ import annotations

import importlib

import numpy as np

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, FixedDelay, UniformArrivals
from afltheory.exact import ExactSystem, moments
from afltheory.problems import HeterogeneousQuadratic

em = importlib.import_module("afltheory.exact.moments")  # the module (the package exports the function)


def _instance():
    p = HeterogeneousQuadratic(dim=3, num_workers=4, L=1.0, mu=0.2, sigma_L=0.7, sigma_G=0.5, seed=3)
    alg = FedAvg(eta="3/(2 + t)", eta_L="0.2/(1 + t/3)", weights=(0.4, 0.3, 0.2, 0.1))
    beh = Behaviour(UniformArrivals(2), FixedDelay(1), ConstantSteps(2))
    return p, alg, beh


def test_scheduled_moments_equal_fresh_systems_every_round():
    p, alg, beh = _instance()
    T = 12
    x0 = p.default_x0()
    got = moments(p, alg, beh, T, x0=x0)
    sys0 = ExactSystem(p, alg.at_round(0), beh)
    S = sys0.initial(x0)
    gn, loss, msd = [sys0.observe(S)[0]], [sys0.observe(S)[1]], [sys0.msd(S)]
    for t in range(T):
        S = ExactSystem(p, alg.at_round(t), beh).step(S, t)  # a new system from scratch every round
        g, f, _ = sys0.observe(S)
        gn.append(g), loss.append(f), msd.append(sys0.msd(S))
    for a, b in ((got.grad_norm_sq, gn), (got.loss, loss), (got.msd, msd)):
        np.testing.assert_allclose(a, b, rtol=1e-15, atol=0)
    assert np.ptp(np.diff(got.grad_norm_sq)) > 0  # the schedule changes the rounds (not a constant map)


def test_round_law_is_built_once_per_scheduled_run(monkeypatch):
    p, alg, beh = _instance()
    calls = []
    real = em.round_law
    monkeypatch.setattr(em, "round_law", lambda *a, **k: calls.append(1) or real(*a, **k))
    moments(p, alg, beh, 10)
    assert len(calls) == 1
    calls.clear()
    ExactSystem(p, alg.at_round(0), beh)
    ExactSystem(p, alg.at_round(1), beh)  # systems built outside moments share nothing
    assert len(calls) == 2
