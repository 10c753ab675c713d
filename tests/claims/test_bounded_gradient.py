"""Item 6 (issue #39): the bounded-gradient constant G — certified where the family allows it, else
estimated on the realized trajectory and marked "estimated".

Hand-derived case: HeterogeneousCurvatureQuadratic with d = 1, A = (1, 3), c = (0, 2), σ_L = 1, radius ½:
x* = Σ A_i c_i / Σ A_i = 6/4 = 1.5, ∇f_1(x*) = 1.5, ∇f_2(x*) = 3 (1.5 − 2) = −1.5, so
G² = σ_L² + max_i (|∇f_i(x*)| + A_i r)² = 1 + max(2, 3)² = 10, attained by worker 2 at x = x* − r = 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from afltheory import simulate
from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.claims import Assumptions, Claim, G, T, verify
from afltheory.claims._values import certified_G, estimate_G, problem_values
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic


def _curved():
    return HeterogeneousCurvatureQuadratic.from_arrays(
        hessians=np.array([[1.0], [3.0]]), centers=np.array([[0.0], [2.0]]), sigma_L=1.0, radius=0.5
    )


def test_certified_on_a_ball_closed_form():
    p = _curved()
    assert p.constants.x_star[0] == pytest.approx(1.5)
    assert certified_G(p) == pytest.approx(np.sqrt(10.0), rel=1e-12)
    assert problem_values(p)["G"] == pytest.approx(np.sqrt(10.0), rel=1e-12)
    # an upper bound on the ball, attained at its edge (worker 2 at x = 1)
    xs = np.linspace(1.0, 2.0, 201)[:, None]
    worst = max(float(np.max(p.local_grad(xs, i)[:, 0] ** 2)) for i in range(2)) + 1.0
    assert worst == pytest.approx(10.0, rel=1e-12)


def test_not_certified_without_a_ball():
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(1), centers=np.zeros((2, 1)), sigma_L=1.0)
    assert certified_G(p) is None and "G" not in problem_values(p)
    # estimated on given iterates: σ² + max ‖∇f_i(x)‖² = 1 + 3² (x = −3, c_i = 0, A = 1)
    assert estimate_G(p, np.array([[0.5], [-3.0], [np.inf]])) == pytest.approx(np.sqrt(10.0))


def _claim():
    return Claim(id="g.toy", title="g.toy", rule=FedAvg, eta=1.0, eta_L=0.1, measured="last_gap",
                 assumptions=Assumptions(function="strongly_convex", participation="full", max_delay=0),
                 bound={"g": 0.1 * G**2 + 0 * T})  # fmt: skip


def test_verify_estimates_G_on_the_trajectory_and_says_so():
    p = HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.ones(2), centers=np.array([[1.0, 0], [-1, 0]]), sigma_L=0.5
    )
    beh = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(2))
    x0 = np.array([2.0, 1.0])
    v = verify(_claim(), p, beh, rounds=20, replicates=4, seed=3, x0=x0)
    assert "ESTIMATED on the realized trajectory" in v.notes and "not certified" in v.notes
    tr = simulate(p, FedAvg(eta=1.0, eta_L=0.1), beh, rounds=20, replicates=4, seed=3, x0=x0, record_x=True)
    assert v.theoretical == pytest.approx(0.1 * estimate_G(p, tr.x) ** 2, rel=1e-12)
    # the start is the farthest point here: G² = 0.25 + max_i ‖x_0 − c_i‖² = 0.25 + 9 + 1
    assert v.theoretical == pytest.approx(0.1 * 10.25, rel=1e-12)


def test_verify_uses_the_certified_G_and_a_given_value():
    beh = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(1))
    v = verify(_claim(), _curved(), beh, rounds=5, replicates=2, x0=np.array([1.4]))
    assert "ESTIMATED" not in v.notes and v.theoretical == pytest.approx(1.0, rel=1e-12)  # 0.1 · 10
    w = verify(_claim(), _curved(), beh, rounds=5, replicates=2, x0=np.array([1.4]), values={"G": 2.0})
    assert "ESTIMATED" not in w.notes and w.theoretical == pytest.approx(0.4, rel=1e-12)
