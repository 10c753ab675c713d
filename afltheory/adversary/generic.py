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
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import check_int

__all__ = ["GenericWorstCase", "deterministic", "search_claim"]


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
    max_dim: int = 3,
    max_workers: int = 5,
    max_delay: int = 2,
    max_K: int = 3,
    max_rounds: int = 60,
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
    v = _verify(claim, inst, "mc", replicates, seed + 1)
    # the one-sided 99 % t-UCB is mean + t·sd/√R, so the matching lower bound is 2·mean − UCB
    ucb = v.ci[1] if v.ci is not None else v.measured
    lcb = 2.0 * float(v.measured) - float(ucb) if math.isfinite(ucb) else math.inf
    inside = v.inside_conditions is not False
    return {
        "replicates": replicates,
        "measured_mean": float(v.measured),
        "bound": float(v.theoretical),
        "measured_lcb99": lcb,
        "inside_conditions": inside,
        "confirmed": bool(inside and lcb > v.theoretical),
    }
