"""Replicate r is bit-identical whatever the replicate count (issue 19): on every engine path (one-step,
collapsed, step by step with mixed K, stateful worker rule) and every problem family. Deterministic (fixed
seeds); equality is exact (assert_array_equal), not a tolerance."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory.problems import (
    DriftingQuadratic,
    HeterogeneousCurvatureQuadratic,
    HeterogeneousQuadratic,
    LowerBoundPair,
    NonconvexSinusoidal,
)

from ..real.test_logistic import _problem as logistic_problem

FAMILIES = {
    "quadratic-diag": lambda: HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, seed=1),
    # the issue's reproducer: a dense Hessian (collapsed path rotates the noise; one-step does not)
    "quadratic-dense": lambda: HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, hessian="dense"),
    "quadratic-dense-d40": lambda: HeterogeneousQuadratic(
        dim=40, num_workers=8, sigma_L=0.5, hessian="dense"
    ),
    "quadratic-finite-sum": lambda: HeterogeneousQuadratic.finite_sum(dim=5, num_workers=8, sigma_L=0.5),
    "curvature-diag": lambda: HeterogeneousCurvatureQuadratic(dim=5, num_workers=8, sigma_L=0.5, seed=1),
    "curvature-dense": lambda: HeterogeneousCurvatureQuadratic(
        dim=5, num_workers=8, sigma_L=0.5, seed=1, hessian="dense"
    ),
    "nonconvex": lambda: NonconvexSinusoidal(dim=5, num_workers=8, sigma_L=0.5, seed=1),
    "lower-bound-pair": lambda: LowerBoundPair(),
    "logistic-minibatch": lambda: logistic_problem(M=8),
    "drifting": lambda: DriftingQuadratic.from_problem(
        HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, seed=1), 0.05
    ),
}
# (local steps, algorithm, collapse): the engine path each one exercises
PATHS = {
    "one-step": (an.ConstantSteps(1), lambda: al.AFACD(0.5, 0.05), None),
    "collapsed-mixed-K": (an.UniformSteps(1, 4), lambda: al.AFACS(0.5, 0.05), None),
    "step-by-step-mixed-K": (an.UniformSteps(1, 4), lambda: al.FedAvg(0.5, 0.05), False),
    "stateful-worker": (an.UniformSteps(1, 3), lambda: al.AFACD(0.5, 0.05, worker=al.SCAFFOLD()), None),
}


def _run(family, path, R):
    steps, algo, collapse = PATHS[path]
    p = FAMILIES[family]()
    M = min(3, (p.base if isinstance(p, DriftingQuadratic) else p).num_workers)
    beh = an.Behaviour(an.UniformArrivals(M), an.UniformDelay(2), steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return aft.simulate(p, algo(), beh, rounds=8, replicates=R, seed=3, collapse=collapse, record_x=True)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_replicate_r_does_not_depend_on_the_replicate_count(family, path):
    big = _run(family, path, 70)  # one full noise block and a partial one
    for R in (1, 2):
        small = _run(family, path, R)
        for what in ("grad_norm_sq", "loss", "x_final", "x", "tracking_error"):
            a, b = getattr(small, what), getattr(big, what)
            if a is not None:
                np.testing.assert_array_equal(a, b[:R], err_msg=f"{what} with replicates={R}")


def test_the_issue_reproducer_dense_quadratic():
    """Issue 19: replicate 0 of HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, hessian="dense")
    under AFACD(1, .05) differed by 0.0109 between replicates=1 and 2 (one-step vs collapsed noise)."""
    p = HeterogeneousQuadratic(dim=5, num_workers=8, sigma_L=0.5, hessian="dense")
    beh = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(2), an.UniformSteps(1, 3))
    one = aft.simulate(p, al.AFACD(1, 0.05), beh, rounds=30, replicates=1, seed=0)
    two = aft.simulate(p, al.AFACD(1, 0.05), beh, rounds=30, replicates=2, seed=0)
    assert one.config["collapsed"] and two.config["collapsed"]
    np.testing.assert_array_equal(one.grad_norm_sq[0], two.grad_norm_sq[0])
    np.testing.assert_array_equal(one.x_final[0], two.x_final[0])
