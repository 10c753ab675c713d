"""The mutants issue 26 appended to the catalogue (afltheory/mutants/catalogue.py) reproduce the bug they
name, pinned against the independent plain loops (tests/published/reference_loops.py): deterministic runs
(σ = 0, full participation, fixed per-worker local steps, no delays) agree to 1e-12 — no confidence level
involved. Each mutant is also killed by the published check named (docs/published.md, kill-matrix column)."""

from __future__ import annotations

import numpy as np

import afltheory as aft
from afltheory import anarchy as an
from afltheory import mutants
from afltheory.algorithms.published import FedNova, SCAFFOLDServer
from afltheory.problems import HeterogeneousCurvatureQuadratic

from .reference_loops import Quadratics, fedavg_taus_loop, fednova_loop

TAUS = (1, 2, 4, 3)


def _problem():
    return HeterogeneousCurvatureQuadratic(dim=3, num_workers=4, seed=2)


def _run(p, alg, beh, rounds, x0):
    return aft.simulate(
        p, alg, beh, rounds=rounds, replicates=2, seed=4, x0=x0, record_x=True, collapse=False
    )


def test_fednova_no_normalization_is_fedavg_with_per_client_steps():
    """Under ``fednova.no_normalization`` FedNova runs the plain FedAvg loop with per-client τ_i (each
    arrival weighted by its own K_i); without it, the plain FedNova loop."""
    p = _problem()
    Q = Quadratics(p.dense_hessians(), p.centers)
    beh = an.Behaviour(an.UniformArrivals(4), local_steps=an.PerWorkerSteps(TAUS))
    x0 = p.constants.x_star + 1.0
    alg = FedNova(0.8, 0.05)
    ok = _run(p, alg, beh, 12, x0).x[0]
    np.testing.assert_allclose(
        ok, np.array(fednova_loop(Q, x0, TAUS, 12, 0.05, 0.8, None)), rtol=1e-12, atol=1e-12
    )
    with mutants.injected("fednova.no_normalization"):
        bad = _run(p, alg, beh, 12, x0).x[0]
    ref = np.array(fedavg_taus_loop(Q, x0, TAUS, 12, 0.05, 0.8, None))
    np.testing.assert_allclose(bad, ref, rtol=1e-12, atol=1e-12)
    assert not np.allclose(bad, ok, rtol=1e-6)


def test_scaffold_stale_control_is_fedavg():
    """Under ``scaffold.stale_control`` SCAFFOLD (control variates never updated, c = c_i = 0) runs the plain
    FedAvg loop with the same K local steps."""
    p = _problem()
    Q = Quadratics(p.dense_hessians(), p.centers)
    K = 3
    beh = an.Behaviour(an.UniformArrivals(4), local_steps=an.ConstantSteps(K))
    x0 = p.constants.x_star + 1.0
    alg = SCAFFOLDServer(1.0, 0.05)
    ok = _run(p, alg, beh, 12, x0).x[0]
    with mutants.injected("scaffold.stale_control"):
        bad = _run(p, alg, beh, 12, x0).x[0]
    ref = np.array(fedavg_taus_loop(Q, x0, (K,) * 4, 12, 0.05, 1.0, None))
    np.testing.assert_allclose(bad, ref, rtol=1e-12, atol=1e-12)
    assert not np.allclose(bad, ok, rtol=1e-6)
