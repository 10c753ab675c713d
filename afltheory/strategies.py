"""Hypothesis strategies over a claim's assumption class: property-based search with shrinking, in your own
pytest (built on ``hypothesis``, a core dependency).

```python
from hypothesis import given, settings
from afltheory import strategies
from afltheory.claims.paper import THEOREM3

@settings(max_examples=200, deadline=None)
@given(strategies.instances(THEOREM3))
def test_theorem3(inst):
    strategies.assert_holds(THEOREM3, inst)      # exact moments: no Monte Carlo flakiness
```

A failing example shrinks to a minimal instance (dimension, workers, arrivals, delays, local steps, rounds;
seeds and step sizes towards simple values) and ``assert_holds`` prints it with the bound's terms.

What an instance is (``Instance``): a certified ``HeterogeneousQuadratic`` drawn by the sampler of a function
class object (``DRAWN_CLASS`` = ``StronglyConvexSmooth(1, 0.01)`` unless ``problems(functions=...)``: L = 1, μ
∈ [0.01, 1], inside every claim's class, the function class's constants certified exactly), a round-mode
``Behaviour`` inside the claim's participation, delay and local-step bounds, the claim's rule with step sizes
inside the claim's conditions (drawn log-uniformly, then halved until every condition holds at the class's
worst case K_max, τ) — or the claim's own step-size rule when it states one (``eta``/``eta_L``: a schedule,
η_L = 1/√T, …) — a start x_0 = x* + r u (‖u‖ = 1, r ∈ {0, 0.01, 0.1, 1, 2}) and a horizon. ``behaviours`` and
``problems`` are the parts.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from .functions import StronglyConvexSmooth

__all__ = [
    "reproducible",
    "BOX",
    "SIGMAS",
    "DRAWN_CLASS",
    "Instance",
    "assert_holds",
    "behaviours",
    "fit_steps",
    "holds",
    "instances",
    "problems",
    "step_sizes",
    "violates",
]


#: The default box of ``instances``: dimension, workers, delay, local steps and rounds at most (the generic
#: adversary's ``search_claim`` passes its own box on and has the same defaults).
BOX = MappingProxyType({"max_dim": 3, "max_workers": 5, "max_delay": 2, "max_K": 3, "max_rounds": 60})


@contextlib.contextmanager
def reproducible() -> Iterator[None]:
    """Within this context hypothesis draws do not depend on which modules happen to be imported.

    hypothesis (≥ 6.13x) mixes numeric constants found in the *loaded local modules'* source into its draws,
    so a seeded search (``derandomize=True`` or ``@seed``) gave different examples — and found or missed a
    violation — depending on what ran earlier in the process (seen with the Theorem 3 search and the generic
    adversary). This switches that pool off (a private hypothesis hook; a no-op where it does not exist)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        yield
        return
    get = getattr(providers, "_get_local_constants", None)
    if get is None or not hasattr(providers, "Constants"):  # pragma: no cover - another hypothesis version
        yield
        return
    providers._get_local_constants = providers.Constants
    try:
        yield
    finally:
        providers._get_local_constants = get


def _st():
    try:
        from hypothesis import strategies as st
    except ImportError as exc:  # pragma: no cover - hypothesis is a core dependency
        raise ImportError("afltheory.strategies needs hypothesis: pip install hypothesis") from exc
    return st


@dataclass(frozen=True)
class Instance:
    """One drawn instance: ``problem``, ``behaviour``, ``algorithm``, ``rounds`` (and the drawn sizes)."""

    problem: Any
    behaviour: Any
    algorithm: Any
    rounds: int
    m: int
    max_delay: int
    K: int
    x0: Any = None

    def __repr__(self) -> str:
        c = self.problem.constants
        return (
            f"Instance(dim={self.problem.dim}, M={self.problem.num_workers}, m={self.m}, "
            f"max_delay={self.max_delay}, K={self.K}, rounds={self.rounds}, L={c.L:.3g}, mu={c.mu:.3g}, "
            f"sigma_L={c.sigma_L:.3g}, sigma_G={c.sigma_G:.3g}, algorithm={self.algorithm!r}, "
            f"‖x0 − x*‖={float(np.linalg.norm(self.x0 - c.x_star)):.3g})"
        )


SIGMAS = (0.0, 0.1, 0.5, 1.0)


#: The function class ``problems`` draws from by default: μ-strongly convex L-smooth with L = 1, μ = 0.01.
#: Its members lie in every claim's class (smooth ⊃ convex ⊃ strongly convex); a drawn instance's certified
#: μ is its own smallest curvature, in [0.01, 1] (μ = L = 1: an isotropic quadratic, still a member).
DRAWN_CLASS = StronglyConvexSmooth(1.0, 0.01)


def problems(
    claim: Any = None,
    *,
    max_dim: int = 3,
    max_workers: int = 5,
    sigma_L: tuple = SIGMAS,
    sigma_G: tuple = SIGMAS,
    functions: Any = None,
) -> Any:
    """Certified heterogeneous quadratics drawn by the sampler of ``functions`` (a ``StronglyConvexSmooth``;
    default ``DRAWN_CLASS``, L = 1, μ = 0.01: members of every claim's function class), their smallest
    curvature drawn in the class's ``sample_curvatures`` ([0.01, 1] by default; dim 1: L), with σ_L ∈
    ``sigma_L``, σ_G ∈ ``sigma_G`` (0 for an "iid" class), client weights when the class has
    ``weights="data"``. Restricting ``sigma_L``/``sigma_G`` searches a sub-class where one group of terms
    matters (as the adversary's ``--isolate``)."""
    st = _st()
    from .problems import HeterogeneousQuadratic

    fc = DRAWN_CLASS if functions is None else functions
    if not isinstance(fc, StronglyConvexSmooth):
        raise ValueError(
            f"functions={functions!r} must be an afltheory.functions.StronglyConvexSmooth (or ConvexSmooth): "
            f"the strategies draw its quadratics"
        )
    a = getattr(claim, "assumptions", None)
    iid = a is not None and a.heterogeneity == "iid"
    noise = a is None or a.noise != "none"
    weighted = a is not None and a.weights == "data"

    @st.composite
    def draw(d):
        dim = d(st.integers(1, max_dim))
        M = d(st.integers(2, max_workers))
        lowest = None if dim == 1 else d(st.floats(*fc.sample_curvatures))
        sL = d(st.sampled_from(list(sigma_L))) if noise else 0.0
        sG = 0.0 if iid else d(st.sampled_from(list(sigma_G)))
        seed = d(st.integers(0, 2**16))
        p = fc.sample(dim, M, sG, seed, sigma_L=sL, lowest=lowest)
        if weighted:
            w = np.asarray(d(st.lists(st.integers(1, 9), min_size=M, max_size=M)), dtype=float)
            p = HeterogeneousQuadratic.from_arrays(
                hessian_diag=np.asarray(p.hessian[0]), centers=p.centers, sigma_L=sL, weights=w / w.sum()
            )
        return p

    return draw()


def _fixed_local_steps(claim: Any, num_workers: int) -> int | None:
    """The largest local-step count the claim's rule fixes for ``num_workers`` workers (its local view,
    ``ServerRule.local_view``; AsySG: 1), or None when the behaviour's K applies. Read on a rule built with
    unit step sizes (the fixed counts do not depend on them)."""
    if claim.rule is None:
        return None
    rule = claim.rule(eta=1.0, eta_L=1.0, **dict(claim.rule_options))
    return rule.local_view(num_workers).max_steps


def behaviours(claim: Any, num_workers: int, *, max_delay: int = 2, max_K: int = 3) -> Any:
    """Round-mode behaviours inside the claim's class: arrivals (full: all M; uniform: m of M; arbitrary:
    uniform or biased), delays ≤ min(class bound, ``max_delay``), constant or uniformly random local steps
    ≤ min(class bound, ``max_K``)."""
    st = _st()
    from .anarchy import Behaviour, BiasedArrivals, ConstantSteps, UniformArrivals, UniformDelay, UniformSteps

    a = claim.assumptions
    tau_cap = max_delay if a.max_delay is None else min(max_delay, a.max_delay)
    K_cap = max_K if a.max_local_steps is None else min(max_K, a.max_local_steps)
    M = num_workers
    fixed = _fixed_local_steps(claim, M)

    jobs = type(getattr(a, "delays", None)).__name__ == "JobsInFlight"

    @st.composite
    def draw(d):
        m = M if a.participation == "full" else d(st.integers(1, M))
        if jobs:  # delays of M jobs in flight: an event-driven clock at arbitrary (searched) speeds
            from .anarchy import EventDriven
            from .anarchy.behaviour import ExponentialTime

            speeds = 10.0 ** np.asarray(d(st.lists(st.floats(-2.5, 0.0), min_size=M, max_size=M)))
            beh = EventDriven(m, ExponentialTime(speeds=speeds), ConstantSteps(fixed or 1))
            return beh, m, 0, fixed or 1
        if a.participation == "arbitrary" and m < M and d(st.booleans()):
            w = np.asarray(d(st.lists(st.integers(1, 9), min_size=M, max_size=M)), dtype=float)
            arrivals = BiasedArrivals(m, w / w.sum())
        else:
            arrivals = UniformArrivals(m)
        tau = d(st.integers(0, tau_cap))
        K = fixed if fixed is not None else d(st.integers(1, K_cap))
        steps = ConstantSteps(K) if K == 1 or d(st.booleans()) else UniformSteps(1, K)
        return Behaviour(arrivals, UniformDelay(tau), steps), m, tau, K

    return draw()


def step_sizes(claim: Any, values: dict[str, float]) -> Any:
    """(η, η_L) inside the claim's conditions at ``values`` (the class's worst case: L, K, τ, m, M, ...):
    drawn log-uniformly (η_L ∈ [1e-4, 1], η ∈ [1e-2, 1e5]), then η_L halved while a condition without η fails
    and η halved while any fails — so large draws land within a factor 2 of the conditions' boundary."""
    st = _st()

    @st.composite
    def draw(d):
        eta_L = 10 ** d(st.floats(-4, 0))
        eta = 10 ** d(st.floats(-2, 5))
        return fit_steps(claim, values, eta, eta_L)

    return draw()


_ETA_CONDITIONS: dict[int, set] = {}


def fit_steps(claim: Any, values: dict[str, float], eta: float, eta_L: float) -> tuple[float, float]:
    """Halve η_L (then η) until every condition of ``claim`` holds at ``values`` (see ``step_sizes``)."""
    if not claim.conditions:
        return eta, eta_L
    names_eta = _ETA_CONDITIONS.get(id(claim))
    if names_eta is None:
        weakref.finalize(claim, _ETA_CONDITIONS.pop, id(claim), None)  # no stale entry for a reused id
        names_eta = _ETA_CONDITIONS[id(claim)] = {
            k
            for k, rel in claim.conditions.items()
            if "eta" in {str(s) for s in claim._resolve(rel).free_symbols}
        }
    for _ in range(200):
        res = claim.check_conditions({**values, "eta": eta, "eta_L": eta_L})
        bad = [k for k, (ok, _) in res.items() if not ok]
        if not bad:
            return eta, eta_L
        if any(k not in names_eta for k in bad):
            eta_L /= 2
        else:
            eta /= 2
    raise ValueError(f"claim {claim.id!r}: no step sizes satisfy its conditions at {values}")


def instances(
    claim: Any,
    *,
    max_dim: int = BOX["max_dim"],
    max_workers: int = BOX["max_workers"],
    max_delay: int = BOX["max_delay"],
    max_K: int = BOX["max_K"],
    min_rounds: int = 5,
    max_rounds: int = BOX["max_rounds"],
    sigma_L: tuple = SIGMAS,
    sigma_G: tuple = SIGMAS,
    starts: tuple = (0.0, 0.01, 0.1, 1.0, 2.0),
) -> Any:
    """Instances (``Instance``) inside the claim's assumption class and conditions (module docstring).
    ``sigma_L``, ``sigma_G``: the noise and heterogeneity levels drawn; ``starts``: the distances ‖x_0 − x*‖
    drawn (e.g. ``sigma_L=(0.0,), starts=(0.0,)`` isolates the heterogeneity terms)."""
    st = _st()
    probs = problems(claim, max_dim=max_dim, max_workers=max_workers, sigma_L=sigma_L, sigma_G=sigma_G)
    behs = {M: behaviours(claim, M, max_delay=max_delay, max_K=max_K) for M in range(2, max_workers + 1)}

    @st.composite
    def draw(d):
        p = d(probs)
        beh, m, tau, K = d(behs[p.num_workers])
        c = p.constants
        vals = {
            "L": c.L,
            "mu": c.mu,
            "K": float(K),
            "E": float(K),
            "tau": float(tau),
            "m": float(m),
            "M": float(p.num_workers),
            "m'": float(max(p.num_workers - tau * m, 1)),
        }
        rounds = d(st.integers(min_rounds, max_rounds))
        kw = {"weights": p.weights} if getattr(p, "weights", None) is not None else {}
        if claim.eta is None and claim.eta_L is None:  # both steps free: drawn inside the conditions
            eta, eta_L = fit_steps(claim, vals, 10 ** d(st.floats(-2, 5)), 10 ** d(st.floats(-4, 0)))
            algo = claim.rule(eta=eta, eta_L=eta_L, **kw)
        elif claim.eta is None or claim.eta_L is None:  # one step free: every value its conditions admit
            free = "eta" if claim.eta is None else "eta_L"
            steps = {free: 10 ** d(st.floats(-4, 5) if free == "eta" else st.floats(-4, 0))}
            steps.update(_fixed_steps(claim, {**vals, "T": float(rounds)}))
            steps[free] = _fit_one(claim, vals, steps, free)
            algo = claim.rule(**steps, **dict(claim.rule_options), **kw)
        else:  # the claim fixes its step-size rule (a schedule, η_L = 1/√T, ...): resolve it on this instance
            from .claims import problem_values

            algo = claim.algorithm({**problem_values(p), **vals, "T": float(rounds)}, weights=p.weights)
        # the start: x* plus an offset of norm r ∈ {0} ∪ [0.01, 2] (shrinks towards the optimum itself)
        r = d(st.sampled_from(list(starts)))
        u = np.asarray(d(st.lists(st.floats(-1, 1), min_size=p.dim, max_size=p.dim)))
        u = np.ones(p.dim) if np.linalg.norm(u) < 1e-3 else u
        x0 = c.x_star + r * u / np.linalg.norm(u)
        return Instance(p, beh, algo, rounds, m, tau, K, x0)

    return draw()


def _fixed_steps(claim: Any, values: dict[str, float]) -> dict[str, float]:
    """The claim's fixed step sizes (numbers or expressions in its symbols) as numbers at ``values``."""
    import sympy as sp

    out = {}
    for name in ("eta", "eta_L"):
        v = getattr(claim, name)
        if v is None:
            continue
        if callable(v) and not isinstance(v, sp.Basic):
            raise ValueError(f"claim {claim.id!r}: {name} is a callable schedule; fix both steps or neither")
        out[name] = float(claim.evaluate(sp.sympify(v), values))
    return out


def _fit_one(claim: Any, values: dict[str, float], steps: dict[str, float], free: str) -> float:
    """Halve the free step ``free`` until every condition holds (the other step fixed)."""
    v = steps[free]
    for _ in range(200):
        res = claim.check_conditions({**values, **steps, free: v})
        if all(ok for ok, _ in res.values()):
            return v
        v /= 2
    raise ValueError(f"claim {claim.id!r}: no {free} satisfies its conditions at {values} with {steps}")


def holds(claim: Any, inst: Instance, *, seed: int = 0) -> Any:
    """The claim's verdict on the instance, measured exactly (``afltheory.exact``; a ``ValueError`` when the
    exact engine cannot represent it)."""
    from .claims import verify

    return verify(
        claim,
        inst.problem,
        inst.behaviour,
        rounds=inst.rounds,
        replicates=2,
        seed=seed,
        algorithm=inst.algorithm,
        exact=True,
        control=None,
        x0=inst.x0,
    )


def violates(claim: Any, inst: Instance) -> bool:
    """True when the instance is inside the claim's conditions and the exact measured value exceeds the bound
    by more than rounding: measured > bound + 1e-12 · (1 + L²‖x_0 − x*‖² + σ_L² + σ_G²) (the exact engine's
    values at x_0 = x* are ~1e-33, not 0)."""
    v = holds(claim, inst)
    c = inst.problem.constants
    scale = 1.0 + c.L**2 * float(np.sum((inst.x0 - c.x_star) ** 2)) + c.sigma_L**2 + c.sigma_G**2
    return v.inside_conditions is not False and v.measured > v.theoretical + 1e-12 * scale


def assert_holds(claim: Any, inst: Instance) -> None:
    """AssertionError naming the instance, the measured value, the bound and its terms when the claim fails
    on an instance inside its conditions (beyond rounding, see ``violates``)."""
    if violates(claim, inst):
        v = holds(claim, inst)
        raise AssertionError(
            f"{claim.id} fails on {inst!r}: measured {v.measured:.6g} > bound "
            f"{v.theoretical:.6g} (terms' shares {v.terms}); {v.notes}"
        )
