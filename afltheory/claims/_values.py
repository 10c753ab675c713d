"""A problem's constants as claim symbols (``problem_values``): a leaf of ``claims`` that ``verify`` and
``assumption_class`` both read (kept out of ``verify`` so the assumption class does not import it back)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["certified_G", "estimate_G", "problem_values"]


def certified_G(problem: Any) -> float | None:
    """G with E‖∇F_i(x, ξ)‖² ≤ G² for every worker i and every x in the problem's certified ball
    ‖x − x*‖ ≤ r (``constants.radius``), where a problem family allows it: quadratics (``dense_hessians``),
    closed form G² = σ_L² + max_i (‖∇f_i(x*)‖ + ‖A_i‖₂ r)² (E‖∇F_i‖² = ‖∇f_i(x)‖² + E‖ξ‖², the certified
    σ_L² bounds E‖ξ‖², and ‖A_i(x − c_i)‖ ≤ ‖A_i(x* − c_i)‖ + ‖A_i‖₂ ‖x − x*‖). None: not certifiable (no
    radius — a quadratic's gradients are unbounded on the whole space — or not a quadratic)."""
    c = problem.constants
    dense = getattr(problem, "dense_hessians", None)
    if c.radius is None or dense is None or c.x_star is None:
        return None
    H = dense()
    xs = np.asarray(c.x_star, dtype=float)
    g = np.array([np.linalg.norm(problem.local_grad(xs, i)) for i in range(problem.num_workers)])
    spec = np.array([np.linalg.norm(h, 2) for h in H])
    return float(np.sqrt(float(c.sigma_L) ** 2 + float(np.max(g + spec * float(c.radius))) ** 2))


def estimate_G(problem: Any, xs: np.ndarray) -> float:
    """G ESTIMATED on realized iterates ``xs`` (..., d) (not certified): G² = σ_L² + max over the iterates
    and workers of ‖∇f_i(x)‖², the largest E‖∇F_i(x, ξ)‖² seen along the trajectory (non-finite iterates of
    diverged replicates skipped)."""
    pts = np.asarray(xs, dtype=float).reshape(-1, problem.dim)
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    if pts.size == 0:
        raise ValueError("estimate_G: no finite iterate to estimate G on")
    best = max(
        float(np.max(np.sum(problem.local_grad(pts, i) ** 2, axis=-1))) for i in range(problem.num_workers)
    )
    return float(np.sqrt(float(problem.constants.sigma_L) ** 2 + best))


def problem_values(problem: Any, x0: Any = None) -> dict[str, float]:
    """The problem's constants as claim symbols: L, mu, kappa, sigma_L, sigma_G, f_*, M, sum_p2, and where the
    problem knows its local minima Gamma and zeta_star, sigma_G_mean where it is x-independent, G where it is
    certified (``certified_G``); f_0, Delta and D0 at ``x0`` (default start)."""
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
    G = certified_G(problem)
    if G is not None:
        out["G"] = G
    offsets = getattr(problem, "offsets", None)
    if offsets is not None and getattr(problem, "centers", None) is not None:  # quadratics: f_k* = e_k
        out["Gamma"] = float(c.f_star - np.sum(p * np.asarray(offsets, dtype=float)))
    return out
