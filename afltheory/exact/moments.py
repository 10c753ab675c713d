"""Exact first and second moments of AFA-CD / FedAvg / FedBuff / AsySG / AFA-CS on linear-Gaussian problems.

State (coordinates centred at x*, x̃ = x − x*):  z_t = (1, x̃_t, x̃_{t−1}, …, x̃_{t−D}, [s_1, …, s_M]),
D = max_delay, s_i the AFA-CS memory slots. One round is z_{t+1} = A_t z_t + ε_t where A_t depends only on
the round's schedule (M_t, τ_{t,i}, K_{t,i}) — independent of z_t — and ε_t is zero-mean given the schedule
and z_t. Writing the random part of A_t as a sum over arrivals,

    A_t = A⁰ + Σ_{i∈M_t} L_i D_i(K_i, τ_i),

(L_i places a worker's d-vector into the rows it changes; D_i(K, τ) z = w(K, τ)(C_{iK} x̃_{t−τ} + c_{iK}),
minus s_i for AFA-CS), the second moment S_t = E z_t z_tᵀ evolves exactly by

    S_{t+1} = Ā S Āᵀ + Σ_{i,j} (π_ij − π_i π_j) L_i D̄_i S D̄_jᵀ L_jᵀ
              + Σ_i π_i L_i (E[D_i S D_iᵀ] − D̄_i S D̄_iᵀ + E[w² Cov n_i]) L_iᵀ,

with Ā = E A_t, D̄_i = E_{K,τ} D_i, π_i = P(i ∈ M_t), π_ij = P(i, j ∈ M_t) (π_ii = π_i): distinct arrivals
draw their τ and K independently, so given i, j ∈ M_t, E[D_i S D_jᵀ] = D̄_i S D̄_jᵀ. E z_t = S_t[0, :].
Then E‖∇f(x_t)‖² = tr(H̄² E x̃_t x̃_tᵀ) and E f(x_t) = f* + ½ tr(H̄ E x̃_t x̃_tᵀ).

Compressed updates (the server rule's ``compressor``, a *linear* compressor C(G) = M G with E M = I and M
drawn independently per arrival: RandK, BernoulliMask, Subsample, GaussianSketch, LowRank): Ā and the
cross-worker terms are unchanged, and each arrival's own term Γ_i = E[G_i G_iᵀ] = D̄_i S D̄_iᵀ + W_i +
E[w² Cov n_i] becomes Ψ(Γ_i) = E[M Γ_i Mᵀ] (``Compressor.moment_map``) — multiplicative noise that depends
on the state's second moment S, so it enters the recursion through S, not as an additive covariance.
"""

from __future__ import annotations

import copy
import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from numpy.typing import ArrayLike

from .. import _faults
from .._validation import check_array, check_component, check_int, check_positive
from ..algorithms.base import UnsupportedRule
from ..compression.channel import check_compressor
from ..compression.compressors import Compressor
from . import cost as _cost
from . import diagonal, drift
from .cost import estimate_memory
from .law import SIMULATE_HINT, ExactUnavailable, round_law
from .local import ExactRule, linear_model, local_maps, local_maps_sequence, server_rule

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.behaviour import BehaviourLike
    from ..engine import Trace
    from ..problems.base import Problem
    from ..problems.drifting import DriftingQuadratic

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "estimate_memory",
    "ExactSystem",
    "MAX_LOCAL_MAP_FLOPS",
    "MAX_LOCAL_STEP_TOTAL",
    "Moments",
    "moments",
    "rounds_to_epsilon",
    "steady_state",
    "SteadyState",
    "zscores",
]

DEFAULT_MAX_MEMORY = 2 * 1024**3  # bytes
#: Work limit of the exact local maps (≈ 2·dim³ flops per local step and worker), checked before building
# them.
MAX_LOCAL_MAP_FLOPS = 2e10
#: Largest Σ_i (K_max,i + |support of worker i's K pmf|): the exact engine's per-step interpreter cost bound.
MAX_LOCAL_STEP_TOTAL = 100_000


@dataclass(frozen=True)
class Moments:
    """Exact expectations at t = 0..rounds: ``grad_norm_sq`` = E‖∇f(x_t)‖², ``loss`` = E f(x_t) (rounds+1,),
    ``x_mean`` = E x_t (rounds+1, dim). ``divergence_round``: first t at which the recursion diverged (a value
    non-finite, or past ``divergence_threshold`` as in ``simulate``), None if never; from that round on every
    value is +inf (never NaN) and ``moments`` warns (``DivergenceWarning``)."""

    grad_norm_sq: np.ndarray
    loss: np.ndarray
    x_mean: np.ndarray
    config: dict = field(default_factory=dict)
    msd: np.ndarray | None = None  # E‖x_t − w°_t‖² (rounds+1,): mean-square deviation from the optimum
    divergence_round: int | None = None
    #: (rounds, K) E‖∇f(x̄_{t,k})‖² of the virtual averaged model at every local step
    #: (``moments(..., record_virtual=True)``; ``simulate``'s ``Trace.virtual_grad_norm_sq`` in expectation)
    virtual_grad_norm_sq: np.ndarray | None = None

    @property
    def diverged(self) -> bool:
        """True when the exact moments crossed the divergence threshold."""
        return self.divergence_round is not None

    @property
    def rounds(self) -> int:
        """T, the number of rounds."""
        return len(self.grad_norm_sq) - 1

    def time_average(self, T: int | None = None) -> float:
        """(1/T) Σ_{t<T} E‖∇f(x_t)‖² — the left side of Theorems 2–4."""
        T = self.rounds if T is None else check_int("T", T, low=1, high=self.rounds)
        return float(self.grad_norm_sq[:T].mean())

    def rounds_to_epsilon(self, epsilon: float, what: str = "grad_norm_sq") -> int | None:
        """First t with E[what](x_t) ≤ epsilon within the computed horizon, else None."""
        hit = np.flatnonzero(getattr(self, what) <= check_positive("epsilon", epsilon))
        return int(hit[0]) if hit.size else None


@dataclass(frozen=True)
class SteadyState:
    """lim_t of E‖∇f(x_t)‖², E f(x_t), E x_t (+inf when the second-moment recursion is unstable).
    ``spectral_radius``: of the linear part of the stationary second-moment map (< 1 ⇔ mean-square stable)."""

    grad_norm_sq: float
    loss: float
    x_mean: np.ndarray
    spectral_radius: float
    stable: bool
    method: str
    msd: float = float("nan")  # lim_t E‖x_t − w°_t‖² (drifting problems: the Stein-type fixed point)


@dataclass
class _Op:
    A: scipy.sparse.csr_matrix  # Ā (n, n)
    U: np.ndarray  # (M, d, nJ): D̄_i restricted to (const, history) columns
    combos: tuple | None  # (p_K, w_K[c|C], slot, random workers, τ weights)
    Qbar: np.ndarray  # (M, d, d): E[w² Cov n_i]
    deterministic: bool  # no within-worker randomness in D_i


def _memo(shared: dict, key, make):
    """``shared[key]``, made by ``make()`` on first use."""
    if key not in shared:
        shared[key] = make()
    return shared[key]


class ExactSystem:
    """The exact second-moment recursion for (problem, algorithm, behaviour). ``initial(x0)`` -> S_0,
    ``step(S, t)`` -> S_{t+1}, ``observe(S)`` -> (E‖∇f‖², E f, E x), ``projected_cost(rounds)`` ->
    ``ExactCost``. A state needing more than ``max_memory`` bytes, or more than the RAM available now unless
    ``allow_large``, is refused (``ExactUnavailable``) before its local maps and operators are built."""

    def __init__(
        self,
        problem: Problem | DriftingQuadratic,
        algorithm: ServerRule,
        behaviour: BehaviourLike,
        *,
        max_memory: int = DEFAULT_MAX_MEMORY,
        allow_large: bool = False,
        momentum: bool = False,
        _shared: dict | None = None,
    ):
        # ``_shared`` (private): a dict kept by ``moments`` across the systems of ONE run under a step-size
        # schedule (same problem and behaviour): the round-independent linear model, round law and RAM reading
        shared = self._shared_parts = {} if _shared is None else _shared
        max_memory = check_positive("max_memory", max_memory)
        if not isinstance(allow_large, (bool, np.bool_)):
            raise ValueError(f"allow_large={allow_large!r} must be True or False")
        problem, self.drift_cov = drift.unwrap(problem, algorithm)
        # (Q, False) unless an engine fault is injected
        self.drift_cov, self.drift_after = drift.engine_drift(self.drift_cov, algorithm)
        self.problem = problem
        model = _memo(shared, "model", lambda: linear_model(problem))
        algorithm = _faults.substitute(algorithm)  # identity unless inside afltheory.mutants.injected(...)
        d, M = problem.dim, problem.num_workers
        self.rule = rule = server_rule(algorithm, M, momentum=momentum)
        # heavy-ball momentum (β): its buffer u_t (the step x_t − x_{t+1}) is appended to the stacked state
        self.beta = rule.momentum
        if self.beta is not None and self.drift_cov is not None:
            raise ExactUnavailable(f"server momentum on a drifting problem is not modelled — {SIMULATE_HINT}")
        view = rule.local_for(M)
        key = (
            "law",
            *(None if a is None else np.asarray(a).tobytes() for a in (view.steps, view.step_sizes)),
        )
        self.law = law = _memo(shared, key, lambda: round_law(behaviour, M, view))
        if hasattr(algorithm, "check_m"):
            algorithm.check_m(law.m)
        self.d, self.M, self.m = d, M, law.m
        self.comp = _linear_compressor(algorithm, d)
        self.cs = rule.memory
        self.Hn = law.history
        self.nJ = 1 + self.Hn * d
        self.n = self.nJ + (M * d if self.cs else 0)
        need = estimate_memory(d, M, self.Hn - 1, self.cs)
        if need > max_memory:
            raise ExactUnavailable(
                f"exact state too large: dim={d}, num_workers={M}, max_delay={self.Hn - 1}"
                f"{', AFA-CS memory slots' if self.cs else ''} give a state of size n={self.n} "
                f"and need about {need / 1024**3:.2f} GiB (max_memory={max_memory / 1024**3:.2f} "
                f"GiB) — pass a larger max_memory or {SIMULATE_HINT}"
            )
        avail = _memo(shared, "avail", _cost.available_memory)
        if not allow_large and avail is not None and need > avail:
            raise ExactUnavailable(
                f"exact state too large for this machine: dim={d}, num_workers={M}, max_delay={self.Hn - 1}"
                f"{', AFA-CS memory slots' if self.cs else ''} give a state of size n={self.n} that needs "
                f"about {need / 1024**3:.3g} GiB, above the {avail / 1024**3:.3g} GiB of RAM available now — "
                f"pass allow_large=True to run anyway (swapping) or {SIMULATE_HINT}"
            )
        self.x_star = model.x_star.copy()
        self.Hbar = model.hessian_mean
        self.Hbar2 = self.Hbar @ self.Hbar
        self.f_star = float(model.f_star)
        b_t = model.b - np.einsum("mjk,k->mj", model.hessians, self.x_star)
        work = sum(2.0 * d**3 * max(set(law.k_pmf[i]) | set(law.k_init_pmf[i])) for i in range(M))
        # each local step and each K of the pmfs also costs ~20-50 µs of interpreter work, whatever dim is
        steps = sum(max(set(law.k_pmf[i]) | set(law.k_init_pmf[i])) + len(law.k_pmf[i]) for i in range(M))
        if steps > MAX_LOCAL_STEP_TOTAL:
            raise ExactUnavailable(
                f"local_steps: exact local maps for K up to {max(max(p) for p in law.k_pmf)} "
                f"over num_workers={M} workers need {steps} local-map steps (limit "
                f"MAX_LOCAL_STEP_TOTAL={MAX_LOCAL_STEP_TOTAL}, ~10 s) — {SIMULATE_HINT}"
            )
        if work > MAX_LOCAL_MAP_FLOPS:
            raise ExactUnavailable(
                f"exact local maps too costly: K up to {max(max(p) for p in law.k_pmf)} "
                f"local steps with dim={d} and num_workers={M} need ~{work:.2g} flops "
                f"(limit {MAX_LOCAL_MAP_FLOPS:.0g}) — {SIMULATE_HINT}"
            )
        drift.check_supported(self)
        self._model, self._b_t = model, b_t
        self._set_steps()
        self._mask = np.kron(self.Delta, np.ones((d, d))) if self.cs else None
        self._ops: dict = {}
        self._blk = np.array([np.r_[0, 1 + k * d + np.arange(d)] for k in range(self.Hn)])

    def _set_steps(self) -> None:
        """The parts that depend on the rule's step sizes: the local maps, Δ and the step scale."""
        rule, law, model, b_t, M, d = self.rule, self.law, self._model, self._b_t, self.M, self.d
        self.maps = []
        etas = rule.local_steps_for(M)
        for i in range(M):
            Ks = set(law.k_pmf[i]) | set(law.k_init_pmf[i])
            if rule.step_sequence is not None:  # η_L decaying per local step: every arrival runs E steps
                if Ks != {len(rule.step_sequence)}:
                    raise ExactUnavailable(
                        f"local_steps: eta_L decays per local step, which needs E={len(rule.step_sequence)} "
                        f"local steps for every arrival; worker {i} runs K in {sorted(Ks)} — {SIMULATE_HINT}"
                    )
                seq = rule.step_sequence
                self.maps.append(
                    local_maps_sequence(model.hessians[i], b_t[i], model.noise_cov[i], seq, rule.mu)
                )
                continue
            self.maps.append(local_maps(model.hessians[i], b_t[i], model.noise_cov[i], etas[i], rule.mu, Ks))
        Delta = law.pij - np.outer(law.pi, law.pi)
        np.fill_diagonal(Delta, law.pi - law.pi**2)
        Delta[np.abs(Delta) < 1e-15] = 0.0
        self.Delta = Delta
        # a numpy scalar: an overflowing step (η_L = 1e300) gives inf (reported as divergence), never a bare
        # OverflowError from Python float arithmetic
        self.scale = np.float64(rule.gamma) / rule.normalizer(self.m, M)
        # C = g M₀ with E M₀ = I (g = 1 for every unbiased compressor): g goes into the step, moment_map / g²
        # is E[M₀ X M₀ᵀ]; the memory slots of AFA-CS then hold M₀ G
        self.gain = 1.0 if self.comp is None else float(self.comp.mean_gain(d))
        self.scale *= self.gain

    def _structure(self, rule: ExactRule) -> tuple:
        """What a rule fixes besides its step sizes (class, memory, warm start, weights, local view)."""
        view = rule.local_for(self.M)
        arrays = (rule.worker_weights, view.steps, view.step_sizes)
        return (type(rule.algorithm), rule.memory, rule.warm_start, rule.momentum, rule.mu) + tuple(
            None if a is None else np.asarray(a).tobytes() for a in arrays
        )

    def _rescheduled(self, algorithm: ServerRule) -> ExactSystem | None:
        """This system for another round's rule of the same step-size schedule (``moments``), or None when the
        rule differs in more than its step sizes (then a system is built from scratch). Only the rule, the
        local maps and the step scale are rebuilt; the values equal a system built from scratch
        (tests/exact/test_schedule_shared_parts.py)."""
        if self.drift_cov is not None or self.comp is not None:
            return None
        rule = server_rule(_faults.substitute(algorithm), self.M, momentum=self.beta is not None)
        if self._structure(rule) != self._structure(self.rule):
            return None
        new = copy.copy(self)
        new.__dict__.pop("_virtual_cache", None)  # _virtual_maps' per-system cache (η-dependent)
        new.rule, new._ops = rule, {}
        new._set_steps()
        return new

    # ------------------------------------------------------------------------------------------ operators
    def _pmfs(self, t):
        return [self.law.delay_pmf(t, i) for i in range(self.M)]

    def op(self, t: int) -> _Op:
        """The (cached) one-round linear operator of round ``t`` on the stacked second moment."""
        if self.law.stationary:  # built-in delays: pmf(t) = pmf(max_delay) for t >= max_delay
            key = min(t, self.law.time_invariant_from)
            if key not in self._ops:
                self._ops[key] = self._build(self._pmfs(key))
            return self._ops[key]
        pmfs = self._pmfs(t)
        key = tuple(p.tobytes() for p in pmfs)
        if key not in self._ops:
            self._ops[key] = self._build(pmfs)
        return self._ops[key]

    def projected_cost(self, rounds: int) -> _cost.ExactCost:
        """The projected time and memory of ``rounds`` rounds of this recursion (``afltheory.exact.cost``):
        from dim, the delay history, the number of workers, the law's random (K, τ) supports and the measured
        per-operation constants, before any round runs (it builds the stationary round operator, which the
        run reuses, to read its number of entries)."""
        return _cost.project_cost(**self.projection_args(rounds))

    def projection_args(self, rounds: int) -> dict:
        """The arguments of ``afltheory.exact.cost.project_cost`` for ``rounds`` rounds of this system."""
        rounds = check_int("rounds", rounds, low=1)
        law = self.law
        pmfs = self._pmfs(law.time_invariant_from)
        blocks = max(1, len(set().union(*(np.flatnonzero(p).tolist() for p in pmfs))))
        rand = [i for i in range(self.M) if len(law.k_pmf[i]) * int(np.count_nonzero(pmfs[i])) > 1]
        # round operators: one per round up to max_delay for the built-in delays, else up to one per round
        builds = min(rounds, law.time_invariant_from + 1) if law.stationary else rounds
        terms = sum(len(law.k_pmf[i]) * int(np.count_nonzero(pmfs[i])) for i in range(self.M))
        steps = sum(
            max(set(law.k_pmf[i]) | set(law.k_init_pmf[i])) + len(law.k_pmf[i]) for i in range(self.M)
        )
        return dict(
            dim=self.d,
            num_workers=self.M,
            history=self.Hn,
            memory_slots=self.cs,
            rounds=rounds,
            delay_blocks=min(blocks, self.Hn),
            random_workers=len(rand),
            k_combos=sum(len(law.k_pmf[i]) for i in rand),
            compressed=self.comp is not None,
            nnz=self.op(law.time_invariant_from).A.nnz,  # built once here, cached for the run
            local_steps=steps,
            build_terms=builds * terms,
        )

    def _build(self, pmfs) -> _Op:
        d, M, nJ, n, rule, law = self.d, self.M, self.nJ, self.n, self.rule, self.law
        U = np.zeros((M, d, nJ))
        Qbar = np.zeros((M, d, d))

        def add(i, tau, lm, p, w):
            U[i, :, 0] += p * w * lm.c
            U[i, :, 1 + tau * d : 1 + (tau + 1) * d] += p * w * lm.C
            # a test-only fault, read only where a weight is not 1 (where it can matter)
            unit = w == 1.0 and rule.worker_weight(i) == 1.0
            fw = None if unit else _faults.get(_faults.FaultPoint.EXACT_NOISE_WEIGHTS)
            Qbar[i] += p * (w * w if fw is None else fw(w, rule.worker_weight(i))) * lm.Q

        # within-worker randomness: E[D S Dᵀ] = Σ_K p_K w_K² [c|C] (Σ_τ p_τ w_τ² S_(0,τ)) [c|C]ᵀ
        combos = diagonal.worker_outcomes(
            rule, law, pmfs, self.maps, self.Hn, add, lambda lm: np.column_stack([lm.c, lm.C]), np.array
        )
        deterministic = combos is None
        pi = law.pi
        rows, cols, vals = [0], [0], [1.0]

        def dense(r0, c0, block):
            r, c = np.nonzero(block)
            rows.extend(r + r0), cols.extend(c + c0), vals.extend(block[r, c])

        xrow = np.zeros((d, nJ))
        xrow[:, 1 : 1 + d] = np.eye(d)
        xrow -= self.scale * np.einsum("i,idk->dk", pi, U)
        dense(1, 0, xrow)
        for k in range(1, self.Hn):  # history shift: new x̃_{t+1−k} = old x̃_{t−(k−1)}
            rows.extend(1 + k * d + np.arange(d)), cols.extend(1 + (k - 1) * d + np.arange(d))
            vals.extend(np.ones(d))
        if self.cs:
            for j in range(M):
                idx = nJ + j * d + np.arange(d)
                rows.extend(1 + np.arange(d)), cols.extend(idx)
                vals.extend(np.full(d, -self.scale * (1 - pi[j])))
                rows.extend(idx), cols.extend(idx), vals.extend(np.full(d, 1.0 - pi[j]))
                dense(nJ + j * d, 0, pi[j] * U[j])
        A = scipy.sparse.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
        return _Op(A, U, combos, Qbar, deterministic)

    # ------------------------------------------------------------------------------------------ recursion
    def initial(self, x0: ArrayLike) -> np.ndarray:
        """The stacked second moment S_0 of the deterministic start ``x0``."""
        d, M, nJ = self.d, self.M, self.nJ
        xt = np.asarray(x0, dtype=float) - self.x_star
        z = np.zeros(self.n)
        z[0] = 1.0
        z[1:nJ] = np.tile(xt, self.Hn)
        cov = []
        if self.cs and self.rule.warm_start:
            for i in range(M):
                vs = {K: self.maps[i][K].C @ xt + self.maps[i][K].c for K in self.law.k_init_pmf[i]}
                mean = sum(p * vs[K] for K, p in self.law.k_init_pmf[i].items())
                z[nJ + i * d : nJ + (i + 1) * d] = mean
                cov.append(
                    sum(
                        p * (np.outer(vs[K] - mean, vs[K] - mean) + self.maps[i][K].Q)
                        for K, p in self.law.k_init_pmf[i].items()
                    )
                )
                if self.comp is not None:  # the slot holds the compressed warm-start update
                    second = cov[-1] + np.outer(mean, mean)
                    cov[-1] = self.comp.moment_map(second) / self.gain**2 - np.outer(mean, mean)
        S = np.outer(z, z)
        for i, c in enumerate(cov):
            sl = slice(nJ + i * d, nJ + (i + 1) * d)
            S[sl, sl] += c
        if self.beta is not None:  # the momentum buffer starts at 0 (m_{−1} = 0)
            S = np.pad(S, ((0, d), (0, d)))
        return S

    def _within(self, op: _Op, S, Y):
        """W_i = E[D_i S D_iᵀ] − D̄_i S D̄_iᵀ for every worker (D_i over the (const, x̃_{t−τ}) columns)."""
        W = np.zeros((self.M, self.d, self.d))
        p, Dc, who, rand, q = op.combos
        Sb = S[self._blk[:, :, None], self._blk[:, None, :]]  # (H, 1+d, 1+d): S on (0, x̃_{t−τ})
        Smix = np.einsum("rt,tab->rab", q, Sb)  # Σ_τ p_τ w_τ² S_τ per random worker
        DS = np.matmul(Dc, Smix[who])
        DS *= p[:, None, None]
        E = np.matmul(DS, Dc.transpose(0, 2, 1))
        starts = np.flatnonzero(np.r_[True, who[1:] != who[:-1]])
        W[rand] = np.add.reduceat(E, starts, axis=0) - np.matmul(Y[rand], op.U[rand].transpose(0, 2, 1))
        return W

    def step(self, S: np.ndarray, t: int, noise: bool = True) -> np.ndarray:
        """S_{t+1} from S_t. ``noise=False`` drops the additive sources (the stochastic-gradient noise and the
        optimum's drift): the homogeneous part of the map, which the steady-state solver iterates."""
        if self.beta is not None:
            return self._momentum_step(S, t, noise)
        return self._base_step(S, t, noise)

    def _momentum_step(self, S: np.ndarray, t: int, noise: bool) -> np.ndarray:
        """S_{t+1} with heavy-ball momentum. The state is (z, u), u_{t−1} the last step. The base round
        gives z^b = A_t z + ε (x^b = x_t − s_t); the momentum round is u_t = β u_{t−1} + s_t and
        x_{t+1} = x_t − u_t, i.e. z' = P z^b + Q (z, u) with x' = x^b − β u, u' = x_t − x^b + β u and the
        rest of z' equal to z^b. Then E z'z'ᵀ = P S^b Pᵀ + P C Qᵀ + Q Cᵀ Pᵀ + Q S Qᵀ, with S^b the base
        recursion's second moment and C = E z^b (z, u)ᵀ = Ā S[:n, :] (A_t and ε are independent of the
        state, ε zero-mean)."""
        n, d, beta = self.n, self.d, self.beta
        N = n + d
        xs = slice(1, 1 + d)
        Sb = self._base_step(np.ascontiguousarray(S[:n, :n]), t, noise)
        C = np.asarray(self.op(t).A @ S[:n, :])  # (n, N)
        P = np.zeros((N, n))
        P[:n, :n] = np.eye(n)
        P[n:, xs] = -np.eye(d)
        Q = np.zeros((N, N))
        Q[xs, n:] = -beta * np.eye(d)
        Q[n:, xs] = np.eye(d)
        Q[n:, n:] = beta * np.eye(d)
        PCQ = P @ C @ Q.T
        out = P @ Sb @ P.T + PCQ + PCQ.T + Q @ S @ Q.T
        out += out.T
        out *= 0.5
        return out

    def _base_step(self, S: np.ndarray, t: int, noise: bool = True) -> np.ndarray:
        """S_{t+1} from S_t without a server optimizer (the recursion of the module docstring)."""
        op = self.op(t)
        d, M, nJ, pi = self.d, self.M, self.nJ, self.law.pi
        drifts = noise and self.drift_cov is not None
        if drifts and not self.drift_after:  # the optimum drifts before the round: e ← e − q (drift.py)
            S = drift.add_drift(S, self.drift_cov)
        T = op.A @ S
        Snew = np.asarray(op.A @ T.T)
        SJJ = S[:nJ, :nJ]
        Y = np.matmul(op.U, SJJ)  # (M, d, nJ) = D̄_i S_JJ
        W = self._within(op, S, Y) if not op.deterministic else np.zeros((M, d, d))
        f = _faults.get(_faults.FaultPoint.EXACT_NOISE)  # None unless a noise fault is injected
        own = (W + (op.Qbar if f is None else f(d) * op.Qbar)) if noise else W
        if self.comp is not None:  # Γ_i = E[G_i G_iᵀ | i arrives] -> E[M Γ_i Mᵀ]
            gam = own + np.matmul(Y, op.U.transpose(0, 2, 1))
            own = own + self.comp.moment_map(gam) / self.gain**2 - gam
        xs = slice(1, 1 + d)
        if not self.cs:
            V = np.einsum("ij,jdk->idk", self.Delta, op.U)
            inc = np.einsum("idk,iek->de", Y, V) + np.einsum("i,ide->de", pi, own)
            Snew[xs, xs] += self.scale**2 * inc
        else:
            Md = M * d
            U2 = op.U.reshape(Md, nJ)
            G2 = U2 @ S[:nJ, nJ:]
            X = Y.reshape(Md, nJ) @ U2.T - G2 - G2.T + S[nJ:, nJ:]
            X *= self._mask
            X4 = X.reshape(M, d, M, d)
            X4[np.arange(M), :, np.arange(M), :] += pi[:, None, None] * own
            Snew[nJ:, nJ:] += X
            xS = -self.scale * X.reshape(M, d, Md).sum(axis=0)
            Snew[xs, nJ:] += xS
            Snew[nJ:, xs] += xS.T
            Snew[xs, xs] += self.scale**2 * X4.sum(axis=(0, 2))
        Snew += Snew.T
        Snew *= 0.5
        if drifts and self.drift_after:  # only under an injected fault (afltheory.mutants)
            Snew = drift.add_drift(Snew, self.drift_cov)
        return Snew

    def observe(self, S: np.ndarray) -> tuple[float, float]:
        """(E‖∇f(x_t)‖², E f(x_t)) read off the stacked second moment S_t."""
        d = self.d
        P = S[1 : 1 + d, 1 : 1 + d]
        return (
            float(np.sum(self.Hbar2 * P)),
            self.f_star + 0.5 * float(np.sum(self.Hbar * P)),
            S[0, 1 : 1 + d] + self.x_star,
        )

    def msd(self, S: np.ndarray) -> float:
        """E‖x_t − w°_t‖² = tr E x̃ x̃ᵀ (coordinates centred at the round's optimum)."""
        return float(np.trace(S[1 : 1 + self.d, 1 : 1 + self.d]))


def _linear_compressor(algorithm, dim):
    """The server rule's compressor if the exact recursion supports it (linear, memoryless), else
    None/raise."""
    spec = check_compressor(getattr(algorithm, "compressor", None))
    if spec is None:
        return None
    if not isinstance(spec, Compressor) or not spec.linear:
        raise ExactUnavailable(
            f"compressor={spec!r}: exact moments support linear memoryless compressors (RandK, "
            f"BernoulliMask, Subsample, GaussianSketch, LowRank, Identity) — {SIMULATE_HINT}"
        )
    spec.check_dim(dim)
    if spec.sampling_changed_below_moments():
        raise UnsupportedRule(
            f"compressor={spec!r} overrides how C(x) is drawn but inherits its exact moments "
            f"(moment_map) from a base class: exact moments would read it as its base — {SIMULATE_HINT}"
        )
    return spec


def _steps(rule):
    return (float(rule.eta), float(rule.eta_L), getattr(rule, "local_step_sequence", None))


def _per_step_E(problem, algorithm, behaviour):
    """E, every arrival's local-step count, when ``algorithm``'s η_L decays per local step (None: it does
    not); ``ExactUnavailable`` naming the local steps when the behaviour's K is not one fixed count."""
    if not getattr(algorithm, "per_local_step", False):
        return None
    M = problem.num_workers
    law = round_law(behaviour, M, algorithm.local_view(M))
    Ks = set().union(*map(set, law.k_pmf), *map(set, law.k_init_pmf))
    if len(Ks) != 1:
        raise ExactUnavailable(
            f"local_steps: eta_L={algorithm.eta_L!r} decays per local step (s = tE + k), which needs one "
            f"local-step count E for every arrival; the behaviour's K takes the values {sorted(Ks)} — "
            f"{SIMULATE_HINT}"
        )
    return int(next(iter(Ks)))


def _x0(problem, x0):
    if x0 is None:
        return problem.default_x0()
    x0 = check_array("x0", x0)
    if x0.shape != (problem.dim,):
        raise ValueError(
            f"x0 has shape {x0.shape}; exact moments need a deterministic start point of shape "
            f"({problem.dim},)"
        )
    return x0


class ExactCostWarning(UserWarning):
    """The exact recursion is projected to take long (``simulate`` with replicates may be far cheaper)."""


def moments(
    problem: Problem | DriftingQuadratic,
    algorithm: ServerRule,
    behaviour: BehaviourLike,
    rounds: int,
    x0: ArrayLike | None = None,
    *,
    max_memory: int = DEFAULT_MAX_MEMORY,
    divergence_threshold: float = 1e12,
    warn_seconds: float = 60.0,
    max_seconds: float | None = None,
    allow_large: bool = False,
    structure: bool = True,
    record_virtual: bool = False,
) -> Moments:
    """Exact E‖∇f(x_t)‖², E f(x_t), E x_t for t = 0..rounds (no Monte Carlo error).

    Same arguments as ``afltheory.simulate`` (x0: (dim,), default ``problem.default_x0()``). Needs a
    linear-Gaussian problem (``problem.linear_gaussian()`` not None), an AFACD/FedAvg/FedBuff/AsySG/AFACS
    server with an SGD or FedProx worker, and a round-mode behaviour whose arrivals expose ``inclusion`` and
    whose delays/local steps expose bounded pmfs; otherwise ``TypeError``/``ExactUnavailable`` (a
    ``ValueError``) says why. Cost per round: O(n² · nnz-rows) with n = 1 + (max_delay+1)·dim (+
    num_workers·dim for AFA-CS). Divergence is reported as in ``simulate``: at the first t where a moment is
    non-finite, E‖∇f(x_t)‖² exceeds ``divergence_threshold``·max(1, ‖∇f(x_0)‖²) or |E f(x_t) − f(x_0)| exceeds
    ``divergence_threshold``· max(1, |f(x_0)|), the values from t on are +inf, ``divergence_round`` = t and a
    ``DivergenceWarning`` is issued.

    Cost (``afltheory.exact.cost``): before any round runs, the time and memory of the whole run are
    projected from dim, the delay history, num_workers, the law's random (K, τ) supports, ``rounds`` and
    measured per-operation constants (``ExactSystem.projected_cost``). A projected time above
    ``warn_seconds`` issues an ``ExactCostWarning`` naming the numbers (rounds, state size, seconds, memory)
    and the ``simulate`` alternative; one above ``max_seconds`` (None: no limit) raises ``ExactUnavailable``
    (a ``ValueError``) naming ``max_seconds``. Projected memory above ``max_memory`` or above the RAM
    available now raises ``ExactUnavailable`` naming the sizes and the limit; ``allow_large=True`` lifts the
    available-RAM refusal (not ``max_memory``). The first round is also timed and the total re-projected
    from that measurement (a machine slower than the constants' one): same warning and refusal.

    Structure (``structure=True``, the default): when every Hessian, noise covariance and H̄ is diagonal the
    recursion runs per coordinate (``afltheory.exact.diagonal``: dim states of 1 + (max_delay+1) (+
    num_workers), cost linear in dim), with the same values; ``structure=False`` runs the dense recursion.

    ``record_virtual``: also E‖∇f(x̄_{t,k})‖² (``Moments.virtual_grad_norm_sq``, (rounds, K)) for the virtual
    averaged model x̄_{t,k} = (1/m) Σ_{i∈M_t} w_i y_{i,k} of round t's arrivals at every local step k < K
    (w_i = M p_i the client weights, 1 without), as ``simulate(record_virtual=True)`` records it: exact where
    its model applies — no delays, one local-step count K for every arrival, a constant local step per round
    (no per-local-step decay), no drift (``ExactUnavailable`` naming ``record_virtual`` otherwise).
    """
    rounds = check_int("rounds", rounds, low=1)
    warn_seconds = check_positive("warn_seconds", warn_seconds)
    if max_seconds is not None:
        max_seconds = check_positive("max_seconds", max_seconds)
    divergence_threshold = check_positive("divergence_threshold", divergence_threshold)
    scheduled = getattr(algorithm, "scheduled", False)
    if not isinstance(structure, (bool, np.bool_)):
        raise ValueError(f"structure={structure!r} must be True or False")
    opt = getattr(algorithm, "server_optimizer", None)
    heavy = bool(getattr(opt, "heavy_ball", False))  # heavy-ball momentum: its buffer in the stacked state
    if heavy and not isinstance(getattr(algorithm, "eta", None), (int, float, np.integer, np.floating)):
        raise UnsupportedRule(
            f"server optimizer {opt!r} with a scheduled server step eta={algorithm.eta!r}: exact moments "
            f"carry heavy-ball momentum with a constant eta — {SIMULATE_HINT}"
        )
    kw = {"max_memory": max_memory, "allow_large": allow_large, **({"momentum": True} if heavy else {})}
    # diagonal Hessians and noise: dim one-dimensional recursions (exact/diagonal.py), else the dense one
    sys_ = None
    if structure and not heavy and not record_virtual:
        sys_ = diagonal.diagonal_system(problem, algorithm, behaviour, ExactSystem, rounds, **kw)
    E = _per_step_E(getattr(problem, "base", problem), algorithm, behaviour) if scheduled else None
    at = (lambda t: algorithm.at_round(t)) if E is None else (lambda t: algorithm.at_round(t, local_steps=E))
    if sys_ is None:
        sys_ = ExactSystem(problem, at(0) if scheduled else algorithm, behaviour, **kw)
    projected = sys_.projected_cost(rounds)
    warned = _check_projection(projected, max_memory, warn_seconds, max_seconds, allow_large)
    current = {(None if not scheduled else _steps(at(0))): sys_}
    shared = getattr(sys_, "_shared_parts", {})  # what the schedule's systems share (ExactSystem._shared)

    def system(t):
        """Round t's exact system: a step-size schedule gives each round its constant rule (the state layout
        does not depend on the step sizes, so S carries over)."""
        if not scheduled:
            return sys_
        rule = at(t)
        key = _steps(rule)
        if key not in current:
            prev = next(iter(current.values()))
            current.clear()
            new = prev._rescheduled(rule) if isinstance(prev, ExactSystem) else None
            current[key] = (
                new if new is not None else ExactSystem(problem, rule, behaviour, **kw, _shared=shared)
            )
        return current[key]

    gn = np.empty(rounds + 1)
    loss = np.empty(rounds + 1)
    xm = np.empty((rounds + 1, problem.dim))
    msd = np.empty(rounds + 1)
    div = None
    virt = None
    if record_virtual:
        _virtual_reason(sys_)
        virt = np.full((rounds, next(iter(sys_.law.k_pmf[0]))), np.inf)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and reported as divergence
        S = sys_.initial(_x0(sys_.problem, x0))
        gn[0], loss[0], xm[0] = sys_.observe(S)
        msd[0] = sys_.msd(S)
        g0 = gn[0] if np.isfinite(gn[0]) else 1.0
        f0 = loss[0] if np.isfinite(loss[0]) else 0.0
        limit = divergence_threshold * max(1.0, g0)
        flimit = divergence_threshold * max(1.0, abs(f0))
        for t in range(rounds + 1):
            if t == 1:
                t_first = time.perf_counter()
            if t == 2:
                _check_cost(time.perf_counter() - t_first, rounds, sys_, warn_seconds, max_seconds, warned)
            if t > 0:
                if virt is not None:
                    virt[t - 1] = _virtual_grad_sq(system(t - 1), S)
                S = system(t - 1).step(S, t - 1)
                gn[t], loss[t], xm[t] = sys_.observe(S)
                msd[t] = sys_.msd(S)
            if not (
                np.isfinite(gn[t])
                and np.isfinite(loss[t])
                and np.all(np.isfinite(xm[t]))
                and np.isfinite(msd[t])
                and gn[t] <= limit
                and abs(loss[t] - f0) <= flimit
            ):
                div = t
                gn[t:] = loss[t:] = msd[t:] = np.inf
                xm[t:] = np.inf
                break
    shift = _faults.get(_faults.FaultPoint.EXACT_ROUND_SHIFT, 0)  # 0 unless an engine fault is injected
    if shift:
        gn, loss, xm = (np.concatenate([a[:1].repeat(shift, axis=0), a[:-shift]]) for a in (gn, loss, xm))
        div = None if div is None else div + shift
    config = {
        "problem": repr(problem),
        "algorithm": repr(algorithm),
        "behaviour": repr(behaviour),
        "rounds": rounds,
        "state_size": sys_.n,
        "structure": "diagonal" if isinstance(sys_, diagonal.DiagonalSystem) else "dense",
    }
    if div is not None:
        from ..engine import DivergenceWarning

        warnings.warn(
            f"exact.moments: the second-moment recursion diverged at round {div} (values +inf from there)",
            DivergenceWarning,
            stacklevel=2,
        )
    if virt is not None and div is not None:
        virt[max(div - 1, 0) :] = np.inf  # rounds started from a diverged model (as simulate's)
    return Moments(gn, loss, xm, config, msd=msd, divergence_round=div, virtual_grad_norm_sq=virt)


def _virtual_reason(sys_: ExactSystem) -> None:
    """ExactUnavailable naming ``record_virtual`` where the exact virtual model does not apply."""
    why = None
    Ks = set().union(*map(set, sys_.law.k_pmf))
    if sys_.Hn != 1:
        why = "the behaviour has delays (x̄_{t,k} of stale start points is not modelled)"
    elif len(Ks) != 1:
        why = f"the local-step count varies ({sorted(Ks)}): x̄_{{t,k}} needs one K for every arrival"
    elif sys_.rule.step_sequence is not None:
        why = "the local step decays per local step"
    elif sys_.drift_cov is not None:
        why = "the problem drifts"
    if why is not None:
        raise ExactUnavailable(
            f"record_virtual=True is unavailable in exact moments here: {why} — {SIMULATE_HINT}"
        )


def _virtual_grad_sq(sys_: ExactSystem, S: np.ndarray) -> np.ndarray:
    """(K,) E‖∇f(x̄_{t,k})‖², k = 0..K−1, from S_t. With no delays, y_{i,k} = x_t − η_i k G_i^{(k)} and the
    k-step local map G^{(k)} = C_k x̃ + c_k + n_k (``local_maps``): x̄_k = Σ_{i∈M_t} a_i (Z_{i,k} (1, x̃) + ν_i),
    a_i = w_i/m, Z_{i,k} = [−η_i k c_k | I − η_i k C_k], Cov ν_i = η_i² k² Q_k, so
    E x̄_k x̄_kᵀ = Σ_{i,j} π_ij a_i a_j Z_i S₀ Z_jᵀ + Σ_i π_i a_i² η_i² k² Q_{i,k} (S₀: S on (1, x̃_t)) and
    E‖∇f(x̄_k)‖² = tr(H̄² E x̄_k x̄_kᵀ)."""
    d, M, m, law, rule = sys_.d, sys_.M, sys_.m, sys_.law, sys_.rule
    K = next(iter(law.k_pmf[0]))
    maps = _virtual_maps(sys_, K)
    etas = rule.local_steps_for(M)
    a = np.array([rule.worker_weight(i) for i in range(M)]) / m
    S0 = S[: 1 + d, : 1 + d]
    out = np.empty(K)
    for k in range(K):
        Z = np.zeros((M, d, 1 + d))
        Z[:, :, 1:] = np.eye(d)
        noise = np.zeros((d, d))
        if k > 0:
            for i in range(M):
                lm = maps[i][k]
                Z[i, :, 0] -= etas[i] * k * lm.c
                Z[i, :, 1:] -= etas[i] * k * lm.C
                noise += law.pi[i] * a[i] ** 2 * (etas[i] * k) ** 2 * lm.Q
        Y = np.einsum("idk,kl->idl", Z, S0)  # Z_i S₀
        W = law.pij * np.outer(a, a)
        second = np.einsum("ij,idl,jel->de", W, Y, Z) + noise
        out[k] = float(np.sum(sys_.Hbar2 * second))
    return out


def _virtual_maps(sys_: ExactSystem, K: int) -> list[dict]:
    """Per worker {k: LocalMap} for k = 1..K−1 (cached on the system)."""
    cache = sys_.__dict__.setdefault("_virtual_cache", {})
    if K not in cache:
        model = linear_model(sys_.problem)
        b_t = model.b - np.einsum("mjk,k->mj", model.hessians, sys_.x_star)
        etas = sys_.rule.local_steps_for(sys_.M)
        ks = set(range(1, K))
        cache[K] = [
            local_maps(model.hessians[i], b_t[i], model.noise_cov[i], etas[i], sys_.rule.mu, ks) if ks else {}
            for i in range(sys_.M)
        ]
    return cache[K]


def _check_projection(
    cost: _cost.ExactCost,
    max_memory: float,
    warn_seconds: float,
    max_seconds: float | None,
    allow_large: bool,
) -> bool:
    """Refuse or warn from the projection made before the run; True when it warned."""
    msg = (
        f"exact.moments: projected cost of {cost.describe()}; `afltheory.simulate` with a few hundred "
        "replicates is usually far cheaper at this size"
    )
    if cost.bytes > max_memory:
        raise ExactUnavailable(f"{msg} — refused: above max_memory={max_memory / 1024**2:.4g} MiB")
    avail = _cost.available_memory()
    if not allow_large and avail is not None and cost.bytes > avail:
        raise ExactUnavailable(
            f"{msg} — refused: above the {avail / 1024**2:.4g} MiB of RAM available now (pass "
            "allow_large=True to run anyway)"
        )
    if max_seconds is not None and cost.seconds > max_seconds:
        raise ExactUnavailable(
            f"{msg} — refused: above max_seconds={max_seconds:g} (lower rounds or the sizes)"
        )
    if cost.seconds > warn_seconds:
        warnings.warn(f"{msg} (warn_seconds={warn_seconds:g})", ExactCostWarning, stacklevel=3)
        return True
    return False


def _check_cost(
    first: float, rounds: int, sys_, warn_seconds: float, max_seconds: float | None, warned: bool = False
) -> None:
    projected = first * rounds
    msg = (
        f"exact.moments: the first round took {first:.3g} s, so {rounds} rounds need about "
        f"{projected:.3g} s (state size n = {sys_.n}: dim {sys_.d}, delay history {sys_.Hn}"
        f"{', AFA-CS memory slots' if sys_.cs else ''}; each round costs O(n³)); "
        "`afltheory.simulate` with a few hundred replicates is usually far cheaper at this size"
    )
    if max_seconds is not None and projected > max_seconds:
        raise ExactUnavailable(msg + f" — refused: above max_seconds={max_seconds:g}")
    if projected > warn_seconds and not warned:
        warnings.warn(msg, ExactCostWarning, stacklevel=3)


def rounds_to_epsilon(
    problem: Problem | DriftingQuadratic,
    algorithm: ServerRule,
    behaviour: BehaviourLike,
    epsilon: float,
    *,
    max_rounds: int = 100_000,
    x0: ArrayLike | None = None,
    what: str = "grad_norm_sq",
    max_memory: int = DEFAULT_MAX_MEMORY,
    allow_large: bool = False,
) -> int | None:
    """First t ≤ max_rounds with exact E‖∇f(x_t)‖² ≤ epsilon (``what="loss"``: E f(x_t) − f* ≤ epsilon);
    None if not reached (e.g. the steady state lies above epsilon). ``max_memory``/``allow_large`` as in
    ``moments``."""
    epsilon = check_positive("epsilon", epsilon)
    max_rounds = check_int("max_rounds", max_rounds, low=0)
    if what not in ("grad_norm_sq", "loss"):
        raise ValueError(f"what={what!r} must be 'grad_norm_sq' or 'loss'")
    sys_ = ExactSystem(problem, algorithm, behaviour, max_memory=max_memory, allow_large=allow_large)
    S = sys_.initial(_x0(sys_.problem, x0))

    def value(S):
        g, f, _ = sys_.observe(S)
        return g if what == "grad_norm_sq" else f - sys_.f_star

    for t in range(max_rounds + 1):
        v = value(S)
        if v <= epsilon:
            return t
        if not np.isfinite(v):
            return None
        if t < max_rounds:
            S = sys_.step(S, t)
    return None


def zscores(trace: Trace, exact: Moments, what: str = "grad_norm_sq") -> np.ndarray:
    """(Monte Carlo mean − exact) / Monte Carlo standard error at t = 0..rounds of a ``simulate`` trace. Where
    the standard error is (numerically) zero (e.g. t = 0 with a deterministic x_0) the z-score is 0 if the
    mean equals the exact value to that precision and ±inf otherwise (never NaN)."""
    from ..engine import Trace

    check_component("trace", trace, Trace, "an afltheory Trace (afltheory.simulate(...))")
    check_component("exact", exact, Moments, "afltheory.exact Moments (afltheory.exact.moments(...))")
    if not isinstance(what, str) or what not in ("grad_norm_sq", "loss"):
        raise ValueError(f"what={what!r} must be 'grad_norm_sq' or 'loss'")
    T = min(trace.rounds, exact.rounds) + 1
    mc, se = trace.mean(what)[:T], trace.sem(what)[:T]
    ex = getattr(exact, what)[:T]
    tiny = 1e-12 * np.maximum(np.abs(ex), 1e-300)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        diff = mc - ex
        same = np.abs(diff) <= tiny
        z = np.where(se > tiny, diff / se, np.where(same, 0.0, np.copysign(np.inf, diff)))
    return np.where(np.isnan(z), np.inf, z)  # inf − inf (a diverged run against a diverged moment)


# ------------------------------------------------------------------------------------------- steady state
def steady_state(
    problem: Problem | DriftingQuadratic,
    algorithm: ServerRule,
    behaviour: BehaviourLike,
    *,
    tol: float = 1e-11,
    max_memory: int = DEFAULT_MAX_MEMORY,
    dense_limit: int = 900,
    allow_large: bool = False,
) -> SteadyState:
    """Exact lim_t E‖∇f(x_t)‖² (and E f, E x): the fixed point of the stationary (t ≥ max_delay) recursion.

    The first moment solves (I − Ā_ww) m = Ā_w0 (sparse solve); the second moment P = E w wᵀ (w = z without
    the constant) solves the linear fixed point P = 𝓛(P) + F₀: by ``scipy.linalg.solve_discrete_lyapunov``
    when the round map is deterministic (𝓛(P) = Ā P Āᵀ), by a dense ``scipy.linalg.solve`` when
    (n−1)² ≤ ``dense_limit``, else matrix-free GMRES. Stability: spectral radius ρ of 𝓛 (< 1 required; else
    the returned values are inf and ``stable`` is False). ``max_memory``/``allow_large`` as in ``moments``.
    """
    sys_ = ExactSystem(problem, algorithm, behaviour, max_memory=max_memory, allow_large=allow_large)
    t_ss = sys_.law.time_invariant_from
    op = sys_.op(t_ss)
    for t in (t_ss + 1, t_ss + 7):
        if sys_.op(t) is not op:
            raise ExactUnavailable(
                f"delays of {behaviour!r} are not time-invariant for t >= max_delay, so "
                "there is no stationary recursion — use moments(...) for a finite horizon"
            )
    n, d = sys_.n, sys_.d
    N = n - 1
    A = op.A
    Aww = A[1:, 1:].toarray() if N <= 3000 else A[1:, 1:].tocsc()
    a0 = A[1:, 0].toarray().ravel()

    def lin(vecP):
        P = vecP.reshape(N, N)
        S = np.zeros((n, n))
        S[1:, 1:] = 0.5 * (P + P.T)
        return sys_.step(S, t_ss, noise=False)[1:, 1:].ravel()

    def unstable(rho, method):
        return SteadyState(np.inf, np.inf, np.full(d, np.inf), float(rho), False, method, np.inf)

    if op.deterministic and not np.any(sys_.Delta) and sys_.comp is None:
        ev = (
            np.linalg.eigvals(Aww)
            if isinstance(Aww, np.ndarray)
            else scipy.sparse.linalg.eigs(Aww, k=1, which="LM", return_eigenvectors=False)
        )
        rho = float(np.max(np.abs(ev))) ** 2
        if rho >= 1:
            return unstable(rho, "lyapunov")
        Ad = Aww if isinstance(Aww, np.ndarray) else Aww.toarray()
        m = np.linalg.solve(np.eye(N) - Ad, a0)
        F0 = _forcing(sys_, t_ss, m)
        P = scipy.linalg.solve_discrete_lyapunov(Ad, F0)
        method = "lyapunov"
    else:
        if N * N <= dense_limit:
            Lmat = np.column_stack([lin(e) for e in np.eye(N * N)])
            rho = float(np.max(np.abs(np.linalg.eigvals(Lmat))))
            method = "dense"
        else:
            Lop = scipy.sparse.linalg.LinearOperator((N * N, N * N), matvec=lin, dtype=float)
            try:
                rho = float(
                    np.abs(
                        scipy.sparse.linalg.eigs(Lop, k=1, which="LM", tol=1e-6, return_eigenvectors=False)[0]
                    )
                )
            except scipy.sparse.linalg.ArpackNoConvergence:
                rho = _power_radius(lin, N)
            method = "gmres"
        if rho >= 1:
            return unstable(rho, method)
        m = (
            np.linalg.solve(np.eye(N) - Aww, a0)
            if isinstance(Aww, np.ndarray)
            else scipy.sparse.linalg.spsolve(scipy.sparse.identity(N, format="csc") - Aww, a0)
        )
        F0 = _forcing(sys_, t_ss, m)
        if method == "dense":
            P = np.linalg.solve(np.eye(N * N) - Lmat, F0.ravel()).reshape(N, N)
        else:
            Iop = scipy.sparse.linalg.LinearOperator((N * N, N * N), matvec=lambda v: v - lin(v), dtype=float)
            sol, info = scipy.sparse.linalg.gmres(
                Iop, F0.ravel(), rtol=tol, atol=0.0, restart=min(80, N * N), maxiter=2000
            )
            P = sol.reshape(N, N)
            res = np.linalg.norm(P - lin(P.ravel()).reshape(N, N) - F0) / max(np.linalg.norm(F0), 1e-300)
            if info != 0 and res > 1e3 * tol:
                raise RuntimeError(
                    f"steady_state: GMRES did not converge (relative residual {res:.2e}, "
                    f"spectral radius {rho:.6f}); use moments(...) with many rounds instead"
                )
    S = np.zeros((n, n))
    S[0, 0] = 1.0
    S[0, 1:] = S[1:, 0] = m
    S[1:, 1:] = 0.5 * (P + P.T)
    g, f, xm = sys_.observe(S)
    return SteadyState(g, f, xm, rho, True, method, sys_.msd(S))


def _forcing(sys_, t, m):
    """F₀ = ww-block of one step from S = [[1, mᵀ], [m, 0]] (with noise): the constant part of P ↦ 𝓛(P) +
    F₀."""
    n = sys_.n
    S = np.zeros((n, n))
    S[0, 0] = 1.0
    S[0, 1:] = S[1:, 0] = m
    return sys_.step(S, t, noise=True)[1:, 1:]


def _power_radius(lin, N, iters=2000):
    v = np.eye(N).ravel()  # PSD start: the map is positive, so this converges to the Perron root
    v /= np.linalg.norm(v)
    rho = 0.0
    for _ in range(iters):
        w = lin(v)
        nw = np.linalg.norm(w)
        if nw == 0:
            return 0.0
        rho, v = nw, w / nw
    return float(rho)
