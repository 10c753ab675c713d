"""Which reading of Lian et al.'s step condition can be the theorem? Two recollections (both from memory):
L M γ + 2 L² M² T² γ² ≤ 1 (``afltheory.published.lian2015``, T the delay bound) and L M γ + 2 L² M² T γ² ≤ 1
(docs/tutorial/lian2015_asysg.py). Independent evidence on f(x) = ½‖x‖² (L = 1) with every gradient delayed by
exactly τ, exact (plain references, no afltheory code): x_{k+1} = x_k − Mγ x_{k−τ} is stable iff every root of
z^{τ+1} − z^τ + Mγ lies in the unit disc.

- Under the linear-in-τ reading the condition admits Mγ = 0.2207 at τ = 8, where the iteration DIVERGES (root
  modulus 1.015): the claimed bound cannot hold there (exact moments exceed it by > 1e10 at K = 1000). So that
  reading cannot be the theorem.
- Under the τ² reading the largest admitted step is stable and the bound holds on a grid of instances (worst
  measured/bound 0.70; curvatures, m ∈ {1, 2, 4}, τ ∈ {1, 2, 4, 8}, σ ∈ {0, 1, 5}, K ∈ {50, 300}).
"""

from __future__ import annotations

import numpy as np
import pytest

from afltheory.published import lian2015

from .reference_loops import asysg_exact, asysg_loop


def _gamma(m, tau_term):
    """The largest γ with m γ + 2 m² tau_term γ² ≤ 1 (L = 1)."""
    a, b = 2 * m * m * tau_term, m
    return (-b + np.sqrt(b * b + 4 * a)) / (2 * a)


def _root_modulus(mg, tau):
    c = np.zeros(tau + 2)
    c[0], c[1], c[-1] = 1.0, -1.0, mg
    return float(np.max(np.abs(np.roots(c))))


def test_linear_tau_reading_admits_a_diverging_step():
    tau, m = 8, 1
    g = _gamma(m, tau)
    assert m * g + 2 * m * m * tau * g * g <= 1 + 1e-12
    assert _root_modulus(m * g, tau) > 1.01
    T, A, x0 = 1000, np.eye(2), np.array([1.0, 0.0])
    g2 = asysg_exact(A, np.zeros(2), x0, T, np.full((T, m), tau), g, 0.0)
    bound = lian2015.THM1.value(dict(L=1.0, m=m, tau=tau, eta=g, T=T, Delta=0.5, sigma=0.0))
    assert g2[:T].mean() > 1e10 * bound
    # the plain loop agrees (deterministic)
    xs = asysg_loop(lambda x: x, x0, T, np.full((T, m), tau), g, 0.0, 2, np.random.default_rng(0))
    np.testing.assert_allclose(np.mean([x @ x for x in xs[:T]]), g2[:T].mean(), rtol=1e-8)


def test_tau_squared_reading_admits_only_stable_steps():
    for tau in (1, 2, 4, 8, 16):
        for m in (1, 2, 4):
            assert _root_modulus(m * _gamma(m, tau**2), tau) < 1


@pytest.mark.parametrize("lam2", [1.0, 0.01])
def test_tau_squared_reading_bound_holds_on_grid(lam2):
    A = np.diag([1.0, lam2])
    worst = 0.0
    for m in (1, 2, 4):
        for tau in (1, 2, 4, 8):
            g = _gamma(m, tau**2)
            for T in (50, 300):
                for sig in (0.0, 1.0, 5.0):
                    x0 = np.array([3.0, -2.0])
                    meas = asysg_exact(A, np.zeros(2), x0, T, np.full((T, m), tau), g, sig)[:T].mean()
                    b = lian2015.THM1.value(
                        dict(L=1.0, m=m, tau=tau, eta=g, T=T, Delta=0.5 * x0 @ A @ x0, sigma=sig)
                    )
                    worst = max(worst, meas / b)
    assert worst <= 0.75, worst  # measured: 0.70 (identity Hessian, m = 4, τ = 1, σ = 0)
