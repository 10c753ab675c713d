"""A problem's constants as claim symbols (``problem_values``): a leaf of ``claims`` that ``verify`` and
``assumption_class`` both read (kept out of ``verify`` so the assumption class does not import it back)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["problem_values"]


def problem_values(problem: Any, x0: Any = None) -> dict[str, float]:
    """The problem's constants as claim symbols: L, mu, kappa, sigma_L, sigma_G, f_*, M, sum_p2, and where the
    problem knows its local minima Gamma and zeta_star, sigma_G_mean where it is x-independent; f_0, Delta
    and D0 at ``x0`` (default start)."""
    c = problem.constants
    M = problem.num_workers
    p = np.asarray(getattr(problem, "weights", None) or np.full(M, 1.0 / M))
    out = {
        "L": float(c.L),
        "mu": float(c.mu),
        "sigma_L": float(c.sigma_L),
        "sigma_G": float(c.sigma_G),
        "f_*": float(c.f_star),
        "M": float(M),
        "sum_p2": float(np.sum(p * p)),
    }
    if c.mu > 0:
        out["kappa"] = float(c.L / c.mu)
    x0 = problem.default_x0() if x0 is None else np.asarray(x0, dtype=float)
    f0 = float(np.mean(problem.value(x0)))
    out.update({"f_0": f0, "Delta": f0 - float(c.f_star)})
    if c.x_star is not None:
        xs = np.asarray(c.x_star, dtype=float)
        out["D0"] = float(np.mean(np.sum((x0 - xs) ** 2, axis=-1)))
        try:
            g = np.stack([problem.local_grad(xs, i) for i in range(M)])
            out["zeta_star"] = float(np.sqrt(np.sum(p * np.sum(g * g, axis=1))))
        except (NotImplementedError, AttributeError, ValueError):
            pass
    if getattr(problem, "shared", False) and getattr(problem, "centers", None) is not None:
        # one shared Hessian A: ∇f_i(x) − ∇f(x) = A(c̄_p − c_i) for every x, so the sup is this value
        g = np.stack([problem.local_grad(x0, i) for i in range(M)])
        dev = g - p @ g
        out["sigma_G_mean"] = float(np.sqrt(np.mean(np.sum(dev * dev, axis=1))))
    offsets = getattr(problem, "offsets", None)
    if offsets is not None and getattr(problem, "centers", None) is not None:  # quadratics: f_k* = e_k
        out["Gamma"] = float(c.f_star - np.sum(p * np.asarray(offsets, dtype=float)))
    return out
