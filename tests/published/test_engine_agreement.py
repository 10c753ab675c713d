"""afltheory's engines (``verify`` -> exact moments, with client weights and a per-round step schedule)
against the independent plain references on the SAME instances as the published checks (the paper modules'
verify(), paper_checks/published.py): the exact
values agree to 1e-9 relative (both are exact expectations; only floating-point order differs)."""

from __future__ import annotations

import numpy as np

from afltheory.published import khaled2020, li2020, lian2015, stich2019

from .reference_loops import Quadratics, asysg_exact, fedavg_exact, local_sgd_exact

RTOL = 1e-9


def test_li2020_thm1_engine_equals_plain_exact():
    v = li2020.verify()[0]
    c = np.array([[-1.0, 0], [-1 / 3, 0], [1 / 3, 0], [1.0, 0]])
    Q = Quadratics(np.array([np.eye(2)] * 4), c, p=[0.1, 0.2, 0.3, 0.4], sigma=3.0)
    gamma = 8.0  # max(8κ, E) with κ = 1, E = 1
    gaps = fedavg_exact(Q, Q.x_star, 1, 200, lambda t: 2 / (1.0 * (gamma + t)), t0=1)
    np.testing.assert_allclose(v.measured, gaps[-1], rtol=RTOL)
    assert v.method == "exact moments"


def test_li2020_thm3_engine_equals_plain_exact():
    v = li2020.verify()[1]
    Q = Quadratics(np.array([np.eye(2)] * 4), np.zeros((4, 2)), sigma=3.0)
    gaps = fedavg_exact(Q, Q.x_star, 1, 200, lambda t: 2 / (8.0 + t), scheme="II", m=2, t0=1)
    np.testing.assert_allclose(v.measured, gaps[-1], rtol=RTOL)


def test_lian2015_engine_equals_plain_exact():
    vs = lian2015.verify()
    A = np.diag([1.0, 0.5])
    for v, (m, tau, gamma) in zip(vs, ((1, 0, 0.2), (2, 3, 0.05)), strict=True):
        g2 = asysg_exact(A, np.zeros(2), np.array([3.0, -2.0]), 400, np.full((400, m), tau), gamma, 1.0)
        np.testing.assert_allclose(v.measured, g2[:400].mean(), rtol=RTOL)


def test_khaled2020_engine_equals_plain_exact():
    v = khaled2020.verify()[0]
    Q = Quadratics(np.array([np.eye(2)] * 4), np.zeros((4, 2)), sigma=2.0)
    ex = local_sgd_exact(Q, np.array([3.0, -2.0]), 1, 200, lambda t: 0.1)
    np.testing.assert_allclose(v.measured, ex["dist"][-1], rtol=RTOL)


def test_li2020_thm2_engine_equals_plain_exact():
    """Scheme I with one device per round (uniform p_k): the plain reference enumerates the N draws."""
    v = li2020.verify()[2]
    assert v.id == "published.li2020.thm2"
    c = np.array([[-1.0, 0], [-1 / 3, 0], [1 / 3, 0], [1.0, 0]])
    Q = Quadratics(np.array([np.eye(2)] * 4), c, sigma=0.0)
    gaps = fedavg_exact(Q, Q.x_star, 1, 200, lambda t: 2 / (8.0 + t), scheme="I", m=1, t0=1)
    np.testing.assert_allclose(v.measured, gaps[-1], rtol=RTOL)
    assert v.method == "exact moments"


def test_khaled2020_heterogeneous_engine_equals_plain_exact():
    """The averaged iterate (1/T) Σ_{t<T} x_t of a deterministic run (σ = 0, H = 1): afltheory's simulation
    against the plain exact accumulator of ``local_sgd_exact``."""
    v = khaled2020.verify()[1]
    assert v.id == "published.khaled2020.heterogeneous"
    curv = np.array([np.diag([1.0, 0.5]), np.diag([0.8, 1.0]), np.diag([1.0, 0.6]), np.diag([0.7, 0.9])])
    cross = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    Q = Quadratics(curv, cross, sigma=0.0)
    ex = local_sgd_exact(Q, Q.x_star + np.array([3.0, 0.0]), 1, 4, lambda t: 0.25, avg_weights=np.ones(4))
    np.testing.assert_allclose(v.measured, ex["avg_gap"], rtol=RTOL)


def test_stich2019_engine_equals_plain_exact():
    """x̂_T = Σ_t (a+t)² x_t / S_T of a deterministic run (σ = 0, H = 1): afltheory's simulation with the
    recorded iterates against the plain exact weighted accumulator of ``local_sgd_exact``."""
    v = stich2019.verify()[0]
    assert v.id == "published.stich2019.thm2.2"
    Q = Quadratics(np.array([np.eye(2)] * 4), np.zeros((4, 2)), sigma=0.0)
    a, T = 16.0, 5
    ex = local_sgd_exact(
        Q, np.array([1.0, 0.0]), 1, T, lambda t: 4 / (a + t), avg_weights=(a + np.arange(T)) ** 2
    )
    np.testing.assert_allclose(v.measured, ex["avg_gap"], rtol=RTOL)
