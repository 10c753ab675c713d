"""adversary.generic evaluates every candidate through the one dispatcher (``claims.measure``): the exact
engine first, a fallback ONLY on its declared refusals (``claims.REFUSALS``); an engine's TypeError or
ValueError is a bug that fails the run (no silent fallback)."""

from __future__ import annotations

import pytest

import afltheory.exact as exact_pkg
from afltheory.adversary.generic import evaluate, search_claim
from afltheory.algorithms import FedAvg
from afltheory.algorithms.base import UnsupportedRule
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals
from afltheory.claims import Assumptions, Claim, Delta, L, T, eta, eta_L, sigma_L
from afltheory.problems import HeterogeneousQuadratic
from afltheory.strategies import Instance

GD = Claim(
    id="dispatch.gd",
    title="GD-like FedAvg, full participation, K = 1",
    assumptions=Assumptions(participation="full", max_delay=0, max_local_steps=1),
    rule=FedAvg,
    eta=1.0,
    bound={"transient": 2 * Delta / (eta * eta_L * T), "noise": eta * eta_L * L * sigma_L**2},
    conditions={"step": eta * eta_L * L <= 1},
)


def _inst(sigma=0.0):
    p = HeterogeneousQuadratic(dim=1, num_workers=2, L=1.0, mu=1.0, sigma_L=sigma, sigma_G=0.0, seed=0)
    beh = Behaviour(UniformArrivals(2), NoDelay(), ConstantSteps(1))
    return Instance(p, beh, FedAvg(1.0, 0.5), 8, 2, 0, 1, p.constants.x_star + 1.0)


def _raising(exc):
    def moments(*a, **k):
        raise exc

    return moments


def test_exact_engine_type_error_fails_the_search(monkeypatch):
    monkeypatch.setattr(exact_pkg, "moments", _raising(TypeError("a bug in the engine")))
    with pytest.raises(TypeError, match="a bug in the engine"):
        search_claim(GD, budget=3, seed=0)
    with pytest.raises(TypeError):
        evaluate(GD, _inst())


def test_exact_engine_value_error_fails_too(monkeypatch):
    monkeypatch.setattr(exact_pkg, "moments", _raising(ValueError("bad shape")))
    with pytest.raises(ValueError, match="bad shape"):
        evaluate(GD, _inst())


def test_a_declared_refusal_falls_back_to_the_deterministic_simulation(monkeypatch):
    inst = _inst()
    v0, how0 = evaluate(GD, inst)
    assert how0 == "exact"
    monkeypatch.setattr(exact_pkg, "moments", _raising(UnsupportedRule("not representable")))
    v1, how1 = evaluate(GD, inst)
    assert how1 == "simulated"
    # 1-D, H = 1, step 1/2, no noise: x_t − x* = 2^(−t); (1/8) Σ_{t<8} 4^(−t) = (1 − 4^(−8)) / 6
    want = (1 - 4.0**-8) / 6
    assert v0.measured == pytest.approx(want, rel=1e-12) and v1.measured == pytest.approx(want, rel=1e-12)


def test_a_refused_random_candidate_is_refused_not_guessed(monkeypatch):
    monkeypatch.setattr(exact_pkg, "moments", _raising(UnsupportedRule("not representable")))
    v, how = evaluate(GD, _inst(sigma=1.0))  # noisy round-mode candidate: neither exact nor deterministic
    assert v is None and how == "refused"
