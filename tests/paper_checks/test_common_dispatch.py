"""paper_checks._common reads runs through the one engine dispatcher (``claims.verify.run_engines``, issue 38
item 3): exact when it applies, Monte Carlo only on the engines' declared refusals, and a bug in the exact
engine (TypeError, ValueError) fails the check instead of quietly becoming a Monte Carlo answer."""

import numpy as np
import pytest

import afltheory as aft
import afltheory.exact
from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.exact import ExactUnavailable
from afltheory.problems import HeterogeneousQuadratic, NonconvexSinusoidal
from paper_checks._common import exact_moments, expectation

BEH = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(2))
ALGO = FedAvg(1.0, 0.2)


def _quad():
    C = np.random.default_rng(3).normal(0, 1.0, (4, 3))
    return HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0, 0.5, 0.25]), centers=C, sigma_L=0.5)


def test_exact_when_it_applies_monte_carlo_when_asked_bit_for_bit():
    p = _quad()
    ex = expectation(p, ALGO, BEH, 12, 4, 0)
    mom = aft.exact.moments(p, ALGO, BEH, 12)
    assert ex.exact and ex.method == "exact moments" and ex.refused_by == ()
    np.testing.assert_array_equal(ex.curve, mom.grad_norm_sq)
    assert ex.time_avg == float(np.mean(mom.grad_norm_sq[:12]))
    mc = expectation(p, ALGO, BEH, 12, 4, 5, prefer_exact=False)
    tr = aft.simulate(p, ALGO, BEH, rounds=12, replicates=4, seed=5)
    assert not mc.exact and mc.method == "monte-carlo (R=4)"
    np.testing.assert_array_equal(mc.curve, tr.grad_norm_sq.mean(axis=0))
    np.testing.assert_array_equal(mc.samples, tr.grad_norm_sq[:, :12].mean(axis=1))
    np.testing.assert_array_equal(exact_moments(p, ALGO, BEH, 12).grad_norm_sq, mom.grad_norm_sq)


@pytest.mark.parametrize("error", [TypeError, ValueError, NotImplementedError])
def test_a_bug_in_the_exact_engine_fails_instead_of_falling_back(monkeypatch, error):
    def broken(*a, **k):
        raise error("a bug inside the exact engine")

    monkeypatch.setattr(afltheory.exact, "moments", broken)
    with pytest.raises(error, match="a bug inside the exact engine"):
        expectation(_quad(), ALGO, BEH, 12, 4, 0)
    with pytest.raises(error, match="a bug inside the exact engine"):
        exact_moments(_quad(), ALGO, BEH, 12)


def test_a_declared_refusal_falls_back_and_says_why(monkeypatch):
    def refuses(*a, **k):
        raise ExactUnavailable("the state is too large for this test")

    monkeypatch.setattr(afltheory.exact, "moments", refuses)
    ex = expectation(_quad(), ALGO, BEH, 12, 4, 0)
    assert not ex.exact and ex.samples.shape == (4,)
    assert ex.refused_by == (("exact moments", "ExactUnavailable: the state is too large for this test"),)
    assert exact_moments(_quad(), ALGO, BEH, 12) is None


def test_a_problem_without_an_exact_model_is_a_refusal():
    p = NonconvexSinusoidal(dim=2, num_workers=4, seed=0)
    assert exact_moments(p, ALGO, BEH, 6) is None
    ex = expectation(p, ALGO, BEH, 6, 3, 0)
    assert not ex.exact and "NoExactModel" in ex.refused_by[0][1]
