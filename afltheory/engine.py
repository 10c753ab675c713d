"""simulate(): the vectorized Monte Carlo engine for anarchic federated learning [Yang et al. 2022, Alg. 1–3].

One call runs ``replicates`` independent runs at once, vectorized over replicates and arriving workers. Per
round t it takes the realized schedule row (M_t, τ_{t,i}, K_{t,i}), gathers each worker's start point
x_{t−τ_{t,i}} from a ring buffer of the max_delay+1 most recent models, runs the K_{t,i} local steps of the
worker rule, and applies the server rule. Randomness: the schedule of replicate r comes from
``stream(seed, SCHEDULE, r)``; gradient noise of replicate block b (``_rng.BLOCK`` replicates) in round t from
the block's SFC64 generator re-seeded at (NOISE, t) from its keyed Philox stream (``_rng.SFC64BlockStreams``),
drawn for the whole block (a partial last block is padded), so replicate r is bit-identical whatever the
number of replicates, and a round can be reproduced alone. Where the server step is linear in the round's
collapsed updates, their m noises are drawn as one Gaussian of the same law
(``_CollapsedRunner.add_arrival_noise``). Every arrival's numbers are computed by the same arithmetic whatever
its block- and chunk-mates (``_LocalRunner._run_chunk``), and recorded quantities are reduced with
shape-independent kernels (``afltheory._numerics``). Replicates are processed in chunks of whole blocks; the
chunk size never changes a number (tests/engine/test_chunking.py, test_replicates.py).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from . import _faults, _progress, _rng
from ._buffers import BufferPool
from ._numerics import DivergenceRule
from ._validation import check_alloc, check_array, check_int, check_positive
from .algorithms.local import local_view
from .anarchy.schedule import Schedule
from .compression.channel import channel_for
from .problems.base import Problem
from .problems.quadratic import local_sgd_k_step_law

if TYPE_CHECKING:
    from .algorithms.base import ServerRule, WorkerState
    from .anarchy.behaviour import BehaviourLike
    from .compression.channel import Channel

__all__ = ["DivergenceInfo", "DivergenceWarning", "RegionWarning", "realized_schedule", "simulate", "Trace"]


class DivergenceWarning(RuntimeWarning):
    """Some replicates of a run diverged (non-finite or exploding iterates)."""


class RegionWarning(UserWarning):
    """Iterates left the region on which the problem's constants are certified."""


@dataclass(frozen=True)
class DivergenceInfo:
    """Per replicate: first round at which the run diverged (−1: never) — x_t, ‖∇f(x_t)‖² or f(x_t)
    non-finite, ‖∇f(x_t)‖² above ``threshold``, or |f(x_t) − f(x_0)| above ``divergence_threshold``·max(1,
    |f(x_0)|) (``simulate``). Round 0 counts: a start point whose values overflow has diverged at round 0."""

    round: np.ndarray
    threshold: float

    @property
    def diverged(self) -> np.ndarray:
        """Per replicate: did it diverge."""
        return self.round >= 0

    @property
    def any(self) -> bool:
        """True if any replicate diverged."""
        return bool(np.any(self.round >= 0))

    def __str__(self):
        if not self.any:
            return "no divergence"
        reps = np.flatnonzero(self.diverged)
        return (
            f"{len(reps)} of {len(self.round)} replicates diverged (first at round "
            f"{int(self.round[reps].min())}; replicates {reps[:10].tolist()}{'…' if len(reps) > 10 else ''})"
        )


@dataclass(frozen=True)
class Trace:
    """Result of ``simulate``. ``grad_norm_sq``/``loss``: (replicates, rounds + 1), values at x_0 … x_T; from
    a replicate's divergence round on they are +inf (see ``divergence``). ``left_region``: first round at
    which x_t left the problem's certified region (−1: never). ``x`` (replicates, rounds + 1, dim) if
    recorded. ``x_avg`` (replicates, dim): the averaged iterate x̄_T = (1/T) Σ_{t<T} x_t (+inf when diverged).
    ``virtual_grad_norm_sq`` (replicates, rounds, K) with ``record_virtual=True``: ‖∇f(x̄_{t,k})‖² of the
    virtual averaged model x̄_{t,k} = (1/m) Σ_i w_i y_{i,k} (the round's arrivals' local iterates before
    local step k, w_i = M p_i with client weights, else 1; Wang & Joshi 2018, Stich 2019).
    ``bits`` (replicates, rounds + 1): cumulative bits the workers sent up to x_t (uncompressed:
    32·dim per update; with the server rule's ``compressor`` its own count, afltheory.compression), for plots
    against communication."""

    grad_norm_sq: np.ndarray
    loss: np.ndarray
    schedule: Schedule
    divergence: DivergenceInfo
    left_region: np.ndarray
    x_final: np.ndarray
    x0: np.ndarray
    oracle_calls: np.ndarray
    seed: int
    x: np.ndarray | None = None
    config: dict = field(default_factory=dict)
    drift: np.ndarray | None = None
    tracking_error: np.ndarray | None = None
    bits: np.ndarray | None = None
    x_avg: np.ndarray | None = None
    virtual_grad_norm_sq: np.ndarray | None = None

    @property
    def replicates(self) -> int:
        """R, the number of replicates."""
        return self.grad_norm_sq.shape[0]

    @property
    def rounds(self) -> int:
        """T, the number of rounds."""
        return self.grad_norm_sq.shape[1] - 1

    @property
    def wall_clock(self) -> np.ndarray | None:
        """The schedule's wall clock (replicates, rounds + 1), or None for round-mode schedules."""
        return self.schedule.wall_clock

    @property
    def diverged(self) -> np.ndarray:
        """Per replicate: did it diverge (``divergence.diverged``)."""
        return self.divergence.diverged

    def time_average(self, T: int | None = None) -> np.ndarray:
        """(1/T) Σ_{t<T} ‖∇f(x_t)‖² per replicate — the left side of Theorems 2–4."""
        T = self.rounds if T is None else check_int("T", T, low=1, high=self.rounds)
        return self.grad_norm_sq[:, :T].mean(axis=1)

    def mean(self, what: str = "grad_norm_sq") -> np.ndarray:
        """The mean over replicates of ``what`` ("grad_norm_sq", "loss", ...) at t = 0..rounds."""
        return getattr(self, what).mean(axis=0)

    def sem(self, what: str = "grad_norm_sq") -> np.ndarray:
        """The standard error of that mean (0 with one replicate)."""
        a = getattr(self, what)
        return a.std(axis=0, ddof=1) / np.sqrt(a.shape[0]) if a.shape[0] > 1 else np.full(a.shape[1], np.nan)

    def summary(self) -> str:
        """A few human-readable lines (sizes, config, start/end/time-averaged E‖∇f‖² with a CI,
        divergence)."""
        from ._trace_io import summary

        return summary(self)

    def __repr__(self) -> str:
        return (
            f"Trace(replicates={self.replicates}, rounds={self.rounds}, dim={self.x0.shape[-1]}, "
            f"seed={self.seed}, {self.divergence})"
        )

    def save(self, path: str | os.PathLike) -> str:
        """Save to ``path`` (.npz, no pickle); ``Trace.load(path)`` reads it back array by array."""
        from ._trace_io import save

        return save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Trace:
        """Read a trace written by ``Trace.save``."""
        from ._trace_io import load

        return load(path, trace_cls=cls, divergence_cls=DivergenceInfo)


def _schedule_for(behaviour, algorithm, problem, rounds, replicates, seed) -> Schedule:
    if isinstance(behaviour, Schedule):
        from .anarchy.behaviour import Replay

        behaviour = Replay(behaviour)
    if not hasattr(behaviour, "sample"):
        raise ValueError(
            f"behaviour={behaviour!r} must be an afltheory.anarchy behaviour (Behaviour, Replay, "
            "EventDriven, Synchronous) or a Schedule"
        )
    sched = behaviour.sample(rounds, replicates, problem.num_workers, seed)
    sched = local_view(algorithm, problem.num_workers).apply(sched)  # the rule's fixed K (if any)
    if hasattr(algorithm, "check_m"):
        algorithm.check_m(sched.m)
    prior = sched.origin or {}
    return sched.with_origin(prior.get("behaviour", behaviour), algorithm)


#: Values per (chunk, m, d) working array: the local steps of a chunk of whole noise blocks run together, so
#: the arrays stay near the core (≤ 1 MB each, or one block) while Python call overhead is paid once per
#: chunk, not per replicate (2^13…2^17 measured within ±5% of each other at d = 10 and 100; the largest was
#: fastest).
_CHUNK_VALUES = 1 << 17


def _standard_normal_blocks(gens, out, B):
    """Fill out (n, ...) with standard normals, rows [jB, (j+1)B) from gens[j]; a partial last block is drawn
    whole and truncated, so a replicate's values do not depend on the number of replicates."""
    for j, gen in enumerate(gens):
        o = out[j * B : (j + 1) * B]
        if o.shape[0] == B:
            gen.standard_normal(out=o)
        else:
            o[...] = gen.standard_normal((B, *o.shape[1:]))[: o.shape[0]]
    return out


class _LocalRunner:
    """Runs K_{t,i} local steps for a (R, m) block of arrivals, with block-keyed noise streams.

    Work is done chunk by chunk (whole noise blocks of ``_rng.BLOCK`` replicates): gather the chunk's start
    points, then all of its local steps, so each block's stream is consumed in step order exactly as if the
    whole (R, m, d) array were processed at once (replicate r's values do not depend on R or the chunk size).
    """

    #: (R, T, K) buffer of ‖∇f(x̄_{t,k})‖² (``simulate(record_virtual=True)``), the round being run and the
    #: per-worker weights of the virtual mean; None: not recorded (the default path does not look at it)
    virtual = None
    virtual_t = 0
    virtual_weights = None
    #: the round's E local step sizes when η_L decays per local step (``ServerRule.local_step_sequence``;
    #: ``eta_L`` is then their mean); None: η_L at every step
    eta_steps = None

    def __init__(self, problem: Problem, worker, eta_L: float, seed: int, replicates: int):
        self.problem = problem
        self.worker = worker
        self.eta_L = eta_L
        self.seed = seed
        self.R = replicates
        self.B = _rng.BLOCK
        self.nblocks = -(-replicates // self.B)
        self.additive = problem.additive_noise
        self.noise = problem.noise
        self.no_noise = problem.noise.sigma_L == 0.0
        self.streams = _rng.SFC64BlockStreams(seed, self.nblocks)
        self.unit = problem.noise.standard_normal_scale(problem.dim)
        fault = _faults.get(_faults.FaultPoint.SIM_NOISE)  # None unless a noise fault is injected
        self.noise_factor = 1.0 if fault is None else float(fault(problem.dim))
        fault = _faults.get(_faults.FaultPoint.SIM_STEP_NOISE)  # None unless a step-noise fault is injected
        self.reuse_noise = fault is not None and fault(self.additive)
        # the problem's fast kernel (it owns its buffers); local steps run in its translated frame u = y − c_i
        # when it has one (translation-equivariant worker rules only see differences of points), saving a
        # subtraction per step
        self.kernel = problem.local_kernel()
        self.centered = self.additive and self.kernel.centered
        self._chunk_cache = {}
        self.ws = BufferPool()  # the engine's own per-round temporaries (G, y0, y, h, …), never lent

    def set_eta_L(self, eta_L: float, steps: tuple[float, ...] | None = None) -> None:
        """The local step size of the coming round (step-size schedules: ``ServerRule.at_round``); ``steps``:
        its E per-local-step sizes (mean ``eta_L``) when η_L decays per local step."""
        self.eta_L = eta_L
        self.eta_steps = steps

    def _chunks(self, n):
        """[(lo, hi, first block, end block)] covering the replicates, for n arrivals per replicate."""
        if n not in self._chunk_cache:
            B, nb = self.B, max(1, _CHUNK_VALUES // (self.B * n * self.problem.dim))
            self._chunk_cache[n] = [
                (b * B, min((b + nb) * B, self.R), b, min(b + nb, self.nblocks))
                for b in range(0, self.nblocks, nb)
            ]
        return self._chunk_cache[n]

    def step_bounds(self, local_steps):
        """(2, chunks, rounds): per chunk and round, the fewest and most local steps of its arrivals (one pass
        over the schedule instead of two strided reductions per chunk and round)."""
        n = local_steps.shape[2]
        return np.stack(
            [
                np.stack([local_steps[lo:hi].min(axis=(0, 2)) for lo, hi, _, _ in self._chunks(n)]),
                np.stack([local_steps[lo:hi].max(axis=(0, 2)) for lo, hi, _, _ in self._chunks(n)]),
            ]
        )

    def run(self, src, idx, workers, K, purpose, key, worker_state=None, shift=None, bounds=None):
        """G: (R, n, d), per arrival the average of its K stochastic (corrected) gradients from its start
        point y0 = src[idx] − shift (``src``: (·, d) models, ``idx``: (R, n) valid rows of src, ``shift``: (R,
        d) or None). Returns (G, the worker state after the arrivals' ``finish``); ``worker_state`` is donated
        (each chunk's ``finish`` returns the state the next chunk and the caller continue with). The returned
        G is reused by the next call.

        Σ_k g_k is recovered as (y_0 − y_K)/η_L instead of being accumulated (one pass less per step; the
        rounding error it adds to x_{t+1} is η·ε·‖y‖/K, far below the 1e-12 reference tolerance).
        """
        R, n = workers.shape
        d = self.problem.dim
        G = self.ws.get("G", (R, n, d))
        if self.additive and self.no_noise:  # nothing to draw (σ_L = 0, or the arrivals' noise drawn later)
            gens = [None] * self.nblocks
        else:
            gens = self.streams.at(purpose, key)
        for c, (lo, hi, b0, b1) in enumerate(self._chunks(n)):
            # mode="wrap": an unbuffered gather (indices come from a validated schedule)
            y0 = np.take(src, idx[lo:hi], axis=0, out=self.ws.get("y0", (hi - lo, n, d)), mode="wrap")
            if shift is not None:
                y0 -= shift[lo:hi, None, :]
            if self.centered:
                y0 -= self.kernel.center(workers[lo:hi])
            Kc = K[lo:hi]
            Kmin, Kmax = (
                (int(Kc.min()), int(Kc.max())) if bounds is None else (int(bounds[0, c]), int(bounds[1, c]))
            )
            worker_state = self._run_chunk(
                G[lo:hi], y0, workers[lo:hi], Kc, Kmin, Kmax, gens[b0:b1], lo, worker_state
            )
        return G, worker_state

    def _run_chunk(self, Gc, y0, W, K, Kmin, Kmax, gens, lo, worker_state):
        """Every arrival's numbers are computed by the same arithmetic whatever its chunk-mates (the chunk's
        Kmin/Kmax only choose how much work is skipped): a K = 1 arrival of a stateless rule always gets the
        one-step value ξ + ∇f_i(y_0); a K ≥ 2 arrival always takes the problem's fused step, with the noise of
        step 0 drawn at scale 1 and then multiplied by η_L; arrivals that finished early are held fixed; G is
        always divided by η_L·K. Hence replicate r is bit-identical whatever the replicate count. Returns the
        worker state ``finish`` returned (``worker_state`` is donated)."""
        p, eta, ws = self.problem, self.eta_L, self.ws
        if Kmax == 1 and not worker_state:  # one step, stateless rule (SGD, FedProx): G is the gradient at y0
            if self.virtual is not None:
                self._record_virtual(y0, W, lo, 0)
            self._one_step(Gc, y0, W, gens)
            return worker_state
        step = self.kernel.sgd_step(W, eta) if self.additive else None
        seq = self.eta_steps  # per-local-step sizes (η_L decaying per local step), else None
        if seq is not None and len(seq) != Kmax:
            raise ValueError(f"local steps: {len(seq)} per-local-step sizes for arrivals running K={Kmax}")
        rows = np.arange(lo, lo + len(W))
        y = ws.get("y", y0.shape)
        np.copyto(y, y0)
        h = ws.get("h", y0.shape)
        xi = ws.get("xi", y0.shape)
        ynew = ws.get("ynew", y0.shape) if Kmin < Kmax else None
        for k in range(Kmax):
            if self.virtual is not None:
                self._record_virtual(y, W, lo, k)
            if seq is not None:  # step k's own size η_{L,tE+k}
                eta = seq[k]
                step = self.kernel.sgd_step(W, eta) if self.additive else None
            if k == 0:  # the step-0 draw at scale 1 (= the one-step path's draw), then scaled
                self._draw(gens, W, xi, 1.0, y)
                np.multiply(xi, eta, out=h)
            elif self.reuse_noise:  # fault (afltheory.mutants): step 0's draw again
                np.multiply(xi, eta, out=h)
            else:
                self._draw(gens, W, h, eta, y)  # h = η_L ξ_k (or η_L ∇f_i(y, ξ) when not additive)
            if worker_state is not None:
                corr = self.worker.correction(worker_state, y, y0, rows, W)
                if corr is not None:
                    corr *= eta
                    h += corr
            target = y if k < Kmin else ynew  # arrivals with K ≤ k keep y (masked below)
            if target is not y:
                np.copyto(target, y)
            if step is not None:
                step(target, h)  # y ← y − η_L ∇f_i(y) − h (the problem's fused step)
            else:
                target -= h
            if target is not y:
                np.copyto(y, target, where=(k < K)[..., None])
        eta = self.eta_L  # G = (y_0 − y_K)/(η̄_L K): the round's mean step when the steps differ
        if worker_state is not None:
            worker_state = self.worker.finish(worker_state, y0, y, K, eta, rows, W, p.num_workers)
        np.subtract(y0, y, out=Gc)
        if Kmin == Kmax:
            Gc /= eta * Kmax  # a division, as below: the same bits per arrival
        else:
            Gc /= (eta * K)[..., None]
        if Kmin == 1 and not worker_state:  # K = 1 arrivals get the one-step value (as in a K = 1 chunk)
            one = K == 1
            self._one_step(xi, y0, W, gens, drawn=True)
            np.copyto(Gc, xi, where=one[..., None])
        return worker_state

    def _record_virtual(self, y, W, lo, k):
        """virtual[lo:hi, t, k] = ‖∇f(x̄)‖², x̄ = (1/m) Σ_i w_i y_i over the chunk's arrivals (y in the kernel's
        translated frame when it has one)."""
        if self.centered:
            y = y + self.kernel.center(W)
        w = None if self.virtual_weights is None else self.virtual_weights[W]
        ybar = y.mean(axis=1) if w is None else np.einsum("rn,rnd->rd", w, y) / y.shape[1]
        self.virtual[lo : lo + len(W), self.virtual_t, k] = self.problem.grad_norm_sq_and_value(ybar)[0]

    def _one_step(self, out, y0, W, gens, drawn=False):
        """out = ∇f_i(y_0, ξ) for one local step: the noise draw (unless ``drawn``: out already holds it) plus
        the gradient at y0."""
        if not drawn:
            self._draw(gens, W, out, 1.0, y0)
        if self.additive:
            self.kernel.grad_add(W, 1.0)(y0, out)

    def _draw(self, gens, W, out, scale, y):
        """out = scale · (one noise draw per arrival) — or, for problems with their own stochastic gradient,
        scale · ∇f_i(y, ξ). Noise is drawn per block, always the full block (replicate r does not depend on
        R)."""
        B = self.B
        if self.additive and self.no_noise:
            out.fill(0.0)
            return
        if self.additive and self.unit is not None:  # s·N(0, I): raw draws per block, one scaling per chunk
            _standard_normal_blocks(gens, out, B)
            out *= scale * self.unit * self.noise_factor
            return
        for j, gen in enumerate(gens):
            sl = slice(j * B, (j + 1) * B)
            o = out[sl]
            if not self.additive:
                yb, wb = y[sl], W[sl]
                if o.shape[0] < B:  # partial last block: the full block's draws (replicate r ⟂ R)
                    yb = np.concatenate([yb, np.broadcast_to(yb[:1], (B - o.shape[0], *yb.shape[1:]))])
                    wb = np.concatenate([wb, np.broadcast_to(wb[:1], (B - o.shape[0], *wb.shape[1:]))])
                o[...] = self.problem.stochastic_grad(yb, wb, gen)[: o.shape[0]]
                if scale != 1.0:
                    o *= scale
            elif o.shape[0] == B:
                self.noise.sample_into(gen, W[sl], o, scale * self.noise_factor)
            else:  # partial last block: draw the full block so replicate r's values do not depend on R
                w = np.zeros((B, W.shape[1]), dtype=np.int64)
                w[: o.shape[0]] = W[sl]
                tmp = np.empty((B, *o.shape[1:]))
                self.noise.sample_into(gen, w, tmp, scale * self.noise_factor)
                o[...] = tmp[: o.shape[0]]


class _PerWorkerStepRunner(_LocalRunner):
    """Local steps with a per-worker step size η_i (``algorithm.local_step_sizes``, e.g. DynamicFedAvg's
    μ/E_k): y ← y − η_i (∇f_i(y) + ξ), G = (y_0 − y_K)/(η_i K). Same noise stream as ``_LocalRunner`` (one
    unit-scale draw per step, scaled per arrival); stateless worker rules only."""

    def __init__(self, problem, worker, steps, seed, replicates):
        super().__init__(problem, worker, 1.0, seed, replicates)
        self.steps = np.asarray(steps, dtype=float)

    def _run_chunk(self, Gc, y0, W, K, Kmin, Kmax, gens, lo, worker_state):
        ws = self.ws
        eta = self.steps[W][..., None]  # (n, m, 1)
        add = self.kernel.grad_add(W, 1.0) if self.additive else None
        y = ws.get("y", y0.shape)
        np.copyto(y, y0)
        h = ws.get("h", y0.shape)
        for k in range(Kmax):
            self._draw(gens, W, h, 1.0, y)  # h = ξ_k (or ∇f_i(y, ξ) when not additive)
            if add is not None:
                add(y, h)  # h += ∇f_i(y)
            h *= eta
            if k >= Kmin:
                h *= (k < K)[..., None]
            y -= h
        np.subtract(y0, y, out=Gc)
        Gc /= eta * K[..., None]
        return worker_state  # stateless worker rules only: nothing to finish


class _CollapsedRunner(_LocalRunner):
    """Exact collapsed local steps for quadratics with isotropic Gaussian noise and the SGD worker rule.

    With g_k = H(y_k − c_i) + ξ_k and y_{k+1} = y_k − η_L g_k, in H's eigenbasis (a = 1 − η_L λ):
    G = (1/K)Σ_k g_k = (1 − a^K)/(η_L K) · (y_0 − c_i) + (1/K) Σ_{j<K} a^{K−1−j} ξ_j, and the noise sum is
    N(0, (σ_L²/d) Σ_{j<K} a^{2j}) per coordinate: one draw per worker update instead of K.
    """

    def __init__(self, problem, worker, eta_L, seed, replicates):
        super().__init__(problem, worker, eta_L, seed, replicates)
        self.eig, self.Q = problem.hessian_eigensystem()  # (S, d) eigenvalues; basis (None: identity)
        self.sigma = problem.noise.sigma_L
        self.arrivals = False  # set by simulate when the server step is linear in the round's updates
        self._std = {}
        self._tables = {}
        self._tiled = {}

    @staticmethod
    def reason(problem, worker) -> str | None:
        """Why collapsing is invalid for this run (None: valid): the problem declares whether its K-step law
        collapses (``Problem.collapse_reason``), the worker rule whether it is plain SGD (``prox_weight`` 0
        and no overridden hook)."""
        why = problem.collapse_reason()
        if why is not None:
            return why
        affine = worker.affine_prox_weight() if hasattr(worker, "affine_prox_weight") else None
        if affine != 0.0:
            return f"the worker rule {type(worker).__name__} is not plain SGD"
        return None

    def set_eta_L(self, eta_L: float, steps: tuple[float, ...] | None = None) -> None:
        """A new local step size (or per-local-step sizes) invalidates the cached K-step coefficients."""
        if eta_L != self.eta_L or steps != self.eta_steps:
            self.eta_L = eta_L
            self.eta_steps = steps
            self._tables = {}
            self._tiled = {}
            self._std = {}

    def _table(self, K):
        """(drift, noise) coefficients for K steps, each (S, d): G = drift·(y0 − c) + noise·z, z ~ N(0, I) —
        the quadratic family's K-step law (``problems.quadratic.local_sgd_k_step_law``), cached per K."""
        if K not in self._tables:
            if self.eta_steps is not None:  # η_L decaying per local step: the step-by-step product law
                drift, noise = _step_sequence_law(self.eig, self.eta_steps, K, self.sigma, self.problem.dim)
            else:
                drift, noise = local_sgd_k_step_law(self.eig, self.eta_L, K, self.sigma, self.problem.dim)
            self._tables[K] = (drift, noise * self.noise_factor)
        return self._tables[K]

    def _coefficients(self, W, K, Kmin, Kmax):
        """Per-arrival drift and noise coefficients, broadcastable against (n, m, d)."""
        S, m = self.eig.shape[0], W.shape[1]
        if Kmin == Kmax:  # one K in this chunk: shared coefficients tiled to (m, d) (coalesced inner loops)
            if S == 1:
                if (Kmax, m) not in self._tiled:
                    dr, sc = self._table(Kmax)
                    self._tiled[(Kmax, m)] = np.tile(dr[0], (m, 1)), np.tile(sc[0], (m, 1))
                return self._tiled[(Kmax, m)]
            dr, sc = self._table(Kmax)
            return np.take(dr, W, axis=0), np.take(sc, W, axis=0)
        Ks = np.unique(K)
        tabs = [self._table(int(k)) for k in Ks]
        drift, scale = np.stack([t[0] for t in tabs]), np.stack([t[1] for t in tabs])
        kidx = np.searchsorted(Ks, K)
        widx = 0 if S == 1 else W
        return drift[kidx, widx], scale[kidx, widx]

    def run(self, src, idx, workers, K, purpose, key, worker_state=None, shift=None, bounds=None):
        """As ``_LocalRunner.run``; with ``arrivals`` set, a round's (``_rng.NOISE``) updates are returned
        without their noise, which ``add_arrival_noise`` then adds to the server step as one draw."""
        if not (self.arrivals and purpose == _rng.NOISE) or self.no_noise:
            return super().run(src, idx, workers, K, purpose, key, worker_state, shift, bounds)
        self.no_noise = True  # the noiseless updates: the same arithmetic as a σ_L = 0 run
        try:
            return super().run(src, idx, workers, K, purpose, key, worker_state, shift, bounds)
        finally:
            self.no_noise = False

    def add_arrival_noise(self, x, factor, weights, W, K, key):
        """x −= factor · Σ_i w_i ε_i, the arrivals' summed noise drawn as ONE Gaussian: the
        ε_i = sc(K_i, W_i) ⊙ z_i (eigenbasis of H) independent, so Σ_i w_i ε_i ~ sqrt(Σ_i w_i² sc_i²) ⊙ z
        with z ~ N(0, I_d) — exact in law (issue 31). ``weights``: (R, n) per-arrival factors w_i or None (1).
        z of round ``key`` comes from the blocks' (NOISE, key) streams (full blocks: replicate r ⟂ R); the
        variance is summed by the same elementwise arithmetic for every row (arrivals in order, then step
        counts in increasing order), so replicate r is bit-identical whatever R."""
        if self.no_noise:
            return x
        R, n = W.shape
        S, d = self.eig.shape
        ws = self.ws
        kmin, kmax = int(K.min()), int(K.max())
        if S == 1 and weights is None and kmin == kmax:  # one std for every row: the general arithmetic
            std = self._std.get((kmax, n, factor))  # below with a single nonzero count (0 + n·sc² = n·sc²)
            if std is None:
                sc = self._table(kmax)[1][0]
                std = self._std[(kmax, n, factor)] = np.sqrt(float(n) * (sc * sc)) * factor
            z = _standard_normal_blocks(self.streams.at(_rng.NOISE, key), ws.get("arrz", (R, d)), self.B)
            z *= std
            if self.Q is not None:
                z = np.matmul(z[:, None, :], self.Q.T)[:, 0]
            x -= z
            return x
        present = np.bincount((K - kmin).ravel(), minlength=kmax - kmin + 1)
        Ks = np.flatnonzero(present) + kmin  # the step counts of this round, increasing
        kidx = np.searchsorted(Ks, K)
        unit = weights is None or bool(np.all(np.asarray(weights) == 1.0))  # a fault can matter only if not
        square = np.square if unit else _faults.get(_faults.FaultPoint.SIM_ARRIVAL_WEIGHTS, np.square)
        var = ws.get("arrvar", (R, d))
        var.fill(0.0)
        if S == 1:
            if weights is None:  # integer counts per step count: exact whatever the order
                cnt = (kidx[..., None] == np.arange(len(Ks))).sum(axis=1).astype(float)
            else:
                w2 = square(np.asarray(weights, dtype=float))
                cnt = np.zeros((R, len(Ks)))
                rows = np.arange(R)
                for i in range(n):
                    cnt[rows, kidx[:, i]] += w2[:, i]
            for j, k in enumerate(Ks):
                sc = self._table(int(k))[1][0]
                var += cnt[:, j, None] * (sc * sc)
        else:
            sc2 = np.stack([self._table(int(k))[1] for k in Ks]) ** 2  # (nK, S, d)
            w2 = None if weights is None else square(np.asarray(weights, dtype=float))
            for i in range(n):
                term = sc2[kidx[:, i], W[:, i]]
                if w2 is not None:
                    term *= w2[:, i, None]
                var += term
        np.sqrt(var, out=var)
        var *= factor
        z = _standard_normal_blocks(self.streams.at(_rng.NOISE, key), ws.get("arrz", (R, d)), self.B)
        z *= var
        if self.Q is not None:  # back from the eigenbasis: one (1, d) @ (d, d) product per replicate
            z = np.matmul(z[:, None, :], self.Q.T)[:, 0]
        x -= z
        return x

    def _run_chunk(self, Gc, y0, W, K, Kmin, Kmax, gens, lo, worker_state):
        if Kmax == 1:  # nothing to collapse: the generic one-step path is the same draw
            return super()._run_chunk(Gc, y0, W, K, Kmin, Kmax, gens, lo, worker_state)
        ws = self.ws
        dr, sc = self._coefficients(W, K, Kmin, Kmax)
        v = y0  # already y0 − c_i: quadratics run in their local frame (``centered``)
        if self.Q is not None:
            v = v @ self.Q  # (n, m, d) @ (d, d): one product per replicate, whatever n (same bits)
        out = Gc if self.Q is None else v
        np.multiply(v, dr, out=out)
        xi = ws.get("xi", y0.shape) if Kmin == 1 else None
        if not self.no_noise:
            z = _standard_normal_blocks(gens, ws.get("z", v.shape), self.B)
            if xi is not None:  # the one-step path's draw (the same standard normals, scaled by σ_L/√d)
                np.multiply(z, 1.0 * self.unit * self.noise_factor, out=xi)
            z *= sc
            out += z
        elif xi is not None:
            xi.fill(0.0)
        if self.Q is not None:
            np.matmul(out, self.Q.T, out=Gc)
        # K = 1 arrivals get the one-step value, as in a chunk whose arrivals all have K = 1
        if xi is not None:
            self._one_step(xi, y0, W, gens, drawn=True)
            np.copyto(Gc, xi, where=(K == 1)[..., None])
        return worker_state  # stateless worker rules only (``reason``): nothing to finish


def _step_sequence_law(eig, steps, K, sigma, dim):
    """(drift, noise) of ``local_sgd_k_step_law`` for K local steps of sizes ``steps`` = (η_0, …, η_{K−1})
    (η_L decaying per local step): with a_k = 1 − η_k λ, e_{k+1} = a_k e_k − η_k ξ_k, so G = (y_0 − y_K)/(η̄ K)
    = (1 − Π_k a_k)/(η̄ K) · e_0 + (1/(η̄ K)) Σ_j η_j Π_{l>j} a_l ξ_j, η̄ = mean(steps); the noise variance
    V = Σ_j η_j² Π_{l>j} a_l² is accumulated forward (V ← a_k² V + η_k²)."""
    if len(steps) != K:
        raise ValueError(f"local steps: {len(steps)} per-local-step sizes for arrivals running K={K}")
    eig = np.asarray(eig, dtype=float)
    bar = sum(steps) / len(steps)
    logp = np.zeros_like(eig)
    pos = np.ones(eig.shape, dtype=bool)
    prod = np.ones_like(eig)
    V = np.zeros_like(eig)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for eta in steps:
            a = 1.0 - eta * eig
            pos &= a > 0
            logp += np.log(np.where(a > 0, a, 1.0))
            prod *= a
            V = a * a * V + eta * eta
        one_minus = np.where(pos, -np.expm1(logp), 1.0 - prod)  # 1 − Π a_k without cancellation when a_k > 0
    drift = one_minus / (bar * K)
    noise = np.sqrt(V) / (bar * K) * (sigma / np.sqrt(dim))
    return drift, noise


def simulate(
    problem: Problem,
    algorithm: ServerRule,
    behaviour: BehaviourLike,
    rounds: int,
    replicates: int = 1,
    seed: int = 0,
    x0: ArrayLike | None = None,
    *,
    divergence_threshold: float = 1e12,
    record_x: bool = False,
    collapse: bool | str | None = None,
    progress: bool = False,
    record_virtual: bool = False,
    fast: bool | str = "auto",
) -> Trace:
    """Run ``algorithm`` on ``problem`` under ``behaviour`` for ``rounds`` server rounds, ``replicates``
    times.

    ``x0``: (dim,) or (replicates, dim); default ``problem.default_x0()`` (the same for every replicate).
    A replicate diverges at the first round t where x_t, ‖∇f(x_t)‖² or f(x_t) is non-finite, ‖∇f(x_t)‖²
    exceeds ``divergence_threshold``·max(1, ‖∇f(x_0)‖²), or |f(x_t) − f(x_0)| exceeds
    ``divergence_threshold``· max(1, |f(x_0)|) (losses with bounded gradients, e.g. logistic regression,
    diverge in f only); t = 0 when the start point already overflows. It is then frozen; from round t on its
    ``grad_norm_sq``, ``loss``, ``x``, ``tracking_error`` and its ``x_final`` are +inf (never NaN),
    ``divergence`` records t, and a ``DivergenceWarning`` names the round and replicates.
    ``collapse``: draw each worker update's K local steps exactly in one Gaussian draw (quadratics with
    isotropic Gaussian noise and SGD workers; same law, different random stream) and, where the server step is
    linear in the round's updates (the base rule's weighted sum, uncompressed; a memory rule only when all M
    workers arrive every round), the round's m arrival noises as ONE Gaussian draw of their weighted sum
    (``Trace.config["arrivals_collapsed"]``). None: whenever valid; True: required (ValueError saying why
    when invalid); "steps": as True, but one noise draw per arrival; False: step by step.
    ``progress``: show a progress bar over rounds on stderr (tqdm if installed, else a line per 10 %).
    ``record_virtual``: record ``Trace.virtual_grad_norm_sq`` (the virtual averaged model at every local
    step); it runs the step path (``collapse`` must not be True) and needs the same K for every arrival,
    one local step size for all workers and a problem that does not drift (ValueError naming it otherwise).
    ``fast``: the fast path runs the collapsed law of the reference path (K steps and the round's arrival
    noises each one Gaussian) in one compiled kernel over all rounds (numba, the ``fast`` extra; without
    numba a numpy loop with bit-identical values; ``Trace.config["fast"]`` says which). It covers stateless
    rules with constant step sizes on quadratics with diagonal Hessians whose round updates are collapsed
    (``Trace.config["arrivals_collapsed"]``), with no drift, no recorded virtual model and no injected
    fault: the same schedule and law as the reference path, other noise draws (replicate r's values do not
    depend on ``replicates``). "auto" (default): the fast path whenever it covers the run, the reference
    path otherwise; False: the reference path always (its values are pinned by
    ``tools/engine_trace_hashes.py``); True: the fast path, ValueError saying why when it does not cover
    the run. On the fast path diverged replicates are not frozen (their values from the divergence round
    on are +inf, as on the reference path) and ``progress`` advances per chunk of rounds.
    """
    if not (isinstance(fast, (bool, np.bool_)) or (isinstance(fast, str) and fast == "auto")):
        raise ValueError(f"fast={fast!r} must be True, False or 'auto'")
    fast = fast if isinstance(fast, str) else bool(fast)
    run = _prepare(
        problem,
        algorithm,
        behaviour,
        rounds,
        replicates,
        seed,
        x0,
        divergence_threshold,
        record_x,
        collapse,
        record_virtual,
    )
    why = None if fast is False else _fast_reason(run, algorithm)
    if why is not None and fast is True:
        raise ValueError(f"fast=True is unavailable here: {why}")
    if fast is not False and why is None:
        kernel = _run_rounds_fast(run, progress)
        trace = _report(run)
        trace.config["fast"] = kernel
        return trace
    _run_rounds(run, progress)
    return _report(run)


def _virtual_reason(collapse, per_worker, drifting, steps) -> str | None:
    """Why ``record_virtual`` cannot be recorded (None: it can)."""
    if collapse is True or collapse == "steps":
        return f"collapse={collapse!r} draws the K steps at once (the virtual model needs every step)"
    if per_worker is not None:
        return "the local step size differs between workers (the per-worker step path does not record it)"
    if drifting is not None:
        return "the problem drifts"
    if steps.size and int(steps.min()) != int(steps.max()):
        return "the number of local steps varies between arrivals (x̄_{t,k} needs the same K)"
    return None


def _arrivals_reason(algorithm, channel, sched, num_workers) -> str | None:
    """Why a round's collapsed updates cannot be summed into one noise draw (None: they can, exactly in law):
    the server step must be the base rule's x − γ/normalizer · Σ_i w_i G_i (``aggregate``/``combine`` not
    overridden, or overridden by a class declaring ``base_code = True``: ``ServerRule.own_code_hooks``), on
    uncompressed updates, and a memory rule must overwrite every slot every round (all M workers arrive each
    round: its memory sum is then that round's sum)."""
    from .algorithms.base import ServerRule

    own = algorithm.own_code_hooks() if isinstance(algorithm, ServerRule) else ("aggregate",)
    if "aggregate" in own or "combine" in own:
        return "the server rule overrides aggregate or combine"
    if algorithm.server_optimizer is not None and not algorithm.server_optimizer.identity:
        return "the server rule has a server optimizer (its step is not the weighted sum's)"
    if channel.comp is not None:
        return "the updates are compressed"
    if algorithm.keeps_memory:
        full = sched.m == num_workers and "update_memory" not in own
        if not (
            full
            and np.array_equal(
                np.sort(sched.workers, axis=2), np.broadcast_to(np.arange(num_workers), sched.workers.shape)
            )
        ):
            return "a memory rule keeps slots of workers that did not arrive this round"
    return None


def _round_rule(algorithm, t, local_steps=None):
    """Round t's constant rule of a (possibly scheduled) server rule (``local_steps``: E, for an η_L decaying
    per local step)."""
    if not getattr(algorithm, "scheduled", False):
        return algorithm
    return (
        algorithm.at_round(t, local_steps=local_steps) if local_steps is not None else algorithm.at_round(t)
    )


def _per_step_E(algorithm, steps, init_steps) -> int | None:
    """E when ``algorithm``'s η_L decays per local step (``ServerRule.steps_per_round``), else None."""
    hook = getattr(algorithm, "steps_per_round", None)
    return None if hook is None else hook(steps, init_steps)


@dataclass(slots=True)
class _Run:
    """One ``simulate`` call's run state: built by ``_prepare``, advanced by ``_run_rounds`` (which fills the
    fields from ``gn`` on), packaged by ``_report``. Mutable: it is the run's working state."""

    problem: Problem
    algorithm: ServerRule
    behaviour: BehaviourLike
    rounds: int
    seed: int
    divergence_threshold: float
    d: int
    M: int
    R: int
    sched: Schedule
    delays: np.ndarray  # (R, T, m) the delays the engine acts on (the schedule's unless a fault is injected)
    steps: np.ndarray  # (R, T, m) local steps acted on
    init_steps: np.ndarray  # (R, M) warm-start local steps acted on
    x0: np.ndarray  # (d,) or (R, d) as given
    x: np.ndarray  # (R, d) the current model
    x_init: np.ndarray  # (R, d) x_0 per replicate (diverged replicates are frozen here)
    H: int  # ring-buffer depth: max delay + 1
    hist: np.ndarray  # (H, R, d) ring buffer of recent models
    hist_flat: np.ndarray  # (H·R, d) view of hist
    rows: np.ndarray  # (R,)
    rows_m: np.ndarray  # (R, m) replicate index per arrival
    use_collapsed: bool
    arrivals: bool
    runner: _LocalRunner
    worker_state: WorkerState  # the current one (the rounds replace it: each state passed on is donated)
    channel: Channel
    bits: np.ndarray  # (R, T+1) cumulative bits sent
    walk: np.ndarray | None  # (R, T+1, d) the drifting optimum's walk, None for a static problem
    drift_lag: int
    track: np.ndarray | None  # (R, T+1) ‖x_t − w_t − x*‖² for a drifting problem
    record_x: bool
    # filled by _run_rounds
    gn: np.ndarray | None = None
    loss: np.ndarray | None = None
    xs: np.ndarray | None = None
    x_avg: np.ndarray | None = None
    div_round: np.ndarray | None = None
    left: np.ndarray | None = None
    limit: float = 0.0
    check_region: bool = False


def _inputs(problem, algorithm, rounds, replicates, seed):
    """The run's inputs as ``simulate`` acts on them: the rule's ``prepare`` applied to the problem, a
    drifting problem's base, validated rounds/replicates/seed, the algorithm after ``_faults.substitute``."""
    prepare = getattr(algorithm, "prepare", None)
    if prepare is not None:  # e.g. DynamicFedAvg applies its mini-batch sizes to the agents' data
        problem = prepare(problem)
    drifting = problem if getattr(problem, "drifts", False) else None
    if drifting is not None:
        problem = drifting.base
    if not isinstance(problem, Problem):
        raise ValueError(f"problem={problem!r} must be an afltheory.problems.Problem")
    rounds = check_int("rounds", rounds, low=1)
    replicates = check_int("replicates", replicates, low=1)
    seed = check_int("seed", seed, low=0)
    algorithm = _faults.substitute(algorithm)  # identity unless inside afltheory.mutants.injected(...)
    if not hasattr(algorithm, "aggregate"):
        raise ValueError(f"algorithm={algorithm!r} must be an afltheory.algorithms server rule")
    return drifting, problem, algorithm, rounds, replicates, seed


def realized_schedule(
    problem: Problem,
    algorithm: ServerRule,
    behaviour: BehaviourLike,
    rounds: int,
    replicates: int = 1,
    seed: int = 0,
) -> Schedule:
    """The schedule ``simulate(problem, algorithm, behaviour, rounds, replicates, seed)`` realizes and
    records in ``Trace.schedule`` (the same draw), without running the rounds: what an exact engine's
    verdict needs to evaluate a bound on the realized schedules (``afltheory.claims.measure``)."""
    _, problem, algorithm, rounds, replicates, seed = _inputs(problem, algorithm, rounds, replicates, seed)
    return _schedule_for(behaviour, algorithm, problem, rounds, replicates, seed)


def _prepare(
    problem,
    algorithm,
    behaviour,
    rounds,
    replicates,
    seed,
    x0,
    divergence_threshold,
    record_x,
    collapse,
    record_virtual=False,
) -> _Run:
    """``simulate``, part 1: validate the arguments, realize the schedule, choose the local-step runner
    (collapsed / per-worker / step by step, from the problem's and the rules' declared capabilities) and
    allocate the run's state. Returns the run state."""
    drifting, problem, algorithm, rounds, replicates, seed = _inputs(
        problem, algorithm, rounds, replicates, seed
    )
    divergence_threshold = check_positive("divergence_threshold", divergence_threshold)
    d, M, R = problem.dim, problem.num_workers, replicates
    m_est = getattr(behaviour, "m", None) or getattr(getattr(behaviour, "arrivals", None), "m", None) or 1
    check_alloc(
        f"rounds={rounds}, replicates={R}, dim={d}" + (", record_x=True" if record_x else ""),
        8.0 * R * (rounds + 1) * (3 + (d if record_x else 0)) + 8.0 * 4 * R * rounds * m_est,
    )
    sched = _schedule_for(behaviour, algorithm, problem, rounds, R, seed)
    # the delays and local steps the engine acts on: the schedule's, except under an injected engine fault
    delays, steps, init_steps = sched.delays, sched.local_steps, sched.init_local_steps
    fault = _faults.get(_faults.FaultPoint.SIM_DELAYS)
    if fault is not None:
        delays = fault(delays)
    fault = _faults.get(_faults.FaultPoint.SIM_LOCAL_STEPS)
    if fault is not None:
        steps, init_steps = fault(steps), fault(init_steps)
    if x0 is None:
        x0 = problem.default_x0()
    x0 = check_array("x0", x0)
    if x0.shape not in ((d,), (R, d)):
        raise ValueError(f"x0 has shape {x0.shape}; expected ({d},) or ({R}, {d})")
    x = np.array(np.broadcast_to(x0, (R, d)), dtype=float)
    x_init = x.copy()
    H = int(delays.max()) + 1 if delays.size else 1
    hist = np.empty((H, R, d))
    hist[0] = x
    hist_flat = hist.reshape(H * R, d)
    rows = np.arange(R)
    rows_m = np.repeat(rows[:, None], sched.m, axis=1)
    why_not = _CollapsedRunner.reason(problem, algorithm.worker)
    per_worker = local_view(algorithm, M).step_sizes  # None: one step size (algorithm.eta_L)
    if per_worker is not None:
        why_not = "the local step size differs between workers"
    if collapse not in (None, True, False, "steps"):
        raise ValueError(f"collapse={collapse!r} must be None, True, False or 'steps'")
    if collapse and why_not:
        raise ValueError(f"collapse={collapse!r} is invalid here: {why_not}")
    if record_virtual:
        why = _virtual_reason(collapse, per_worker, drifting, steps)
        if why:
            raise ValueError(f"record_virtual=True is unavailable here: {why}")
        collapse = False
    use_collapsed = why_not is None and collapse is not False
    if per_worker is not None:
        runner = _PerWorkerStepRunner(problem, algorithm.worker, per_worker, seed, R)
    else:
        runner_cls = _CollapsedRunner if use_collapsed else _LocalRunner
        rule0 = _round_rule(algorithm, 0, _per_step_E(algorithm, steps, init_steps))
        runner = runner_cls(problem, algorithm.worker, rule0.eta_L, seed, R)
        runner.set_eta_L(rule0.eta_L, rule0.local_step_sequence)
    if record_virtual:
        runner.virtual = np.empty((R, rounds, int(steps.max())))
        runner.virtual_weights = algorithm.worker_weights(M)
    worker_state = algorithm.worker.init(R, M, d)
    channel = channel_for(algorithm, d, M, R, seed)  # the worker-side compressor (identity when none)
    arrivals = (
        use_collapsed and collapse != "steps" and _arrivals_reason(algorithm, channel, sched, M) is None
    )
    if arrivals:
        runner.arrivals = True
    bits = np.zeros((R, rounds + 1))
    walk, drift_lag = None, 0
    if drifting is not None:
        walk = np.stack([drifting.walk(_rng.stream(seed, _rng.DRIFT, r), rounds) for r in range(R)])
        fault = _faults.get(_faults.FaultPoint.SIM_DRIFT_COV)  # None unless a drift fault is injected
        if fault is not None:
            walk = walk * fault(drifting.drift_cov)
        walk = walk * f(algorithm) if (f := _faults.get(_faults.FaultPoint.SIM_DRIFT_EPOCHS)) else walk
        drift_lag = 1 if _faults.get(_faults.FaultPoint.SIM_DRIFT_ORDER) else 0  # 1: update before the drift
    track = np.empty((R, rounds + 1)) if walk is not None else None
    return _Run(
        problem=problem,
        algorithm=algorithm,
        behaviour=behaviour,
        rounds=rounds,
        seed=seed,
        divergence_threshold=divergence_threshold,
        d=d,
        M=M,
        R=R,
        sched=sched,
        delays=delays,
        steps=steps,
        init_steps=init_steps,
        x0=x0,
        x=x,
        x_init=x_init,
        H=H,
        hist=hist,
        hist_flat=hist_flat,
        rows=rows,
        rows_m=rows_m,
        use_collapsed=use_collapsed,
        arrivals=arrivals,
        runner=runner,
        worker_state=worker_state,
        channel=channel,
        bits=bits,
        walk=walk,
        drift_lag=drift_lag,
        track=track,
        record_x=record_x,
    )


def _run_rounds(run: _Run, progress: bool = False) -> None:
    """``simulate``, part 2: initialize the server state (AFA-CS warm start inside the rule's ``init``), then
    run the rounds, recording ‖∇f(x_t)‖², f(x_t) (and x_t), detecting divergence. Fills ``run``."""
    problem, algorithm, rounds = run.problem, run.algorithm, run.rounds
    divergence_threshold, d, M, R = run.divergence_threshold, run.d, run.M, run.R
    sched, delays, steps, init_steps = run.sched, run.delays, run.steps, run.init_steps
    x, x_init, H, hist, hist_flat = run.x, run.x_init, run.H, run.hist, run.hist_flat
    rows, rows_m = run.rows, run.rows_m
    runner, worker_state, channel, bits = run.runner, run.worker_state, run.channel, run.bits
    walk, track, record_x, arrivals = run.walk, run.track, run.record_x, run.arrivals

    channel_state = channel.init()  # the current one (each state passed to ``send`` is donated)

    def initial_updates():
        """Every worker's (sent) update at x_0: what a warm-started memory rule stores (AFA-CS)."""
        nonlocal channel_state
        all_w = np.broadcast_to(np.arange(M), (R, M))
        G0, _ = runner.run(x, np.repeat(rows[:, None], M, axis=1), all_w, init_steps, _rng.INIT, 0)
        G0, bits[:, 0], channel_state = channel.send(channel_state, G0, all_w, 0)
        return G0

    state = algorithm.init(R, M, d, initial_updates=initial_updates)

    gn = np.empty((R, rounds + 1))
    loss = np.empty((R, rounds + 1))
    xs = np.empty((R, rounds + 1, d)) if record_x else None
    xsum = np.zeros((R, d))  # Σ_{t<T} x_t: the averaged iterate x̄_T
    scheduled = getattr(algorithm, "scheduled", False)
    per_step_E = _per_step_E(algorithm, steps, init_steps)  # E when η_L decays per local step, else None
    view = algorithm.view(M) if arrivals and not scheduled else None  # a scheduled rule's: round by round
    div_round = np.full(R, -1, dtype=np.int64)
    check_region = problem.constants.radius is not None
    left = np.full(R, -1, dtype=np.int64)

    def record(t, x):
        if record_x:
            xs[:, t] = x
        w = None if walk is None else walk[:, t]
        if R == 1:  # never evaluate a single row: numpy reduces a (1, d) array by another loop than (n, d),
            x = np.concatenate([x, x])  # so a lone replicate would differ in the last bit from replicate 0
            w = None if w is None else np.concatenate([w, w])
        if w is not None:  # f_t(x) = f(x − w_t): evaluate the base problem in shifted coordinates
            track[:, t] = np.sum((x - w - problem.constants.x_star) ** 2, axis=1)[:R]
            x = x - w
        g, f = problem.grad_norm_sq_and_value(x)
        gn[:, t], loss[:, t] = g[:R], f[:R]
        if check_region:
            out = (left < 0) & ~problem.in_certified_region(x)[:R]
            left[out] = t

    # x_{t−τ} is row ((t − τ) mod H)·R + r of the flattened ring buffer: a lookup in a (H, H) table of offsets
    offsets = ((np.arange(H)[:, None] - np.arange(H)[None, :]) % H) * R
    kbounds = runner.step_bounds(steps)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and reported as divergence
        record(0, x)
        # the one divergence rule of every Monte Carlo loop (afltheory._numerics; the torch runner's too)
        rule_div = DivergenceRule(x_init, gn[:, 0], loss[:, 0], divergence_threshold)
        limit = rule_div.grad_limit

        def diverging(t, x):
            """Replicates whose round-t values say they diverged (``DivergenceRule``)."""
            return rule_div(x, gn[:, t], loss[:, t])

        div_round[diverging(0, x)] = 0
        for t in _progress.iterate(range(rounds), progress, "simulate"):
            xsum += x
            rule = algorithm
            if scheduled:  # round t's constant rule: (η_t, η_{L,t}) for the local steps and the server step
                rule = _round_rule(algorithm, t, per_step_E)
                runner.set_eta_L(rule.eta_L, rule.local_step_sequence)
            W = sched.workers[:, t]
            K = steps[:, t]
            tau = sched.delays[:, t]
            if H == 1:
                idx = rows_m
            else:
                idx = np.take(offsets[t % H], delays[:, t])
                idx += rows_m
            # the paper's order: the optimum drifts first (w_{t+1} = w_t + q_{t+1}), then the round updates on
            # the objective with optimum w°_{t+1}; G depends on y only through y − w_{t+1}: run shifted
            shift = None if walk is None else walk[:, t + 1 - run.drift_lag]
            runner.virtual_t = t
            G, worker_state = runner.run(
                hist_flat, idx, W, K, _rng.NOISE, t + 1, worker_state, shift, kbounds[:, :, t]
            )
            G, sent, channel_state = channel.send(channel_state, G, W, t + 1)  # donates channel_state
            np.add(bits[:, t], sent, out=bits[:, t + 1])
            x, state = rule.aggregate(state, x, G, W, K, tau, M)  # donates state: never read again
            if (
                arrivals
            ):  # the noise of the updates G left out, as one draw (_CollapsedRunner.add_arrival_noise)
                v = view or rule.view(M)  # the rule's server step: the one its aggregate composes
                runner.add_arrival_noise(x, v.scale(W.shape[1]), v.arrival_weights(K, tau, W), W, K, t + 1)
            record(t + 1, x)
            now = diverging(t + 1, x)
            if now.any():
                bad = (div_round < 0) & now
                div_round[bad] = t + 1
                # freeze diverged replicates at x_0 so they stop overflowing; their recorded values: +inf
                x[now] = x_init[now]
                hist[:, now] = x_init[now]
                xsum[now] = 0.0
                for arr in (*state.arrays(), *worker_state.arrays(), *channel_state.arrays()):
                    arr[now] = 0.0
            hist[(t + 1) % H] = x
    run.x_avg = xsum / rounds
    run.x, run.gn, run.loss, run.xs, run.worker_state = x, gn, loss, xs, worker_state
    run.div_round, run.left, run.limit, run.check_region = div_round, left, limit, check_region


def _report(run: _Run) -> Trace:
    """``simulate``, part 3: mark diverged replicates +inf, warn about divergence and the certified region,
    count oracle calls and package the ``Trace``."""
    problem, algorithm, behaviour, rounds, R, seed = (
        run.problem,
        run.algorithm,
        run.behaviour,
        run.rounds,
        run.R,
        run.seed,
    )
    sched, x, x0, walk, track, bits = run.sched, run.x, run.x0, run.walk, run.track, run.bits
    gn, loss, xs, div_round, left, limit = run.gn, run.loss, run.xs, run.div_round, run.left, run.limit
    check_region, use_collapsed = run.check_region, run.use_collapsed
    if (div_round >= 0).any():
        for r in np.flatnonzero(div_round >= 0):
            gn[r, div_round[r] :] = np.inf
            loss[r, div_round[r] :] = np.inf
            if xs is not None:
                xs[r, div_round[r] :] = np.inf
            if walk is not None:
                track[r, div_round[r] :] = np.inf
        x[div_round >= 0] = np.inf  # x_final of a diverged replicate: +inf (it was frozen, not converged)
        run.x_avg[div_round >= 0] = np.inf
        info = DivergenceInfo(div_round, limit)
        warnings.warn(f"simulate: {info}", DivergenceWarning, stacklevel=3)
    if check_region and (left >= 0).any():
        warnings.warn(
            f"simulate: {(left >= 0).sum()} replicates left the certified region "
            f"(radius {problem.constants.radius}) — Assumption 3 is not certified there",
            RegionWarning,
            stacklevel=3,
        )
    virtual = run.runner.virtual
    if virtual is not None:
        virtual = virtual.copy()
        for r in np.flatnonzero(div_round >= 0):  # rounds started from a diverged model: +inf
            virtual[r, div_round[r] :] = np.inf
    calls = sched.local_steps.sum(axis=(1, 2))  # oracle calls: one per local step (diverged replicates too)
    if getattr(algorithm, "warm_start", getattr(algorithm, "needs_warm_start", False)):
        calls = calls + sched.init_local_steps.sum(axis=1)
    config = {
        "problem": repr(problem),
        "algorithm": repr(algorithm),
        "behaviour": repr(behaviour),
        "rounds": rounds,
        "replicates": R,
        "seed": seed,
        "collapsed": use_collapsed,
        "arrivals_collapsed": run.arrivals,
    }
    return Trace(
        gn,
        loss,
        sched,
        DivergenceInfo(div_round, limit),
        left,
        x.copy(),
        x0.copy(),
        calls,
        seed,
        xs,
        config,
        walk,
        None if walk is None else track,
        bits,
        run.x_avg,
        virtual,
    )


# ------------------------------------------------------------------------------------------- fast path
#: rounds per chunk of the fast path (its noise, models and records are materialized chunk by chunk)
_FAST_CHUNK_VALUES = 1 << 18


def _fast_reason(run: _Run, algorithm: ServerRule | None = None) -> str | None:
    """Why ``simulate``'s fast path does not cover this run (None: it does): the fast path is the collapsed
    path with the arrivals' noise summed (``Trace.config["arrivals_collapsed"]``), for a stateless rule with
    constant step sizes on a quadratic with diagonal Hessians, a static optimum and no recorded virtual model.
    Under a mutant (``afltheory.mutants``, any) the reference path runs: every mutant run keeps the bits it
    had before the fast path became the default (issue 41), so the recorded kill matrices stay valid; so does
    a probe, which must see the fault points the mutant run will consult (else a check on the fast path would
    count as never reaching a simulator mutant).
    (``algorithm``: the rule as the caller passed it, named in the reason when a mutant replaced it.)"""
    from .problems.quadratic import QuadraticProblem

    mutant = _faults.active()
    if mutant is not None:
        what = (
            " and replaces the server rule"
            if algorithm is not None and run.algorithm is not algorithm
            else ""
        )
        return f"a mutant is injected ({mutant.name}, afltheory.mutants){what}: the reference path runs it"
    # a probe must consult what a mutant run consults: the reference path's fault points
    if _faults.probing():
        return "a mutation probe records what the reference path consults (afltheory.mutants.probe)"
    if not run.arrivals:
        return (
            "the round's updates are not collapsed into one noise draw (Trace.config['arrivals_collapsed'])"
        )
    if not isinstance(run.problem, QuadraticProblem) or run.problem.kind != "diag":
        return "the problem is not a quadratic with diagonal Hessians"
    if getattr(run.algorithm, "scheduled", False):
        return "the step sizes follow a schedule"
    if run.algorithm.keeps_memory:
        return "the server rule keeps memory slots"
    if run.walk is not None:
        return "the problem drifts"
    if run.runner.virtual is not None:
        return "record_virtual=True records every local step"
    return None


def _fast_tables(run: _Run):
    """The fast path's law over all rounds: (uniform, K-table index (R, T, m), weights (R, T, m), worker
    index into the tables (R, T, m), drift table (nK, S, d), squared-noise table (nK, S, d), shared noise std
    (d,), step factor s): the collapsed runner's K-step law (``_CollapsedRunner._table``) and the rule's
    weights, as the default path reads them round by round. ``uniform``: every arrival has weight 1, one K
    and one Hessian row, so a round is x − s dr ⊙ Σ_i (x_{t−τ_i} − c_i) − s √m sc ⊙ z; the per-arrival
    arrays are then empty."""
    runner, rule, M = run.runner, run.algorithm, run.M
    K, W, tau = run.steps, run.sched.workers, run.sched.delays
    m = W.shape[2]
    kmin, kmax = int(K.min()), int(K.max())
    if kmin == kmax:  # one K for every arrival (no pass over the (R, T, m) table)
        Ks = np.array([kmin])
    else:
        Ks = np.flatnonzero(np.bincount((K - kmin).ravel(), minlength=kmax - kmin + 1)) + kmin
    tabs = [runner._table(int(k)) for k in Ks]
    drift = np.stack([t[0] for t in tabs])
    noise2 = np.stack([t[1] for t in tabs]) ** 2
    view = rule.view(M)  # the rule's declarative step, as every engine reads it
    factor = float(view.scale(m))
    w = view.arrival_weights(K, tau, W)
    empty_i, empty_f = np.empty((0, 0, 0), dtype=np.int64), np.empty((0, 0, 0))
    if w is None and len(Ks) == 1 and drift.shape[1] == 1:
        std = np.sqrt(float(m) * noise2[0, 0])
        return True, empty_i, empty_f, empty_i, drift, noise2, std, factor
    lut = np.zeros(kmax - kmin + 1, dtype=np.int64)
    lut[Ks - kmin] = np.arange(len(Ks))
    w = np.ones(K.shape) if w is None else np.broadcast_to(np.asarray(w, dtype=float), K.shape)
    widx = W if drift.shape[1] > 1 else np.zeros_like(W)
    kidx = lut[K - kmin]
    return (
        False,
        kidx,
        np.ascontiguousarray(w),
        np.ascontiguousarray(widx),
        drift,
        noise2,
        np.empty(0),
        factor,
    )


def _fast_rounds_numpy(hist, x, t0, nt, W, tau, law, C, z, ev, xstar, fstar, gn, loss, xsum, out):
    """The fast path's rounds t0 .. t0 + nt − 1 in numpy (the reference of the numba kernel, and the path
    when numba is absent), ``law`` from ``_fast_tables``: x_{t+1} = x_t − s Σ_i w_i dr_i ⊙ (x_{t−τ_i} − c_i)
    − s √(Σ_i w_i² sc_i²) ⊙ z_t per replicate (uniform: x_t − s dr ⊙ Σ_i (x_{t−τ_i} − c_i) − s std ⊙ z_t);
    records ‖∇f‖² = Σ_j (h̄_j (x − x*)_j)² and f = f* + ½ Σ_j (x − x*)_j h̄_j (x − x*)_j into ``gn``/``loss``
    column t + 1, adds x_t to ``xsum`` and writes x_{t+1} into ``out`` (R, nt, d) when it has R rows.
    Arrivals and coordinates are summed in index order by elementwise passes, operation for operation as the
    kernel does: its bits (the kernel's, whatever R) do not depend on R or on numba being installed."""
    uniform, kidx, w, widx, drift, noise2, std, factor = law
    H, R, d = hist.shape
    rows = np.arange(R)
    zr = z.transpose(1, 0, 2, 3).reshape(nt, -1, d)[:, :R]  # (nt, R, d): block r // B, row r % B
    xs = out if out.shape[0] == R else np.empty((R, nt, d))
    for j in range(nt):
        t = t0 + j
        xsum += x
        acc = np.zeros((R, d))
        var = np.zeros((R, d))
        for i in range(W.shape[2]):
            y = hist[(t - tau[:, t, i]) % H, rows] - C[W[:, t, i]]
            if uniform:
                acc += y
            else:
                k, s, wi = kidx[:, t, i], widx[:, t, i], w[:, t, i, None]
                acc += wi * drift[k, s] * y
                var += wi * wi * noise2[k, s]
        if uniform:
            x = x - factor * (drift[0, 0] * acc) - factor * std * zr[j]
        else:
            x = x - factor * acc - factor * np.sqrt(var) * zr[j]
        hist[(t + 1) % H] = x
        xs[:, j] = x
    # ‖∇f‖² and f of the chunk's models, summed over coordinates in index order from 0.0 as the kernel does
    # (``ndarray.sum`` adds pairwise: other bits), one pass per coordinate over every (replicate, round)
    g2 = np.zeros((R, nt))
    f = np.zeros((R, nt))
    for c in range(d):
        e = xs[:, :, c] - xstar[c]
        g = ev[c] * e
        g2 += g * g
        f += e * g
    gn[:, t0 + 1 : t0 + 1 + nt] = g2
    loss[:, t0 + 1 : t0 + 1 + nt] = fstar + 0.5 * f
    return x


_FAST_KERNEL = None


def _fast_kernel():
    """The numba kernel of ``_fast_rounds_numpy`` (compiled on first use), or None when numba is absent."""
    global _FAST_KERNEL
    if _FAST_KERNEL is not None:
        return _FAST_KERNEL
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(cache=False, fastmath=False)
    def kernel(hist, x, t0, nt, W, tau, law, C, z, ev, xstar, fstar, gn, loss, xsum, out):  # pragma: no cover
        uniform, kidx, w, widx, drift, noise2, std, factor = law
        H, R, d = hist.shape
        m = W.shape[2]
        B = z.shape[2]
        acc = np.empty(d)
        var = np.empty(d)
        record = out.shape[0] == R
        for r in range(R):
            b, rb = r // B, r % B
            for j in range(nt):
                t = t0 + j
                for c in range(d):
                    xsum[r, c] += x[r, c]
                    acc[c] = 0.0
                    var[c] = 0.0
                # the arrivals in index order, then the coordinates' update (the numpy loop's operations)
                if uniform:
                    for i in range(m):
                        slot, wk = (t - tau[r, t, i]) % H, W[r, t, i]
                        for c in range(d):
                            acc[c] += hist[slot, r, c] - C[wk, c]
                    for c in range(d):
                        x[r, c] = (
                            x[r, c] - factor * (drift[0, 0, c] * acc[c]) - factor * std[c] * z[b, j, rb, c]
                        )
                else:
                    for i in range(m):
                        slot, wk = (t - tau[r, t, i]) % H, W[r, t, i]
                        k, s, wi = kidx[r, t, i], widx[r, t, i], w[r, t, i]
                        for c in range(d):
                            acc[c] += wi * drift[k, s, c] * (hist[slot, r, c] - C[wk, c])
                            var[c] += wi * wi * noise2[k, s, c]
                    for c in range(d):
                        x[r, c] = x[r, c] - factor * acc[c] - factor * np.sqrt(var[c]) * z[b, j, rb, c]
                nxt = (t + 1) % H
                g2 = 0.0
                f = 0.0
                for c in range(d):  # ‖∇f‖² and f summed over coordinates in index order from 0.0
                    hist[nxt, r, c] = x[r, c]
                    e = x[r, c] - xstar[c]
                    g = ev[c] * e
                    g2 += g * g
                    f += e * g
                gn[r, t + 1] = g2
                loss[r, t + 1] = fstar + 0.5 * f
                if record:
                    for c in range(d):
                        out[r, j, c] = x[r, c]
        return x

    _FAST_KERNEL = kernel
    return kernel


def _run_rounds_fast(run: _Run, progress: bool = False) -> str:
    """``simulate``'s fast path, part 2: every round of the collapsed law in one compiled kernel (numba; the
    numpy reference when numba is absent), a chunk of rounds per call, recording ‖∇f‖² and f of the
    diagonal quadratic in the same pass. The noise of replicate r is its block's (``_rng.BLOCK`` replicates)
    own SFC64 stream (key (seed, ``_rng.FAST_NOISE``, block)), drawn a chunk of rounds at a time in round
    order: the same law as the default path, other draws, and replicate r's values do not depend on R.
    Diverged replicates are not frozen (their values from the divergence round on are +inf in the trace).
    Fills ``run`` as ``_run_rounds`` does; returns the kernel used ("numba" or "numpy")."""
    problem, rounds, d, R = run.problem, run.rounds, run.d, run.R
    law = _fast_tables(run)
    W = np.ascontiguousarray(run.sched.workers)
    tau = np.ascontiguousarray(run.delays)
    C = np.ascontiguousarray(problem.centers, dtype=float)
    # the diagonal quadratic's f and ∇f read off its public evaluators: ∇f(x) = h̄ ⊙ (x − x*), f* = f(x*)
    xstar = np.ascontiguousarray(problem.constants.x_star, dtype=float)
    pair = np.stack([xstar, xstar + 1.0])
    ev = np.ascontiguousarray(problem.grad(pair)[1] / (pair[1] - xstar))
    fstar = float(problem.grad_norm_sq_and_value(pair)[1][0])
    kernel = _fast_kernel()
    B = _rng.BLOCK
    nblocks = -(-R // B)
    gens = [_rng.sfc64_stream(run.seed, _rng.FAST_NOISE, b) for b in range(nblocks)]
    nt_max = max(1, min(rounds, _FAST_CHUNK_VALUES // (nblocks * B * d)))
    gn = np.empty((R, rounds + 1))
    loss = np.empty((R, rounds + 1))
    xs = np.empty((R, rounds + 1, d)) if run.record_x else None
    check_region = problem.constants.radius is not None
    x = np.ascontiguousarray(run.x)
    hist = np.ascontiguousarray(run.hist)
    xsum = np.zeros((R, d))
    with np.errstate(over="ignore", invalid="ignore"):
        two = np.concatenate([x, x]) if R == 1 else x  # a lone row reduces by another loop (see _run_rounds)
        g, f = problem.grad_norm_sq_and_value(two)
        gn[:, 0], loss[:, 0] = g[:R], f[:R]
        g0 = gn[:, 0][np.isfinite(gn[:, 0])]
        limit = run.divergence_threshold * max(1.0, float(g0.max()) if g0.size else 1.0)
        f0 = loss[:, 0].copy()
        flimit = run.divergence_threshold * np.maximum(1.0, np.abs(np.where(np.isfinite(f0), f0, 0.0)))
        record_region = check_region or xs is not None
        if xs is not None:
            xs[:, 0] = x
        left = np.where(problem.in_certified_region(two)[:R], -1, 0) if check_region else np.full(R, -1)
        none = np.empty((0, d, 0))
        zbuf = np.empty((nblocks, nt_max, B, d))
        for t in _progress.iterate(range(0, rounds, nt_max), progress, "simulate (chunks of rounds)"):
            nt = min(nt_max, rounds - t)
            z = zbuf if nt == nt_max else np.empty((nblocks, nt, B, d))  # one buffer, reused (no page faults)
            for b, gen in enumerate(gens):
                gen.standard_normal(out=z[b])
            out = np.empty((R, nt, d)) if record_region else none
            x = (kernel or _fast_rounds_numpy)(
                hist, x, t, nt, W, tau, law, C, z, ev, xstar, fstar, gn, loss, xsum, out
            )
            if xs is not None:
                xs[:, t + 1 : t + 1 + nt] = out
            if check_region:
                flat = out.reshape(R * nt, d)
                inside = problem.in_certified_region(np.concatenate([flat, flat]) if R * nt == 1 else flat)
                outside = ~inside[: R * nt].reshape(R, nt)
                first = np.where(outside.any(axis=1), t + 1 + outside.argmax(axis=1), -1)
                new = (left < 0) & (first >= 0)
                left[new] = first[new]
        bad = ~(
            np.isfinite(gn)
            & np.isfinite(loss)
            & (gn <= limit)
            & (np.abs(loss - f0[:, None]) <= flimit[:, None])
        )
        hit = bad.any(axis=1)
        div_round = np.where(hit, bad.argmax(axis=1), -1).astype(np.int64)
    from .compression.compressors import uncompressed_bits

    run.bits[:] = np.arange(rounds + 1) * float(W.shape[2] * uncompressed_bits(d))  # m updates per round
    run.x_avg = xsum / rounds
    run.x, run.gn, run.loss, run.xs = x, gn, loss, xs
    run.div_round, run.left, run.limit = div_round, left.astype(np.int64), limit
    run.check_region = check_region
    return "numpy" if kernel is None else "numba"
