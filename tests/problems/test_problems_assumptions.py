"""Property tests: Assumptions 1 and 3 of [Yang et al. 2022] hold with every family's certified constants.

For drawn families, dimensions, constants, points x, y and workers i:
  (A1)  ‖∇f_i(x) − ∇f_i(y)‖ ≤ L ‖x − y‖
  (A3b) ‖∇f_i(x) − ∇f(x)‖ ≤ σ_G   (on the certified ball ‖x − x*‖ ≤ radius when the family has one)
  f(x) ≥ f*,  f = mean_i f_i,  ∇f = mean_i ∇f_i,  and all of this with leading batch axes.
Tolerances are relative float round-off only (1e-9), never statistical.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from afltheory.problems import (
    FAMILIES,
    HeterogeneousCurvatureQuadratic,
    HeterogeneousQuadratic,
    LowerBoundPair,
    NonconvexSinusoidal,
)

RTOL = 1e-9
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    """A problem from any family with drawn constants (the families' own constructors)."""
    name = draw(st.sampled_from(sorted(FAMILIES)))
    seed = draw(st.integers(0, 2**16))
    if name == "lower_bound_pair":
        return LowerBoundPair(G=draw(st.floats(0.01, 10.0)))
    dim = draw(st.integers(1, 6))
    M = draw(st.integers(2, 6))
    L = draw(st.floats(0.05, 20.0))
    sigma_G = draw(st.floats(0.0, 10.0))
    if name == "quadratic":
        mu = L if dim == 1 else draw(st.floats(0.01, 1.0)) * L
        hess = draw(st.sampled_from(["diag", "dense"]))
        if draw(st.booleans()):
            return HeterogeneousQuadratic.finite_sum(
                dim,
                M,
                L,
                mu,
                sigma_L=draw(st.floats(0.0, 3.0)),
                sigma_G=sigma_G,
                seed=seed,
                hessian=hess,
                samples_per_worker=5,
                batch_size=2,
            )
        return HeterogeneousQuadratic(dim, M, L, mu, sigma_L=0.3, sigma_G=sigma_G, seed=seed, hessian=hess)
    if name == "curvature_quadratic":
        mu = draw(st.floats(0.01, 1.0)) * L
        return HeterogeneousCurvatureQuadratic(
            dim,
            M,
            L,
            mu,
            sigma_G=sigma_G,
            radius=draw(st.floats(0.1, 5.0)),
            seed=seed,
            hessian=draw(st.sampled_from(["diag", "dense"])),
            curvature_fraction=draw(st.floats(0.0, 1.0)),
        )
    assert name == "nonconvex_sinusoidal"
    mu = draw(st.floats(-0.99, 1.0)) * L
    return NonconvexSinusoidal(
        dim,
        M,
        L,
        mu,
        sigma_G=sigma_G,
        seed=seed,
        omega=draw(st.floats(0.2, 5.0)),
        phase_fraction=draw(st.floats(0.0, 1.0)),
    )


def _points(draw, prob, n, scale):
    z = draw(st.lists(st.floats(-1.0, 1.0), min_size=n * prob.dim, max_size=n * prob.dim))
    return prob.constants.x_star + scale * np.array(z).reshape(n, prob.dim)


def _into_ball(prob, x):
    """Radially project points onto the certified ball (identity when the family has no radius)."""
    r = prob.constants.radius
    if r is None:
        return x
    v = x - prob.constants.x_star
    nrm = np.linalg.norm(v, axis=-1, keepdims=True)
    return prob.constants.x_star + v * np.minimum(1.0, r / np.maximum(nrm, 1e-300))


@SETTINGS
@given(prob=problems(), data=st.data(), scale=st.floats(0.01, 30.0))
def test_assumption1_smoothness(prob, data, scale):
    x = _points(data.draw, prob, 8, scale)
    y = _points(data.draw, prob, 8, scale)
    L = prob.constants.L
    i = np.arange(8) % prob.num_workers
    lhs = np.linalg.norm(prob.local_grad(x, i) - prob.local_grad(y, i), axis=-1)
    assert np.all(lhs <= L * np.linalg.norm(x - y, axis=-1) * (1 + RTOL) + 1e-12)


@SETTINGS
@given(prob=problems(), data=st.data(), scale=st.floats(0.01, 30.0))
def test_assumption3_dissimilarity(prob, data, scale):
    x = _into_ball(prob, _points(data.draw, prob, 8, scale))
    assert np.all(prob.in_certified_region(x))
    g = prob.grad(x)
    for i in range(prob.num_workers):
        dev = np.linalg.norm(prob.local_grad(x, i) - g, axis=-1)
        assert np.all(dev <= prob.constants.sigma_G * (1 + RTOL) + 1e-10 * (1 + np.abs(g).max()))


@SETTINGS
@given(prob=problems(), data=st.data(), scale=st.floats(0.01, 30.0))
def test_value_above_fstar_and_means(prob, data, scale):
    x = _points(data.draw, prob, 8, scale)
    f = prob.value(x)
    tol = 1e-9 * (1 + np.abs(f))
    assert np.all(f >= prob.constants.f_star - tol)
    workers = np.arange(prob.num_workers)
    np.testing.assert_allclose(f, prob.local_value(x[:, None, :], workers).mean(axis=1), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        prob.grad(x),
        prob.local_grad(x[:, None, :], workers).mean(axis=1),
        rtol=1e-9,
        atol=1e-9 * (1 + np.abs(prob.grad(x)).max()),
    )


@settings(max_examples=15, deadline=None)
@given(prob=problems(), seed=st.integers(0, 1000))
def test_batch_axes(prob, seed):
    """(R, m, d) points with (R, m) worker arrays give the same numbers as a loop over entries."""
    rng = np.random.default_rng(seed)
    R, m, d = 3, 2, prob.dim
    x = prob.constants.x_star + rng.standard_normal((R, m, d))
    i = rng.integers(0, prob.num_workers, size=(R, m))
    g, v = prob.local_grad(x, i), prob.local_value(x, i)
    assert g.shape == (R, m, d) and v.shape == (R, m)
    assert prob.value(x).shape == (R, m) and prob.grad(x).shape == (R, m, d)
    assert prob.in_certified_region(x).shape == (R, m)
    for r in range(R):
        for k in range(m):
            np.testing.assert_allclose(
                g[r, k], prob.local_grad(x[r, k], int(i[r, k])), rtol=1e-12, atol=1e-12
            )
            np.testing.assert_allclose(
                v[r, k], prob.local_value(x[r, k], int(i[r, k])), rtol=1e-12, atol=1e-12
            )
            np.testing.assert_allclose(prob.value(x)[r, k], prob.value(x[r, k]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(prob.local_grad_fn(i)(x), g, rtol=1e-12, atol=1e-12)
    # the engine's in-place kernel (it owns its buffers): out += scale·∇f_i(y), called twice (reused buffers)
    base = rng.standard_normal((R, m, d))
    for _ in range(2):
        out = base.copy()
        prob.local_kernel(centered=False).grad_add(i, 0.3)(x, out)
        np.testing.assert_allclose(out, base + 0.3 * g, rtol=1e-12, atol=1e-12)
    kernel = prob.local_kernel()
    c = kernel.center(i)
    if c is not None:  # the translated frame: the same gradients from u = x − c
        assert kernel.centered
        for _ in range(2):
            u = x - kernel.center(i)
            out = base.copy()
            kernel.grad_add(i, 0.3)(u, out)
            np.testing.assert_allclose(out, base + 0.3 * g, rtol=1e-9, atol=1e-9)
    gn, f = prob.grad_norm_sq_and_value(x)
    np.testing.assert_allclose(gn, np.sum(prob.grad(x) ** 2, axis=-1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f, prob.value(x), rtol=1e-12, atol=1e-12)
    # a worker array with more axes than x: x (d,) against i (m,)
    assert prob.local_grad(x[0, 0], np.arange(prob.num_workers)).shape == (prob.num_workers, d)
    sg = prob.stochastic_grad(x[0, 0], np.arange(prob.num_workers), rng)
    assert sg.shape == (prob.num_workers, d) and np.all(np.isfinite(sg))
    assert prob.stochastic_grad(x, i, rng).shape == (R, m, d)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_registry_classes_build_with_defaults(name):
    prob = FAMILIES[name]()
    c = prob.constants
    assert c.certified["L"] == "exact"
    assert np.isfinite([c.L, c.mu, c.sigma_L, c.sigma_G, c.f_star]).all()
    assert prob.value(prob.default_x0()).shape == ()
