"""Compressors: unbiasedness, exact second moments vs Monte Carlo, certified ω/δ vs the worst case over
drawn x, closed forms, bit counts and bad input. Monte Carlo tests use fixed seeds and 5-standard-error
tolerances (a false alarm per element has probability < 1e-6; every test is deterministic given its seed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from afltheory.compression import (
    QSGD,
    BernoulliMask,
    GaussianSketch,
    Identity,
    LowRank,
    RandK,
    Sign,
    StochasticQuantizer,
    Subsample,
    TopK,
    fwht,
)

D = 8
UNBIASED = [
    Identity(),
    RandK(3),
    Subsample(0.4),
    BernoulliMask(0.3),
    GaussianSketch(3),
    LowRank(1),
    LowRank(2, shape=(2, 4)),
    StochasticQuantizer(2),
    StochasticQuantizer(1, rotate=True),
    QSGD(1),
    QSGD(3),
]
BIASED = [TopK(3), Sign()]
LINEAR = [c for c in UNBIASED if c.linear]
ALL = UNBIASED + BIASED


def _x(seed, d=D):
    return np.random.default_rng(seed).standard_normal(d) * np.linspace(0.3, 2.0, d)


@pytest.mark.parametrize("comp", ALL, ids=repr)
def test_mean_and_second_moment_match_monte_carlo(comp):
    """E C(x) = x (unbiased ones) and E[C(x)C(x)ᵀ] = second_moment(x), each element within 5 MC standard
    errors (N = 40 000 draws, seed 1)."""
    x = _x(3)
    N = 40_000
    y, bits = comp.compress(np.broadcast_to(x, (N, D)), np.random.default_rng(1))
    assert y.shape == (N, D) and bits.shape == (N,)
    S = comp.second_moment(x)
    outer = y[:, :, None] * y[:, None, :]
    se = outer.std(axis=0) / math.sqrt(N)
    assert np.all(np.abs(outer.mean(axis=0) - S) <= 5 * se + 1e-10)
    if comp.unbiased:
        se1 = y.std(axis=0) / math.sqrt(N)
        assert np.all(np.abs(y.mean(axis=0) - x) <= 5 * se1 + 1e-10)
        assert np.allclose(np.diag(S) - x**2, np.diag(S - np.outer(x, x)))
    assert abs(bits.mean() - comp.expected_bits(D)) <= 5 * bits.std() / math.sqrt(N) + 1e-9


@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False), min_size=D, max_size=D))
@settings(max_examples=60, deadline=None)
def test_certified_constants_bound_the_exact_error(xs):
    """E‖C(x) − x‖² ≤ ω‖x‖² (unbiased) resp. ≤ (1 − δ)‖x‖² (biased) at every drawn x, with equality for the
    compressors whose ω is exact."""
    x = np.array(xs)
    n2 = x @ x
    for comp in UNBIASED:
        err = comp.error_sq(x)
        w = comp.omega(D)
        assert err <= w * n2 * (1 + 1e-9) + 1e-9, comp
        if comp.omega_is_exact(D):
            assert err == pytest.approx(w * n2, rel=1e-9, abs=1e-9), comp
    for comp in BIASED:
        assert comp.error_sq(x) <= (1 - comp.delta(D)) * n2 * (1 + 1e-9) + 1e-9, comp


@pytest.mark.parametrize(
    "comp, x",
    [
        (StochasticQuantizer(1), np.r_[1.0, -1.0, np.zeros(D - 2)]),
        (Sign(), np.r_[1.0, np.full(D - 1, 1e-9)]),  # the supremum over x with no zero coordinate
        (TopK(3), np.ones(D)),
    ],
)
def test_certified_constant_is_attained(comp, x):
    """The worst cases named in the docstrings attain the certified constant exactly."""
    bound = comp.omega(D) if comp.unbiased else 1 - comp.delta(D)
    assert comp.error_sq(x) == pytest.approx(bound * (x @ x), rel=1e-7)


def test_closed_forms_pinned():
    """docs/theorems.md closed forms: rand-k, Bernoulli mask, Gaussian sketch on a hand-checked 3-vector."""
    x = np.array([1.0, 2.0, -2.0])
    X = np.outer(x, x)
    d, k = 3, 2
    off = d * (k - 1) / (k * (d - 1))
    assert np.allclose(RandK(k).second_moment(x), (d / k) * np.diag(x**2) + off * (X - np.diag(x**2)))
    assert np.allclose(BernoulliMask(0.25).second_moment(x), X + 3 * np.diag(x**2))
    assert np.allclose(GaussianSketch(2).second_moment(x), 1.5 * X + 0.5 * 9 * np.eye(3))
    assert RandK(1).omega(4) == 3.0 and BernoulliMask(0.5).omega(7) == 1.0
    assert GaussianSketch(4).omega(7) == 2.0
    assert QSGD(2).omega(16) == 2.0 and QSGD(1).omega(4) == 2.0
    assert TopK(2).delta(8) == 0.25 and Sign().delta(4) == 0.25


@pytest.mark.parametrize("comp", LINEAR, ids=repr)
def test_moment_map_is_linear_and_batched(comp):
    """moment_map(X) = E[M X Mᵀ]: linear in X, consistent with second_moment, batched over leading axes."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((2, D, D))
    assert np.allclose(comp.moment_map(2 * A - B), 2 * comp.moment_map(A) - comp.moment_map(B))
    batch = rng.standard_normal((3, 2, D, D))
    out = comp.moment_map(batch)
    assert np.allclose(out[2, 1], comp.moment_map(batch[2, 1]))
    x = _x(5)
    assert np.allclose(comp.moment_map(np.outer(x, x)), comp.second_moment(x))


def test_subsample_has_the_law_of_rand_k():
    """Subsample(p) = RandK(⌈p d⌉) in law (same closed-form moment map and ω)."""
    X = np.random.default_rng(0).standard_normal((10, 10))
    assert np.allclose(Subsample(0.25).moment_map(X), RandK(3).moment_map(X))
    assert Subsample(0.25).omega(10) == RandK(3).omega(10)


def test_fwht_is_hadamard():
    for d in (1, 2, 8, 32):
        assert np.allclose(fwht(np.eye(d)), scipy.linalg.hadamard(d))
    with pytest.raises(ValueError, match="power-of-two"):
        fwht(np.ones(6))


def test_rotation_spreads_an_outlier():
    """With rotation the quantization error of a spiky vector is far below the unrotated one (seed 0)."""
    x = np.zeros(16)
    x[0], x[1:] = 10.0, np.linspace(-0.3, 0.3, 15)
    plain, rot = StochasticQuantizer(2), StochasticQuantizer(2, rotate=True)
    rng = np.random.default_rng(0)
    e_plain = np.mean(np.sum((plain.compress(np.tile(x, (2000, 1)), rng)[0] - x) ** 2, axis=1))
    e_rot = np.mean(np.sum((rot.compress(np.tile(x, (2000, 1)), rng)[0] - x) ** 2, axis=1))
    assert e_plain == pytest.approx(plain.error_sq(x), rel=0.1)
    assert e_rot < 0.5 * e_plain


def test_deterministic_compressors_and_zero_vector():
    rng = np.random.default_rng(0)
    x = np.array([[3.0, -1.0, 0.5, -4.0]])
    assert np.array_equal(TopK(2)(x, rng), [[3.0, 0.0, 0.0, -4.0]])
    assert np.allclose(Sign()(x, rng), [[2.125, -2.125, 2.125, -2.125]])
    z = np.zeros((5, D))
    for comp in ALL:
        assert np.array_equal(comp(z, rng), z), comp


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: RandK(0), "k=0"),
        (lambda: RandK(2.5), "k=2.5"),
        (lambda: RandK(9).check_dim(8), "k=9 exceeds"),
        (lambda: TopK(9).check_dim(8), "k=9 exceeds"),
        (lambda: GaussianSketch(0), "k=0"),
        (lambda: BernoulliMask(0.0), "p=0.0"),
        (lambda: BernoulliMask(1.5), "p=1.5"),
        (lambda: Subsample(-0.1), "p=-0.1"),
        (lambda: QSGD(0), "s=0"),
        (lambda: StochasticQuantizer(0), "bits=0"),
        (lambda: StochasticQuantizer(2, rotate="yes"), "rotate"),
        (lambda: LowRank(3, shape=(2, 4)), "rank=3 exceeds"),
        (lambda: LowRank(3).check_dim(6), "rank=3 exceeds"),
        (lambda: LowRank(0), "rank=0"),
        (lambda: RandK(3).compress(np.ones((2, 2)), np.random.default_rng(0)), "k=3"),
    ],
)
def test_bad_input_names_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_constants_of_the_wrong_class_raise():
    with pytest.raises(TypeError, match="biased"):
        TopK(2).omega(4)
    with pytest.raises(TypeError, match="unbiased"):
        RandK(2).delta(4)
