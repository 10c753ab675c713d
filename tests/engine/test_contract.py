"""One contract suite over the registry of algorithms × problem families (docs/DESIGN.md principle 8): same
seed ⇒ identical trace; finite values and correct shapes; oracle counts match the schedule; the
certified-region flag fires exactly when iterates leave the ball."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory.problems import FAMILIES, HeterogeneousCurvatureQuadratic, LogisticRegression


def make_problem(name):
    cls = FAMILIES[name]
    if name == "lower_bound_pair":
        return cls(G=1.0, sigma_L=0.3)
    kw = dict(dim=3, num_workers=4, L=1.0, sigma_L=0.3, sigma_G=0.5, seed=1)
    if name == "nonconvex_sinusoidal":
        kw["mu"] = -0.3
    else:
        kw["mu"] = 0.2
    if name == "curvature_quadratic":
        kw["radius"] = 100.0
    return cls(**kw)


def logistic_problem():
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((12, 3)) for _ in range(3)]
    y = [rng.integers(0, 3, 12) for _ in range(3)]
    return LogisticRegression(X, y, num_classes=3, batch_size=4)


PROBLEMS = {**{n: (lambda n=n: make_problem(n)) for n in FAMILIES}, "logistic": logistic_problem}
ALGOS = {n: cls for n, cls in al.ALGORITHMS.items()}
WORKERS = {"SGD": al.SGD(), "FedProx": al.FedProx(0.1), "SCAFFOLD": al.SCAFFOLD()}


@pytest.mark.parametrize("worker", sorted(WORKERS))
@pytest.mark.parametrize("algo", sorted(ALGOS))
@pytest.mark.parametrize("prob", sorted(PROBLEMS))
def test_contract(prob, algo, worker):
    p = PROBLEMS[prob]()
    alg = ALGOS[algo](eta=0.5, eta_L=0.05, worker=WORKERS[worker])
    m = min(2, p.num_workers)
    beh = an.Behaviour(an.UniformArrivals(m), an.UniformDelay(2), an.UniformSteps(1, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = aft.simulate(p, alg, beh, rounds=8, replicates=3, seed=5)
    b = aft.simulate(p, alg, beh, rounds=8, replicates=3, seed=5)
    assert a.grad_norm_sq.shape == a.loss.shape == (3, 9)
    np.testing.assert_array_equal(a.grad_norm_sq, b.grad_norm_sq)
    np.testing.assert_array_equal(a.x_final, b.x_final)
    assert np.all(np.isfinite(a.grad_norm_sq)) and np.all(np.isfinite(a.loss))
    assert np.all(a.loss >= p.constants.f_star - 1e-9)
    K = a.schedule.local_steps.sum(axis=(1, 2))
    if alg.needs_warm_start:
        K = K + a.schedule.init_local_steps.sum(axis=1)
    np.testing.assert_array_equal(a.oracle_calls, K)


def test_certified_region_flag_fires_when_iterates_leave_the_ball():
    p = HeterogeneousCurvatureQuadratic(dim=3, num_workers=4, L=1.0, mu=0.2, sigma_G=0.5, radius=0.5, seed=0)
    beh = an.Behaviour(an.UniformArrivals(4))
    far = p.constants.x_star + 3.0
    with pytest.warns(aft.engine.RegionWarning, match="certified region"):
        tr = aft.simulate(p, al.AFACD(1.0, 0.1), beh, rounds=3, x0=far)
    assert tr.left_region.tolist() == [0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr = aft.simulate(p, al.AFACD(1.0, 0.1), beh, rounds=50, x0=p.constants.x_star + 0.1)
    assert tr.left_region.tolist() == [-1]
