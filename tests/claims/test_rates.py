"""Rates both ways (issue 39): ``rate={"T": s}`` is an upper rate (O(·): slope ≤ s + tol, one-sided) unless
the claim says ``rate_attained=True`` (Θ(·): two-sided)."""

import numpy as np
import pytest

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import Claim, verify_rate
from afltheory.claims.verify import _rate_judgement
from afltheory.problems import HeterogeneousQuadratic

PTS = [64.0, 256.0, 1024.0, 4096.0]


def _claim(**kw):
    return Claim(id="toy.rate", title="toy", bound=1, rate={"T": -0.5}, **kw)


def _samples(slope, R=16, noise=0.02, seed=0):
    """Per point R replicates of T^slope · (1 + noise·N(0,1)): a power law with Monte Carlo noise."""
    rng = np.random.default_rng(seed)
    return [t**slope * (1 + noise * rng.standard_normal(R)) for t in PTS]


def test_faster_than_claimed_passes_an_upper_rate_and_fails_an_attained_one():
    # the local-SGD case of the issue: a measured slope of −0.572 against a claimed O(1/√T)
    s = _samples(-0.572)
    fit, _, tol_text, judge, wrong, kind = _rate_judgement(_claim(), PTS, s, [None] * 4, -0.5, 0.05, None, 0)
    assert kind == "O" and wrong == -1.0 and "one-sided" in tol_text
    assert abs(fit.slope + 0.572) < 0.01
    assert judge(-0.5) and not judge(wrong)  # passes; the control (O(1/T)) fails
    fit2, _, _, judge2, wrong2, kind2 = _rate_judgement(
        _claim(rate_attained=True), PTS, s, [None] * 4, -0.5, 0.05, None, 0
    )
    assert kind2 == "Θ" and wrong2 == 0.0
    assert not judge2(-0.5)  # attained: −0.572 is not ≈ −0.5 within 0.05


def test_slower_than_claimed_fails_an_upper_rate():
    s = _samples(-0.4)
    *_, judge, _, _ = _rate_judgement(_claim(), PTS, s, [None] * 4, -0.5, 0.05, None, 0)
    assert not judge(-0.5)
    assert judge(-0.3)


def test_exact_values_upper_rate_hand():
    # exact y = T^-0.6: slope −0.6 exactly; ≤ −0.5 + 0 holds, ≤ −1.0 does not
    ex = [t**-0.6 for t in PTS]
    fit, method, _, judge, wrong, _ = _rate_judgement(_claim(), PTS, [None] * 4, ex, -0.5, 0.0, None, 0)
    assert method == "exact moments" and fit.slope == pytest.approx(-0.6, abs=1e-12)
    assert judge(-0.5) and not judge(wrong) and not judge(-0.61)


def test_verify_rate_upper_end_to_end_and_bad_flag():
    # deterministic GD on a quadratic: Σ‖∇f‖² converges, so the time average decays exactly like 1/T
    C = np.random.default_rng(3).normal(0, 1.0, (4, 3))
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0, 0.5, 0.25]), centers=C, sigma_L=0.0)
    beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(1))
    pts = [200, 400, 800]

    def gd(rate, **kw):
        return Claim(
            id="gd.rate", title="GD", bound=1, rule=FedAvg, eta=1.0, eta_L=0.3, rate={"T": rate}, **kw
        )

    v = verify_rate(gd(-1.0), p, beh, over="T", points=pts, tol=0.05)
    assert v.relation == "<=" and "O(T^(-1))" in v.claim and v.method == "exact moments"
    assert v.measured == pytest.approx(-1.0, abs=1e-3)
    assert v.passed and not v.negative_control.passed  # O(1/T) holds; O(T^-1.5) fails
    # O(1/√T) holds too (loose): its control O(1/T) also holds, and the verdict says it has no power
    loose = verify_rate(gd(-0.5), p, beh, over="T", points=pts, tol=0.05)
    assert loose.passed and loose.negative_control.passed and "no power" in loose.notes
    assert not verify_rate(gd(-0.5, rate_attained=True), p, beh, over="T", points=pts, tol=0.05).passed
    with pytest.raises(TypeError, match="rate_attained"):
        Claim(id="x", title="x", bound=1, rate={"T": -1}, rate_attained="yes")
