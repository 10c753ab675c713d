"""afltheory.functions: each class's interpolation inequality, interpolator and sampler; the PEPs read them.

The inequalities are pinned on 1-D quadratics f(x) = (c/2)x² whose numbers are derived by hand next to each
case (a curvature at the end of the class's interval makes the inequality tight, one outside violates it).
The interpolators are checked on data drawn from true members (they must reproduce values and gradients and
themselves be members); the PEP formulations must give the same value from the object as from ``mu``.
"""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.functions import (
    ConvexSmooth,
    FunctionClass,
    SmoothNonconvex,
    StronglyConvexSmooth,
    function_class,
)


def quad_point(c: float, x: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(x, ∇f(x), f(x)) of f(x) = (c/2) x² in one dimension."""
    return np.array([x]), np.array([c * x]), c * x * x / 2


# ------------------------------------------------------------------------------------------ inequalities
def test_smooth_inequality_hand_computed():
    """L = 1, points x_i = 1, x_j = 0. q = −¼·1 + ½⟨g_i, 1⟩ + g_i²/4.
    c = 1:  f_i = ½, q = −¼ + ½ + ¼ = ½   -> slack 0 (tight);  c = −1: f_i = −½, q = −¼ − ½ + ¼ = −½ -> 0;
    c = 2:  f_i = 1,  q = −¼ + 1 + 1 = 1.75 -> slack −0.75 (curvature 2 > L: not interpolable)."""
    fc = SmoothNonconvex(1.0)
    zero = quad_point(0.0, 0.0)
    assert fc.slack(*quad_point(1.0, 1.0), *zero) == pytest.approx(0.0, abs=1e-15)
    assert fc.slack(*quad_point(-1.0, 1.0), *zero) == pytest.approx(0.0, abs=1e-15)
    assert fc.slack(*quad_point(2.0, 1.0), *zero) == pytest.approx(-0.75, abs=1e-15)
    assert fc.curvature == (-1.0, 1.0) and not fc.convex


def test_strongly_convex_inequality_hand_computed():
    """L = 1, μ = ½, k = μ/(2(1 − μ/L)) = ½.
    q(dx, g_i, g_j) = g_j dx + (g_i − g_j)²/2 + k (dx − (g_i − g_j))².
    c = ½, (i, j) = (1, 0): f_i = ¼, q = 0 + ⅛ + ½·(½)² = ¼ -> 0;  (0, 1): f_i − f_j = −¼,
    q = ½·(−1) + ⅛ + ½·(−½)² = −¼ -> 0;  c = 1 (= L): f_i = ½, q = ½ + 0 = ½ -> 0;
    c = 0.2 < μ: f_i = 0.1, q = 0.02 + ½·0.8² = 0.34 -> slack −0.24."""
    fc = StronglyConvexSmooth(1.0, 0.5)
    zero = quad_point(0.0, 0.0)
    assert fc.slack(*quad_point(0.5, 1.0), *zero) == pytest.approx(0.0, abs=1e-15)
    assert fc.slack(*zero, *quad_point(0.5, 1.0)) == pytest.approx(0.0, abs=1e-15)
    assert fc.slack(*quad_point(1.0, 1.0), *zero) == pytest.approx(0.0, abs=1e-15)
    assert fc.slack(*quad_point(0.2, 1.0), *zero) == pytest.approx(-0.24, abs=1e-15)
    assert fc.curvature == (0.5, 1.0) and fc.convex


def test_convex_inequality_hand_computed():
    """L = 1, μ = 0: q = g_j dx + (g_i − g_j)²/2. f(x) = x (g ≡ 1): f_i − f_j = 1, q = 1 -> 0 (tight);
    f = −x²/2 at x_i = 1: f_i = −½, q = 0 + ½ -> slack −1 (concave: not convex) while the smooth class
    accepts it (slack 0 in the test above)."""
    fc = ConvexSmooth(1.0)
    assert fc.slack([1.0], [1.0], 1.0, [0.0], [1.0], 0.0) == pytest.approx(0.0, abs=1e-15)
    assert fc.slack(*quad_point(-1.0, 1.0), *quad_point(0.0, 0.0)) == pytest.approx(-1.0, abs=1e-15)
    assert fc.mu == 0.0 and fc == function_class(1.0, 0.0) and fc != StronglyConvexSmooth(1.0, 0.1)


def test_function_class_maps_mu_and_refuses_bad_parameters():
    assert type(function_class(2.0)) is SmoothNonconvex
    assert type(function_class(2.0, 0.0)) is ConvexSmooth
    assert function_class(2.0, 0.5) == StronglyConvexSmooth(2.0, 0.5)
    with pytest.raises(ValueError, match="mu"):
        StronglyConvexSmooth(1.0, 1.0)  # μ must be < L
    with pytest.raises(ValueError, match="L"):
        SmoothNonconvex(0.0)
    with pytest.raises(ValueError, match=r"\(P, d\)"):
        SmoothNonconvex(1.0).slacks(np.zeros((2, 2)), np.zeros((2, 3)), np.zeros(2))
    with pytest.raises(NotImplementedError, match="interpolation inequality"):
        FunctionClass().rhs(0.0, 0.0, 0.0, np.dot)


# ------------------------------------------------------------------------------------------ interpolators
def member_data(fc, P: int, d: int, seed: int):
    """Values and gradients of f(x) = ½xᵀAx + bᵀx (spectrum of A in the class's curvature interval) at P
    random points."""
    rng = np.random.default_rng(seed)
    lo, hi = fc.curvature
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    ev = np.concatenate([[lo, hi], rng.uniform(lo, hi, d - 2)])
    A = Q @ np.diag(ev) @ Q.T
    b = rng.normal(size=d)
    X = rng.normal(size=(P, d))
    return X, X @ A + b, 0.5 * np.einsum("pi,ij,pj->p", X, A, X) + X @ b, A, b


@pytest.mark.parametrize(
    "fc", [SmoothNonconvex(1.0), ConvexSmooth(2.0), StronglyConvexSmooth(1.5, 0.3)], ids=repr
)
def test_interpolator_reproduces_member_data_and_is_a_member(fc):
    X, G, F, _, _ = member_data(fc, P=6, d=3, seed=4)
    assert fc.interpolable(X, G, F)  # data of a member satisfy the inequality
    f = fc.interpolator(X, G, F)
    for p in range(len(X)):
        v, g = f.value_grad(X[p])
        assert v == pytest.approx(F[p], rel=1e-10, abs=1e-10)
        assert np.allclose(g, G[p], rtol=1e-10, atol=1e-10)
    # the interpolant is a member: its own data at fresh points satisfy the class's inequality
    Y = np.random.default_rng(9).normal(size=(12, 3)) * 2
    vals = np.array([f.value_grad(y)[0] for y in Y])
    grads = np.array([f.value_grad(y)[1] for y in Y])
    assert fc.slacks(Y, grads, vals).min() >= -1e-9


def test_strongly_convex_interpolator_infimum_is_attained_where_the_gradient_vanishes():
    """μ > 0: inf f is the QP over the simplex; the point returned as ``argmin`` has f = inf, ∇f = 0, and no
    sampled point is lower."""
    fc = StronglyConvexSmooth(1.0, 0.4)
    X, G, F, _, _ = member_data(fc, P=5, d=2, seed=1)
    f = fc.interpolator(X, G, F)
    v, g = f.value_grad(f.argmin)
    assert v == pytest.approx(f.inf, abs=1e-10) and np.linalg.norm(g) <= 1e-8
    Y = f.argmin + np.random.default_rng(2).normal(size=(200, 2))
    assert min(f.value_grad(y)[0] for y in Y) >= f.inf - 1e-12


def test_smooth_interpolator_is_the_pep_interpolant():
    """``afltheory.pep.interpolant.SmoothInterpolant`` is the smooth class's interpolator (one definition)."""
    from afltheory.pep.interpolant import SmoothInterpolant

    X, G, F, _, _ = member_data(SmoothNonconvex(1.0), P=4, d=2, seed=0)
    f = SmoothNonconvex(1.0).interpolator(X, G, F)
    assert type(f) is SmoothInterpolant and f.inf == pytest.approx(float(np.min(F - np.sum(G * G, 1) / 2)))


# ------------------------------------------------------------------------------------------ samplers
@pytest.mark.parametrize(
    "fc", [SmoothNonconvex(1.0), ConvexSmooth(1.0), StronglyConvexSmooth(1.0, 0.2)], ids=repr
)
def test_sampler_draws_members(fc):
    p = fc.sample(dim=3, num_workers=3, sigma_G=0.5, seed=3)
    c = p.constants
    assert c.L <= fc.L * (1 + 1e-12) and c.mu >= fc.curvature[0] - 1e-12
    X = np.random.default_rng(5).normal(size=(8, 3))
    for i in range(3):
        vals = np.asarray(p.local_value(X, i), dtype=float)
        grads = np.asarray(p.local_grad(X, i), dtype=float)
        assert fc.interpolable(X, grads, vals, tol=1e-9)


# ------------------------------------------------------------------------------------------ the PEPs read it
def test_pep_value_from_the_object_equals_the_value_from_mu():
    """Both formulations, bit for bit: ``functions=`` and ``mu=`` name the same class, and a class whose L
    differs from the constants' is refused."""
    pytest.importorskip("PEPit")
    from afltheory.algorithms import AFACD, FedAvg
    from afltheory.anarchy import Schedule
    from afltheory.pep import reduced_worst_case, worst_case

    S = Schedule(np.array([[0], [1], [0]]), np.array([[0], [1], [1]]), np.full((3, 1), 2), 2)
    C = dict(L=1.0, sigma_G=0.3, sigma_L=0.0)
    a = worst_case(FedAvg(eta=1.0, eta_L=0.5), S, C, delta=1.0, mu=0.2, metric="last_dist", gap="distance")
    b = worst_case(
        FedAvg(eta=1.0, eta_L=0.5),
        S,
        C,
        delta=1.0,
        functions=StronglyConvexSmooth(1.0, 0.2),
        metric="last_dist",
        gap="distance",
    )
    assert a.certified and a.value == b.value
    r1 = reduced_worst_case(AFACD(eta=1.0, eta_L=0.5), S, C, delta=1.0)
    r2 = reduced_worst_case(AFACD(eta=1.0, eta_L=0.5), S, C, delta=1.0, functions=SmoothNonconvex(1.0))
    assert r1.certified and r1.value == r2.value
    with pytest.raises(ValueError, match="functions.L"):
        worst_case(AFACD(eta=1.0, eta_L=0.5), S, C, delta=1.0, functions=SmoothNonconvex(2.0))
    with pytest.raises(ValueError, match="contradicts"):
        worst_case(AFACD(eta=1.0, eta_L=0.5), S, C, delta=1.0, mu=0.1, functions=ConvexSmooth(1.0))


def test_pep_instance_is_interpolated_by_the_class_interpolator():
    """The Gram data of a certified strongly convex PEP (M = 1) satisfy the class's inequality up to solver
    accuracy, and the class's interpolator reproduces its gradients."""
    pytest.importorskip("PEPit")
    from afltheory.algorithms import FedAvg
    from afltheory.anarchy import Schedule
    from afltheory.pep import worst_case

    S = Schedule(np.zeros((3, 1), int), np.zeros((3, 1), int), np.full((3, 1), 2), 1)
    fc = StronglyConvexSmooth(1.0, 0.2)
    r = worst_case(
        FedAvg(eta=1.0, eta_L=0.8),
        S,
        dict(L=1.0, sigma_G=0.0),
        delta=1.0,
        functions=fc,
        metric="last_dist",
        gap="distance",
    )
    inst = r.instance
    keys = list(inst.points)
    X = np.array([inst.points[k] for k in keys] + [inst.x_star])
    G = np.array([inst.grads[k][0] for k in keys] + [np.zeros_like(inst.x_star)])
    F = np.array([inst.values[k][0] for k in keys] + [inst.f_star])
    assert r.certified and fc.interpolable(X, G, F, tol=1e-5)
    f = fc.interpolator(X, G, F)
    err = max(np.linalg.norm(f.value_grad(X[p])[1] - G[p]) for p in range(len(X)))
    assert err <= 1e-3 * max(1.0, float(np.abs(G).max()))


# ---------------------------------------------------------------------------------------- the μ = L boundary
def test_isotropic_instance_mu_equal_L_is_a_member_of_every_strongly_convex_class():
    """μ = L is refused as the class's μ (Taylor et al.'s inequality has μ/(1 − μ/L)) but allowed as an
    instance's smallest curvature: the sampler with ``lowest = L`` gives Hessians L·I (certified μ = L), and
    those data satisfy the inequality of StronglyConvexSmooth(L, μ) for μ up to just below L. By hand, in 1-D
    with c = L = 1, x_i = 1, x_j = 0 (g = x, f = x²/2): dx − dg/L = 0, so the slack is
    f_i − f_j − ⟨g_j, dx⟩ − (g_i − g_j)²/(2L) = ½ − 0 − ½ = 0 for every μ < L."""
    fc = StronglyConvexSmooth(1.0, 0.2)
    p = fc.sample(dim=3, num_workers=2, sigma_G=0.3, seed=4, lowest=1.0)
    assert np.allclose(np.asarray(p.hessian), 1.0) and p.constants.mu == pytest.approx(1.0)
    X = np.random.default_rng(2).normal(size=(6, 3))
    for mu in (0.0, 0.5, 0.999):
        member = StronglyConvexSmooth(1.0, mu)
        for i in range(2):
            vals = np.asarray(p.local_value(X, i), dtype=float)
            assert member.interpolable(X, np.asarray(p.local_grad(X, i), dtype=float), vals, tol=1e-9)
        assert member.slack(*quad_point(1.0, 1.0), *quad_point(1.0, 0.0)) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match=r"mu=1\.0 .*\[0\.0, 1\.0\)"):
        StronglyConvexSmooth(1.0, 1.0)


def test_sampler_lowest_curvature_is_checked_and_reaches_the_problem():
    """``lowest`` in [max(μ, L/100), L]: the same problem as HeterogeneousQuadratic with mu = lowest (a plain
    reference, arrays equal), the default the interval's left end, outside it a ValueError naming it."""
    from afltheory.problems import HeterogeneousQuadratic

    fc = StronglyConvexSmooth(2.0, 0.5)
    assert fc.sample_curvatures == (0.5, 2.0) and StronglyConvexSmooth(1.0, 0.0).sample_curvatures == (
        0.01,
        1.0,
    )
    p = fc.sample(3, 4, 0.5, seed=7, sigma_L=0.1, lowest=0.8)
    q = HeterogeneousQuadratic(dim=3, num_workers=4, L=2.0, mu=0.8, sigma_L=0.1, sigma_G=0.5, seed=7)
    assert np.array_equal(np.asarray(p.hessian), np.asarray(q.hessian))
    assert np.array_equal(np.asarray(p.centers), np.asarray(q.centers))
    assert p.constants.sigma_L == q.constants.sigma_L == pytest.approx(0.1)
    d = fc.sample(3, 4, 0.5, seed=7)
    assert d.constants.mu == pytest.approx(0.5)
    for bad in (0.4, 2.5):
        with pytest.raises(ValueError, match=r"lowest=.*\[0\.5, 2\.0\]"):
            fc.sample(3, 4, 0.5, seed=7, lowest=bad)


def test_resolve_class_reads_the_object_or_mu_and_refuses_contradictions():
    from afltheory.functions import resolve_class

    assert type(resolve_class(2.0)) is SmoothNonconvex and resolve_class(2.0, 0.5) == StronglyConvexSmooth(
        2.0, 0.5
    )
    fc = ConvexSmooth(2.0)
    assert resolve_class(2.0, None, fc) is fc and resolve_class(2.0, 0.0, fc) is fc
    with pytest.raises(ValueError, match="contradicts"):
        resolve_class(2.0, 0.5, fc)
    with pytest.raises(ValueError, match=r"functions\.L=2\.0 must equal constants\.L=1\.0"):
        resolve_class(1.0, None, fc, L_name="constants.L")
    with pytest.raises(ValueError, match=r"mu=2\.0 .*\[0\.0, 2\.0\)"):
        resolve_class(2.0, 2.0)
    with pytest.raises(ValueError, match="afltheory.functions class"):
        resolve_class(2.0, None, "convex")
