"""The one measurement dispatcher (issue 38 item 3): ``claims.measure(claim, problem, behaviour, rounds,
engine=...)`` runs ONE engine per call; "auto" falls back from exact to Monte Carlo only on the engines'
declared refusals, and the verdict's method names the refusal."""

import numpy as np
import pytest

import afltheory as aft
import afltheory.engine
import afltheory.exact
from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import Claim, Measurement, QuantityUnavailable, measure, verify
from afltheory.exact import ExactUnavailable
from afltheory.problems import HeterogeneousQuadratic, NonconvexSinusoidal

BEH = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(2))


def _quad(sigma_L=0.5):
    C = np.random.default_rng(3).normal(0, 1.0, (4, 3))
    return HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.array([1.0, 0.5, 0.25]), centers=C, sigma_L=sigma_L
    )


CLAIM = Claim(id="toy.measure", title="toy", bound={"b": 10.0}, rule=FedAvg, eta=1.0, eta_L=0.2)


def test_auto_uses_the_exact_engine_alone_when_it_applies(monkeypatch):
    p = _quad()

    def no_mc(*a, **k):
        raise AssertionError("simulate must not run when the exact engine measures")

    monkeypatch.setattr(afltheory.engine, "simulate", no_mc)
    m = measure(CLAIM, p, BEH, 20)
    assert isinstance(m, Measurement) and m.exact and m.method == "exact moments" and m.refused_by == ()
    mom = aft.exact.moments(p, FedAvg(1.0, 0.2), BEH, 20)
    assert m.value == pytest.approx(float(np.mean(mom.grad_norm_sq[:20])), rel=1e-13)
    monkeypatch.undo()
    # the exact record's schedule is the draw simulate (same seed, same replicates) acts on
    tr = aft.simulate(p, FedAvg(1.0, 0.2), BEH, rounds=20, replicates=8, seed=0)
    np.testing.assert_array_equal(m.record.schedule.workers, tr.schedule.workers)
    np.testing.assert_array_equal(m.record.schedule.local_steps, tr.schedule.local_steps)
    np.testing.assert_array_equal(m.record.x0, tr.x0)


def test_exact_and_monte_carlo_agree():
    # R = 400 replicates, fixed seed: the Monte Carlo mean lies within 4 standard errors of the exact value
    p = _quad()
    ex = measure(CLAIM, p, BEH, 20, engine="exact")
    mc = measure(CLAIM, p, BEH, 20, engine="mc", replicates=400, seed=1)
    assert not mc.exact and mc.samples.shape == (400,) and mc.method == "monte-carlo (R=400)"
    assert abs(mc.samples.mean() - ex.value) <= 4 * mc.samples.std(ddof=1) / np.sqrt(400)


def test_a_bug_in_the_exact_engine_fails_the_verdict_instead_of_falling_back(monkeypatch):
    def broken(*a, **k):
        raise TypeError("a bug inside the exact engine")

    monkeypatch.setattr(afltheory.exact, "moments", broken)
    with pytest.raises(TypeError, match="a bug inside the exact engine"):
        verify(CLAIM, _quad(), BEH, rounds=20)
    with pytest.raises(TypeError, match="a bug inside"):
        measure(CLAIM, _quad(), BEH, 20)

    def value_bug(*a, **k):
        raise ValueError("another bug")

    monkeypatch.setattr(afltheory.exact, "moments", value_bug)
    with pytest.raises(ValueError, match="another bug"):
        verify(CLAIM, _quad(), BEH, rounds=20)


def test_a_declared_refusal_falls_back_and_the_verdict_says_why(monkeypatch):
    def refuses(*a, **k):
        raise ExactUnavailable("the state is too large for this test")

    monkeypatch.setattr(afltheory.exact, "moments", refuses)
    v = verify(CLAIM, _quad(), BEH, rounds=20, replicates=4)
    assert v.method.startswith("monte-carlo (R=4); exact moments refused: ExactUnavailable: the state is too")
    m = measure(CLAIM, _quad(), BEH, 20, replicates=4)
    assert m.refused_by == (("exact moments", "ExactUnavailable: the state is too large for this test"),)
    with pytest.raises(QuantityUnavailable, match="engine='exact'.*too large"):
        measure(CLAIM, _quad(), BEH, 20, engine="exact")


def test_a_problem_without_exact_model_is_a_refusal_named_in_the_method():
    p = NonconvexSinusoidal(dim=2, num_workers=4, seed=0)
    v = verify(CLAIM, p, BEH, rounds=10, replicates=4)
    assert "exact moments refused: NoExactModel" in v.method and "not linear-Gaussian" in v.method
    # a quantity the exact engine cannot give is a refusal too
    gap = Claim(
        id="toy.gap", title="toy", bound=10.0, measured="avg_iterate_gap", rule=FedAvg, eta=1, eta_L=0.2
    )
    m = measure(gap, _quad(), BEH, 10, replicates=4)
    assert not m.exact and m.refused_by[0][1].startswith("QuantityUnavailable: exact moments cannot compute")


def test_bad_engine_is_named():
    with pytest.raises(ValueError, match=r"engine='fast' must be one of \('auto', 'exact', 'mc'\)"):
        measure(CLAIM, _quad(), BEH, 10, engine="fast")
