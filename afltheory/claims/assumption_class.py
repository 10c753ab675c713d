"""A claim's assumption class as one value object (``AssumptionClass``): small components that each state
their constraint, enumerate or sample members, and check an instance (``membership`` -> ``Certificate``).

``AssumptionClass.of(claim)`` derives it from ``claims.Assumptions`` and the claim's step sizes and
conditions, so every claim has one (``Claim.assumption_class``); the adversary reads only this object.

Components: ``FunctionClass`` (smooth / convex / strongly convex, constants certified), ``Noise``,
``Heterogeneity``; ``Arrivals`` ("full": all M; "uniform": m of M uniformly; "cyclic": round robin;
"arbitrary"); ``DelayModel``: ``BoundedDelay(tau)`` (every delay <= tau, or unbounded) or
``JobsInFlight()`` (the delays an event-driven clock can produce with one job in flight per worker, n = M, at
arbitrary compute speeds: a worker's update arriving at round t was pulled at the round after its previous
arrival, so its delay is t − (previous arrival round + 1), or t for its first); ``LocalSteps`` (K <= K_max);
``StartSet`` (any x_0, x_0 = x* included); ``Size`` ranges for M, m, d, T, K, tau (open-ended where the
theorem is, each open size with its scaling direction); ``StepSizes`` (a fixed step, or free: every value the
conditions admit)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "Arrivals",
    "AssumptionClass",
    "BoundedDelay",
    "Certificate",
    "DelayModel",
    "FunctionClass",
    "Heterogeneity",
    "JobsInFlight",
    "LocalSteps",
    "Noise",
    "Size",
    "StartSet",
    "StepSizes",
    "UnsearchableClass",
]


class UnsearchableClass(ValueError):
    """The class cannot be searched (an open size with no cap and no scaling direction, a free step that no
    condition bounds); the message names the component."""


def _doubling(low: float, high: float) -> list[float]:
    out, v = [], max(low, 1)
    while v <= high:
        out.append(v)
        v *= 2
    return out


@dataclass(frozen=True)
class Size:
    """An integer size ``name`` in [``low``, ``high``] (``high`` None: open-ended, as the theorem);
    ``direction``: the search may follow it by doubling (required when open)."""

    name: str
    low: int
    high: int | None = None
    direction: bool = True

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        return f"{self.low} <= {self.name}" + (f" <= {self.high}" if self.high is not None else " (open)")

    def contains(self, v: float) -> bool:
        """Whether the value ``v`` lies in this size's range (open ends included)."""
        return v >= self.low and (self.high is None or v <= self.high)

    def enumerate(self, cap: int) -> list[int]:
        """The doubling grid low, 2 low, ... up to min(high, cap)."""
        hi = cap if self.high is None else min(self.high, cap)
        return (
            [int(v) for v in _doubling(self.low, hi)]
            if self.low > 0
            else [0] + [int(v) for v in _doubling(1, hi)]
        )


@dataclass(frozen=True)
class _KindComponent:
    """A component chosen by its ``kind``: ``CONSTRAINTS`` says each kind's constraint in words."""

    kind: str
    CONSTRAINTS: ClassVar[Mapping[str, str]] = {}

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        return self.CONSTRAINTS[self.kind]


@dataclass(frozen=True)
class FunctionClass(_KindComponent):
    """f_i L-smooth ("smooth"), and convex / μ-strongly convex; the instance's constants must be certified."""

    kind: str = "smooth"
    CONSTRAINTS = {"smooth": "L-smooth", "convex": "L-smooth convex", "strongly_convex": "μ-strongly convex"}

    def check(self, problem: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized objective lies in this component's set."""
        c = problem.constants
        how = dict(getattr(c, "certified", {}) or {})
        bad = [k for k in ("L", "sigma_L", "sigma_G") if how.get(k) not in ("exact", "upper", None)]
        if bad:
            return False, f"constants {bad} not certified ({how})"
        if self.kind != "smooth" and not (c.mu > 0 if self.kind == "strongly_convex" else c.mu >= 0):
            return False, f"mu={c.mu} outside {self.kind}"
        return True, f"L={c.L:.4g} ({how.get('L', 'given')}), mu={c.mu:.4g}"


@dataclass(frozen=True)
class Noise(_KindComponent):
    """ "variance" (E‖g − ∇f_i‖² <= σ_L²), "second_moment" or "none" (σ_L = 0)."""

    kind: str = "variance"
    CONSTRAINTS = {"variance": "E‖g − ∇f_i‖² ≤ σ_L²", "second_moment": "E‖g‖² ≤ G²", "none": "σ_L = 0"}

    def check(self, problem: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized noise level lies in this component's set."""
        s = float(problem.constants.sigma_L)
        if self.kind == "none" and s != 0.0:
            return False, f"sigma_L={s} but the class has exact gradients"
        return True, f"sigma_L={s:.4g}"

    def enumerate(self) -> tuple[float, ...]:
        """The noise levels the search enumerates for this component."""
        return (0.0,) if self.kind == "none" else (0.0, 0.1, 0.5, 1.0)


@dataclass(frozen=True)
class Heterogeneity:
    """How client drift is bounded (``claims.Assumptions.heterogeneity``); "iid": σ_G = 0."""

    kind: str | None = "sigma_G_max"

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        return "identical data (σ_G = 0)" if self.kind == "iid" else f"{self.kind or 'unbounded'}"

    def check(self, problem: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized heterogeneity constant lies in this set."""
        s = float(problem.constants.sigma_G)
        if self.kind == "iid" and s > 1e-12 * (1.0 + float(problem.constants.L)):  # rounding is not drift
            return False, f"sigma_G={s} but the class has identical data"
        return True, f"sigma_G={s:.4g}"


@dataclass(frozen=True)
class Arrivals(_KindComponent):
    """Which workers arrive each round: "full" (all M), "uniform" (m of M uniformly without replacement),
    "cyclic" (round robin), "arbitrary" (any sets of m distinct workers)."""

    kind: str = "arbitrary"
    CONSTRAINTS = {
        "full": "every worker every round",
        "uniform": "m of M uniformly",
        "cyclic": "round robin",
        "arbitrary": "any m of M",
    }

    def sample(self, rng: np.random.Generator, M: int, m: int) -> Any:
        """One arrival law of the class for M workers, m per round."""
        from ..anarchy import BiasedArrivals, CyclicArrivals, UniformArrivals

        if self.kind == "full":
            return UniformArrivals(M)
        if self.kind == "cyclic":
            return CyclicArrivals(m)
        if self.kind == "arbitrary" and m < M and rng.random() < 0.5:
            w = rng.integers(1, 10, size=M).astype(float)
            return BiasedArrivals(m, w / w.sum())
        return UniformArrivals(m)

    def check(self, behaviour: Any, schedule: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized arrivals lie in this component's set."""
        from ..anarchy import CyclicArrivals, UniformArrivals

        M, m = schedule.num_workers, schedule.workers.shape[2]
        law = getattr(behaviour, "arrivals", None)
        if self.kind == "full" and m != M:
            return False, f"m={m} < M={M}: the class has full participation"
        if self.kind == "uniform" and m < M and not isinstance(law, UniformArrivals):
            return False, f"arrivals {law!r} are not m of M uniformly"
        if self.kind == "cyclic" and m < M and not isinstance(law, CyclicArrivals):
            return False, f"arrivals {law!r} are not round robin"
        return True, f"{law if law is not None else type(behaviour).__name__} (m={m} of M={M})"


class DelayModel:
    """Which delays the class admits; ``check(schedule)`` -> (ok, detail) on a realized schedule."""

    tau: int | None = None

    def constraint(self) -> str:  # pragma: no cover - abstract
        """This component's constraint in words (shown in coverage lines and certificates)."""
        raise NotImplementedError

    def check(self, behaviour: Any, schedule: Any) -> tuple[bool, str]:  # pragma: no cover - abstract
        """``(inside, reason)``: whether an instance's realized delays lie in this component's set."""
        raise NotImplementedError


@dataclass(frozen=True)
class BoundedDelay(DelayModel):
    """Every delay τ_{t,i} <= ``tau`` (None: unbounded, the bound's τ is the realized maximum)."""

    tau: int | None = None

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        return "any delays (τ = realized maximum)" if self.tau is None else f"τ_{{t,i}} ≤ {self.tau}"

    def check(self, behaviour: Any, schedule: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized delays lie in this component's set."""
        D = int(schedule.delays.max()) if schedule.delays.size else 0
        if self.tau is not None and D > self.tau:
            return False, f"realized delay {D} > tau={self.tau}"
        return True, f"largest realized delay {D}"

    def sample(self, rng: np.random.Generator, cap: int) -> Any:
        """A delay process of this class (uniform delays up to ``min(cap, tau)``), drawn with ``rng``."""
        from ..anarchy import UniformDelay

        top = cap if self.tau is None else min(cap, self.tau)
        return UniformDelay(int(rng.integers(0, top + 1)))


@dataclass(frozen=True)
class JobsInFlight(DelayModel):
    """The delays of an event-driven clock with one job in flight per worker (n = M jobs) at arbitrary
    compute speeds: worker i's arrival at round t has delay t − p_i, p_i the round after its previous arrival
    (0 before its first). Delays are unbounded (a slow worker), but not arbitrary: e.g. with M = 2, m = 1 an
    update with delay 5 at round 3 is not realizable (module docstring)."""

    tau: int | None = None

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        return "delays of n = M jobs in flight (event-driven clock, arbitrary speeds)"

    @staticmethod
    def realizable(workers: np.ndarray, delays: np.ndarray, M: int) -> tuple[bool, str]:
        """(ok, first violation) for one replicate's (T, m) workers and delays."""
        pulled = np.zeros(M, dtype=np.int64)
        for t in range(workers.shape[0]):
            for i, d in zip(workers[t], delays[t], strict=True):
                if d != t - pulled[i]:
                    return False, f"round {t}: worker {i} has delay {d}, an n = M clock gives {t - pulled[i]}"
            pulled[workers[t]] = t + 1
        return True, "every delay = rounds since the worker's last pull"

    def check(self, behaviour: Any, schedule: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized delays lie in this component's set."""
        for r in range(schedule.workers.shape[0]):
            ok, why = self.realizable(schedule.workers[r], schedule.delays[r], schedule.num_workers)
            if not ok:
                return False, f"replicate {r}, {why}"
        return True, f"realizable by {schedule.num_workers} jobs in flight"

    def sample(self, rng: np.random.Generator, M: int, m: int) -> Any:
        """An event-driven behaviour of M workers at random fixed speeds (ratios up to 1:300)."""
        from ..anarchy import EventDriven
        from ..anarchy.behaviour import ExponentialTime

        speeds = 10 ** rng.uniform(-2.5, 0, size=M)
        return EventDriven(m, ExponentialTime(speeds=speeds))


@dataclass(frozen=True)
class LocalSteps:
    """K_{t,i} <= ``K_max`` (None: not bounded by the class)."""

    K_max: int | None = None

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        return "any K" if self.K_max is None else f"K ≤ {self.K_max}"

    def check(self, schedule: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized local steps lie in this component's set."""
        K = int(schedule.local_steps.max()) if schedule.local_steps.size else 1
        if self.K_max is not None and K > self.K_max:
            return False, f"realized K={K} > K_max={self.K_max}"
        return True, f"largest K {K}"


@dataclass(frozen=True)
class StartSet:
    """Any x_0 (``x_0 = x*`` included); ``distances``: the ‖x_0 − x*‖ the search enumerates."""

    distances: tuple = (0.0, 0.01, 0.1, 1.0, 2.0)

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        return "any x_0 (x_0 = x* included)"

    def check(self, problem: Any, x0: Any) -> tuple[bool, str]:
        """``(inside, reason)``: whether an instance's realized start point lies in this component's set."""
        xs = problem.constants.x_star
        r = float("nan") if xs is None or x0 is None else float(np.linalg.norm(np.asarray(x0) - xs))
        return True, f"‖x_0 − x*‖ = {r:.3g}"


@dataclass(frozen=True)
class StepSizes:
    """``eta``/``eta_L`` as the claim states them (None: free — every value its ``conditions`` admit);
    ``bounded``: the free steps some condition bounds."""

    eta: Any = None
    eta_L: Any = None
    bounded: frozenset = frozenset()

    @property
    def free(self) -> tuple[str, ...]:
        """The step names the claim leaves free (searched over every value its conditions admit)."""
        return tuple(n for n in ("eta", "eta_L") if getattr(self, n) is None)

    def constraint(self) -> str:
        """This component's constraint in words (shown in coverage lines and certificates)."""
        if not self.free:
            return "the claim's step sizes"
        return f"{', '.join(self.free)} free: every value the conditions admit"


@dataclass(frozen=True)
class Certificate:
    """Why an instance is (or is not) in the class: ``checks`` component -> (ok, detail); ``slack``:
    condition -> rhs − lhs (>= 0 inside)."""

    checks: dict
    slack: dict = field(default_factory=dict)

    @property
    def inside(self) -> bool:
        """True when every membership check passed."""
        return all(ok for ok, _ in self.checks.values()) and all(s >= 0 for s in self.slack.values())

    @property
    def reasons(self) -> list[str]:
        """The reasons of the checks that failed (empty when the instance is inside)."""
        out = [f"{k}: {d}" for k, (ok, d) in self.checks.items() if not ok]
        return out + [f"condition {k}: slack {s:.3g} < 0" for k, s in self.slack.items() if s < 0]

    def to_dict(self) -> dict:
        """JSON-safe form: each check's outcome and reason, and the condition slacks."""
        return {
            "inside": self.inside,
            "checks": {k: {"ok": bool(ok), "detail": d} for k, (ok, d) in self.checks.items()},
            "slack": {k: float(s) for k, s in self.slack.items()},
        }

    def __str__(self) -> str:
        if self.inside:
            return "inside the class (" + "; ".join(f"{k}: {d}" for k, (_, d) in self.checks.items()) + ")"
        return "outside the class: " + "; ".join(self.reasons)


@dataclass(frozen=True)
class AssumptionClass:
    """The class a claim quantifies over (module docstring); built by ``of(claim)``."""

    function: FunctionClass
    noise: Noise
    heterogeneity: Heterogeneity
    arrivals: Arrivals
    delays: DelayModel
    local_steps: LocalSteps
    start: StartSet
    sizes: Mapping[str, Size]
    steps: StepSizes
    weights: str = "uniform"

    @classmethod
    def of(cls, claim: Any) -> AssumptionClass:
        """The class of ``claim`` (from its ``Assumptions``, step sizes and conditions)."""
        a = claim.assumptions
        delays = getattr(a, "delays", None)
        if delays is None:
            delays = BoundedDelay(a.max_delay)
        arrivals = Arrivals(a.participation)
        sizes = {
            "M": Size("M", 1 if arrivals.kind == "full" else 2),
            "m": Size("m", 1),
            "d": Size("d", 1),
            "T": Size("T", 1),
            "K": Size("K", 1, a.max_local_steps),
            "tau": Size("tau", 0, delays.tau, direction=not isinstance(delays, JobsInFlight)),
        }
        bounded = set()
        for rel in claim.conditions.values():
            names = {str(s) for s in claim._resolve(rel).free_symbols}
            bounded |= names & {"eta", "eta_L"}
        steps = StepSizes(claim.eta, claim.eta_L, frozenset(bounded))
        return cls(
            FunctionClass(a.function),
            Noise(a.noise),
            Heterogeneity(a.heterogeneity),
            arrivals,
            delays,
            LocalSteps(a.max_local_steps),
            StartSet(),
            sizes,
            steps,
            a.weights,
        )

    # ------------------------------------------------------------------ searchability
    def check_searchable(self) -> AssumptionClass:
        """``self``, or ``UnsearchableClass`` naming the component that cannot be searched."""
        for s in self.sizes.values():
            if s.high is None and not s.direction and s.name != "tau":
                raise UnsearchableClass(
                    f"size {s.name}: open-ended ({s.constraint()}) with no cap and no scaling direction; "
                    f"give it a cap (high=...) or a direction"
                )
        for name in self.steps.free:
            if name not in self.steps.bounded:
                raise UnsearchableClass(
                    f"step sizes: {name} is free (None) but no condition bounds it; state a condition on "
                    f"{name} (e.g. {name}*L <= 1) or fix {name}"
                )
        return self

    def directions(self) -> list[str]:
        """The open sizes the search follows by doubling (and 1/η for a free step)."""
        out = [n for n, s in self.sizes.items() if s.direction and (s.high is None or s.high > s.low)]
        if "M" in out and self.arrivals.kind != "full":
            out.append("M/m")
        out += [f"1/{n}" for n in self.steps.free]
        return out

    def describe(self) -> str:
        """The class in words, one component per line (coverage, docs, ``claims show``)."""
        parts = [
            self.function.constraint(),
            self.noise.constraint(),
            self.heterogeneity.constraint(),
            self.arrivals.constraint(),
            self.delays.constraint(),
            self.local_steps.constraint(),
            self.start.constraint(),
            self.steps.constraint(),
        ]
        return "; ".join(parts) + "; sizes " + ", ".join(s.constraint() for s in self.sizes.values())

    # ------------------------------------------------------------------ membership
    def membership(self, claim: Any, instance: Any, *, replicates: int = 4, seed: int = 0) -> Certificate:
        """The certificate of ``instance`` (``problem``, ``behaviour``, ``algorithm``, ``rounds``, ``x0``):
        function class and constants, noise, heterogeneity; the realized schedules (``replicates`` sampled
        ones) against the arrival process, the delay model (staleness <= τ where τ is in the class; n jobs
        in flight) and the local steps; the sizes; the claim's conditions with their slack where the
        instance determines every symbol (else left to the run's check)."""
        p, b = instance.problem, instance.behaviour
        sched = b.sample(instance.rounds, replicates, p.num_workers, seed)
        checks = {
            "function": self.function.check(p),
            "noise": self.noise.check(p),
            "heterogeneity": self.heterogeneity.check(p),
            "arrivals": self.arrivals.check(b, sched),
            "delays": self.delays.check(b, sched),
            "local_steps": self.local_steps.check(sched),
            "start": self.start.check(p, instance.x0),
        }
        K = int(sched.local_steps.max()) if sched.local_steps.size else 1
        tau = int(sched.delays.max()) if sched.delays.size else 0
        vals = {"M": p.num_workers, "m": sched.workers.shape[2], "d": p.dim, "T": instance.rounds, "K": K}
        vals["tau"] = tau
        bad = [
            f"{n}={v} not in {self.sizes[n].constraint()}"
            for n, v in vals.items()
            if n in self.sizes and not self.sizes[n].contains(v)
        ]
        checks["sizes"] = (not bad, "; ".join(bad) or ", ".join(f"{k}={v}" for k, v in vals.items()))
        slack = self._slack(claim, instance, vals)
        return Certificate(checks, slack)

    @staticmethod
    def _slack(claim: Any, instance: Any, vals: dict) -> dict:
        from ._values import problem_values

        a = instance.algorithm
        stats = {**problem_values(instance.problem, instance.x0), **{k: float(v) for k, v in vals.items()}}
        stats.update(
            {
                "E": float(vals["K"]),
                "eta": _num(getattr(a, "eta", None)),
                "eta_L": _num(getattr(a, "eta_L", None)),
            }
        )
        stats = {k: v for k, v in stats.items() if v is not None and np.ndim(v) == 0 and math.isfinite(v)}
        out = {}
        for k, rel in claim.conditions.items():
            need = {str(s) for s in claim._resolve(rel).free_symbols}
            if need - set(stats):
                continue  # needs run statistics (e.g. m'): checked on the run
            lhs, rhs = float(claim.evaluate(rel.lhs, stats)), float(claim.evaluate(rel.rhs, stats))
            out[k] = lhs - rhs if ">" in type(rel).rel_op else rhs - lhs
            if type(rel).rel_op in ("<", ">") and out[k] == 0:
                out[k] = -1e-300  # a strict relation at equality is outside
        return out


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float, np.floating)) else None
