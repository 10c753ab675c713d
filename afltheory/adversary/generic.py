"""The adversary over ANY ``afltheory.claims.Claim``: a targeted search of the claim's assumption class for
the largest measured/bound ratio, with a Monte Carlo confirmation before a violation is claimed.

The search space is ``afltheory.strategies.instances(claim)`` — certified quadratics, arrivals by the
claim's participation, delays and local steps inside the class, step sizes inside the claim's conditions
(halved to the boundary) or the claim's own step-size rule, starts from x* to 2 away — and every candidate is
evaluated by the general exact engine (``afltheory.exact.moments``, the same engine and rule view ``verify``
uses: step-size schedules, client weights, FedAvg, FedBuff, AsySG, user rules defined by the declarative
hooks; a rule it cannot represent is refused with ``UnsupportedRule``, never read as its base).
Every candidate goes through the one dispatcher ``claims.measure`` (``evaluate``): a fallback happens ONLY on
the exact engine's declared refusals ``claims.REFUSALS`` (a TypeError or ValueError is a bug and fails the
run). A candidate the exact engine refuses is evaluated by ONE deterministic simulation instead when it is
deterministic — σ_L = 0, no compressor, every worker every round, fixed delays, fixed per-worker local steps
(``deterministic``) — and its replicates agree to 1e-12: then ``simulate`` gives the exact value (the rule
itself runs, e.g. SCAFFOLD's control variates or FedNova's normalized averaging; never its base). Such
evaluations are counted in ``simulated``; other refused candidates in ``refused``.
hypothesis's targeted search (``hypothesis.target``) drives the generation towards large ratios. This is the
slower, general path: the paper's Theorems 2–4 and corollaries keep their batched evaluator
(``afltheory.adversary.search``), 10–100× faster per evaluation.

Confirmation: a worst ratio > 1 inside the conditions is re-run with ``claims.verify(..., exact=False)`` —
``simulate``, ``replicates`` runs, the one-sided 99 % UCB of the measured mean against the bound —, and called
a violation only if the 99 % *lower* confidence bound of the measured mean exceeds the bound.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import check_int
from ..strategies import BOX

__all__ = [
    "BOX_LOWS",
    "SCALING_CAPS",
    "SCALING_DIRECTIONS",
    "ClaimScaling",
    "GenericWorstCase",
    "ScalePoint",
    "deterministic",
    "evaluate",
    "scale_claim",
    "search_claim",
]


@dataclass
class GenericWorstCase:
    """The result of ``search_claim``: the worst ratio found (a lower bound on the class's true worst
    case), its instance, the bound's term shares there, how many evaluations ran / were refused, and the
    Monte Carlo confirmation (None when the ratio ≤ 1)."""

    claim: str
    ratio: float
    instance: Any
    measured: float
    bound: float
    terms: dict
    evaluations: int
    refused: int
    confirmation: dict | None = None
    history: list = field(default_factory=list)
    simulated: int = 0
    outside: int = 0
    outside_examples: list = field(default_factory=list)
    monte_carlo: int = 0
    certificate: Any = None
    coverage: dict = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        """True only when the Monte Carlo confirmation confirmed the violation."""
        return bool(self.confirmation and self.confirmation.get("confirmed"))

    def summary(self) -> str:
        """Two lines: the worst ratio, where, the dominant term and the verdict on a violation."""
        dom = max(self.terms, key=self.terms.get) if self.terms else "—"
        share = self.terms.get(dom, float("nan")) if self.terms else float("nan")
        v = (
            "violated (confirmed by Monte Carlo)"
            if self.violated
            else "not confirmed by Monte Carlo"
            if self.confirmation
            else "within the bound"
        )
        cov = self.coverage.get("searched", {})
        out = (
            f"{self.claim}: worst ratio {self.ratio:.4g} (measured {self.measured:.4g} / bound "
            f"{self.bound:.4g}) after {self.evaluations} evaluations ({self.refused} refused, "
            f"{self.outside} outside the class, {self.simulated} by deterministic simulation, "
            f"{self.monte_carlo} by Monte Carlo) — {v}\n"
            f"  at {self.instance!r}; dominant term {dom} ({share:.0%})"
        )
        if cov:
            out += "\n  searched " + ", ".join(f"{k} in {r}" for k, r in cov.items()) + " (a finite search)"
        if self.certificate is not None:
            out += f"\n  membership: {self.certificate}"
        for ex in self.outside_examples[:1]:
            out += f"\n  e.g. outside the class: {'; '.join(ex['why'])}"
        return out

    def to_dict(self) -> dict:
        """JSON-safe summary (the instance as its repr and explicit arrays)."""
        inst = self.instance
        d = {
            "claim": self.claim,
            "worst_ratio": self.ratio,
            "measured": self.measured,
            "bound": self.bound,
            "terms": self.terms,
            "evaluations": self.evaluations,
            "refused": self.refused,
            "simulated": self.simulated,
            "violated": self.violated,
            "confirmation": self.confirmation,
            "history": self.history,
            "outside": self.outside,
            "outside_examples": self.outside_examples,
            "monte_carlo": self.monte_carlo,
            "certificate": None if self.certificate is None else self.certificate.to_dict(),
            "coverage": self.coverage,
        }
        if inst is not None:
            p = inst.problem
            d["instance"] = {
                "repr": repr(inst),
                "hessian_diag": np.asarray(p.hessian).tolist(),
                "centers": p.centers.tolist(),
                "sigma_L": p.constants.sigma_L,
                "weights": None if p.weights is None else list(p.weights),
                "x0": np.asarray(inst.x0).tolist(),
                "eta": _step(inst.algorithm.eta),
                "eta_L": _step(inst.algorithm.eta_L),
                "m": inst.m,
                "max_delay": inst.max_delay,
                "K": inst.K,
                "rounds": inst.rounds,
                "rule": type(inst.algorithm).__name__,
            }
        return d


def _step(v: Any) -> float | str:
    """A constant step size as a float, a schedule as its expression."""
    return float(v) if isinstance(v, (int, float, np.floating)) else repr(v)


def deterministic(inst: Any) -> bool:
    """True when one ``simulate`` run of the instance is its exact value: no noise (σ_L = 0), no compressor,
    every worker arrives every round, delays and local steps fixed per round and worker (``NoDelay``,
    ``FixedDelay``, ``UniformDelay(0)``; ``ConstantSteps``, ``PerWorkerSteps``)."""
    from ..anarchy import ConstantSteps, FixedDelay, NoDelay, PerWorkerSteps, UniformArrivals, UniformDelay

    p, b, a = inst.problem, inst.behaviour, inst.algorithm
    if float(p.constants.sigma_L) != 0.0 or getattr(a, "compressor", None) is not None:
        return False
    if b.round_components() is None:  # an event-driven clock: its schedule is random
        return False
    if not (isinstance(b.arrivals, UniformArrivals) and b.arrivals.m == p.num_workers):
        return False
    d = b.delays
    if not (isinstance(d, (NoDelay, FixedDelay)) or (isinstance(d, UniformDelay) and d.max_delay == 0)):
        return False
    return isinstance(b.local_steps, (ConstantSteps, PerWorkerSteps))


def _simulated(claim: Any, inst: Any, seed: int = 0) -> Any:
    """The verdict of a deterministic instance by ``simulate`` (2 replicates), or None when the replicates
    differ by more than 1e-12 relative (the instance was not deterministic after all: not an exact value)."""
    v = _verify(claim, inst, "mc", 2, seed)
    m = float(v.measured)
    hi = float(v.ci[1]) if v.ci is not None else m
    if not (math.isfinite(m) and abs(hi - m) <= 1e-12 * (1.0 + abs(m))):
        return None
    return v


def _verify(claim: Any, inst: Any, engine: str, replicates: int, seed: int) -> Any:
    """``claims.verify`` of the instance with ONE engine of the dispatcher ``claims.measure`` ("exact":
    exact moments, raising its declared refusal; "mc": ``simulate``), no control, warnings silenced."""
    from ..claims import verify

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return verify(
            claim,
            inst.problem,
            inst.behaviour,
            rounds=inst.rounds,
            replicates=replicates,
            seed=seed,
            algorithm=inst.algorithm,
            exact=engine == "exact",
            control=None,
            x0=inst.x0,
        )


def evaluate(claim: Any, inst: Any, seed: int = 0, *, replicates: int = 16) -> tuple[Any, str]:
    """``(verdict, how)`` of one candidate, "exact if possible else Monte Carlo" through the one dispatcher
    ``claims.measure``: the exact engine first; ONLY on its declared refusals (``claims.REFUSALS``) a
    deterministic candidate by one simulation (``how`` = "simulated", an exact value), an event-driven clock
    by Monte Carlo (``replicates`` runs, "monte_carlo"); any other refused candidate gives ``(None,
    "refused")``. A TypeError, ValueError or any other error of an engine is a bug: it propagates."""
    from ..claims import REFUSALS

    try:
        return _verify(claim, inst, "exact", 2, seed), "exact"
    except REFUSALS:
        pass
    if deterministic(inst):
        try:
            v = _simulated(claim, inst, seed)
        except REFUSALS:
            return None, "refused"
        return (v, "simulated") if v is not None else (None, "refused")
    if inst.behaviour.round_components() is None:  # an event clock: Monte Carlo
        try:
            return _verify(claim, inst, "mc", replicates, seed), "monte_carlo"
        except REFUSALS:
            return None, "refused"
    return None, "refused"


def search_claim(
    claim: Any,
    *,
    budget: int = 300,
    seed: int = 0,
    replicates: int = 1000,
    max_dim: int = BOX["max_dim"],
    max_workers: int = BOX["max_workers"],
    max_delay: int = BOX["max_delay"],
    max_K: int = BOX["max_K"],
    max_rounds: int = BOX["max_rounds"],
    **subclass: Any,
) -> GenericWorstCase:
    """Search ``claim``'s class for the largest measured/bound ratio (module docstring): ``budget`` exact
    evaluations (exact moments, or a deterministic simulation where the exact engine refuses a deterministic
    candidate), reproducible for a ``seed``. ``subclass``: ``sigma_L``/``sigma_G``/``starts`` tuples of
    ``strategies.instances`` (e.g. ``sigma_L=(0.0,), starts=(0.0,)``: the heterogeneity terms only)."""
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hyp_seed

    from .. import strategies
    from ..claims import Claim

    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    budget = check_int("budget", budget, low=1, high=100_000)
    seed = check_int("seed", seed, low=0)
    replicates = check_int("replicates", replicates, low=2)
    sizes = dict(max_dim=max_dim, max_workers=max_workers, max_delay=max_delay, max_K=max_K)
    max_dim, max_workers, max_delay, max_K, max_rounds = (
        check_int(k, v, low=BOX_LOWS[k]) for k, v in {**sizes, "max_rounds": max_rounds}.items()
    )
    aclass = claim.assumption_class.check_searchable()  # refused naming the component
    best = {"ratio": -math.inf, "inst": None, "v": None, "cert": None}
    counts = {"n": 0, "refused": 0, "simulated": 0, "outside": 0, "monte_carlo": 0}
    history: list = []
    outside: list = []

    @hyp_seed(seed)
    @settings(
        max_examples=budget,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.target],
        suppress_health_check=list(HealthCheck),
    )
    @given(
        strategies.instances(
            claim,
            max_dim=max_dim,
            max_workers=max_workers,
            max_delay=max_delay,
            max_K=max_K,
            max_rounds=max_rounds,
            **subclass,
        )
    )
    def probe(inst):
        counts["n"] += 1
        cert = aclass.membership(claim, inst, seed=seed)
        if not cert.inside:  # outside the claim's class: counted and shown, never evaluated or confirmed
            counts["outside"] += 1
            if len(outside) < 3:
                outside.append({"instance": repr(inst), "why": cert.reasons})
            return
        v, how = evaluate(claim, inst, seed)
        if v is None:
            counts["refused"] += 1
            return
        if how != "exact":
            counts[how] += 1
        _score(v, inst, cert)

    def _score(v, inst, cert):
        if v.inside_conditions is False:
            return
        b, m = float(v.theoretical), float(v.measured)
        c = inst.problem.constants  # rounding floor of the exact values (strategies.violates): not a signal
        spread = c.L**2 * float(np.sum((inst.x0 - c.x_star) ** 2)) + c.sigma_L**2 + c.sigma_G**2
        floor = 1e-12 * (1.0 + spread)
        m_eff = max(m - floor, 0.0)
        ratio = m_eff / b if b > 0 else (math.inf if m_eff > 0 else 0.0)
        if math.isfinite(ratio):
            target(ratio, label="measured/bound")
        if ratio > best["ratio"]:
            best.update(ratio=ratio, inst=inst, v=v, cert=cert)
            history.append((counts["n"], ratio))

    with strategies.reproducible():  # the same seed gives the same search whatever was imported before
        probe()
    if best["inst"] is None:
        raise ValueError(
            f"claim {claim.id!r}: no instance of its class could be evaluated exactly "
            f"({counts['refused']} refused, {counts['outside']} outside the class) — the exact engine cannot "
            f"represent its rule or class, and no candidate was deterministic"
        )
    v, inst = best["v"], best["inst"]
    wc = GenericWorstCase(
        claim.id,
        float(best["ratio"]),
        inst,
        float(v.measured),
        float(v.theoretical),
        dict(v.terms or {}),
        counts["n"],
        counts["refused"],
        None,
        history,
        counts["simulated"],
    )
    wc.outside, wc.outside_examples, wc.monte_carlo = counts["outside"], outside, counts["monte_carlo"]
    wc.certificate = best["cert"]
    wc.coverage = {
        "class": aclass.describe(),
        "directions": aclass.directions(),
        "searched": {
            "d": f"1..{max_dim}",
            "M": f"2..{max_workers}",
            "tau": f"0..{max_delay}"
            if aclass.delays.__class__.__name__ != "JobsInFlight"
            else "emerging from M jobs in flight (event clocks, speed ratios up to 1:300)",
            "K": f"1..{max_K}",
            "T": f"5..{max_rounds}",
        },
        "evaluated": counts["n"] - counts["outside"] - counts["refused"],
        "outside": counts["outside"],
    }
    if wc.ratio > 1:
        wc.confirmation = _confirm(claim, inst, replicates, seed)
        if not wc.certificate.inside:  # pragma: no cover - membership is checked before every evaluation
            wc.confirmation["confirmed"] = False
    return wc


def _confirm(claim: Any, inst: Any, replicates: int, seed: int) -> dict:
    """Monte Carlo re-run of the worst instance (its own random streams): confirmed iff the 99 % lower
    confidence bound of the measured mean exceeds the bound (and the instance is inside the conditions)."""
    if deterministic(inst):  # the simulation is the exact value: a re-run on other streams, no sampling
        v = _simulated(claim, inst, seed + 1)
        if v is None:  # the replicates differ: not deterministic after all, judged by Monte Carlo below
            return _confirm_mc(claim, inst, replicates, seed)
        inside = v.inside_conditions is not False
        return {
            "replicates": 2,
            "deterministic": True,
            "measured_mean": float(v.measured),
            "bound": float(v.theoretical),
            "measured_lcb99": float(v.measured),
            "inside_conditions": inside,
            "confirmed": bool(inside and float(v.measured) > float(v.theoretical)),
        }
    return _confirm_mc(claim, inst, replicates, seed)


def _confirm_mc(claim: Any, inst: Any, replicates: int, seed: int) -> dict:
    from .search import mirrored_lcb

    v = _verify(claim, inst, "mc", replicates, seed + 1)
    # the one-sided 99 % t-UCB is mean + t·sd/√R, so the matching lower bound is 2·mean − UCB
    ucb = v.ci[1] if v.ci is not None else v.measured
    lcb = mirrored_lcb(v.measured, ucb)
    inside = v.inside_conditions is not False
    return {
        "replicates": replicates,
        "measured_mean": float(v.measured),
        "bound": float(v.theoretical),
        "measured_lcb99": lcb,
        "inside_conditions": inside,
        "confirmed": bool(inside and lcb > v.theoretical),
    }


# ---------------------------------------------------------------------------------------------------------
# scaling search on a user's claim: the directions come from the claim's AssumptionClass

#: the directions the scaling search can follow (``AssumptionClass.directions`` says which a class opens)
SCALING_DIRECTIONS = ("M/m", "M", "T", "1/eta_L", "1/eta", "tau", "K", "d")
#: how far a direction is followed at most (a class's own upper bound is tighter where it has one)
#: the smallest value of each size cap of ``search_claim`` (its instances have M ≥ 2 workers, T ≥ 5 rounds)
BOX_LOWS = {"max_dim": 1, "max_workers": 2, "max_delay": 0, "max_K": 1, "max_rounds": 5}

SCALING_CAPS = {
    "M/m": 256,
    "M": 256,
    "T": 2**16,
    "1/eta_L": 2.0**20,
    "1/eta": 2.0**20,
    "tau": 32,
    "K": 64,
    "d": 16,
}
_GROUPS = ("sigma_L", "sigma_G", "transient")


@dataclass(frozen=True)
class ScalePoint:
    """A canonical candidate of the generic scaling search: sizes, step exponents (η_L = η_L,max · 2^(−a),
    η = η_max · 2^(−b)) and the isolated group of terms ("sigma_L": σ_L = 1 from x_0 = x*; "sigma_G": σ_G = 1
    from x_0 = x*; "transient": Δ = 1, exact gradients)."""

    M: int = 2
    m: int = 1
    T: int = 20
    a: int = 0
    b: int = 0
    tau: int = 0
    K: int = 1
    d: int = 1
    group: str = "sigma_L"

    def move(self, direction: str) -> ScalePoint:
        """The point one doubling further along ``direction`` (one of ``SCALING_DIRECTIONS``)."""
        d = dict(self.__dict__)
        if direction == "M/m":
            d["M"] = 2 * self.M
        elif direction == "M":
            d["M"], d["m"] = 2 * self.M, 2 * self.m
        elif direction == "T":
            d["T"] = 2 * self.T
        elif direction == "1/eta_L":
            d["a"] = self.a + 1
        elif direction == "1/eta":
            d["b"] = self.b + 1
        elif direction == "tau":
            d["tau"] = max(1, 2 * self.tau)
        elif direction in ("K", "d"):
            d[direction] = 2 * d[direction]
        else:
            raise ValueError(f"direction={direction!r} must be one of {SCALING_DIRECTIONS}")
        return ScalePoint(**d)

    def size(self, direction: str) -> float:
        """This point's size along ``direction`` (the abscissa of that direction's trend fit)."""
        return {
            "M/m": self.M / self.m,
            "M": float(self.M),
            "T": float(self.T),
            "1/eta_L": 2.0**self.a,
            "1/eta": 2.0**self.b,
            "tau": max(self.tau, 0.5),
            "K": float(self.K),
            "d": float(self.d),
        }[direction]


@dataclass
class ClaimScaling:
    """What ``scale_claim`` did: per direction the sizes followed, their ratios and trend (log–log slope with
    a 95 % CI); the best ratio; the violation (if any) with its membership certificate and confirmation
    (exact moments where they apply, else Monte Carlo with a 99 % lower confidence bound); the candidates
    outside the class (counted and shown, never evaluated) and the refused ones."""

    claim: str
    best: dict | None = None
    violation: dict | None = None
    certificate: Any = None
    confirmation: dict | None = None
    directions: dict = field(default_factory=dict)
    evaluations: int = 0
    outside: int = 0
    outside_examples: list = field(default_factory=list)
    refused: int = 0
    skipped: int = 0
    elapsed: float = 0.0
    budget_seconds: float = 0.0
    groups: tuple = ()
    class_directions: tuple = ()
    #: every evaluated (or membership-checked) point's fields, in order
    searched: list = field(default_factory=list)

    @property
    def violated(self) -> bool:
        """True only when a violation inside the class was confirmed."""
        return bool(self.violation is not None and self.confirmation and self.confirmation.get("confirmed"))

    def coverage(self) -> str:
        """One line per direction: how far it was followed, its best ratio and its trend."""
        from .scaling import coverage_lines

        return coverage_lines(self.directions)

    def summary(self) -> str:
        """The search in words: evaluations, budget, best ratio, the violation and the coverage."""
        best = (self.best or {}).get("ratio", float("nan"))
        head = (
            f"{self.claim} scaling search: {self.evaluations} evaluations in {self.elapsed:.1f} s (budget "
            f"{self.budget_seconds:.0f} s; {self.outside} outside the class, {self.refused} refused, "
            f"{self.skipped} over budget), groups {', '.join(self.groups)}; best ratio {best:.4g}"
        )
        if self.violation is not None:
            v, cf = self.violation, self.confirmation or {}
            head += (
                f"\n  {'VIOLATED' if self.violated else 'NOT CONFIRMED'} ({cf.get('method', '?')}): "
                f"{v['point']}: measured {v['measured']:.4g} vs bound {v['bound']:.4g} (ratio "
                f"{v['ratio']:.3f}); membership: {self.certificate}"
            )
        for ex in self.outside_examples[:1]:
            head += f"\n  e.g. outside the class: {'; '.join(ex['why'])}"
        return head + "\n  coverage (a finite search):\n    " + self.coverage().replace("\n", "\n    ")

    def to_dict(self) -> dict:
        """JSON-safe form (best point, violation with certificate and confirmation, coverage)."""
        return {
            "claim": self.claim,
            "best": self.best,
            "violation": self.violation,
            "violated": self.violated,
            "certificate": None if self.certificate is None else self.certificate.to_dict(),
            "confirmation": self.confirmation,
            "directions": self.directions,
            "evaluations": self.evaluations,
            "outside": self.outside,
            "outside_examples": self.outside_examples,
            "refused": self.refused,
            "skipped": self.skipped,
            "elapsed": self.elapsed,
            "budget_seconds": self.budget_seconds,
            "class_directions": list(self.class_directions),
            "searched": self.searched,
        }


def _scale_directions(claim: Any, aclass: Any) -> list[str]:
    """The class's open directions the scaling search follows, in ``SCALING_DIRECTIONS`` order."""
    opened = set(aclass.directions())
    full = aclass.arrivals.kind == "full"
    out = []
    for dname in SCALING_DIRECTIONS:
        if dname == "M/m":
            ok = not full and "M" in opened
        elif dname == "M":
            ok = full and "M" in opened
        elif dname == "tau":
            ok = "tau" in opened and aclass.delays.__class__.__name__ != "JobsInFlight"
        elif dname == "K":
            ok = "K" in opened and _rule_local_steps(claim, 2) is None
        else:
            ok = dname in opened
        if ok:
            out.append(dname)
    return out


def _cap(aclass: Any, dname: str, caps: dict) -> float:
    """How far ``dname`` may be followed: the search's cap, or the class's upper bound where tighter."""
    cap = float(caps[dname])
    name = {"M/m": "M", "M": "M"}.get(dname, dname)
    size = aclass.sizes.get(name)
    if size is not None and size.high is not None:
        cap = min(cap, float(size.high))
    return cap


def _steps(claim: Any, p: ScalePoint, vals: dict) -> dict:
    """The point's step sizes: a free step at the largest value the conditions admit (halving from η_L = 1,
    η = 1e5) times 2^(−a) / 2^(−b); a fixed step as the claim states it."""
    import sympy as sp

    from ..strategies import fit_steps

    if claim.eta is None and claim.eta_L is None:
        eta, eta_L = fit_steps(claim, vals, 1e5, 1.0)
        eta_L = eta_L * 2.0**-p.a
        eta = _halve_into(claim, vals, {"eta": eta, "eta_L": eta_L}, "eta") * 2.0**-p.b
        return {"eta": eta, "eta_L": eta_L}
    free = "eta" if claim.eta is None else "eta_L"
    fixed = "eta_L" if free == "eta" else "eta"
    v = getattr(claim, fixed)
    if callable(v) and not isinstance(v, sp.Basic):
        raise ValueError(f"claim {claim.id!r}: {fixed} is a callable schedule; fix both steps or neither")
    steps = {free: 1e5 if free == "eta" else 1.0, fixed: float(claim.evaluate(sp.sympify(v), vals))}
    steps[free] = _halve_into(claim, vals, steps, free) * 2.0 ** -(p.b if free == "eta" else p.a)
    return steps


def _halve_into(claim: Any, vals: dict, steps: dict, free: str) -> float:
    """The free step ``free`` halved until every condition of ``claim`` holds (the other step fixed)."""
    v = steps[free]
    for _ in range(200):
        if all(ok for ok, _ in claim.check_conditions({**vals, **steps, free: v}).values()):
            return v
        v /= 2
    raise ValueError(f"claim {claim.id!r}: no {free} satisfies its conditions at {vals} with {steps}")


def _rule_local_steps(claim: Any, num_workers: int) -> int | None:
    """The local-step count the claim's rule fixes for ``num_workers`` workers (its ``local_view``; AsySG:
    1), or None when the behaviour's K applies."""
    if claim.rule is None:
        return None
    return claim.rule(eta=1.0, eta_L=1.0, **dict(claim.rule_options)).local_view(num_workers).max_steps


def _scale_instance(claim: Any, aclass: Any, p: ScalePoint, seed: int) -> Any:
    """The canonical instance of ``p``: an isotropic quadratic (L = μ = 1, d coordinates, M workers) with the
    group's constant 1, arrivals by the class (full: all M; uniform: m of M uniformly; cyclic or arbitrary:
    round robin), fixed delays τ (or M jobs in flight at speeds 1:2:…), K local steps, the steps of
    ``_steps`` (or the claim's step-size rule)."""
    from ..anarchy import (
        Behaviour,
        ConstantSteps,
        CyclicArrivals,
        EventDriven,
        FixedDelay,
        NoDelay,
        UniformArrivals,
    )
    from ..anarchy.behaviour import ExponentialTime
    from ..claims import problem_values
    from ..problems import HeterogeneousQuadratic
    from ..strategies import Instance

    sL = 1.0 if p.group == "sigma_L" else 0.0
    sG = 1.0 if p.group == "sigma_G" else 0.0
    prob = HeterogeneousQuadratic(dim=p.d, num_workers=p.M, L=1.0, mu=1.0, sigma_L=sL, sigma_G=sG, seed=seed)
    x0 = np.array(prob.constants.x_star, dtype=float)
    if p.group == "transient":
        x0[0] += math.sqrt(2.0)  # Δ = f(x_0) − f* = 1
    m = p.M if aclass.arrivals.kind == "full" else min(p.m, p.M)
    fixed = _rule_local_steps(claim, p.M)
    K = fixed if fixed is not None else p.K
    if aclass.delays.__class__.__name__ == "JobsInFlight":
        beh = EventDriven(m, ExponentialTime(speeds=2.0 ** -np.arange(p.M, dtype=float)), ConstantSteps(K))
        tau = 0
    else:
        arr = (
            UniformArrivals(m)
            if aclass.arrivals.kind in ("full", "uniform") or m == p.M
            else CyclicArrivals(m)
        )
        beh = Behaviour(arr, FixedDelay(p.tau) if p.tau > 0 else NoDelay(), ConstantSteps(K))
        tau = p.tau
    vals = {
        **problem_values(prob, x0),
        "K": float(K),
        "E": float(K),
        "tau": float(tau),
        "m": float(m),
        "M": float(p.M),
        "m'": float(max(p.M - tau * m, 1)),
        "T": float(p.T),
        "d": float(p.d),
    }
    if claim.eta is None or claim.eta_L is None:
        algo = claim.rule(**_steps(claim, p, vals), **dict(claim.rule_options))
    else:
        algo = claim.algorithm(vals, weights=prob.weights)
    return Instance(prob, beh, algo, p.T, m, tau, K, x0)


def _ratio(v: Any, inst: Any) -> float:
    """measured/bound beyond the exact engine's rounding floor (as ``search_claim``); NaN outside the
    claim's conditions."""
    if v.inside_conditions is False:
        return float("nan")
    b, m = float(v.theoretical), float(v.measured)
    c = inst.problem.constants
    spread = c.L**2 * float(np.sum((inst.x0 - c.x_star) ** 2)) + c.sigma_L**2 + c.sigma_G**2
    m_eff = max(m - 1e-12 * (1.0 + spread), 0.0)
    return m_eff / b if b > 0 else (math.inf if m_eff > 0 else 0.0)


def scale_claim(
    claim: Any,
    *,
    budget_seconds: float = 60.0,
    seed: int = 0,
    replicates: int = 1000,
    start: ScalePoint | None = None,
    directions: tuple | None = None,
    caps: dict | None = None,
    groups: tuple | None = None,
    limits: dict | None = None,
    limit_names: dict | None = None,
) -> ClaimScaling:
    """Scaling search on ``claim`` (an ``afltheory.claims.Claim``): from canonical instances (``ScalePoint``,
    one group of bound terms isolated at a time) climb greedily by doubling along the open directions of the
    claim's ``AssumptionClass`` (M/m or M, T, 1/η_L and 1/η for a free step, τ, K, d), every candidate through
    ``membership`` first (outside: counted, never evaluated) and evaluated by ``evaluate`` (exact moments,
    else a deterministic simulation or Monte Carlo); each direction's trend is fit (log–log slope, 95 % CI)
    over three doublings from the best point and, where it crosses 1 within the caps, evaluated there. A
    ratio > 1 inside the class is confirmed: by its exact value (exact moments or a deterministic
    simulation), else by Monte Carlo (``replicates`` runs, 99 % lower confidence bound above the bound).
    ``budget_seconds``: wall-clock budget (each evaluation's cost is projected before it runs). ``caps``:
    {direction: largest size followed}; ``limits``: {field: largest value} over the points' M, T, tau, K, d
    (the box's size options, ``scaling.LIMIT_OPTIONS``): no point beyond them is evaluated and the start is
    lowered into them (``scaling.fit_limits``: a limit below the class's lower bound on that size is refused,
    named by ``limit_names``)."""
    from ..claims import Claim
    from .scaling import _trend, fit_limits, within_limits

    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    if not (
        isinstance(budget_seconds, (int, float)) and math.isfinite(budget_seconds) and budget_seconds > 0
    ):
        raise ValueError(f"budget_seconds={budget_seconds!r} must be a finite number > 0 (seconds)")
    seed = check_int("seed", seed, low=0)
    replicates = check_int("replicates", replicates, low=2)
    aclass = claim.assumption_class.check_searchable()
    dirs = _scale_directions(claim, aclass)
    if directions is not None:
        bad = [d for d in directions if d not in SCALING_DIRECTIONS]
        if bad:
            raise ValueError(f"directions={tuple(directions)!r}: {bad} not in {SCALING_DIRECTIONS}")
        dirs = [d for d in dirs if d in directions]
    caps = {**SCALING_CAPS, **dict(caps or {})}
    limits = dict(limits or {})
    lows = {
        f: aclass.sizes[n].low
        for f, n in (("M", "M"), ("T", "T"), ("tau", "tau"), ("K", "K"), ("d", "d"))
        if aclass.sizes.get(n) is not None and aclass.sizes[n].low is not None
    }
    start = fit_limits(ScalePoint() if start is None else start, limits, limit_names, lows)
    a = claim.assumptions
    avail = [
        g
        for g in _GROUPS
        if not (g == "sigma_L" and a.noise == "none") and not (g == "sigma_G" and a.heterogeneity == "iid")
    ]
    groups = tuple(avail if groups is None else [g for g in groups if g in avail])
    if not groups:
        raise ValueError(f"groups: none of {_GROUPS} is available in the class of {claim.id!r}")
    res = ClaimScaling(
        claim.id, budget_seconds=float(budget_seconds), groups=groups, class_directions=tuple(dirs)
    )
    t0 = time.perf_counter()
    seen: dict = {}
    obs: list = []  # (units, seconds) of every evaluation: the cost model t = c0 + c1 · units

    def units(p: ScalePoint) -> float:
        return p.T * p.K * (p.M * p.d * (p.tau + 1)) ** 2 + 1.0

    def projected(p: ScalePoint) -> float:
        if not obs:
            return 0.0
        c0 = min(t for _, t in obs)  # the per-call overhead
        u1, t1 = max(obs)  # the growth seen at the largest evaluation so far (the regime that matters)
        return c0 + max(t1 - c0, 0.0) / u1 * units(p)

    def left() -> float:
        return budget_seconds - (time.perf_counter() - t0)

    def ev(p: ScalePoint) -> dict | None:
        if p in seen:
            return seen[p]
        if projected(p) > left():
            res.skipped += 1
            return None
        t1 = time.perf_counter()
        inst = _scale_instance(claim, aclass, p, seed)
        cert = aclass.membership(claim, inst, seed=seed)
        out = {"point": dict(p.__dict__), "ratio": float("nan"), "inside": cert.inside, "how": None}
        if not cert.inside:
            res.outside += 1
            if len(res.outside_examples) < 3:
                res.outside_examples.append({"instance": repr(inst), "why": cert.reasons})
        else:
            v, how = evaluate(claim, inst, seed)
            res.evaluations += 1
            if v is None:
                res.refused += 1
            else:
                out.update(
                    ratio=_ratio(v, inst),
                    measured=float(v.measured),
                    bound=float(v.theoretical),
                    terms={k: float(x) for k, x in (v.terms or {}).items()},
                    how=how,
                    inside=cert.inside and v.inside_conditions is not False,
                )
                if out["ratio"] == out["ratio"] and (res.best is None or out["ratio"] > res.best["ratio"]):
                    res.best = out
        out["_inst"], out["_cert"] = inst, cert
        obs.append((units(p), time.perf_counter() - t1))
        seen[p] = out
        res.searched.append(dict(p.__dict__))
        return out

    def r_of(e: dict | None) -> float:
        return -1.0 if e is None or e["ratio"] != e["ratio"] else e["ratio"]

    def violating(e: dict | None) -> bool:
        return e is not None and e["inside"] and r_of(e) > 1.0

    along: dict = {d: [] for d in dirs}
    found = None
    per_group = budget_seconds / len(groups)
    for gi, group in enumerate(groups):
        g_end = (time.perf_counter() - t0) + per_group * (1 if gi < len(groups) - 1 else 10)
        cur = ScalePoint(**{**start.__dict__, "group": group})
        cur_ev = ev(cur)
        if cur_ev is None:
            break
        if violating(cur_ev):
            found = cur_ev
            break
        while time.perf_counter() - t0 < min(g_end, budget_seconds):
            tried = []
            for dname in dirs:
                q = cur.move(dname)
                if q.size(dname) > _cap(aclass, dname, caps) or not within_limits(q, limits):
                    continue
                e = ev(q)
                if e is None:
                    continue
                along[dname].append((q.size(dname), r_of(e)))
                tried.append((r_of(e), dname, q, e))
            if not tried:
                break
            r, dname, q, e = max(tried, key=lambda x: x[0])
            if violating(e):
                found = e
                break
            if r <= r_of(cur_ev) * (1 + 1e-6):
                break  # a local maximum of the doubling moves
            cur, cur_ev = q, e
        if found is not None:
            break
    # per direction: the trend over three doublings from the best point, and the crossing of 1 if it is ahead
    base = (
        ScalePoint(**res.best["point"]) if res.best else ScalePoint(**{**start.__dict__, "group": groups[0]})
    )
    for dname in dirs:
        xs, rs, q = [base.size(dname)], [r_of(seen.get(base))], base
        for _ in range(3):
            q = q.move(dname)
            if q.size(dname) > _cap(aclass, dname, caps) or not within_limits(q, limits):
                break
            e = ev(q)
            if e is None:
                break
            xs.append(q.size(dname))
            rs.append(r_of(e))
            if found is None and violating(e):
                found = e
        pts = [(x, r) for x, r in zip(xs, rs, strict=True) if r > 0]
        sizes = [s for s, _ in along[dname]] + xs
        info = {
            "sizes": xs,
            "ratios": rs,
            "max_size": max(sizes),
            "best": max([r for _, r in along[dname]] + rs),
            "trend": _trend([x for x, _ in pts], [r for _, r in pts]),
        }
        tr = info["trend"]
        if found is None and tr and tr["slope"] > 0 and 0 < rs[-1] < 1:
            k = math.log(1.0 / rs[-1]) / (tr["slope"] * math.log(2.0))  # doublings to ratio 1
            target, cap = q, _cap(aclass, dname, caps)
            for _ in range(max(math.ceil(min(k, 64.0)), 1)):
                target = target.move(dname)
                if target.size(dname) > cap or not within_limits(target, limits):
                    break
            info["crossing"] = {"size": float("inf") if k > 64 else q.size(dname) * 2.0**k, "ratio": None}
            if target.size(dname) <= cap and within_limits(target, limits):
                e = ev(target)
                if e is not None:
                    info["crossing"] = {"size": target.size(dname), "ratio": r_of(e)}
                if violating(e):
                    found = e
        res.directions[dname] = info
    if found is None and violating(res.best):
        found = res.best
    if found is not None:
        inst = found["_inst"]
        res.certificate = found["_cert"]
        if found["how"] in ("exact", "simulated"):  # an exact value: no sampling error to bound
            res.confirmation = {
                "method": "exact moments" if found["how"] == "exact" else "deterministic simulation",
                "measured": found["measured"],
                "bound": found["bound"],
                "confirmed": bool(res.certificate.inside and found["measured"] > found["bound"]),
            }
        else:
            cf = _confirm(claim, inst, replicates, seed)
            cf["method"] = f"Monte Carlo ({cf['replicates']} runs, 99% lower confidence bound)"
            cf["confirmed"] = bool(cf["confirmed"] and res.certificate.inside)
            res.confirmation = cf
        res.violation = {k: v for k, v in found.items() if not k.startswith("_")}
        res.violation["instance"] = repr(inst)
    for e in seen.values():
        e.pop("_inst", None), e.pop("_cert", None)
    if res.best is not None:
        res.best = {k: v for k, v in res.best.items() if not k.startswith("_")}
    res.elapsed = time.perf_counter() - t0
    return res
