"""σ_G² (mean over workers) is its own certified symbol where ∇f_i − ∇f does not depend on x."""

import numpy as np
import pytest

from afltheory.claims import SYMBOLS, Assumptions, Claim, problem_values, sigma_G_mean
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic


def test_sigma_G_mean_hand_and_where_it_is_not_certified():
    # f_i(x) = (x − c_i)² (a = 2), c = (1, 3): ∇f_i − ∇f = 2(2 − c_i) = (2, −2) for every x: σ² = (4 + 4)/2
    p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([2.0]), centers=np.array([[1.0], [3.0]]))
    assert problem_values(p)["sigma_G_mean"] == pytest.approx(2.0, rel=1e-14)
    assert problem_values(p, x0=np.array([7.0]))["sigma_G_mean"] == pytest.approx(2.0, rel=1e-14)
    # the max reading is never below the mean reading
    assert problem_values(p)["sigma_G"] >= problem_values(p)["sigma_G_mean"] - 1e-12
    # client weights p = (.25, .75): ∇f = 2(x − 2.5), deviations (3, −1): σ² = (9 + 1)/2 = 5
    w = HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.array([2.0]), centers=np.array([[1.0], [3.0]]), weights=(0.25, 0.75)
    )
    assert problem_values(w)["sigma_G_mean"] == pytest.approx(np.sqrt(5.0), rel=1e-14)
    # per-worker curvature: the deviation depends on x, so it is not certified (absent: a claim gives it)
    q = HeterogeneousCurvatureQuadratic.from_arrays(
        hessians=np.array([[1.0, 0.5], [0.8, 1.0]]), centers=np.array([[1.0, 0.0], [0.0, 1.0]]), radius=10.0
    )
    assert "sigma_G_mean" not in problem_values(q)
    assert SYMBOLS["sigma_G_mean"] is sigma_G_mean
    c = Claim(
        id="x", title="x", bound=6 * sigma_G_mean**2, assumptions=Assumptions(heterogeneity="sigma_G_mean")
    )
    assert c.free_symbols() == {"sigma_G_mean"}
