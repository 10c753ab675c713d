"""The generic adversary's deterministic-simulation fallback (afltheory.adversary.generic): a candidate the
exact engine refuses is evaluated by ``simulate`` only when it is deterministic, and then equals an
independent plain loop; a noisy candidate of such a rule is refused (counted), never read as the base rule.
Deterministic throughout (σ = 0 runs, hypothesis with a fixed seed): no confidence level involved."""

from __future__ import annotations

import numpy as np

from afltheory.adversary.generic import _simulated, deterministic, search_claim
from afltheory.algorithms.published import SCAFFOLDServer
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals, UniformDelay, UniformSteps
from afltheory.problems import HeterogeneousQuadratic
from afltheory.published.registry import engine_forms
from afltheory.strategies import Instance

from .reference_loops import Quadratics, scaffold_loop

CLAIMS = engine_forms()


def _inst(sigma_L=0.0, beh=None, m=3):
    p = HeterogeneousQuadratic(dim=2, num_workers=3, L=1.0, mu=0.3, sigma_L=sigma_L, sigma_G=1.0, seed=7)
    beh = beh or Behaviour(UniformArrivals(m), UniformDelay(0), ConstantSteps(2))
    alg = SCAFFOLDServer(1.0, 1 / (81 * 2))
    return Instance(p, beh, alg, 9, m, 0, 2, p.constants.x_star + np.array([1.0, -0.5]))


def test_deterministic_means_one_run_is_exact():
    assert deterministic(_inst())
    assert not deterministic(_inst(sigma_L=0.5))  # noise
    assert not deterministic(_inst(m=2))  # partial participation
    assert not deterministic(_inst(beh=Behaviour(UniformArrivals(3), UniformDelay(1), ConstantSteps(2))))
    assert not deterministic(_inst(beh=Behaviour(UniformArrivals(3), UniformDelay(0), UniformSteps(1, 3))))


def test_simulated_value_equals_the_plain_scaffold_loop():
    claim = CLAIMS["published.scaffold2020.thm3"]
    inst = _inst()
    v = _simulated(claim, inst)
    p = inst.problem
    Q = Quadratics(p.dense_hessians(), p.centers)
    xs = scaffold_loop(Q, inst.x0, 2, inst.rounds, 1 / 162, 1.0, rng=None)
    np.testing.assert_allclose(v.measured, Q.gap(xs[-1]), rtol=1e-10)


def test_search_uses_the_fallback_and_counts_refusals():
    w = search_claim(CLAIMS["published.scaffold2020.thm3"], budget=10, seed=0)
    assert w.simulated >= 1 and w.simulated + w.refused <= w.evaluations == 10
    assert w.instance is not None and deterministic(w.instance)
    w = search_claim(CLAIMS["published.khaled2020.heterogeneous"], budget=10, seed=0)
    assert w.simulated >= 1 and w.refused >= 1  # noisy candidates of an averaged-iterate claim are refused
    assert np.isfinite(w.ratio) and 0 <= w.ratio < 1
