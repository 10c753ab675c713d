"""simulate(): the vectorized Monte Carlo engine for anarchic federated learning [Yang et al. 2022, Alg. 1–3].

One call runs ``replicates`` independent runs at once, vectorized over replicates and arriving workers. Per
round t it takes the realized schedule row (M_t, τ_{t,i}, K_{t,i}), gathers each worker's start point
x_{t−τ_{t,i}} from a ring buffer of the max_delay+1 most recent models, runs the K_{t,i} local steps of the
worker rule, and applies the server rule. Randomness: the schedule of replicate r comes from
``stream(seed, SCHEDULE, r)``; gradient noise of replicate block b (``_rng.BLOCK`` replicates) in round t from
the block's Philox stream rewound to (NOISE, t) (``_rng.BlockStreams``), drawn for the whole block, so replicate r is identical whatever the number of
replicates, and a round can be reproduced alone.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _rng
from ._validation import check_array, check_int, check_positive
from .anarchy.schedule import Schedule
from .problems.base import Problem


class DivergenceWarning(RuntimeWarning):
    """Some replicates of a run diverged (non-finite or exploding iterates)."""


class RegionWarning(UserWarning):
    """Iterates left the region on which the problem's constants are certified."""


@dataclass(frozen=True)
class DivergenceInfo:
    """Per replicate: first round at which ‖∇f(x_t)‖² became non-finite or exceeded ``threshold`` (−1: never)."""

    round: np.ndarray
    threshold: float

    @property
    def diverged(self) -> np.ndarray:
        return self.round >= 0

    @property
    def any(self) -> bool:
        return bool(np.any(self.round >= 0))

    def __str__(self):
        if not self.any:
            return "no divergence"
        reps = np.flatnonzero(self.diverged)
        return (f"{len(reps)} of {len(self.round)} replicates diverged (first at round "
                f"{int(self.round[reps].min())}; replicates {reps[:10].tolist()}{'…' if len(reps) > 10 else ''})")


@dataclass(frozen=True)
class Trace:
    """Result of ``simulate``. ``grad_norm_sq``/``loss``: (replicates, rounds + 1), values at x_0 … x_T; from a
    replicate's divergence round on they are +inf (see ``divergence``). ``left_region``: first round at which
    x_t left the problem's certified region (−1: never). ``x`` (replicates, rounds + 1, dim) if recorded."""

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

    @property
    def replicates(self) -> int:
        return self.grad_norm_sq.shape[0]

    @property
    def rounds(self) -> int:
        return self.grad_norm_sq.shape[1] - 1

    @property
    def wall_clock(self) -> np.ndarray | None:
        return self.schedule.wall_clock

    @property
    def diverged(self) -> np.ndarray:
        return self.divergence.diverged

    def time_average(self, T: int | None = None) -> np.ndarray:
        """(1/T) Σ_{t<T} ‖∇f(x_t)‖² per replicate — the left side of Theorems 2–4."""
        T = self.rounds if T is None else check_int("T", T, low=1, high=self.rounds)
        return self.grad_norm_sq[:, :T].mean(axis=1)

    def mean(self, what: str = "grad_norm_sq") -> np.ndarray:
        return getattr(self, what).mean(axis=0)

    def sem(self, what: str = "grad_norm_sq") -> np.ndarray:
        a = getattr(self, what)
        return a.std(axis=0, ddof=1) / np.sqrt(a.shape[0]) if a.shape[0] > 1 else np.full(a.shape[1], np.nan)


def _schedule_for(behaviour, algorithm, problem, rounds, replicates, seed) -> Schedule:
    if isinstance(behaviour, Schedule):
        from .anarchy.behaviour import Replay
        behaviour = Replay(behaviour)
    if not hasattr(behaviour, "sample"):
        raise ValueError(f"behaviour={behaviour!r} must be an afltheory.anarchy behaviour (Behaviour, Replay, "
                         f"EventDriven, Synchronous) or a Schedule")
    sched = behaviour.sample(rounds, replicates, problem.num_workers, seed)
    fixed = getattr(algorithm, "fixed_local_steps", None)
    if fixed is not None:
        sched = Schedule(sched.workers, sched.delays, np.full_like(sched.local_steps, fixed),
                         sched.num_workers, np.full_like(sched.init_local_steps, fixed), sched.wall_clock)
    if hasattr(algorithm, "check_m"):
        algorithm.check_m(sched.m)
    return sched


class _LocalRunner:
    """Runs K_{t,i} local steps for a (R, m) block of arrivals, with block-keyed noise streams."""

    def __init__(self, problem: Problem, worker, eta_L: float, seed: int, replicates: int):
        self.problem = problem
        self.worker = worker
        self.eta_L = eta_L
        self.seed = seed
        self.R = replicates
        self.B = _rng.BLOCK
        self.nblocks = -(-replicates // self.B)
        self.additive = type(problem).stochastic_grad is Problem.stochastic_grad
        self.noise = problem.noise
        self.no_noise = problem.noise.sigma_L == 0.0
        self.calls = np.zeros(replicates, dtype=np.int64)
        self.streams = _rng.BlockStreams(seed, self.nblocks)

    def run(self, y0, workers, K, purpose, key, worker_state=None, rows=None):
        """Returns G: (R, m, d), the average of the K stochastic (corrected) gradients from y0.

        Σ_k g_k is recovered as (y_0 − y_K)/η_L instead of being accumulated (one pass less per step; the
        rounding error it adds to x_{t+1} is η·ε·‖y‖/K, far below the 1e-12 reference tolerance).
        """
        p, R = self.problem, self.R
        rows = np.arange(R) if rows is None else rows
        Kmax, Kmin = int(K.max()), int(K.min())
        grad_fn = p.local_grad_fn(workers)
        gens = self.streams.at(purpose, key)
        if Kmax == 1 and not worker_state:  # one step, stateless rule (SGD, FedProx): G is the gradient at y0
            self.calls += K.shape[1]
            return self._stochastic_grad(grad_fn, y0, workers, gens)
        y = y0.copy()
        for k in range(Kmax):
            g = self._stochastic_grad(grad_fn, y, workers, gens)
            if worker_state is not None:
                corr = self.worker.correction(worker_state, y, y0, rows, workers)
                if corr is not None:
                    g += corr
            if k >= Kmin:
                active = k < K
                g *= active[..., None]
                self.calls += active.sum(axis=1)
            else:
                self.calls += K.shape[1]
            g *= self.eta_L
            y -= g
        if worker_state is not None:
            self.worker.finish(worker_state, y0, y, K, self.eta_L, rows, workers, p.num_workers)
        G = y0 - y
        G /= self.eta_L * K[..., None]
        return G

    def _stochastic_grad(self, grad_fn, y, workers, gens):
        if self.additive:
            g = grad_fn(y)
            if not self.no_noise:
                self._add_noise(gens, workers, g)
            return g
        p, R, B = self.problem, self.R, self.B
        g = np.empty_like(y)
        for b, gen in enumerate(gens):
            sl = slice(b * B, min((b + 1) * B, R))
            g[sl] = p.stochastic_grad(y[sl], workers[sl], gen)
        return g

    def _add_noise(self, gens, workers, g):
        """g += one noise draw per (replicate, worker); full blocks are drawn whatever R is."""
        R, B = self.R, self.B
        for b, gen in enumerate(gens):
            lo, hi = b * B, min((b + 1) * B, R)
            if hi - lo == B:
                self.noise.add_to(gen, workers[lo:hi], g[lo:hi])
            else:  # partial last block: draw the full block so replicate r's values do not depend on R
                w = np.zeros((B, g.shape[1]), dtype=np.int64)
                w[: hi - lo] = workers[lo:hi]
                tmp = np.zeros((B, *g.shape[1:]))
                self.noise.add_to(gen, w, tmp)
                g[lo:hi] += tmp[: hi - lo]

    def _noise(self, gens, workers, shape):
        """One noise draw per (replicate, worker), written straight into a new array (same streams as
        ``_add_noise``)."""
        R, B = self.R, self.B
        out = np.empty(shape)
        for b, gen in enumerate(gens):
            lo, hi = b * B, min((b + 1) * B, R)
            if hi - lo == B:
                self.noise.sample_into(gen, workers[lo:hi], out[lo:hi])
            else:
                w = np.zeros((B, shape[1]), dtype=np.int64)
                w[: hi - lo] = workers[lo:hi]
                tmp = np.empty((B, *shape[1:]))
                self.noise.sample_into(gen, w, tmp)
                out[lo:hi] = tmp[: hi - lo]
        return out


class _CollapsedRunner(_LocalRunner):
    """Exact collapsed local steps for quadratics with isotropic Gaussian noise and the SGD worker rule.

    With g_k = H(y_k − c_i) + ξ_k and y_{k+1} = y_k − η_L g_k, in H's eigenbasis (a = 1 − η_L λ):
    G = (1/K)Σ_k g_k = (1 − a^K)/(η_L K) · (y_0 − c_i) + (1/K) Σ_{j<K} a^{K−1−j} ξ_j, and the noise sum is
    N(0, (σ_L²/d) Σ_{j<K} a^{2j}) per coordinate: one draw per worker update instead of K.
    """

    def __init__(self, problem, worker, eta_L, seed, replicates):
        super().__init__(problem, worker, eta_L, seed, replicates)
        if problem.kind == "diag":
            self.eig = problem.hessian            # (S, d) eigenvalues; basis = identity
            self.Q = None
        else:  # shared dense only (checked by collapse_reason)
            lam, Q = np.linalg.eigh(problem.hessian[0])
            self.eig, self.Q = lam[None], Q
        self.sigma = problem.noise.sigma_L
        self._tables = {}

    @staticmethod
    def reason(problem, worker) -> str | None:
        """Why collapsing is invalid for this run (None: valid)."""
        from .problems.base import GaussianNoise, NoNoise
        from .problems.quadratic import QuadraticProblem
        if not isinstance(problem, QuadraticProblem) or type(problem).stochastic_grad is not Problem.stochastic_grad:
            return "the problem is not a quadratic with additive noise"
        if type(problem.noise) not in (GaussianNoise, NoNoise):
            return "the gradient noise is not isotropic Gaussian"
        if problem.kind == "dense" and not problem.shared:
            return "per-worker dense Hessians are not collapsed (use hessian='diag')"
        if type(worker).__name__ != "SGD":
            return f"the worker rule {type(worker).__name__} is not plain SGD"
        return None

    def _table(self, K):
        if K not in self._tables:
            a = 1.0 - self.eta_L * self.eig
            with np.errstate(divide="ignore", invalid="ignore"):
                one_minus = np.where(a > 0, -np.expm1(K * np.log(np.where(a > 0, a, 1.0))), 1.0 - a**K)
            drift = one_minus / (self.eta_L * K)
            a2 = a * a
            with np.errstate(divide="ignore", invalid="ignore"):
                geo = np.where(np.isclose(a2, 1.0), float(K), (1.0 - a2**K) / (1.0 - a2))
            noise = np.sqrt(geo) / K * (self.sigma / np.sqrt(self.problem.dim))
            self._tables[K] = (drift, noise)
        return self._tables[K]

    def run(self, y0, workers, K, purpose, key, worker_state=None, rows=None):
        p = self.problem
        Ks = np.unique(K)
        if len(Ks) == 1 and Ks[0] == 1:  # nothing to collapse: the generic one-step path is the same draw
            return super().run(y0, workers, K, purpose, key, worker_state, rows)
        S = self.eig.shape[0]
        drift = np.empty((len(Ks), S, p.dim))
        scale = np.empty_like(drift)
        for j, k in enumerate(Ks):
            drift[j], scale[j] = self._table(int(k))
        if len(Ks) == 1:  # one K this round: per-worker (or shared) coefficients, no (R, m, d) gather by K
            dr, sc = (drift[0, 0], scale[0, 0]) if S == 1 else (drift[0][workers], scale[0][workers])
        else:
            kidx = np.searchsorted(Ks, K)
            widx = 0 if S == 1 else workers
            dr, sc = drift[kidx, widx], scale[kidx, widx]
        v = y0 - p.centers[workers]
        if self.Q is not None:
            v = v @ self.Q
        G = dr * v
        if not self.no_noise:
            gens = self.streams.at(purpose, key)
            G += (sc * (np.sqrt(p.dim) / self.sigma)) * self._noise(gens, workers, y0.shape)
        if self.Q is not None:
            G = G @ self.Q.T
        self.calls += K.sum(axis=1)
        return G


def simulate(problem: Problem, algorithm, behaviour, rounds: int, replicates: int = 1, seed: int = 0,
             x0=None, *, divergence_threshold: float = 1e12, record_x: bool = False,
             collapse: bool | None = None) -> Trace:
    """Run ``algorithm`` on ``problem`` under ``behaviour`` for ``rounds`` server rounds, ``replicates`` times.

    ``x0``: (dim,) or (replicates, dim); default ``problem.default_x0()`` (the same for every replicate).
    A replicate diverges when ‖∇f(x_t)‖² is non-finite or exceeds ``divergence_threshold``·max(1, ‖∇f(x_0)‖²);
    it is then frozen, its values recorded as +inf, and a ``DivergenceWarning`` names the round and replicates.
    ``collapse``: draw each worker update's K local steps exactly in one Gaussian draw (quadratics with isotropic
    Gaussian noise and SGD workers; same law, different random stream). None: whenever valid; True: required
    (ValueError saying why when invalid); False: step by step.
    """
    from .problems.drifting import DriftingQuadratic
    drifting = problem if isinstance(problem, DriftingQuadratic) else None
    if drifting is not None:
        problem = drifting.base
    if not isinstance(problem, Problem):
        raise ValueError(f"problem={problem!r} must be an afltheory.problems.Problem")
    rounds = check_int("rounds", rounds, low=1)
    replicates = check_int("replicates", replicates, low=1)
    seed = check_int("seed", seed, low=0)
    divergence_threshold = check_positive("divergence_threshold", divergence_threshold)
    if not hasattr(algorithm, "aggregate"):
        raise ValueError(f"algorithm={algorithm!r} must be an afltheory.algorithms server rule")
    d, M, R = problem.dim, problem.num_workers, replicates
    sched = _schedule_for(behaviour, algorithm, problem, rounds, R, seed)
    if x0 is None:
        x0 = problem.default_x0()
    x0 = check_array("x0", x0)
    if x0.shape not in ((d,), (R, d)):
        raise ValueError(f"x0 has shape {x0.shape}; expected ({d},) or ({R}, {d})")
    x = np.array(np.broadcast_to(x0, (R, d)), dtype=float)
    x_init = x.copy()
    H = int(sched.delays.max()) + 1 if sched.delays.size else 1
    hist = np.empty((H, R, d))
    hist[0] = x
    rows = np.arange(R)
    why_not = _CollapsedRunner.reason(problem, algorithm.worker)
    if collapse and why_not:
        raise ValueError(f"collapse=True is invalid here: {why_not}")
    use_collapsed = why_not is None and collapse is not False
    runner = (_CollapsedRunner if use_collapsed else _LocalRunner)(problem, algorithm.worker, algorithm.eta_L,
                                                                   seed, R)
    worker_state = algorithm.worker.init(R, M, d)
    state = algorithm.init(R, M, d)
    walk = None
    if drifting is not None:
        walk = np.stack([drifting.walk(_rng.stream(seed, _rng.DRIFT, r), rounds) for r in range(R)])
        track = np.empty((R, rounds + 1))
    if getattr(algorithm, "needs_warm_start", False):
        all_w = np.broadcast_to(np.arange(M), (R, M))
        state["memory"][:] = runner.run(np.repeat(x[:, None, :], M, axis=1), all_w, sched.init_local_steps,
                                        _rng.INIT, 0)

    gn = np.empty((R, rounds + 1))
    loss = np.empty((R, rounds + 1))
    xs = np.empty((R, rounds + 1, d)) if record_x else None
    div_round = np.full(R, -1, dtype=np.int64)
    check_region = problem.constants.radius is not None
    left = np.full(R, -1, dtype=np.int64)

    def record(t, x):
        if record_x:
            xs[:, t] = x
        if walk is not None:  # f_t(x) = f(x − w_t): evaluate the base problem in shifted coordinates
            track[:, t] = np.sum((x - walk[:, t] - problem.constants.x_star) ** 2, axis=1)
            x = x - walk[:, t]
        with np.errstate(over="ignore", invalid="ignore"):
            g = problem.grad(x)
            gn[:, t] = np.einsum("rd,rd->r", g, g)
            loss[:, t] = problem.value(x)
        if check_region:
            out = (left < 0) & ~problem.in_certified_region(x)
            left[out] = t

    record(0, x)
    limit = divergence_threshold * max(1.0, float(np.nanmax(gn[:, 0])))
    for t in range(rounds):
        W = sched.workers[:, t]
        K = sched.local_steps[:, t]
        tau = sched.delays[:, t]
        y0 = hist[(t - tau) % H, rows[:, None]]
        if walk is not None:  # G depends on y only through y − w_t (translation), so run shifted
            y0 = y0 - walk[:, t, None, :]
        with np.errstate(over="ignore", invalid="ignore"):
            G = runner.run(y0, W, K, _rng.NOISE, t + 1, worker_state, rows)
            x = algorithm.aggregate(state, x, G, W, K, tau, M)
        record(t + 1, x)
        bad = (div_round < 0) & ~(np.isfinite(gn[:, t + 1]) & (gn[:, t + 1] <= limit))
        if bad.any():
            div_round[bad] = t + 1
            # freeze diverged replicates at x_0 so they stop overflowing; their recorded values become +inf
            x[bad] = x_init[bad]
            hist[:, bad] = x_init[bad]
            for arr in (*state.values(), *worker_state.values()):
                arr[bad] = 0.0
        hist[(t + 1) % H] = x
    if (div_round >= 0).any():
        for r in np.flatnonzero(div_round >= 0):
            gn[r, div_round[r]:] = np.inf
            loss[r, div_round[r]:] = np.inf
        info = DivergenceInfo(div_round, limit)
        warnings.warn(f"simulate: {info}", DivergenceWarning, stacklevel=2)
    if check_region and (left >= 0).any():
        warnings.warn(f"simulate: {(left >= 0).sum()} replicates left the certified region "
                      f"(radius {problem.constants.radius}) — Assumption 3 is not certified there",
                      RegionWarning, stacklevel=2)
    config = {"problem": repr(problem), "algorithm": repr(algorithm), "behaviour": repr(behaviour),
              "rounds": rounds, "replicates": R, "seed": seed, "collapsed": use_collapsed}
    return Trace(gn, loss, sched, DivergenceInfo(div_round, limit), left, x.copy(), x0.copy(),
                 runner.calls.copy(), seed, xs, config, walk, None if walk is None else track)
