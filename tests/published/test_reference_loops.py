"""The plain loops against the exact moment propagation (both in reference_loops.py, written separately: the
loops follow the papers' pseudo-code one replicate at a time, the moments compose affine maps). Monte Carlo
z-tests with fixed seeds: |z| < 5 (false-failure probability < 1e-6 per comparison); deterministic cases to
1e-12."""

from __future__ import annotations

import numpy as np
import pytest

from .cases import CROSS, CURV4, P4, SIG4, X0
from .reference_loops import (
    Quadratics,
    asysg_exact,
    asysg_loop,
    fedavg_exact,
    fedavg_loop,
    local_sgd_exact,
    local_sgd_loop,
)

Q = Quadratics(CURV4, 2 * CROSS, p=P4, sigma=SIG4)


def _z(samples, exact):
    return (samples.mean() - exact) / (samples.std(ddof=1) / np.sqrt(len(samples)))


@pytest.mark.parametrize("scheme, m", [("full", None), ("I", 2), ("II", 2)])
def test_fedavg_loop_matches_exact_moments(scheme, m):
    E, rounds, R = 3, 5, 1200
    kappa = Q.L / Q.mu
    eta = lambda t: 2 / (Q.mu * (max(8 * kappa, E) + t))  # noqa: E731
    ex = fedavg_exact(Q, X0, E, rounds, eta, scheme=scheme, m=m)
    vals = np.array(
        [
            Q.f(fedavg_loop(Q, X0, E, rounds, eta, np.random.default_rng(1000 + r), scheme, m)[-1]) - Q.f_star
            for r in range(R)
        ]
    )
    assert abs(_z(vals, ex[-1])) < 5


def test_fedavg_loop_deterministic_is_exact():
    Qd = Quadratics(CURV4, 2 * CROSS, p=P4)
    eta = lambda t: 0.3 / (1 + 0.1 * t)  # noqa: E731
    ex = fedavg_exact(Qd, X0, 3, 8, eta)
    xs = fedavg_loop(Qd, X0, 3, 8, eta, np.random.default_rng(0))
    np.testing.assert_allclose([Qd.f(x) - Qd.f_star for x in xs], ex, rtol=1e-12, atol=1e-15)


def test_local_sgd_loop_matches_exact_moments():
    R, T, H = 1500, 12, 4
    w = np.arange(T, dtype=float) + 1
    ex = local_sgd_exact(Q, X0, H, T, lambda t: 0.2, avg_weights=w)
    out = []
    for r in range(R):
        av = local_sgd_loop(Q, X0, H, T, lambda t: 0.2, np.random.default_rng(r))
        acc = sum(w[t] * av[t] for t in range(T)) / w.sum()
        out.append([Q.f(av[-1]) - Q.f_star, Q.f(acc) - Q.f_star])
    out = np.array(out)
    assert abs(_z(out[:, 0], ex["gap"][-1])) < 5
    assert abs(_z(out[:, 1], ex["avg_gap"])) < 5


def test_asysg_loop_matches_exact_moments():
    A, c = np.diag([1.0, 0.3]), np.array([1.0, -1.0])
    delays = np.array([[0, 2], [1, 3], [3, 0], [2, 2], [0, 1], [3, 3], [1, 0], [2, 1]])
    ex = asysg_exact(A, c, X0, 8, delays, 0.1, 1.0)
    R = 3000
    vals = np.array(
        [
            np.sum(
                (
                    A
                    @ (
                        asysg_loop(
                            lambda x: A @ (x - c), X0, 8, delays, 0.1, 1.0, 2, np.random.default_rng(r)
                        )[-1]
                        - c
                    )
                )
                ** 2
            )
            for r in range(R)
        ]
    )
    assert abs(_z(vals, ex[-1])) < 5
