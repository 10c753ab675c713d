"""The interpolators of the smooth classes: one formula, f(x) = min_{λ∈simplex} A‖x − Sλ‖² − aᵀλ + (κ/2)‖x‖².

Every class of :mod:`afltheory.functions` interpolates its data by a function of this shape (the conjugate
of a strongly convex quadratic plus a max of affine functions, shifted by a quadratic), with (S, a, A, κ)
computed from the data by the class (``smooth.py``, ``strongly_convex.py``). For fixed λ the minimum over x
is β‖Sλ‖² − aᵀλ with β = Aκ/(2A + κ), attained at x = 2A Sλ/(2A + κ), so inf f is the minimum of that
quadratic over the simplex: at a vertex when β ≤ 0 (the nonconvex and convex classes), a convex QP when
β > 0 (strongly convex).
"""

from __future__ import annotations

import numpy as np

__all__ = ["KKT_TOL", "SimplexInterpolant"]

#: a vertex λ = e_p is accepted as the minimizer when its KKT residual is below this (relative)
KKT_TOL = 1e-11


class SimplexInterpolant:
    """f(x) = min_{λ∈simplex} A‖x − Sλ‖² − aᵀλ + (κ/2)‖x‖² (module docstring) for ``S`` (P, d), ``a`` (P,),
    ``A`` > 0, 2A + κ > 0 and ``beta`` = Aκ/(2A + κ) (given by the class, exactly). ``L``: the class's
    smoothness (reported). ``inf`` is inf f, exact (attained at ``argmin``)."""

    def __init__(self, S: np.ndarray, a: np.ndarray, A: float, kappa: float, beta: float, L: float):
        self.L = L
        self.A, self.kappa, self.beta = float(A), float(kappa), float(beta)
        if not (self.A > 0 and 2 * self.A + self.kappa > 0):
            raise ValueError(f"A={A} must be > 0 and 2A + kappa={2 * A + kappa} > 0")
        self.S, self.a = np.asarray(S, dtype=float), np.asarray(a, dtype=float)
        self.dim = self.S.shape[1]
        self.SS = self.S @ self.S.T
        self.fallbacks = 0  # evaluations that needed the general QP (not a vertex)
        low = self.beta * np.sum(self.S * self.S, axis=1) - self.a  # the vertices' values
        self.inf_index = int(np.argmin(low))
        shrink = 2 * self.A / (2 * self.A + self.kappa)
        if self.beta <= 0:  # concave (or linear) in λ: the minimum is at a vertex
            #: inf f, exact (attained at ``argmin``)
            self.inf = float(low[self.inf_index])
            #: a minimizer: 2A s_p/(2A + κ) for the minimizing vertex p
            self.argmin = shrink * self.S[self.inf_index]
        else:  # convex in λ: the QP min β λᵀ(SSᵀ)λ − aᵀλ over the simplex
            lam = self._qp(np.zeros(len(self.a)), self.inf_index, self.beta)
            c = self.S.T @ lam
            self.inf = float(self.beta * float(c @ c) - float(self.a @ lam))
            self.argmin = shrink * c

    def _weights(self, x: np.ndarray) -> np.ndarray:
        """λ*(x): the minimizer over the simplex of q(λ) = A‖x − Sλ‖² − aᵀλ."""
        A, S, a = self.A, self.S, self.a
        Sx = S @ x
        xx = float(x @ x)
        qv = A * (xx - 2 * Sx + np.diag(self.SS)) - a  # q(e_p)
        p = int(np.argmin(qv))
        grad = 2 * A * (self.SS[p] - Sx) - a  # ∇q(e_p)
        scale = max(1.0, float(np.abs(grad).max()), abs(float(qv[p])))
        if float(np.min(grad - grad[p])) >= -KKT_TOL * scale:
            lam = np.zeros(len(a))
            lam[p] = 1.0
            return lam
        self.fallbacks += 1
        return self._qp(Sx, p, A)

    def _qp(self, Sx, p0, A) -> np.ndarray:
        """Exact active-set solve of min A λᵀ(SSᵀ)λ − (2A Sx + a)ᵀλ over the simplex (small P), started at
        e_{p0} (= min A‖x − Sλ‖² − aᵀλ up to a constant)."""
        a, Q = self.a, self.SS
        P = len(a)
        c = -2 * A * Sx - a  # q(λ) = A λᵀQλ + cᵀλ + A‖x‖²
        active = [p0]
        lam = np.zeros(P)
        lam[p0] = 1.0
        for _ in range(20 * P + 100):
            idx = np.array(active)
            k = len(idx)
            # KKT on the face: 2A Q_AA λ_A + c_A + ν 1 = 0, 1ᵀλ_A = 1
            K = np.zeros((k + 1, k + 1))
            K[:k, :k] = 2 * A * Q[np.ix_(idx, idx)]
            K[:k, k] = 1.0
            K[k, :k] = 1.0
            rhs = np.concatenate([-c[idx], [1.0]])
            sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
            z = sol[:k]
            if np.all(z >= -1e-15):
                lam = np.zeros(P)
                lam[idx] = np.maximum(z, 0.0)
                lam /= lam.sum()
                g = 2 * A * (Q @ lam) + c
                nu = float(g[idx] @ lam[idx])
                viol = g - nu
                j = int(np.argmin(viol))
                if viol[j] >= -1e-13 * max(1.0, float(np.abs(g).max())) or j in active:
                    return lam
                active.append(j)
                continue
            # step from lam toward z until a coordinate hits zero, then drop it
            cur = lam[idx]
            d = z - cur
            neg = d < 0
            steps = np.where(neg, cur / np.where(neg, -d, 1.0), np.inf)
            s = float(min(1.0, steps.min()))
            new = cur + s * d
            drop = int(np.argmin(np.where(neg, steps, np.inf)))
            new[drop] = 0.0
            lam = np.zeros(P)
            lam[idx] = np.maximum(new, 0.0)
            lam /= lam.sum()
            active = [int(i) for i in idx if lam[i] > 0]
        return lam

    def value_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(f(x), ∇f(x)) at one point x (d,)."""
        x = np.asarray(x, dtype=float)
        lam = self._weights(x)
        c = self.S.T @ lam
        r = x - c
        h = self.A * float(r @ r) - float(self.a @ lam)
        return h + self.kappa / 2 * float(x @ x), (2 * self.A + self.kappa) * x - 2 * self.A * c

    def value(self, x: np.ndarray) -> np.ndarray:
        """f(x) for x (..., d)."""
        x = np.asarray(x, dtype=float)
        flat = x.reshape(-1, self.dim)
        return np.array([self.value_grad(v)[0] for v in flat]).reshape(x.shape[:-1])

    def grad(self, x: np.ndarray) -> np.ndarray:
        """∇f(x) for x (..., d)."""
        x = np.asarray(x, dtype=float)
        flat = x.reshape(-1, self.dim)
        return np.array([self.value_grad(v)[1] for v in flat]).reshape(x.shape)
