"""A candidate as explicit arrays (JSON-serializable, rebuildable without afltheory) and back as objects.

``Instance.to_dict()`` holds everything needed to rebuild the run by hand: per-worker Hessian matrices,
centres (x* = 0), noise covariances, x_0, (η, η_L), the arrival law, the delay pmf on {0..τ} (round t clips a
delay at t), the local-step pmf per worker on {1..K_max}, M, m, T. ``load_instance(path)`` returns an
``Instance`` whose
``problem()``, ``algorithm()``, ``behaviour()`` are afltheory objects (``simulate`` and ``exact.moments``
accept them)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import check_component
from ..algorithms import AFACD, AFACS
from ..anarchy import BiasedArrivals, CyclicArrivals, FixedArrivals, UniformArrivals
from ..anarchy.behaviour import Behaviour, Replay
from ..anarchy.schedule import Schedule
from ..problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic
from .components import CovarianceNoise, PmfDelay, PmfSteps

if TYPE_CHECKING:
    from ..algorithms.base import ServerRule
    from ..anarchy.behaviour import BehaviourLike
    from ..problems.base import Problem

__all__ = ["Instance", "load_instance", "save_instance"]

ALGORITHMS = {"AFACD": AFACD, "AFACS": AFACS}


@dataclass(frozen=True)
class Instance:
    claim: str
    algorithm_name: str
    hessians: np.ndarray  # (M, d, d)
    centers: np.ndarray  # (M, d)
    noise_cov: np.ndarray  # (M, d, d)
    x0: np.ndarray  # (d,)
    eta: float
    eta_L: float
    arrivals: dict  # {"kind": "uniform"|"biased"|"fixed"|"cyclic"|"schedule"|"periodic", "m": m, ...}
    delay_pmf: np.ndarray  # (τ+1,)
    k_pmf: np.ndarray  # (M, K_max) over K = 1..K_max
    rounds: int
    radius: float | None = None  # σ_G certified on ‖x − x*‖ ≤ radius (per-worker Hessians only)

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def num_workers(self) -> int:
        """M, the number of workers."""
        return int(self.centers.shape[0])

    @property
    def m(self) -> int:
        """Arrivals per round."""
        return int(self.arrivals["m"])

    @property
    def tau(self) -> int:
        """The largest delay with positive probability."""
        return int(np.flatnonzero(self.delay_pmf > 0)[-1])

    @property
    def K_max(self) -> int:
        """The largest number of local steps with positive probability."""
        return int(np.flatnonzero(self.k_pmf.sum(axis=0) > 0)[-1] + 1)

    @property
    def shared_hessian(self) -> bool:
        """True when every worker has the same Hessian."""
        return bool(np.all(self.hessians == self.hessians[0]))

    def problem(self) -> Problem:
        """The instance's quadratic problem (heterogeneous curvature when the Hessians differ)."""
        noise = CovarianceNoise(self.noise_cov)
        if self.shared_hessian:
            return HeterogeneousQuadratic.from_arrays(
                hessian=self.hessians[0], centers=self.centers, sigma_L=noise
            )
        return HeterogeneousCurvatureQuadratic.from_arrays(
            hessians=self.hessians, centers=self.centers, sigma_L=noise, radius=float(self.radius)
        )

    def algorithm(self) -> ServerRule:
        """The server rule with the instance's (η, η_L)."""
        return ALGORITHMS[self.algorithm_name](self.eta, self.eta_L)

    def arrival_law(self) -> Any:
        """The instance's arrival process (uniform, biased or cyclic)."""
        a = self.arrivals
        if a["kind"] == "uniform":
            return UniformArrivals(int(a["m"]))
        if a["kind"] == "biased":
            return BiasedArrivals(int(a["m"]), np.asarray(a["probs"], dtype=float))
        if a["kind"] == "cyclic":
            return CyclicArrivals(int(a["m"]))
        if a["kind"] == "periodic":
            from .components import PeriodicArrivals

            return PeriodicArrivals(np.asarray(a["workers"], dtype=np.int64))
        if a["kind"] == "fixed":
            return FixedArrivals(np.asarray(a["workers"], dtype=np.int64))
        raise ValueError(
            f"arrivals kind={a['kind']!r} must be 'uniform', 'biased', 'cyclic', 'periodic' or 'fixed'"
        )

    def schedule(self) -> Schedule:
        """For ``arrivals["kind"] == "schedule"``: the periodic schedule over ``rounds`` rounds (phase t mod
        P; delays clipped at t), one replicate."""
        a = self.arrivals
        W = np.asarray(a["workers"], dtype=np.int64)
        D = np.asarray(a["delays"], dtype=np.int64)
        K = np.asarray(a["local_steps"], dtype=np.int64)
        ph = np.arange(self.rounds) % W.shape[0]
        delays = np.minimum(D[ph], np.arange(self.rounds))[:, None] * np.ones(W.shape[1], dtype=np.int64)
        steps = K[ph][:, None] * np.ones(W.shape[1], dtype=np.int64)
        return Schedule(W[ph][None], delays[None], steps[None], self.num_workers)

    def behaviour(self) -> BehaviourLike:
        """The instance's worker behaviour (its laws, or a replay of its recorded schedule)."""
        if self.arrivals["kind"] == "schedule":
            return Replay(self.schedule())
        return Behaviour(self.arrival_law(), PmfDelay(self.delay_pmf), PmfSteps(self.k_pmf))

    def to_dict(self) -> dict:
        """A JSON-safe dict (``from_dict`` inverts it)."""
        return {
            "claim": self.claim,
            "algorithm": self.algorithm_name,
            "num_workers": self.num_workers,
            "dim": int(self.centers.shape[1]),
            "m": self.m,
            "rounds": int(self.rounds),
            "eta": float(self.eta),
            "eta_L": float(self.eta_L),
            "tau": self.tau,
            "K_max": self.K_max,
            "hessian": self.hessians.tolist(),
            "centers": self.centers.tolist(),
            "noise_cov": self.noise_cov.tolist(),
            "x0": self.x0.tolist(),
            "arrivals": {
                k: (np.asarray(v).tolist() if isinstance(v, (np.ndarray, list, tuple)) else v)
                for k, v in self.arrivals.items()
            },
            "delay_pmf": self.delay_pmf.tolist(),
            "k_pmf": self.k_pmf.tolist(),
            "radius": None if self.radius is None else float(self.radius),
            "conventions": "f_i(x) = 1/2 (x - c_i)^T A_i (x - c_i); noise xi_i ~ N(0, noise_cov[i]); "
            "server "
            "x_{t+1} = x_t - eta*eta_L*(1/m) sum_{i in M_t} G_i (AFACS: all M memory "
            "slots); "
            "G_i = mean of K stochastic gradients along K local SGD steps of size eta_L "
            "from "
            "x_{t-tau}; tau ~ delay_pmf clipped at t; K ~ k_pmf[i] over 1..K_max",
        }

    @classmethod
    def from_dict(cls, d: dict) -> Instance:
        """Inverse of ``to_dict``."""
        if not isinstance(d, dict):
            raise ValueError(f"an instance must be a JSON object, got {type(d).__name__}")
        for k in ("eta", "eta_L", "radius"):
            v = d.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ValueError(f"{k}={v!r} must be a number")
        if "rounds" in d:
            _int("rounds", d["rounds"], 1, MAX_ROUNDS)
        if not isinstance(d.get("arrivals", {}), dict):
            raise ValueError(f"arrivals={d['arrivals']!r} must be an object")
        try:
            return cls(
                claim=str(d["claim"]),
                algorithm_name=str(d["algorithm"]),
                hessians=np.asarray(d["hessian"], dtype=float),
                centers=np.asarray(d["centers"], dtype=float),
                noise_cov=np.asarray(d["noise_cov"], dtype=float),
                x0=np.asarray(d["x0"], dtype=float),
                eta=float(d["eta"]),
                eta_L=float(d["eta_L"]),
                arrivals=dict(d["arrivals"]),
                delay_pmf=np.asarray(d["delay_pmf"], dtype=float),
                k_pmf=np.asarray(d["k_pmf"], dtype=float),
                rounds=int(d["rounds"]),
                radius=None if d.get("radius") is None else float(d["radius"]),
            )
        except KeyError as exc:
            raise ValueError(f"instance lacks the field {exc.args[0]!r}") from None
        except (TypeError, OverflowError) as exc:  # e.g. a string where a number array belongs
            raise ValueError(f"instance has a malformed field: {exc}") from None


_PMF_TOL = 1e-9
MAX_ROUNDS = 10**6


def _int(name: str, v: Any, low: int, high: int) -> int:
    """An integer (an integral float is accepted, 2.7 or True is not) in [low, high]."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer, float, np.floating)):
        raise ValueError(f"{name}={v!r} must be an integer in [{low}, {high}]")
    if isinstance(v, (float, np.floating)) and not (np.isfinite(v) and float(v).is_integer()):
        raise ValueError(f"{name}={v!r} must be an integer in [{low}, {high}] (not truncated)")
    if not low <= int(v) <= high:
        raise ValueError(f"{name}={v!r} must be an integer in [{low}, {high}]")
    return int(v)


def _pmf(name: str, p: np.ndarray) -> None:
    if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name}={p.tolist()!r} must hold finite, nonnegative probabilities")
    s = p.sum(axis=-1)
    if np.any(np.abs(s - 1.0) > _PMF_TOL):
        raise ValueError(f"{name} must sum to 1 (to {_PMF_TOL:g}); its sum(s): {np.round(s, 12).tolist()}")


def _int_array(name: str, v: Any, low: int, high: int) -> np.ndarray:
    a = np.asarray(v)
    if a.dtype.kind == "f":
        if not (np.all(np.isfinite(a)) and np.all(a == np.round(a))):
            raise ValueError(f"{name}={a.tolist()!r} must hold integers in [{low}, {high}]")
    elif a.dtype.kind not in "iu" or a.size == 0:
        raise ValueError(f"{name}={v!r} must hold integers in [{low}, {high}]")
    if a.size == 0 or np.any(a < low) or np.any(a > high):
        raise ValueError(f"{name}={a.tolist()!r} must hold integers in [{low}, {high}]")
    return a.astype(np.int64)


def _validate(inst: Instance) -> None:
    """Every field of an Instance (ValueError naming the field, its value and what is allowed): shapes
    consistent, numbers finite, Hessians and noise covariances symmetric, probability vectors nonnegative and
    summing to 1, integers integral (``rounds=2.7`` is refused, never truncated), steps positive."""
    if not isinstance(inst.claim, str):
        raise ValueError(f"claim={inst.claim!r} must be a string")
    if inst.algorithm_name not in ALGORITHMS:
        raise ValueError(f"algorithm={inst.algorithm_name!r} must be one of {sorted(ALGORITHMS)}")
    H, C, N, x0 = inst.hessians, inst.centers, inst.noise_cov, inst.x0
    for name, a, nd in (("hessian", H, 3), ("centers", C, 2), ("noise_cov", N, 3), ("x0", x0, 1)):
        if not isinstance(a, np.ndarray) or a.ndim != nd or a.dtype.kind not in "fiu" or a.size == 0:
            raise ValueError(f"{name} must be a non-empty {nd}-d array of numbers (got shape {np.shape(a)})")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must hold finite numbers")
    M, d = C.shape
    if H.shape != (M, d, d) or N.shape != (M, d, d) or x0.shape != (d,):
        raise ValueError(
            f"shapes disagree: centers {C.shape} (M, d), hessian {H.shape} and noise_cov "
            f"{N.shape} must be (M, d, d) = {(M, d, d)}, x0 {x0.shape} must be ({d},)"
        )
    for name, a in (("hessian", H), ("noise_cov", N)):
        if not np.allclose(a, np.swapaxes(a, 1, 2), rtol=1e-9, atol=1e-12):
            raise ValueError(f"{name} must hold symmetric matrices")
    for name in ("eta", "eta_L"):
        v = getattr(inst, name)
        if (
            isinstance(v, (bool, np.bool_))
            or not isinstance(v, (int, float, np.integer, np.floating))
            or not (np.isfinite(v) and v > 0)
        ):
            raise ValueError(f"{name}={v!r} must be a finite number > 0")
    _int("rounds", inst.rounds, 1, MAX_ROUNDS)
    if inst.radius is not None and not (
        isinstance(inst.radius, (int, float, np.integer, np.floating))
        and np.isfinite(inst.radius)
        and inst.radius > 0
    ):
        raise ValueError(f"radius={inst.radius!r} must be a finite number > 0 or None")
    dp, kp = inst.delay_pmf, inst.k_pmf
    if not isinstance(dp, np.ndarray) or dp.ndim != 1:
        raise ValueError(f"delay_pmf must be a 1-d array over delays 0..tau (got shape {np.shape(dp)})")
    _pmf("delay_pmf", dp)
    if not isinstance(kp, np.ndarray) or kp.ndim != 2 or kp.shape[0] != M:
        raise ValueError(f"k_pmf must be an (M, K_max) = ({M}, K_max) array (got shape {np.shape(kp)})")
    _pmf("k_pmf", kp)
    a = inst.arrivals
    if not isinstance(a, dict) or "kind" not in a or "m" not in a:
        raise ValueError(f"arrivals={a!r} must be a dict with 'kind' and 'm'")
    kinds = ("uniform", "biased", "cyclic", "fixed", "schedule", "periodic")
    if a["kind"] not in kinds:
        raise ValueError(f"arrivals kind={a['kind']!r} must be one of {kinds}")
    m = _int("arrivals m", a["m"], 1, M)
    if a["kind"] == "biased":
        p = np.asarray(a.get("probs"), dtype=float)
        if p.shape != (M,):
            raise ValueError(f"arrivals probs must have {M} entries (one per worker), got shape {p.shape}")
        _pmf("arrivals probs", p)
    elif a["kind"] == "fixed":
        w = _int_array("arrivals workers", a.get("workers"), 0, M - 1)
        if w.ndim != 1 or len(w) != m or len(set(w.tolist())) != m:
            raise ValueError(f"arrivals workers={w.tolist()} must be {m} distinct worker indices")
    elif a["kind"] == "periodic":
        w = _int_array("arrivals workers", a.get("workers"), 0, M - 1)
        if w.ndim != 2 or w.shape[1] != m or any(len(set(r.tolist())) != m for r in w):
            raise ValueError(f"arrivals workers must be a (P, m={m}) table of distinct workers per row")
    elif a["kind"] == "schedule":
        w = _int_array("arrivals workers", a.get("workers"), 0, M - 1)
        if w.ndim != 2 or w.shape[1] != m:
            raise ValueError(f"arrivals workers must be a (P, m={m}) table, got shape {w.shape}")
        dl = _int_array("arrivals delays", a.get("delays"), 0, 10**6)
        ks = _int_array("arrivals local_steps", a.get("local_steps"), 1, 10**6)
        if dl.shape != (w.shape[0],) or ks.shape != (w.shape[0],):
            raise ValueError(f"arrivals delays and local_steps must have one entry per phase ({w.shape[0]})")


def save_instance(instance: Instance, path: str | os.PathLike) -> Path:
    """Write ``instance`` as JSON at ``path``; returns the path (read it back with ``load_instance``)."""
    check_component("instance", instance, Instance, "an afltheory.adversary Instance")
    from .._io import write_json

    path = Path(path)
    write_json(path, instance.to_dict(), indent=1)  # atomic, strict JSON, never over a device/FIFO
    return path


def load_instance(path_or_dict: str | os.PathLike | dict) -> Instance:
    """An ``Instance`` from a JSON file written by ``save_instance`` / ``afltheory adversary --json`` (the
    whole report or its ``instance`` field) or from such a dict."""
    if isinstance(path_or_dict, dict):
        d = path_or_dict
    else:
        from .._io import describe_path

        if not isinstance(path_or_dict, (str, os.PathLike)):
            raise TypeError(f"path_or_dict={path_or_dict!r} must be a path or a dict")
        what = describe_path(path_or_dict)  # a FIFO would block the read
        if what is not None:
            raise ValueError(f"path_or_dict={os.fspath(path_or_dict)!r} is {what}, not a regular file")
        try:
            d = json.loads(Path(path_or_dict).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(
                f"path_or_dict={os.fspath(path_or_dict)!r} cannot be read as JSON: {exc}"
            ) from None
    if isinstance(d, dict) and "instance" in d and isinstance(d["instance"], dict):
        d = d["instance"]
    try:
        return Instance.from_dict(d)
    except ValueError as exc:  # name the argument: the field is in the message
        raise ValueError(f"path_or_dict holds an invalid instance: {exc}") from None
