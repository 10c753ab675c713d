"""O-statements (issue 39): ``constant="hidden"`` (the bound is a shape, up to an unknown constant) and
``holds_from``; ``verify`` sweeps the claim's variable and judges measured / shape bounded."""

import numpy as np
import pytest
import sympy as sp

import afltheory as aft
from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import Assumptions, Claim, verify
from afltheory.claims.symbols import kappa, mu, sum_p2, t
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory.symbols import T, sigma_L

C = np.random.default_rng(0).normal(0, 0.1, (4, 3))
P = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(3), centers=C, sigma_L=1.0)
BEH = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(1))
PTS = [20, 40, 80]
# SGD with η_t = 2/(μ(8κ + t)) on a strongly convex quadratic with noise: E f(x_T) − f* = O(κσ²Σp²/(μT))
SHAPE = kappa * sum_p2 * sigma_L**2 / (mu * T)


def _claim(bound=SHAPE, **kw):
    return Claim(
        id="sgd.order",
        title="SGD O(1/T)",
        rule=FedAvg,
        eta=1,
        eta_L=2 / (mu * (8 * kappa + t)),
        measured="last_gap",
        bound=bound,
        constant="hidden",
        assumptions=Assumptions(function="strongly_convex", participation="full"),
        **kw,
    )


def test_order_statement_exact_ratio_and_constant_by_hand():
    v = verify(_claim(holds_from={"T": 20}), P, BEH, over="T", points=PTS)
    # by hand: the exact gap at each T over the shape κσ²Σp²/(μT) = 1·1·(1/4)/(1·T) (identity Hessian: κ=μ=1)
    ratios = []
    for T_ in PTS:
        mom = aft.exact.moments(P, FedAvg(1.0, aft.algorithms.schedules.StepSize(2 / (1 * (8 + t)))), BEH, T_)
        ratios.append((mom.loss[T_] - P.constants.f_star) / (0.25 / T_))
    np.testing.assert_allclose(v.details["ratio"], ratios, rtol=1e-10)
    assert v.details["constant"] == pytest.approx(max(ratios), rel=1e-10)
    slope = np.polyfit(np.log(PTS), np.log(ratios), 1)[0]
    assert v.measured == pytest.approx(slope, abs=1e-10) and v.method == "exact moments"
    assert v.passed and v.relation == "<=" and "constant C ≈" in v.notes
    assert v.negative_control is not None and not v.negative_control.passed  # the shape × T^(−1/2) fails


def test_a_shape_decaying_too_fast_fails_on_correct_code():
    # the shape with one factor too many (σ²/(μT) written σ²/(μT²)): the ratio grows like T
    v = verify(_claim(bound=SHAPE / T), P, BEH, over="T", points=PTS, control=None)
    assert not v.passed and v.measured > 0.5
    # the same wrong shape as the user's control of the true claim: it fails as a control must
    v2 = verify(_claim(), P, BEH, over="T", points=PTS, control=SHAPE / T)
    assert v2.passed and not v2.negative_control.passed


def test_order_statement_monte_carlo():
    v = verify(_claim(), P, BEH, over="T", points=PTS, exact=False, replicates=30)
    assert v.method.startswith("monte-carlo (R=30)") and v.ci[0] is None and v.ci[1] >= v.measured
    assert v.details["constant_ucb"] >= v.details["constant"]
    assert v.passed and not v.negative_control.passed


def test_order_statement_bad_input_is_one_line():
    with pytest.raises(ValueError, match=r"over=None, points=None: claim 'sgd.order' is an O-statement"):
        verify(_claim(), P, BEH, rounds=20)
    with pytest.raises(ValueError, match=r"below holds_from\['T'\]=50"):
        verify(_claim(holds_from={"T": 50}), P, BEH, over="T", points=PTS)
    with pytest.raises(ValueError, match=r"constant='visible' must be one of \(None, 'hidden'\)"):
        Claim(id="x", title="x", bound=1, constant="visible")
    with pytest.raises(ValueError, match="a sweep is for O-statements"):
        verify(
            Claim(id="x", title="x", bound=sp.Integer(1), rule=FedAvg, eta=1, eta_L=0.1),
            P,
            BEH,
            rounds=5,
            over="T",
            points=PTS,
        )
