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
``DiagonalSystem`` runs the exact engine's recursion (``ExactSystem``'s round, moments.py) on all d
coordinates at once — every array with a leading coordinate axis, so a round is the same few dozen numpy
calls whatever d is (issue 41: time(d = 80) / time(d = 20) ≈ 1–2.5 on its family, docs/performance.md);
coordinate 0's ``ExactSystem`` supplies the shared round law, rule view and refusals. Its cost projection is
``exact.cost.project_batched_cost``. ``moments`` takes this path when ``diagonal_system`` returns a system
(the projection says it is cheaper than the dense recursion); otherwise (a dense or rotated
Hessian, a compressor, which mixes coordinates, a drifting optimum, a rule that prepares the problem, a
step-size schedule, an injected fault) the dense recursion runs. ``tests/exact/test_diagonal_structure.py``
checks the two paths agree to 1e-12.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .. import _faults
from ..problems.base import LinearGaussianModel, Problem
from . import cost as _cost
from .local import local_maps

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


def worker_outcomes(
    rule: Any,
    law: Any,
    pmfs: list,
    maps: list,
    H: int,
    add: Callable[[int, int, Any, float, float], None],
    block: Callable[[Any], np.ndarray],
    stack: Callable[[list], np.ndarray],
) -> tuple | None:
    """The loop over (worker i, K, τ) of a round operator's build, written once for ``ExactSystem._build`` and
    ``DiagonalSystem._build``: ``add(i, τ, local map of K, p = P(K) P(τ), w = weight(K, τ) · worker weight)``
    for every outcome of nonzero probability (K-major), which accumulates the operator's means; then, for
    the workers with more than one outcome (within-worker randomness of (K, τ): E[D S Dᵀ] ≠ D̄ S D̄ᵀ), the
    combos (p_K, w_K · worker weight · ``block(map)`` stacked by ``stack``, their worker's index among them,
    those workers, q[τ] = P(τ) w_τ² (H,) each) — None when every worker's update is deterministic given its
    arrival."""
    cp, cD, cw, qs, rand = [], [], [], [], []
    for i in range(len(pmfs)):
        q = np.zeros(H)
        for tau, pt in enumerate(pmfs[i]):
            q[tau] = pt * rule.weight_tau(tau) ** 2
        count = 0
        for K, pK in law.k_pmf[i].items():
            lm = maps[i][K]
            for tau, pt in enumerate(pmfs[i]):
                if pt == 0:
                    continue
                add(i, tau, lm, pK * pt, rule.weight(K, tau) * rule.worker_weight(i))
                count += 1
        if count > 1:
            for K, pK in law.k_pmf[i].items():
                cp.append(pK)
                cD.append(rule.weight_K(K) * rule.worker_weight(i) * block(maps[i][K]))
                cw.append(len(rand))
            rand.append(i), qs.append(q)
    if not rand:
        return None
    return np.array(cp), stack(cD), np.array(cw), np.array(rand), np.array(qs)


@dataclass
class _BatchedOp:
    """One round's operator for every coordinate at once (``moments._Op`` with a leading coordinate axis and
    the dense n₁ × n₁ round operator: n₁ is a few entries)."""

    A: np.ndarray  # (d, n₁, n₁): Ā of each coordinate
    U: np.ndarray  # (d, M, 1, nJ₁): D̄_i on the (const, history) columns
    combos: tuple | None  # (p_K (C,), [c|C] (d, C, 1, 2), slot (C,), random workers (R,), τ weights (R, H))
    Qbar: np.ndarray  # (d, M, 1, 1): E[w² Cov n_i]
    deterministic: bool
    V: np.ndarray | None = (
        None  # (d, M, nJ₁): Σ_j Δ_ij D̄_j, the cross-worker term's right factor (not AFA-CS)
    )


class DiagonalSystem:
    """The exact recursion of a diagonal problem run on its ``dim`` one-dimensional problems at once: the
    recursion of ``ExactSystem`` (moments.py) with a leading coordinate axis on every array, so one round is
    the same ~40 numpy calls whatever ``dim`` is (batched over the coordinates) instead of ``dim`` interpreted
    one-dimensional rounds. The same interface as ``ExactSystem`` (``initial``, ``step``, ``observe``,
    ``msd``, ``projected_cost``) on a state (dim, n₁, n₁) of per-coordinate stacked second moments,
    n₁ = 1 + (D+1) (+ M). ``base`` is coordinate 0's ``ExactSystem``: the round law, the rule's declarative
    view, the step scale, the inclusion covariance and the refusals, which the coordinates share."""

    def __init__(self, problem: Problem, model: LinearGaussianModel, base: Any):
        self.problem, self.base = problem, base
        self.law, self.rule = base.law, base.rule
        self.d, self.M, self.m, self.Hn, self.cs = problem.dim, base.M, base.m, base.Hn, base.cs
        self.nJ = 1 + self.Hn * self.d
        self.n = self.nJ + (self.M * self.d if self.cs else 0)  # the dense state's size (reported as such)
        self.nJ1 = 1 + self.Hn
        self.n_coordinate = base.n
        self.f_star = float(model.f_star)
        self.x_star = model.x_star.copy()
        arrays = (model.hessians, model.b, model.noise_cov, model.hessian_mean, model.x_star)
        H1, b1, N1, hb, xs = split(*(a[None] for a in arrays))
        self.hbar = hb[:, 0, 0]  # (d,)
        self.xs = xs[:, 0]  # (d,)
        bt = b1 - H1[..., 0] * xs[:, None, :]  # b̃_i = b_i − H_i x*, per coordinate (d, M, 1)
        law, rule, M = self.law, self.rule, self.M
        etas = rule.local_steps_for(M)
        self.maps = [
            local_maps(
                H1[:, i], bt[:, i], N1[:, i], etas[i], rule.mu, set(law.k_pmf[i]) | set(law.k_init_pmf[i])
            )
            for i in range(M)
        ]
        self.scale, self.Delta = base.scale, base.Delta
        self._blk = np.array([[0, 1 + k] for k in range(self.Hn)])
        self._ops: dict = {}

    # ------------------------------------------------------------------------------------------ operators
    def op(self, t: int) -> _BatchedOp:
        """The (cached) operator of round ``t`` for every coordinate (keyed as ``ExactSystem.op``)."""
        law = self.law
        if law.stationary:
            key = min(t, law.time_invariant_from)
            if key not in self._ops:
                self._ops[key] = self._build([law.delay_pmf(key, i) for i in range(self.M)])
            return self._ops[key]
        pmfs = [law.delay_pmf(t, i) for i in range(self.M)]
        key = tuple(p.tobytes() for p in pmfs)
        if key not in self._ops:
            self._ops[key] = self._build(pmfs)
        return self._ops[key]

    def _build(self, pmfs) -> _BatchedOp:
        """``ExactSystem._build`` for the d coordinates at once (the Python loop over (worker, K, τ) runs
        once, on (d, …) arrays)."""
        D, M, nJ, n, rule, law = self.d, self.M, self.nJ1, self.n_coordinate, self.rule, self.law
        U = np.zeros((D, M, 1, nJ))
        Qbar = np.zeros((D, M, 1, 1))

        def add(i, tau, lm, p, w):
            U[:, i, 0, 0] += p * w * lm.c[:, 0]
            U[:, i, 0, 1 + tau] += p * w * lm.C[:, 0, 0]
            Qbar[:, i] += p * w * w * lm.Q

        combos = worker_outcomes(
            rule,
            law,
            pmfs,
            self.maps,
            self.Hn,
            add,
            lambda lm: np.stack([lm.c, lm.C[:, 0]], axis=-1),
            lambda cD: np.stack(cD, axis=1),
        )
        deterministic = combos is None
        pi = law.pi
        A = np.zeros((D, n, n))
        A[:, 0, 0] = 1.0
        A[:, 1, 1] = 1.0
        A[:, 1, :nJ] -= self.scale * np.einsum("i,nik->nk", pi, U[:, :, 0])
        for k in range(1, self.Hn):  # history shift: new x̃_{t+1−k} = old x̃_{t−(k−1)}
            A[:, 1 + k, k] = 1.0
        if self.cs:
            for j in range(M):
                A[:, 1, nJ + j] = -self.scale * (1 - pi[j])
                A[:, nJ + j, nJ + j] = 1.0 - pi[j]
                A[:, nJ + j, :nJ] = pi[j] * U[:, j, 0]
        V = None
        if not self.cs:  # Δ applied to the workers' axis of every coordinate: one product
            Um = U[:, :, 0].transpose(1, 0, 2).reshape(M, D * nJ)
            V = (self.Delta @ Um).reshape(M, D, nJ).transpose(1, 0, 2)
        return _BatchedOp(A, U, combos, Qbar, deterministic, V)

    # ------------------------------------------------------------------------------------------ recursion
    def initial(self, x0: ArrayLike) -> np.ndarray:
        """The per-coordinate stacked second moments S_0 (dim, n₁, n₁) of the deterministic start ``x0``."""
        D, M, nJ, law = self.d, self.M, self.nJ1, self.law
        xt = np.asarray(x0, dtype=float) - self.xs
        z = np.zeros((D, self.n_coordinate))
        z[:, 0] = 1.0
        z[:, 1:nJ] = xt[:, None]
        cov = np.zeros((D, M))
        if self.cs and self.rule.warm_start:
            for i in range(M):
                vs = {K: self.maps[i][K].C[:, 0, 0] * xt + self.maps[i][K].c[:, 0] for K in law.k_init_pmf[i]}
                mean = sum(p * vs[K] for K, p in law.k_init_pmf[i].items())
                z[:, nJ + i] = mean
                cov[:, i] = sum(
                    p * ((vs[K] - mean) ** 2 + self.maps[i][K].Q[:, 0, 0])
                    for K, p in law.k_init_pmf[i].items()
                )
        S = z[:, :, None] * z[:, None, :]
        if self.cs:
            S[:, nJ + np.arange(M), nJ + np.arange(M)] += cov
        return S

    def _within(self, op: _BatchedOp, S: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """W_i = E[D_i S D_iᵀ] − D̄_i S D̄_iᵀ for every coordinate and worker (d, M); ``Y`` = D̄_i S_JJ (d, M,
        nJ₁). Each D_i is a row [c | C] on (const, x̃_{t−τ}): the quadratic forms are written out
        elementwise (no per-matrix products of 1 × 2 rows)."""
        W = np.zeros((self.d, self.M))
        p, Dc, who, rand, q = op.combos
        Sb = S[:, self._blk[:, :, None], self._blk[:, None, :]].reshape(
            self.d, self.Hn, 4
        )  # S on (0, x̃_{t−τ})
        Sm = np.matmul(q, Sb)[:, who]  # (d, C, 4): Σ_τ p_τ w_τ² S_τ of each combination's worker
        a, b = Dc[:, :, 0, 0], Dc[:, :, 0, 1]
        E = a * (Sm[..., 0] * a + Sm[..., 1] * b) + b * (Sm[..., 2] * a + Sm[..., 3] * b)
        E *= p
        starts = np.flatnonzero(np.r_[True, who[1:] != who[:-1]])
        W[:, rand] = np.add.reduceat(E, starts, axis=1) - (Y[:, rand] * op.U[:, rand, 0]).sum(axis=2)
        return W

    def step(self, S: np.ndarray, t: int, noise: bool = True) -> np.ndarray:
        """S_{t+1} from S_t for every coordinate (``ExactSystem.step`` with a leading coordinate axis)."""
        op = self.op(t)
        M, nJ, pi, s = self.M, self.nJ1, self.law.pi, self.scale
        Snew = np.matmul(np.matmul(op.A, S), op.A.transpose(0, 2, 1))
        Y = np.matmul(op.U[:, :, 0], S[:, :nJ, :nJ])  # (d, M, nJ₁) = D̄_i S_JJ: one product per coordinate
        W = self._within(op, S, Y) if not op.deterministic else 0.0
        own = W + op.Qbar[:, :, 0, 0] if noise else W + np.zeros((self.d, M))  # (d, M)
        if not self.cs:
            inc = (Y * op.V).sum(axis=(1, 2)) + own @ pi
            Snew[:, 1, 1] += s**2 * inc
        else:
            U2 = op.U[:, :, 0]  # (d, M, nJ)
            G2 = np.matmul(U2, S[:, :nJ, nJ:])  # (d, M, M)
            X = np.matmul(Y, U2.transpose(0, 2, 1)) - G2 - G2.transpose(0, 2, 1) + S[:, nJ:, nJ:]
            X *= self.Delta
            X[:, np.arange(M), np.arange(M)] += pi * own
            Snew[:, nJ:, nJ:] += X
            xS = -s * X.sum(axis=1)  # (d, M)
            Snew[:, 1, nJ:] += xS
            Snew[:, nJ:, 1] += xS
            Snew[:, 1, 1] += s**2 * X.sum(axis=(1, 2))
        Snew += Snew.transpose(0, 2, 1)
        Snew *= 0.5
        return Snew

    def observe(self, S: np.ndarray) -> tuple[float, float, np.ndarray]:
        """(E‖∇f(x_t)‖², E f(x_t), E x_t): Σ_k h̄_k² E x̃_k², f* + ½ Σ_k h̄_k E x̃_k², x* + E x̃."""
        P = S[:, 1, 1]
        return (
            float(np.sum(self.hbar**2 * P)),
            self.f_star + 0.5 * float(np.sum(self.hbar * P)),
            S[:, 0, 1] + self.xs,
        )

    def msd(self, S: np.ndarray) -> float:
        """E‖x_t − x*‖² = Σ_k E x̃_k²."""
        return float(np.sum(S[:, 1, 1]))

    def projected_cost(self, rounds: int) -> _cost.ExactCost:
        """The projected cost of ``rounds`` batched rounds (``exact.cost.project_batched_cost``: dim times one
        coordinate's work per round at the batched constants, one round's interpreter cost, the set-up)."""
        a = self.base.projection_args(rounds)
        keys = ("num_workers", "history", "memory_slots", "rounds", "random_workers", "k_combos")
        return _cost.project_batched_cost(
            self.d, **{k: a[k] for k in keys}, local_steps=a["local_steps"], build_terms=a["build_terms"]
        )

    def dense_cost(self, rounds: int) -> _cost.ExactCost:
        """The projection of the dense recursion on the same problem (its round operator's entries on a
        diagonal problem: d(1 + B) per x̃ row block, B the delays of positive probability, plus the shifts
        and the slots), to choose the cheaper path without building the dense system."""
        a = self.base.projection_args(rounds)
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
    dense one, a few BLAS calls per round, wins over the batched round's fixed interpreter cost); else None
    (the caller runs the dense ``system_class``). ``kwargs`` go to coordinate 0's ``system_class``
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
    H1, b1, N1, hb, xs = split(
        *(a[None] for a in (model.hessians, model.b, model.noise_cov, model.hessian_mean, model.x_star))
    )
    # coordinate 0's system: the round law, the rule's view and the refusals (shared by the coordinates)
    base = system_class(
        _Coordinate(LinearGaussianModel(H1[0], b1[0], N1[0], hb[0], xs[0], 0.0), problem.num_workers),
        algorithm,
        behaviour,
        **kwargs,
    )
    system = DiagonalSystem(problem, model, base)
    if rounds is not None and system.projected_cost(rounds).seconds >= system.dense_cost(rounds).seconds:
        return None
    return system
