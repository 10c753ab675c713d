"""Behaviours: how anarchic workers turn into a realized ``Schedule`` (round mode, replay, event mode).

Every behaviour implements ``sample(rounds, replicates, num_workers, seed) -> Schedule`` and
``round_components()``: its (arrivals, delays, local steps) policies when every round is drawn from them
independently of the past (round mode, synchronous), else None (replay, event clock); replicate r's
schedule does not depend on the number of replicates (round mode: block-keyed streams drawn whole; event and
synchronous clocks: one stream per replicate).
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from .. import _faults, _rng
from .._validation import check_array, check_component, check_int, check_positive
from .arrivals import Arrivals
from .delays import Delays, NoDelay
from .local_steps import ConstantSteps, LocalSteps
from .schedule import Schedule

__all__ = ["Behaviour", "ComputeTime", "EventDriven", "ExponentialTime", "FixedTime", "Replay", "Synchronous"]


_POLICIES = {
    "arrivals": (lambda: Arrivals, "an afltheory.anarchy Arrivals (UniformArrivals(m), BiasedArrivals, …)"),
    "delays": (lambda: Delays, "an afltheory.anarchy Delays (NoDelay(), UniformDelay(max_delay), …)"),
    "local_steps": (lambda: LocalSteps, "an afltheory.anarchy LocalSteps (ConstantSteps(K), UniformSteps)"),
    "compute_time": (lambda: ComputeTime, "an afltheory.anarchy ComputeTime (ExponentialTime, FixedTime)"),
    "idle_time": (lambda: ComputeTime, "an afltheory.anarchy ComputeTime (ExponentialTime, FixedTime)"),
}


def _check_policies(behaviour) -> None:
    """TypeError (ComponentTypeError) unless each policy field of ``behaviour`` has its policy type."""
    for f in dataclasses.fields(behaviour):
        if f.name in _POLICIES:
            cls, what = _POLICIES[f.name]
            check_component(f.name, getattr(behaviour, f.name), cls(), what, optional=f.name == "idle_time")


class _ArrivalRounds:
    """What the round-based behaviours (``Behaviour``, ``Synchronous``) share: policy fields checked on
    construction and m read off the arrival law."""

    arrivals: Arrivals

    def __post_init__(self):
        _check_policies(self)

    @property
    def m(self) -> int:
        """Arrivals per round (the arrival law's m)."""
        return self.arrivals.m


def _check_sizes(rounds, replicates, num_workers):
    return (
        check_int("rounds", rounds, low=1),
        check_int("replicates", replicates, low=1),
        check_int("num_workers", num_workers, low=1),
    )


@dataclass(frozen=True)
class Behaviour(_ArrivalRounds):
    """Round-mode anarchy [Yang et al. 2022, Algorithm 1]: each round the server hears from m workers drawn by
    ``arrivals``; arrival (t, i) computed from x_{t−τ} with τ from ``delays`` and ran K from
    ``local_steps``."""

    arrivals: Arrivals
    delays: Delays = field(default_factory=NoDelay)
    local_steps: LocalSteps = field(default_factory=lambda: ConstantSteps(1))

    @property
    def max_delay(self) -> int:
        """The delay law's largest delay."""
        return self.delays.max_delay

    def round_components(self) -> tuple[Arrivals, Delays, LocalSteps] | None:
        """(arrivals, delays, local_steps): each round is drawn from these policies."""
        return self.arrivals, self.delays, self.local_steps

    def sample(self, rounds: int, replicates: int, num_workers: int, seed: int = 0) -> Schedule:
        """Replicates are drawn in blocks of ``_rng.BLOCK`` from ``stream(seed, SCHEDULE, block)``, always the
        whole block (vectorized over its replicates), so replicate r does not depend on the replicate count.

        Each block's stream draws its arrivals, then delays, then local steps, then warm-start steps. Policies
        with a ``_sample_blocks`` method (``UniformArrivals``, ``UniformDelay``, ``UniformSteps``) draw
        several blocks in one vectorized call (the same values, far fewer numpy calls). Delays and steps that
        draw nothing and ignore the workers (``NoDelay``, ``FixedDelay``, ``ConstantSteps``,
        ``TimeVaryingSteps``) are stored as read-only broadcast views (stride 0) instead of being
        materialized."""
        rounds, replicates, M = _check_sizes(rounds, replicates, num_workers)
        self.arrivals.validate(M)
        m, B = self.m, _rng.BLOCK
        nblocks = -(-replicates // B)
        shape = (nblocks * B, rounds, m)  # whole blocks; trimmed to `replicates` at the end
        constant_D = _own(self.delays, "_constant", "sample")
        constant_K = _own(self.local_steps, "_constant", "sample")
        draw_D, draw_K = constant_D is None, constant_K is None
        # one allocation for the drawn (…, T, m) fields: fewer first-touch page faults than one array each
        buf = np.empty((1 + draw_D + draw_K, *shape), dtype=np.int64)
        W = buf[0]
        D = buf[1] if draw_D else constant_D(shape)
        K = buf[-1] if draw_K else constant_K(shape)
        K0 = np.empty((nblocks * B, M), dtype=np.int64) if draw_K else constant_K((nblocks * B, 1, M))[:, 0]
        arrivals_blocks = _own(self.arrivals, "_sample_blocks", "sample", "sample_block")
        delays_blocks = _own(self.delays, "_sample_blocks", "sample")
        steps_blocks = _own(self.local_steps, "_sample_blocks", "sample")
        G = max(1, _GROUP_ENTRIES // (B * rounds * m))  # blocks per vectorized group
        for g in range(0, nblocks, G):
            rngs = [_rng.stream(seed, _rng.SCHEDULE, b) for b in range(g, min(g + G, nblocks))]
            rows = slice(g * B, (g + len(rngs)) * B)
            blocks = [slice(i * B, (i + 1) * B) for i in range(len(rngs))]
            if arrivals_blocks is not None:
                arrivals_blocks(rngs, B, rounds, M, W[rows])
            else:
                for rng, blk in zip(rngs, blocks, strict=True):
                    W[rows][blk] = self.arrivals.sample_block(rng, B, rounds, M)
            if draw_D and delays_blocks is not None:
                delays_blocks(rngs, W[rows], D[rows])
            elif draw_D:
                for rng, blk in zip(rngs, blocks, strict=True):
                    D[rows][blk] = self.delays.sample(rng, W[rows][blk])
            if draw_K and steps_blocks is not None:
                steps_blocks(rngs, W[rows], K[rows])
                steps_blocks(rngs, np.broadcast_to(np.arange(M), (len(rngs) * B, 1, M)), K0[rows, None], 0)
            elif draw_K:
                everyone = np.broadcast_to(np.arange(M), (B, 1, M))
                for rng, blk in zip(rngs, blocks, strict=True):
                    K[rows][blk] = self.local_steps.sample(rng, W[rows][blk])
                for rng, blk in zip(rngs, blocks, strict=True):
                    K0[rows][blk] = self.local_steps.sample(rng, everyone, 0)[:, 0]
        # valid by construction (m distinct workers in range, τ ≤ min(t, max_delay), K ≥ 1; tests/anarchy
        # re-validate samples through Schedule(...)), so skip the O(R·T·m) checks of the public constructor
        return Schedule._trusted(W[:replicates], D[:replicates], K[:replicates], M, K0[:replicates])


#: Entries per (…, T, m) field drawn in one vectorized group of blocks (bounds the temporaries to a few MB).
_GROUP_ENTRIES = 1 << 18


def _own(policy, name, *uses):
    """``policy.<name>`` if the class that defines it also defines each of ``uses`` (so a subclass that
    overrides ``sample`` is never bypassed by a fast path written for its parent), else None."""
    mro = type(policy).__mro__

    def owner(attr):
        return next((c for c in mro if attr in c.__dict__), None)

    cls = owner(name)
    return getattr(policy, name) if cls is not None and all(owner(u) is cls for u in uses) else None


@dataclass(frozen=True)
class Replay:
    """Replays a recorded or hand-written ``Schedule`` exactly (its first ``rounds`` rounds and ``replicates``
    replicates; a single-replicate schedule is broadcast to every replicate)."""

    schedule: Schedule

    def __post_init__(self):
        check_component(
            "schedule",
            self.schedule,
            Schedule,
            "an afltheory.anarchy Schedule (recorded: trace.schedule; or "
            "Schedule(workers, delays, local_steps, num_workers))",
        )

    @property
    def m(self) -> int:
        """Arrivals per round of the recorded schedule."""
        return self.schedule.m

    @property
    def max_delay(self) -> int:
        """The largest recorded delay (0 for an empty schedule)."""
        return int(self.schedule.delays.max()) if self.schedule.delays.size else 0

    def round_components(self) -> tuple[Arrivals, Delays, LocalSteps] | None:
        """None: a replayed schedule is not drawn round by round from policies."""
        return None

    def sample(self, rounds: int, replicates: int, num_workers: int, seed: int = 0) -> Schedule:
        """The recorded schedule's first ``rounds`` rounds and ``replicates`` replicates (a one-replicate
        schedule broadcast); ``seed`` is ignored."""
        rounds, replicates, num_workers = _check_sizes(rounds, replicates, num_workers)
        s = self.schedule
        if num_workers != s.num_workers:
            raise ValueError(f"num_workers={num_workers} does not match the schedule's {s.num_workers}")
        if rounds > s.rounds:
            raise ValueError(f"rounds={rounds} exceeds the schedule's {s.rounds} rounds")
        if s.replicates == 1 and replicates > 1:
            idx = np.zeros(replicates, dtype=np.int64)
        elif replicates > s.replicates:
            raise ValueError(f"replicates={replicates} exceeds the schedule's {s.replicates} replicates")
        else:
            idx = np.arange(replicates)
        wc = None if s.wall_clock is None else s.wall_clock[idx, : rounds + 1]
        # replicates and leading rounds of a validated Schedule are valid: no re-validation
        return Schedule._trusted(
            s.workers[idx, :rounds],
            s.delays[idx, :rounds],
            s.local_steps[idx, :rounds],
            s.num_workers,
            s.init_local_steps[idx],
            wc,
        )


# ------------------------------------------------------------------------------------------- event mode
class ComputeTime:
    """Random compute time of one update of K local steps for worker i."""

    def sample(self, rng: np.random.Generator, worker: int, K: int) -> float:
        """One compute time of ``worker`` for ``K`` local steps."""
        raise NotImplementedError

    def mean(self, K: int) -> float:
        """The mean compute time for ``K`` local steps."""
        raise NotImplementedError

    def check_workers(self, num_workers: int) -> None:
        """ValueError if the model cannot serve ``num_workers`` workers (per-worker parameters)."""
        return None


class ExponentialTime(ComputeTime):
    """Exp(rate) per update (``per_step=False``, the paper's wall-clock experiment) or a sum of K Exp(rate)
    per-step times (``per_step=True``); ``speeds`` (M,) divides worker i's time (heterogeneous devices)."""

    def __init__(self, rate: float = 1.0, per_step: bool = False, speeds: ArrayLike | None = None):
        self.rate = check_positive("rate", rate)
        self.per_step = bool(per_step)
        self.speeds = None if speeds is None else check_array("speeds", speeds, ndim=1)
        if self.speeds is not None and (self.speeds.size == 0 or np.any(self.speeds <= 0)):
            raise ValueError(
                f"speeds={speeds!r} must be a non-empty 1-D array of finite numbers > 0 (one per worker)"
            )

    def check_workers(self, num_workers: int) -> None:
        if self.speeds is not None and len(self.speeds) != num_workers:
            raise ValueError(
                f"speeds has {len(self.speeds)} entries; expected one per worker (num_workers={num_workers})"
            )

    def sample(self, rng: np.random.Generator, worker: int, K: int) -> float:
        t = rng.gamma(K, 1.0 / self.rate) if self.per_step else rng.exponential(1.0 / self.rate)
        return t / (1.0 if self.speeds is None else self.speeds[worker])

    def mean(self, K: int) -> float:
        return (K if self.per_step else 1) / self.rate

    def __repr__(self):
        return f"ExponentialTime(rate={self.rate}, per_step={self.per_step})"


class FixedTime(ComputeTime):
    """Deterministic time ``value`` per update (or per step with ``per_step=True``)."""

    def __init__(self, value: float = 1.0, per_step: bool = False):
        self.value = check_positive("value", value)
        self.per_step = bool(per_step)

    def sample(self, rng: np.random.Generator, worker: int, K: int) -> float:
        return self.value * (K if self.per_step else 1)

    def mean(self, K: int) -> float:
        return self.value * (K if self.per_step else 1)

    def __repr__(self):
        return f"FixedTime(value={self.value}, per_step={self.per_step})"


@dataclass(frozen=True)
class EventDriven:
    """Event-driven Algorithm 1 (asynchronous AFL): every worker repeatedly idles (``idle_time``), pulls the
    latest model x_p, computes one update for ``compute_time`` and sends it. The server closes round t at the
    m-th arrival since the last round (AFA-CD/CS); arrival delays τ = t − p emerge. A worker whose update is
    waiting in the open round stays idle until that round closes, so M_t is a set (with Exp(1) times the
    round takes E = Σ_{k<m} 1/(M−k), the order statistic of the paper's wall-clock claim).
    ``wall_clock[r, t]`` is the time at which x_t exists."""

    m: int
    compute_time: ComputeTime = field(default_factory=ExponentialTime)
    local_steps: LocalSteps = field(default_factory=lambda: ConstantSteps(1))
    idle_time: ComputeTime | None = None

    def __post_init__(self):
        check_int("m", self.m, low=1)
        _check_policies(self)

    @property
    def max_delay(self) -> int | None:
        """None: delays emerge from the event clock (read them from the sampled schedule)."""
        return None  # emerges; read it from the sampled schedule

    def round_components(self) -> tuple[Arrivals, Delays, LocalSteps] | None:
        """None: arrivals and delays emerge from the event clock (they depend on the past)."""
        return None

    def sample(self, rounds: int, replicates: int, num_workers: int, seed: int = 0) -> Schedule:
        """Draw a Schedule (replicates, rounds, m) with its wall clock: a round closes at the m-th arrival in
        time."""
        rounds, replicates, M = _check_sizes(rounds, replicates, num_workers)
        if self.m > M:
            raise ValueError(f"m={self.m} exceeds num_workers={M}")
        for model in (self.compute_time, self.idle_time):
            if model is not None:
                model.check_workers(M)
        m = self.m
        restart = _faults.get(_faults.FaultPoint.ANARCHY_EVENT_RESTART)  # None unless a mutant is injected
        W = np.empty((replicates, rounds, m), dtype=np.int64)
        D = np.empty_like(W)
        K = np.empty_like(W)
        K0 = np.empty((replicates, M), dtype=np.int64)
        WC = np.zeros((replicates, rounds + 1))
        for r in range(replicates):
            rng = _rng.stream(seed, _rng.SCHEDULE, r)
            K0[r] = self.local_steps.sample_initial(rng, M)
            heap = []
            pulled = np.zeros(M, dtype=np.int64)
            ks = np.zeros(M, dtype=np.int64)

            def start(i, now, t, rng=rng, pulled=pulled, ks=ks, heap=heap):
                idle = 0.0 if self.idle_time is None else self.idle_time.sample(rng, i, 1)
                pulled[i] = t
                ks[i] = self.local_steps.sample(rng, np.array([[i]]), t)[0, 0]
                heapq.heappush(heap, (now + idle + self.compute_time.sample(rng, i, int(ks[i])), i))

            for i in range(M):
                start(i, 0.0, 0)
            for t in range(rounds):
                got, times = [], []
                while len(got) < m:
                    now, i = heapq.heappop(heap)
                    got.append(i)
                    times.append(now)
                W[r, t] = got
                D[r, t] = t - pulled[got]
                K[r, t] = ks[got]
                WC[r, t + 1] = now
                # an arrived worker waits idle until the round closes, then pulls x_{t+1}
                for i, ti in zip(got, [now] * m if restart is None else restart(times, now), strict=True):
                    start(i, ti, t + 1)
        return Schedule(W, D, K, M, K0, WC)


@dataclass(frozen=True)
class Synchronous(_ArrivalRounds):
    """Synchronous rounds (FedAvg): the server samples m workers by ``arrivals``, all start from x_t (τ = 0)
    and the round ends when the slowest finishes, so a round lasts max_i C_i (E = H_m for m Exp(1) times)."""

    arrivals: Arrivals
    compute_time: ComputeTime = field(default_factory=ExponentialTime)
    local_steps: LocalSteps = field(default_factory=lambda: ConstantSteps(1))

    @property
    def max_delay(self) -> int:
        """0: a synchronous round waits for every sampled worker."""
        return 0

    def round_components(self) -> tuple[Arrivals, Delays, LocalSteps] | None:
        """(arrivals, NoDelay(), local_steps): every sampled worker starts from the current model."""
        return self.arrivals, NoDelay(), self.local_steps

    def sample(self, rounds: int, replicates: int, num_workers: int, seed: int = 0) -> Schedule:
        """Draw a Schedule with τ = 0 and a wall clock where each round waits for its slowest worker."""
        rounds, replicates, M = _check_sizes(rounds, replicates, num_workers)
        self.compute_time.check_workers(M)
        base = Behaviour(self.arrivals, NoDelay(), self.local_steps).sample(rounds, replicates, M, seed)
        sync_clock = _faults.get(_faults.FaultPoint.ANARCHY_SYNC_CLOCK)  # None unless a mutant is injected
        WC = np.zeros((replicates, rounds + 1))
        for r in range(replicates):
            rng = _rng.stream(seed, _rng.INIT, r)
            times = np.array(
                [
                    [self.compute_time.sample(rng, int(i), int(k)) for i, k in zip(w, kk, strict=False)]
                    for w, kk in zip(base.workers[r], base.local_steps[r], strict=False)
                ]
            )
            WC[r, 1:] = np.cumsum(times.max(axis=1) if sync_clock is None else sync_clock(times))
        return Schedule._trusted(base.workers, base.delays, base.local_steps, M, base.init_local_steps, WC)


#: what ``simulate``, the exact engine and the torch backend accept as ``behaviour`` (for type hints)
BehaviourLike = Behaviour | Replay | EventDriven | Synchronous
