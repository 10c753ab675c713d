"""The realized schedule of an anarchic run, and its replay [Yang et al. 2022, Algorithm 1 notation].

A ``Schedule`` records, per replicate r and round t, the m arriving workers M_t, each arrival's delay τ_{t,i}
(the model it used is x_{t−τ_{t,i}}) and its number of local steps K_{t,i}. The quantities the theorems need
(τ, harmonic K̄_t, K̃_t, K̂_t², AFA-CS memory staleness and m') are derived from it here.

A schedule realized by ``simulate`` records where it came from (``origin``) as declarative values —
``RuleOrigin`` (the rule's class name and its declared ``analysed_as``) and ``BehaviourOrigin`` (the
behaviour's class name, its arrival process and that process's declared law) — never the live objects, so
what reads it (the theorems' scope check) depends on declarations only.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import as_array, check_alloc, check_int

__all__ = ["BehaviourOrigin", "RuleOrigin", "Schedule"]


@dataclass(frozen=True)
class RuleOrigin:
    """What a schedule records of the server rule it ran with: ``name`` (its class name) and ``analysed_as``
    (``ServerRule.analysed_as``: "AFA-CD", "AFA-CS" or None — the paper's algorithm whose theorems cover
    it)."""

    name: str
    analysed_as: str | None

    @classmethod
    def of(cls, algorithm: Any) -> RuleOrigin:
        """The record of ``algorithm`` (itself when it is already a ``RuleOrigin``)."""
        if isinstance(algorithm, RuleOrigin):
            return algorithm
        return cls(type(algorithm).__name__, getattr(algorithm, "analysed_as", None))


@dataclass(frozen=True)
class BehaviourOrigin:
    """What a schedule records of the behaviour that realized it: ``name`` (its class name), ``arrivals`` (the
    class name of its arrival process, None when arrivals emerge from a clock or a replay) and
    ``arrivals_law`` (that process's declared law, ``Arrivals.declared_law``: "uniform" or None)."""

    name: str
    arrivals: str | None
    arrivals_law: str | None

    @classmethod
    def of(cls, behaviour: Any) -> BehaviourOrigin:
        """The record of ``behaviour`` (itself when it is already a ``BehaviourOrigin``)."""
        if isinstance(behaviour, BehaviourOrigin):
            return behaviour
        arrivals = getattr(behaviour, "arrivals", None)
        if arrivals is None:
            return cls(type(behaviour).__name__, None, None)
        return cls(type(behaviour).__name__, type(arrivals).__name__, getattr(arrivals, "declared_law", None))


def _as_int_array(name, a) -> np.ndarray:
    """An int64 array; floats are accepted only when integral (never silently truncated: 1.5 is refused)."""
    arr = as_array(name, a, dtype=None)
    numeric = np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    if arr.dtype == bool or not numeric:
        if arr.size:
            raise ValueError(f"{name} must be an array of integers, got dtype {arr.dtype}")
    if (
        np.issubdtype(arr.dtype, np.floating)
        and arr.size
        and not np.all(np.isfinite(arr) & (arr == np.round(arr)))
    ):
        raise ValueError(f"{name} must hold integers, got non-integral or non-finite values")
    return arr.astype(np.int64)


@dataclass(frozen=True)
class Schedule:
    """Arrays ``workers``, ``delays``, ``local_steps`` of shape (replicates, rounds, m).

    ``init_local_steps`` (replicates, num_workers): K used by each worker's warm-start update at x_0 (AFA-CS
    memory); ``wall_clock`` (replicates, rounds + 1): time at which x_t exists (event mode only).

    The integer arrays are read-only int64; in schedules from ``Behaviour.sample`` they may be views of a
    shared buffer, and fields that are constant per round (e.g. ``ConstantSteps``, ``NoDelay``) broadcast
    views.
    """

    workers: np.ndarray
    delays: np.ndarray
    local_steps: np.ndarray
    num_workers: int
    init_local_steps: np.ndarray | None = None
    wall_clock: np.ndarray | None = None

    def __post_init__(self):
        w, d, k = (
            _as_int_array(n, a)
            for n, a in (
                ("workers", self.workers),
                ("delays", self.delays),
                ("local_steps", self.local_steps),
            )
        )
        if w.ndim == 2:  # a single replicate given as (rounds, m)
            w, d, k = w[None], d[None], k[None]
        if not (w.shape == d.shape == k.shape) or w.ndim != 3:
            raise ValueError(
                f"workers, delays, local_steps must share a shape (replicates, rounds, m); got "
                f"{w.shape}, {d.shape}, {k.shape}"
            )
        R, T, m = w.shape
        M = check_int("num_workers", self.num_workers, low=1)  # 2.7 is refused, not truncated to 2
        check_alloc(f"num_workers={M} with replicates={R}", 8.0 * 2 * R * M)
        if w.size and (w.min() < 0 or w.max() >= M):
            raise ValueError(f"workers must lie in [0, {M - 1}], got range [{w.min()}, {w.max()}]")
        if d.size and d.min() < 0:
            raise ValueError(f"delays must be >= 0, got min {d.min()}")
        t = np.arange(T)[None, :, None]
        if np.any(d > t):
            r_, t_, _ = np.argwhere(d > t)[0]
            raise ValueError(
                f"delay at replicate {r_}, round {t_} is {d[r_, t_].max()} > t={t_} "
                f"(delays must satisfy tau_t,i <= t)"
            )
        if k.size and k.min() < 1:
            raise ValueError(f"local_steps must be >= 1, got min {k.min()}")
        if m > 1:
            s = np.sort(w, axis=-1)
            if np.any(s[..., 1:] == s[..., :-1]):
                raise ValueError("a worker appears twice in one round's arrivals (M_t must be a set)")
        ik = self.init_local_steps
        ik = np.ones((R, M), dtype=np.int64) if ik is None else _as_int_array("init_local_steps", ik)
        if ik.ndim == 1:
            ik = np.broadcast_to(ik, (R, M)).copy()
        if ik.shape != (R, M) or (ik.size and ik.min() < 1):
            raise ValueError(f"init_local_steps must be (replicates, num_workers)={(R, M)} with entries >= 1")
        wc = self.wall_clock
        if wc is not None:
            wc = as_array("wall_clock", wc)
            if wc.shape != (R, T + 1):
                raise ValueError(f"wall_clock must have shape {(R, T + 1)}, got {wc.shape}")
            if not np.all(np.isfinite(wc)) or np.any(np.diff(wc, axis=1) < 0):
                raise ValueError("wall_clock must be finite and non-decreasing along rounds")
        for name, arr in (("workers", w), ("delays", d), ("local_steps", k), ("init_local_steps", ik)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "wall_clock", wc)
        object.__setattr__(self, "num_workers", M)

    @classmethod
    def _trusted(
        cls, workers, delays, local_steps, num_workers, init_local_steps, wall_clock=None
    ) -> Schedule:
        """Internal fast constructor for schedules whose invariants hold by construction
        (``Behaviour.sample``): skips the O(R·T·m) value checks of ``__post_init__`` (worker range, distinct
        arrivals, delay and step bounds) but, like it, stores int64 read-only arrays (no copy when already
        int64). Never use it for user input: ``Schedule(...)``, ``Schedule.load`` and ``Replay`` validate
        fully."""
        self = object.__new__(cls)
        arrays = {
            name: np.asarray(arr, dtype=np.int64)
            for name, arr in (
                ("workers", workers),
                ("delays", delays),
                ("local_steps", local_steps),
                ("init_local_steps", init_local_steps),
            )
        }
        R, T, _ = arrays["workers"].shape
        M = int(num_workers)
        if not (arrays["workers"].shape == arrays["delays"].shape == arrays["local_steps"].shape) or arrays[
            "init_local_steps"
        ].shape != (R, M):
            # a bug in the caller, not user input
            raise AssertionError("Schedule._trusted: inconsistent shapes")
        for name, arr in arrays.items():
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        if wall_clock is not None:
            wall_clock = np.asarray(wall_clock, dtype=float)
            if wall_clock.shape != (R, T + 1):
                raise AssertionError("Schedule._trusted: wall_clock shape")
        object.__setattr__(self, "wall_clock", wall_clock)
        object.__setattr__(self, "num_workers", M)
        return self

    # -- provenance
    @property
    def origin(self) -> dict | None:
        """``{"behaviour": BehaviourOrigin | None, "algorithm": RuleOrigin | None}`` when the schedule was
        realized by ``simulate`` (None for hand-written or loaded schedules): declarative records, not the
        objects. Theorem bounds read it to check their scope (``theory.check_scope``); it does not take part
        in equality."""
        return self.__dict__.get("_origin")

    def with_origin(
        self,
        behaviour: Any = None,
        algorithm: Any = None,
    ) -> Schedule:
        """A shallow copy (the same read-only arrays) that records (``BehaviourOrigin.of``, ``RuleOrigin.of``)
        the behaviour and algorithm it came from. ``behaviour``: a ``BehaviourOrigin`` or any behaviour
        (``anarchy.behaviour.BehaviourLike``; read by duck typing, not imported: behaviour imports this
        module)."""
        new = copy.copy(self)
        record = {
            "behaviour": None if behaviour is None else BehaviourOrigin.of(behaviour),
            "algorithm": None if algorithm is None else RuleOrigin.of(algorithm),
        }
        object.__setattr__(new, "_origin", record)
        return new

    # -- shape
    @property
    def replicates(self) -> int:
        """R, the number of replicates."""
        return self.workers.shape[0]

    @property
    def rounds(self) -> int:
        """T, the number of rounds."""
        return self.workers.shape[1]

    @property
    def m(self) -> int:
        """Arrivals per round."""
        return self.workers.shape[2]

    # -- theorem quantities
    @property
    def tau(self) -> np.ndarray:
        """τ = max_{t,i} τ_{t,i}, per replicate: (replicates,)."""
        return self.delays.max(axis=(1, 2)) if self.rounds else np.zeros(self.replicates, dtype=np.int64)

    @property
    def K_harmonic(self) -> np.ndarray:
        """K̄_t with 1/K̄_t = (1/m) Σ_{i∈M_t} 1/K_{t,i} (Lemma 2): (replicates, rounds)."""
        return 1.0 / np.mean(1.0 / self.local_steps, axis=-1)

    @property
    def K_mean(self) -> np.ndarray:
        """K̃_t = (1/m) Σ_{i∈M_t} K_{t,i}: (replicates, rounds)."""
        return self.local_steps.mean(axis=-1)

    @property
    def K_sq_mean(self) -> np.ndarray:
        """K̂_t² = (1/m) Σ_{i∈M_t} K_{t,i}²: (replicates, rounds)."""
        return np.mean(self.local_steps.astype(float) ** 2, axis=-1)

    def memory(self) -> tuple[np.ndarray, np.ndarray]:
        """AFA-CS memory after each round's arrivals [Thm 4]: (staleness, K), each (replicates, rounds, M).

        staleness[r, t, i] = t − (index of the model slot i's update was computed at); warm-start slots hold
        updates at x_0 (staleness t, K = init_local_steps). m'_t = (staleness[:, t] == 0).sum(-1).
        """
        R, T, m = self.workers.shape
        M = self.num_workers
        origin = np.zeros((R, M), dtype=np.int64)  # round index of the model each slot was computed at
        K = self.init_local_steps.copy()
        stale = np.empty((R, T, M), dtype=np.int64)
        Ks = np.empty((R, T, M), dtype=np.int64)
        rows = np.arange(R)[:, None]
        for t in range(T):
            origin[rows, self.workers[:, t]] = t - self.delays[:, t]
            K[rows, self.workers[:, t]] = self.local_steps[:, t]
            stale[:, t] = t - origin
            Ks[:, t] = K
        return stale, Ks

    def fresh_slots(self) -> np.ndarray:
        """m'_t: number of memory slots computed at x_t, (replicates, rounds)."""
        return (self.memory()[0] == 0).sum(axis=-1)

    # -- slicing / io
    def replicate(self, r: int | slice | np.ndarray) -> Schedule:
        """The sub-schedule of replicate(s) r (int, slice or index array)."""
        if isinstance(r, (int, np.integer)) and not isinstance(r, bool):
            r = check_int("r", r, low=-self.replicates, high=self.replicates - 1) % self.replicates
            sl = slice(r, r + 1)
        elif isinstance(r, slice):
            sl = r
        else:
            sl = as_array("r", r, dtype=None)
            if sl.ndim != 1 or not (np.issubdtype(sl.dtype, np.integer) or sl.dtype == bool):
                raise ValueError(f"r must be an int, a slice or a 1-D integer/boolean index array, got {r!r}")
            try:
                self.workers[sl]
            except IndexError as exc:
                raise ValueError(f"r={r!r} is outside the {self.replicates} replicates: {exc}") from None
        return Schedule(
            self.workers[sl],
            self.delays[sl],
            self.local_steps[sl],
            self.num_workers,
            self.init_local_steps[sl],
            None if self.wall_clock is None else self.wall_clock[sl],
        )

    def save(self, path: str | os.PathLike) -> None:
        """Write the schedule to ``path`` (``.npz``; ``load`` reads it back)."""
        extra = {} if self.wall_clock is None else {"wall_clock": self.wall_clock}
        np.savez_compressed(
            path,
            workers=self.workers,
            delays=self.delays,
            local_steps=self.local_steps,
            num_workers=self.num_workers,
            init_local_steps=self.init_local_steps,
            **extra,
        )

    @classmethod
    def load(cls, path: str | os.PathLike) -> Schedule:
        """Read a schedule written by ``save``. The .npz members' declared (uncompressed) sizes are checked
        against ``afltheory._validation.MAX_ALLOC_BYTES`` before anything is decompressed."""
        import zipfile

        try:
            with zipfile.ZipFile(path) as zf:
                declared = sum(i.file_size for i in zf.infolist())
        except (zipfile.BadZipFile, OSError) as exc:
            raise ValueError(f"{path}: not a schedule .npz file ({exc})") from None
        check_alloc(f"schedule file {path} (declared uncompressed size {declared} bytes)", float(declared))
        with np.load(path, allow_pickle=False) as z:
            missing = {"workers", "delays", "local_steps", "num_workers", "init_local_steps"} - set(z.files)
            if missing:
                raise ValueError(f"{path}: not a schedule .npz file (missing {sorted(missing)})")
            nw = z["num_workers"]
            if nw.shape != () or not np.issubdtype(nw.dtype, np.integer):
                raise ValueError(f"{path}: num_workers must be an integer scalar, got {nw!r}")
            return cls(
                z["workers"],
                z["delays"],
                z["local_steps"],
                int(nw),
                z["init_local_steps"],
                z["wall_clock"] if "wall_clock" in z.files else None,
            )

    def __eq__(self, other):
        if not isinstance(other, Schedule):
            return NotImplemented
        same_wc = (self.wall_clock is None and other.wall_clock is None) or (
            self.wall_clock is not None
            and other.wall_clock is not None
            and np.array_equal(self.wall_clock, other.wall_clock)
        )
        return (
            self.num_workers == other.num_workers
            and same_wc
            and all(
                np.array_equal(getattr(self, n), getattr(other, n))
                for n in ("workers", "delays", "local_steps", "init_local_steps")
            )
        )

    __hash__ = None
