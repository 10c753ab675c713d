"""Exact moments on diagonal structure: when every Hessian H_i, every noise covariance and H̄ are diagonal, the
d coordinates evolve independently in second moment.

Why: one round is x̃' = x̃ − s Σ_{i∈M_t} w_i (C_{iK} x̃_{t−τ} + c_{iK} + n_i) with C_{iK} and the noise
covariances diagonal, so coordinate k of the new state is a combination of coordinate k of the old state
only, with random coefficients (the schedule M_t, τ, K, shared by the coordinates). E[x̃_k x̃_l] for k ≠ l
is then generally not zero (the coordinates share the schedule), but E x̃_k² and E x̃_k feed only on
coordinate k's own moments — and E‖∇f‖² = Σ_k h̄_k² E x̃_k², E f = f* + ½ Σ_k h̄_k E x̃_k², E‖x̃‖² = Σ_k E x̃_k²
need nothing else. So a d-dimensional problem is d one-dimensional ones: the stacked state shrinks from
1 + (D+1)d (+ Md) to d states of 1 + (D+1) (+ M), and a round costs O(d) instead of O(d³).

One implementation of the split for both exact evaluators: ``split`` (the d one-dimensional problems of a
batch of diagonal ones) is what ``afltheory.adversary.fastexact`` runs its B·d candidates on, and
``DiagonalSystem`` runs the exact engine's own recursion (``ExactSystem``, unchanged) on each coordinate.
``moments`` takes this path when ``diagonal_system`` returns a system; otherwise (a dense or rotated
Hessian, a compressor, which mixes coordinates, a drifting optimum, a rule that prepares the problem, a
step-size schedule, an injected fault) the dense recursion runs. ``tests/exact/test_diagonal_structure.py``
checks the two paths agree to 1e-12.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .. import _faults
from ..problems.base import LinearGaussianModel, Problem
from . import cost as _cost

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.behaviour import BehaviourLike

__all__ = ["DiagonalSystem", "diagonal_system", "is_diagonal", "split"]


def is_diagonal(a: np.ndarray) -> bool:
    """True when every (…, d, d) matrix of ``a`` has zero off-diagonal entries."""
    a = np.asarray(a)
    d = a.shape[-1]
    return not np.any(a[..., ~np.eye(d, dtype=bool)])


def split(
    hessians: np.ndarray, b: np.ndarray, noise_cov: np.ndarray, hbar: np.ndarray, x0: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The B·d one-dimensional problems of B diagonal ones, candidate-major (row b·d + k is coordinate k of
    candidate b): ``hessians`` (B, M, d, d) → (B·d, M, 1, 1), ``b`` (B, M, d) → (B·d, M, 1), ``noise_cov``
    (B, M, d, d) → (B·d, M, 1, 1), ``hbar`` (B, d, d) → (B·d, 1, 1), ``x0`` (B, d) → (B·d, 1). The
    diagonals are read as they are: the caller checks ``is_diagonal``."""
    B, M, d, _ = hessians.shape
    k = np.arange(d)
    H1 = hessians[..., k, k].transpose(0, 2, 1).reshape(B * d, M, 1, 1)
    b1 = b.transpose(0, 2, 1).reshape(B * d, M, 1)
    N1 = noise_cov[..., k, k].transpose(0, 2, 1).reshape(B * d, M, 1, 1)
    hb = hbar[:, k, k].reshape(B * d, 1, 1)
    x01 = x0.reshape(B * d, 1)
    return H1, b1, N1, hb, x01


class _Coordinate(Problem):
    """Coordinate k of a diagonal linear-Gaussian problem as a one-dimensional problem (what ``ExactSystem``
    reads: ``dim``, ``num_workers`` and ``linear_gaussian()``; f* is carried by ``DiagonalSystem``)."""

    def __init__(self, model: LinearGaussianModel, num_workers: int):
        self.dim, self.num_workers, self._model = 1, num_workers, model

    def linear_gaussian(self) -> LinearGaussianModel:
        return self._model

    def local_value(self, x, i):  # pragma: no cover - never simulated: only the exact recursion reads it
        raise NotImplementedError("a coordinate of a diagonal problem is read by the exact recursion only")

    local_grad = local_value


class DiagonalSystem:
    """The exact recursion of a diagonal problem as ``dim`` one-dimensional ``ExactSystem``s: the same
    interface as ``ExactSystem`` (``initial``, ``step``, ``observe``, ``msd``, ``projected_cost``) on a state
    (dim, n₁, n₁) of per-coordinate stacked second moments, n₁ = 1 + (D+1) (+ M)."""

    def __init__(self, problem: Problem, model: LinearGaussianModel, systems: list):
        self.problem = problem
        self.systems = systems
        one = systems[0]
        self.d, self.M, self.m, self.Hn, self.cs = problem.dim, one.M, one.m, one.Hn, one.cs
        self.nJ = 1 + self.Hn * self.d
        self.n = self.nJ + (self.M * self.d if self.cs else 0)  # the dense state's size (reported as such)
        self.n_coordinate = one.n
        self.f_star = float(model.f_star)
        self.x_star = model.x_star.copy()

    def initial(self, x0: ArrayLike) -> np.ndarray:
        """The per-coordinate stacked second moments S_0 (dim, n₁, n₁) of the deterministic start ``x0``."""
        x0 = np.asarray(x0, dtype=float)
        return np.stack([s.initial(x0[k : k + 1]) for k, s in enumerate(self.systems)])

    def step(self, S: np.ndarray, t: int, noise: bool = True) -> np.ndarray:
        """S_{t+1} from S_t, coordinate by coordinate (``ExactSystem.step`` of each)."""
        return np.stack([s.step(S[k], t, noise) for k, s in enumerate(self.systems)])

    def observe(self, S: np.ndarray) -> tuple[float, float, np.ndarray]:
        """(E‖∇f(x_t)‖², E f(x_t), E x_t): the coordinates' sums (and their means side by side)."""
        obs = [s.observe(S[k]) for k, s in enumerate(self.systems)]
        return (
            float(sum(o[0] for o in obs)),
            self.f_star + float(sum(o[1] for o in obs)),  # each coordinate's f* is 0
            np.concatenate([o[2] for o in obs]),
        )

    def msd(self, S: np.ndarray) -> float:
        """E‖x_t − x*‖² = Σ_k E x̃_k²."""
        return float(sum(s.msd(S[k]) for k, s in enumerate(self.systems)))

    def projected_cost(self, rounds: int) -> _cost.ExactCost:
        """``dim`` times one coordinate's projection (the coordinates have the same structure: same law,
        history, workers)."""
        c = self.systems[0].projected_cost(rounds)
        d = self.d
        return dataclasses.replace(
            c,
            dim=d,
            state_size=d * c.state_size,
            blas_flops=d * c.blas_flops,
            einsum_flops=d * c.einsum_flops,
            sparse_flops=d * c.sparse_flops,
            elements=d * c.elements,
            seconds_per_round=d * c.seconds_per_round,
            setup_seconds=d * c.setup_seconds,
            seconds=d * c.seconds,
            bytes=d * c.bytes,
        )

    def dense_cost(self, rounds: int) -> _cost.ExactCost:
        """The projection of the dense recursion on the same problem (its round operator's entries on a
        diagonal problem: d(1 + B) per x̃ row block, B the delays of positive probability, plus the shifts
        and the slots), to choose the cheaper path without building the dense system."""
        a = self.systems[0].projection_args(rounds)
        d, M, cs, B = self.d, self.M, self.cs, a["delay_blocks"]
        nnz = d * (1 + B) * (1 + (M if cs else 0)) + self.Hn * d + (2 * M * d if cs else 0)
        return _cost.project_cost(**{**a, "dim": d, "nnz": nnz})


def diagonal_system(
    problem: Problem,
    algorithm: ServerRule,
    behaviour: BehaviourLike,
    system_class: type,
    rounds: int | None = None,
    **kwargs: Any,
) -> DiagonalSystem | None:
    """A ``DiagonalSystem`` for (problem, algorithm, behaviour) when the per-coordinate path applies (see the
    module docstring) and, given ``rounds``, is projected cheaper than the dense recursion (at small dim the
    dense one, a few BLAS calls per round, wins over dim interpreted one-dimensional rounds); else None (the
    caller runs the dense ``system_class``). ``kwargs`` go to each coordinate's ``system_class``
    (max_memory, allow_large)."""
    if (
        not isinstance(problem, Problem)
        or problem.dim < 2
        or getattr(problem, "drift_cov", None) is not None
        or getattr(algorithm, "prepare", None) is not None
        or getattr(algorithm, "compressor", None) is not None
        or getattr(algorithm, "scheduled", False)
        or _faults.active() is not None
        or not problem.additive_noise
    ):
        return None
    model = problem.linear_gaussian()
    if model is None or not (
        is_diagonal(model.hessians) and is_diagonal(model.noise_cov) and is_diagonal(model.hessian_mean)
    ):
        return None
    M = problem.num_workers
    arrays = (model.hessians, model.b, model.noise_cov, model.hessian_mean, model.x_star)
    H1, b1, N1, hb, xs = split(*(a[None] for a in arrays))

    def coordinate(k):
        model_k = LinearGaussianModel(H1[k], b1[k], N1[k], hb[k], xs[k], 0.0)
        return system_class(_Coordinate(model_k, M), algorithm, behaviour, **kwargs)

    first = coordinate(0)  # the coordinates share the law and the layout: one decides for all
    if rounds is not None:
        probe = DiagonalSystem(problem, model, [first])
        if probe.projected_cost(rounds).seconds >= probe.dense_cost(rounds).seconds:
            return None
    return DiagonalSystem(problem, model, [first] + [coordinate(k) for k in range(1, problem.dim)])
