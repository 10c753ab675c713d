"""Bad input fails at construction with a ValueError naming the parameter (and its value / allowed range)."""

import numpy as np
import pytest

from afltheory.problems import (
    DriftingQuadratic,
    FiniteSumNoise,
    HeterogeneousCurvatureQuadratic,
    HeterogeneousQuadratic,
    LowerBoundPair,
    NonconvexSinusoidal,
)

HQ, HC, NC = HeterogeneousQuadratic, HeterogeneousCurvatureQuadratic, NonconvexSinusoidal
GOOD = dict(dim=3, num_workers=4, L=2.0, mu=0.5, sigma_G=1.0)
C2 = np.array([[1.0, 0.0, 2.0], [-1.0, 2.0, 0.0]])


@pytest.mark.parametrize("cls", [HQ, HC, NC, DriftingQuadratic])
@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(L=0.0), r"L=0\.0 .*range \(0\.0, (inf\)|1e\+150\])"),  # quadratics: L <= 1e150 (finite L², f*)
        (dict(L=-1.0), r"L=-1\.0"),
        (dict(L=float("nan")), r"L=nan must be finite"),
        (dict(sigma_L=-0.1), r"sigma_L=-0\.1 .*range \[0\.0, inf\)"),  # unbounded: open (inf is refused)
        (dict(sigma_G=-1.0), r"sigma_G=-1\.0"),
        (dict(dim=0), r"dim=0 .*range \[1, inf\]"),
        (dict(num_workers=1), r"num_workers=1 must be >= 2 for sigma_G"),
        (dict(seed=-1), r"seed=-1"),
    ],
)
def test_constructor_bad_input(cls, bad, match):
    with pytest.raises(ValueError, match=match):
        cls(**{**GOOD, **bad})


@pytest.mark.parametrize(
    "cls, match",
    [
        (HQ, r"mu=3\.0 must be <= L=2\.0"),
        (HC, r"mu=3\.0 must be <= L=2\.0"),
        (NC, r"mu=3\.0 is outside the allowed range \(-2\.0, 2\.0\]"),
    ],
)
def test_mu_above_L(cls, match):
    with pytest.raises(ValueError, match=match):
        cls(**{**GOOD, "mu": 3.0})


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: NC(**{**GOOD, "mu": -2.0}), r"mu=-2\.0 is outside the allowed range"),
        (lambda: NC(**GOOD, omega=0.0), r"omega=0\.0"),
        (lambda: NC(**GOOD, phase_fraction=1.5), r"phase_fraction=1\.5"),
        (lambda: HC(**GOOD, radius=0.0), r"radius=0\.0"),
        (lambda: HC(**GOOD, curvature_fraction=-0.1), r"curvature_fraction=-0\.1"),
        (lambda: HC(**GOOD, hessian="full"), r"hessian='full'"),
        (lambda: HQ(**GOOD, hessian="full"), r"hessian='full'"),
        (lambda: LowerBoundPair(G=0.0), r"G=0\.0"),
        (lambda: DriftingQuadratic(**GOOD, sigma_q=-1.0), r"sigma_q=-1\.0"),
        (
            lambda: HQ.finite_sum(**GOOD, samples_per_worker=4, batch_size=4),
            r"batch_size=4 must be < samples_per_worker",
        ),
        (lambda: HQ.finite_sum(**GOOD, samples_per_worker=4, batch_size=5), r"batch_size=5 .*range \[1, 4\]"),
        (lambda: HQ.finite_sum(**GOOD, samples_per_worker=0), r"samples_per_worker=0"),
    ],
)
def test_family_specific_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize(
    "make, match",
    [
        (
            lambda: HQ.from_arrays(hessian_diag=[1.0, 2.0], centers=C2),
            r"hessian_diag has shape \(2,\), expected \(3,\)",
        ),
        (lambda: HQ.from_arrays(hessian_diag=[1.0, 0.0, 2.0], centers=C2), r"hessian_diag must be > 0"),
        (lambda: HQ.from_arrays(hessian=np.ones((3, 3)), centers=C2), r"hessian must be positive definite"),
        (
            lambda: HQ.from_arrays(hessian_diag=[1.0, 2.0, 3.0], centers=[[np.nan, 0, 0], [0, 0, 0]]),
            r"centers contains non-finite",
        ),
        (
            lambda: HQ.from_arrays(hessian_diag=[1.0, np.inf, 3.0], centers=C2),
            r"hessian_diag contains non-finite",
        ),
        (
            lambda: HQ.from_arrays(hessian_diag=[1.0, 2.0, 3.0], centers=np.zeros(3)),
            r"centers must have 2 dim",
        ),
        (
            lambda: HQ.from_samples(
                hessian_diag=[1.0, 2.0, 3.0], sample_centers=np.zeros((2, 3)), batch_size=1
            ),
            r"sample_centers must have 3 dim",
        ),
        (
            lambda: HC.from_arrays(hessians=np.ones((2, 2)), centers=C2, radius=1.0),
            r"hessians has shape \(2, 2\), expected \(2, 3\) or \(2, 3, 3\)",
        ),
        (
            lambda: HC.from_arrays(hessians=[[1.0, -1.0, 1.0], [1.0, 1.0, 1.0]], centers=C2, radius=1.0),
            r"hessians \(diagonals\) must be >= 0",
        ),
        (
            lambda: HC.from_arrays(hessians=[[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]], centers=C2, radius=1.0),
            r"mean of hessians must be positive definite",
        ),
        (lambda: HC.from_arrays(hessians=np.ones((2, 3)), centers=C2, radius=-1.0), r"radius=-1\.0"),
        (
            lambda: HC.from_arrays(hessians=np.full((2, 3), np.nan), centers=C2, radius=1.0),
            r"hessians contains non-finite",
        ),
        (
            lambda: NC.from_arrays(centers=C2, phases=np.zeros((2, 2)), mu0=1.0, beta=1.0, omega=1.0),
            r"phases has shape \(2, 2\), expected \(2, 3\)",
        ),
        (
            lambda: NC.from_arrays(centers=C2, phases=np.zeros((2, 3)), mu0=0.0, beta=1.0, omega=1.0),
            r"mu0=0\.0",
        ),
        (
            lambda: NC.from_arrays(centers=C2, phases=np.zeros((2, 3)), mu0=1.0, beta=-1.0, omega=1.0),
            r"beta=-1\.0",
        ),
        (lambda: FiniteSumNoise(np.ones((2, 3, 1)), 1), r"offsets must have zero mean"),
        (lambda: FiniteSumNoise(np.zeros((2, 3, 1)), 0), r"batch_size=0 .*range \[1, 3\]"),
        (lambda: FiniteSumNoise(np.zeros((2, 3)), 1), r"offsets must have 3 dim"),
    ],
)
def test_array_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_worker_index_and_points():
    prob = HQ(**GOOD)
    with pytest.raises(ValueError, match=r"worker index i out of range \[0, 3\]"):
        prob.local_grad(np.zeros(3), 4)
    with pytest.raises(ValueError, match=r"worker index i must be integer"):
        prob.local_grad(np.zeros(3), 1.0)
    drift = DriftingQuadratic(**GOOD)
    with pytest.raises(ValueError, match=r"t=5 is outside the allowed range \[0, 2\]"):
        drift.at_round(5, np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"walk has shape \(3, 2\)"):
        drift.at_round(0, np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"base must be a HeterogeneousQuadratic"):
        DriftingQuadratic.from_problem(LowerBoundPair(), 0.1)
