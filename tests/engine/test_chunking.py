"""The engine's chunked local steps (issue 8): processing replicates in chunks of whole noise blocks, with
reused work arrays, must not change a single number — each block's noise stream is consumed in step order
whatever the chunk size, the replicate count or the path (step by step, one-step, collapsed, stateful worker
rules, problems with their own stochastic gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import afltheory as aft
import afltheory.engine as engine
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory.problems import (
    GaussianNoise,
    HeterogeneousCurvatureQuadratic,
    HeterogeneousQuadratic,
    NonconvexSinusoidal,
)

from ..real.test_logistic import _problem as logistic_problem

BEH = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(2), an.UniformSteps(1, 4))
CASES = {
    "sgd-diag": (
        lambda: HeterogeneousQuadratic(dim=3, num_workers=7, sigma_L=0.7, seed=1),
        al.AFACD(0.5, 0.1),
    ),
    "sgd-dense-per-worker": (
        lambda: HeterogeneousCurvatureQuadratic(dim=3, num_workers=7, sigma_L=0.7, seed=1, hessian="dense"),
        al.FedBuff(0.5, 0.1),
    ),
    "fedprox": (
        lambda: HeterogeneousQuadratic(dim=3, num_workers=7, sigma_L=0.7, seed=1),
        al.AFACD(0.5, 0.1, worker=al.FedProx(0.1)),
    ),
    "scaffold-afacs": (
        lambda: HeterogeneousQuadratic(dim=3, num_workers=7, sigma_L=0.7, seed=1),
        al.AFACS(0.5, 0.1, worker=al.SCAFFOLD()),
    ),
    "nonconvex": (
        lambda: NonconvexSinusoidal(dim=3, num_workers=7, sigma_L=0.7, seed=1),
        al.FedAvg(0.3, 0.1),
    ),
    "logistic-minibatch": (lambda: logistic_problem(M=7), al.AFACD(0.5, 0.1)),
}


def _run(case, R, chunk_values, collapse, monkeypatch):
    make, algo = CASES[case]
    monkeypatch.setattr(engine, "_CHUNK_VALUES", chunk_values)
    return aft.simulate(make(), algo, BEH, rounds=12, replicates=R, seed=5, collapse=collapse)


@pytest.mark.parametrize("case", sorted(CASES))
def test_chunk_size_and_replicate_count_change_nothing(case, monkeypatch):
    # 150 replicates = two full blocks and a partial one; chunk of 1 block vs everything in one chunk
    collapse = None if case == "sgd-diag" else False
    small = _run(case, 150, 1, collapse, monkeypatch)
    big = _run(case, 150, 1 << 30, collapse, monkeypatch)
    np.testing.assert_array_equal(small.grad_norm_sq, big.grad_norm_sq)
    np.testing.assert_array_equal(small.x_final, big.x_final)
    fewer = _run(case, 70, 1, collapse, monkeypatch)
    # replicate r does not depend on R (also for problems drawing their own minibatches: tests/engine/
    # test_replicates.py covers every family and path)
    np.testing.assert_array_equal(fewer.grad_norm_sq, big.grad_norm_sq[:70])


def test_collapsed_path_is_chunk_invariant_with_mixed_K(monkeypatch):
    small = _run("sgd-diag", 150, 1, True, monkeypatch)
    big = _run("sgd-diag", 150, 1 << 30, True, monkeypatch)
    assert small.config["collapsed"]
    np.testing.assert_array_equal(small.grad_norm_sq, big.grad_norm_sq)


def test_gaussian_noise_scaled_draw_is_the_scaled_standard_normal():
    """sample_into(…, scale) = scale·σ/√d·z with z the generator's standard normals (the engine's fast path
    draws z per block and scales once per chunk: the same numbers)."""
    noise, d = GaussianNoise(1.7), 5
    out = np.empty((4, 3, d))
    noise.sample_into(np.random.Generator(np.random.Philox(9)), np.zeros((4, 3), int), out, 0.25)
    z = np.random.Generator(np.random.Philox(9)).standard_normal((4, 3, d))
    np.testing.assert_array_equal(out, z * (0.25 * 1.7 / np.sqrt(d)))
    assert noise.standard_normal_scale(d) == 1.7 / np.sqrt(d)
