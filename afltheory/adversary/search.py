"""Worst-case search inside a claim's assumption class, and Monte Carlo confirmation of any violation.

``search(claim, budget=..., seed=...)`` spends ``budget`` exact evaluations: random restarts (each fixes the
discrete structure — m, arrival law — and explores the continuous box [0, 1]^p) made of a uniform random batch
followed by a batched evolution strategy (elite parents, sparse Gaussian mutation with a shrinking step,
uniform crossover), every generation evaluated as one batch by the exact engine. The result is a
``WorstCase``: the largest measured/bound ratio found (a lower bound on the class's true worst case), the
bound's term shares at that point, the instance as explicit arrays, the search history, and — when the ratio
exceeds 1 — an independent Monte Carlo run of ``afltheory.simulate`` with the theorem's own ``bound`` on the
realized schedules: ``violated`` is True only if the one-sided 99 % lower confidence bound on
mean(LHS − bound) is above 0.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_component, check_int, check_positive
from .claims import THEOREMS, get_claim
from .claims import SearchSpec as Claim
from .instance import Instance
from .space import AssumptionClass, Structure

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "SearchCostWarning",
    "WorstCase",
    "confirm",
    "instance_inside",
    "make_instance",
    "mirrored_lcb",
    "project",
    "search",
]

#: Largest projected peak memory of one evaluated batch a search accepts by default (bytes).
DEFAULT_MAX_MEMORY = 2 * 1024**3


class SearchCostWarning(UserWarning):
    """A search is projected to take long (the projection is in the message)."""


def project(claim: str | Claim, assumptions: AssumptionClass | None = None, *, batch: int = 32) -> dict:
    """The projected peak memory (bytes) of one evaluated batch of ``claim``'s search in ``assumptions``
    (``fastexact.estimate_bytes`` at the largest law the class allows: every round-robin phase, a full
    delay history), and whether the evaluator's diagonal reduction applies. The search refuses a projection
    above its ``max_memory`` before evaluating anything."""
    from . import fastexact
    from .instance import ALGORITHMS

    c = get_claim(claim)
    cls = c.check_class(assumptions if assumptions is not None else c.default_class())
    batch = check_int("batch", batch, low=1)
    alg = ALGORITHMS.get(c.algorithm)
    memory = bool(getattr(alg, "keeps_memory", False))
    periods = cls.num_workers if ("cyclic" in cls.arrivals or c.bounded_staleness) else 1
    if "schedule" in cls.arrivals:
        periods = max(periods, 4)
    if "periodic" in cls.arrivals:  # P ≤ ⌈M/m⌉ + 3 ≤ M + 3
        periods = max(periods, cls.num_workers + 3)
    diagonal = not cls.rotate or cls.dim == 1
    return {
        "bytes": fastexact.estimate_bytes(
            batch,
            cls.dim,
            cls.num_workers,
            cls.max_delay,
            cls.K_max,
            memory=memory,
            periods=periods,
            diagonal=diagonal,
        ),
        "memory_slots": memory,
        "diagonal": diagonal,
        "batch": batch,
    }


@dataclass
class WorstCase:
    """The outcome of ``search``. ``ratio``: worst measured/bound found; ``T``: its horizon; ``measured`` and
    ``bound``: both sides there; ``terms``: the bound's named terms (values) and ``shares`` (fractions of the
    bound);
    ``instance``: explicit arrays; ``history``: (evaluation index, ratio) of every evaluated candidate;
    ``counts``: candidates per status; ``confirmation``: the Monte Carlo check (None when ratio ≤ 1);
    ``violated``: True only if that check confirmed the violation."""

    claim: str
    ratio: float
    T: int
    measured: float
    bound: float
    terms: dict
    shares: dict
    instance: Instance | None
    structure: Structure | None
    evaluations: int
    history: np.ndarray
    counts: dict
    assumptions: AssumptionClass
    seed: int
    elapsed: float
    confirmation: dict | None = None
    violated: bool = False
    notes: list = field(default_factory=list)
    # the point of [0, 1]^p (with ``structure``) that decodes to ``instance``
    instance_u: np.ndarray | None = None

    @property
    def coverage(self) -> str:
        """What the box search covered (its class's sizes): a finite search, never "held" beyond it; the
        directions it did not follow are the scaling search's (``adversary.scaling``)."""
        a = self.assumptions
        m = "1..M" if a.m is None else str(a.m)
        return (
            f"searched d = {a.dim}, M = {a.num_workers}, m = {m}, delays ≤ {a.max_delay}, K ≤ {a.K_max}, "
            f"T ≤ {a.rounds}, arrivals {'/'.join(a.arrivals)}, η_L over {a.eta_L_decades:g} decades; "
            "M/m, T, 1/η, τ, K beyond these: the scaling search"
        )

    @property
    def best_so_far(self) -> np.ndarray:
        """The running maximum of the evaluated ratios (the search's progress curve)."""
        r = np.where(np.isnan(self.history[:, 1]), -np.inf, self.history[:, 1])
        return np.maximum.accumulate(r)

    @property
    def evals_per_second(self) -> float:
        """Exact evaluations per second of search time."""
        return self.evaluations / self.elapsed if self.elapsed > 0 else float("inf")

    def to_dict(self) -> dict:
        """A JSON-safe dict of the result (infinite ratios as strings "inf"/"-inf"; no value (null) where
        nothing was measured, never NaN)."""

        def num(v):
            v = float(v)
            return v if np.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else None)

        best = self.best_so_far
        marks = sorted(set(np.unique(np.geomspace(1, len(best), num=min(len(best), 60)).astype(int) - 1)))
        return {
            "claim": self.claim,
            "worst_ratio": num(self.ratio),
            "violated": bool(self.violated),
            "T": int(self.T),
            "measured": num(self.measured),
            "bound": num(self.bound),
            "terms": {k: num(v) for k, v in self.shares.items()},
            "term_values": {k: num(v) for k, v in self.terms.items()},
            "evaluations": int(self.evaluations),
            "evals_per_second": num(self.evals_per_second),
            "counts": self.counts,
            "seed": self.seed,
            "elapsed_s": round(self.elapsed, 3),
            "inside_conditions": True if self.instance is not None else None,
            "structure": None
            if self.structure is None
            else {"m": self.structure.m, "arrivals": self.structure.arrivals, **self.structure.extra},
            "assumptions": self.assumptions.to_dict(),
            "confirmation": self.confirmation,
            "history": {
                "evaluation": [int(i + 1) for i in marks],
                "best_ratio": [num(best[i]) for i in marks],
            },
            "notes": list(self.notes),
            "coverage": self.coverage,
            "instance": None if self.instance is None else self.instance.to_dict(),
        }

    def summary(self) -> str:
        """One line: the worst ratio, its horizon and whether it violates the bound."""
        if not np.isfinite(self.ratio):
            why = "; ".join(self.notes) or "no candidate could be evaluated"
            counts = ", ".join(f"{k}: {n}" for k, n in sorted(self.counts.items()))
            return (
                f"{self.claim}: no worst ratio — {why} ({counts}; {self.evaluations} evaluations); "
                "nothing was measured, so nothing is claimed"
            )
        top = max(self.shares, key=self.shares.get) if self.shares else "-"
        v = (
            "VIOLATED (Monte Carlo confirmed)"
            if self.violated
            else "ratio > 1 NOT confirmed by Monte Carlo"
            if self.ratio > 1
            else "within the bound"
        )
        return (
            f"{self.claim}: worst ratio {self.ratio:.4g} at T={self.T} ({v}); {self.evaluations} exact "
            f"evaluations in {self.elapsed:.1f} s ({self.evals_per_second:.0f}/s); dominant term {top} "
            f"({self.shares.get(top, float('nan')):.0%}); shares "
            + ", ".join(f"{k} {s:.1%}" for k, s in self.shares.items())
            + f"\n  coverage: {self.coverage}"
        )


def make_instance(claim: Claim, cls: AssumptionClass, st: Structure, u: np.ndarray, T: int) -> Instance:
    """The candidate ``u`` of structure ``st`` as explicit arrays."""
    claim = get_claim(claim)
    check_component("cls", cls, AssumptionClass, "an afltheory.adversary AssumptionClass")
    check_component("st", st, Structure, "an afltheory.adversary Structure")
    if hasattr(claim, "make_instance"):
        return claim.make_instance(cls, st, u, T)
    dec = claim.decode(cls, st, u[None])
    M, m = cls.num_workers, st.m
    if st.arrivals == "uniform" or m == M:
        arr = {"kind": "uniform", "m": m}
    elif st.arrivals == "biased":
        arr = {"kind": "biased", "m": m, "probs": dec.arrival_params[0].tolist()}
    elif st.arrivals == "cyclic":
        arr = {"kind": "cyclic", "m": m}
    elif st.arrivals == "periodic":
        arr = {"kind": "periodic", "m": m, "workers": dec.arrival_params[0].tolist()}
    elif st.arrivals == "schedule":
        arr = {
            "kind": "schedule",
            "m": m,
            "workers": dec.arrival_params[0].tolist(),
            "delays": dec.delay_pmf[0].argmax(axis=1).tolist(),
            "local_steps": (dec.k_pmf[0, :, 0].argmax(axis=1) + 1).tolist(),
        }
    else:
        arr = {"kind": "fixed", "m": m, "workers": dec.arrival_params[0].tolist()}
    dp, kp = dec.delay_pmf[0], dec.k_pmf[0]
    if st.arrivals == "schedule":  # the schedule lives in ``arrivals``; the pmfs only carry τ and K_max
        dp = np.zeros(cls.max_delay + 1)
        dp[int(dec.tau[0])] = 1.0
        kp = np.zeros((M, cls.K_max))
        kp[:, int(dec.K_max[0]) - 1] = 1.0
    return Instance(
        claim=claim.id,
        algorithm_name=claim.algorithm,
        hessians=dec.H[0],
        centers=dec.C[0],
        noise_cov=dec.covs[0],
        x0=dec.x0[0],
        eta=float(dec.eta[0]),
        eta_L=float(dec.eta_L[0]),
        arrivals=arr,
        delay_pmf=dp,
        k_pmf=kp,
        rounds=int(T),
        radius=None if cls.hessian == "shared" else float(dec.radius[0]),
    )


def _mutate(rng, parents, sigma, pm=0.15, snap=0.02):
    """Sparse Gaussian mutation (each coordinate with probability max(1/p, pm), at least one), and with
    probability ``snap`` per coordinate a jump to a face of the box (worst cases often sit on its
    boundary)."""
    n, p = parents.shape
    mask = rng.random((n, p)) < max(1.0 / p, pm)
    mask[np.arange(n), rng.integers(0, p, n)] = True
    child = parents + mask * rng.normal(0.0, sigma, (n, p))
    faces = rng.random((n, p)) < snap
    child = np.where(faces, rng.integers(0, 2, (n, p)).astype(float), child)
    return np.clip(child, 0.0, 1.0)


def _initial(rng, n, p):
    """Uniform points, half of them with each coordinate pushed to a face (0 or 1) with probability 1/2."""
    U = rng.random((n, p))
    half = np.arange(n) % 2 == 1
    push = (rng.random((n, p)) < 0.5) & half[:, None]
    return np.where(push, rng.integers(0, 2, (n, p)).astype(float), U)


def _annealed(left: int, batch: int, sigma0: float, ratio: float) -> Iterator[float]:
    """The mutation scale of each generation spending ``left`` evaluations in batches of ``batch``:
    geometric from ``sigma0`` down to ``sigma0 · ratio`` at the last generation."""
    n_gen = max(1, -(-left // batch))
    for g in range(n_gen):
        yield sigma0 * (ratio ** (g / max(1, n_gen - 1)))


def search(
    claim: str | Claim,
    *,
    budget: int = 2000,
    seed: int = 0,
    assumptions: AssumptionClass | None = None,
    batch: int = 32,
    restarts: int | None = None,
    confirm_violation: bool = True,
    replicates: int = 1000,
    progress: Callable[[int, float], None] | None = None,
    max_memory: float = DEFAULT_MAX_MEMORY,
    warn_seconds: float = 1800.0,
    max_seconds: float | None = None,
    journal: str | os.PathLike | None = None,
) -> WorstCase:
    """Search ``claim``'s assumption class (``assumptions``, default the claim's own) for the largest
    measured/bound ratio with ``budget`` exact evaluations; confirm a ratio > 1 by Monte Carlo
    (``replicates`` runs). ``progress(evaluations, best_ratio)`` is called after every batch if given.

    Cost: the peak memory of one batch is projected before anything runs (``project``) and a projection
    above ``max_memory`` bytes is refused (ValueError with the numbers: lower ``batch`` or the class's dim);
    the time of the whole search is projected from the first batch and a projection above ``warn_seconds``
    issues a ``SearchCostWarning``, one above ``max_seconds`` (None: no limit) raises ValueError before the
    rest runs. ``UnsupportedRule`` if the evaluator cannot represent the claim's rule (e.g. a mutant
    overriding ``aggregate``).

    ``journal``: a JSON-lines file recording every evaluated batch as it completes
    (``adversary.journal.SearchJournal``); rerunning the same search (same claim, class, seed, budget, batch,
    restarts) with the same journal replays it, reading the recorded batches instead of evaluating them, so an
    interrupted search resumes where it stopped and ends with the same result (``notes`` say how many
    evaluations were reused). A journal of another search is refused (ValueError)."""
    c = get_claim(claim)
    budget = check_int("budget", budget, low=1)
    seed = check_int("seed", seed, low=0)
    batch = check_int("batch", batch, low=1)
    max_memory = check_positive("max_memory", max_memory)
    warn_seconds = check_positive("warn_seconds", warn_seconds)
    if max_seconds is not None:
        max_seconds = check_positive("max_seconds", max_seconds)
    cls = c.check_class(assumptions if assumptions is not None else c.default_class())
    cost = project(c, cls, batch=batch) if c.theorem in THEOREMS else None
    if cost is not None and cost["bytes"] > max_memory:
        raise ValueError(
            f"max_memory={max_memory:.4g} bytes: one batch of {batch} candidates of {c.id} in this "
            f"class (dim={cls.dim}, num_workers={cls.num_workers}, max_delay={cls.max_delay}, "
            f"K_max={cls.K_max}{', memory slots' if cost['memory_slots'] else ''}"
            f"{'' if cost['diagonal'] else ', dense Hessians'}) is projected to need "
            f"{cost['bytes'] / 1024**2:.1f} MiB; lower batch or dim, or raise max_memory"
        )
    n_restarts = max(1, min(8, budget // 250)) if restarts is None else check_int("restarts", restarts, low=1)
    jr = None
    if journal is not None:
        from .journal import SearchJournal

        jr = SearchJournal(
            journal,
            dict(
                search="adversary",
                claim=c.id,
                assumptions=repr(cls),
                seed=seed,
                budget=budget,
                batch=batch,
                restarts=n_restarts,
            ),
        )
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xAD7]))
    t0 = time.perf_counter()
    hist_r: list[np.ndarray] = []
    counts: dict[str, int] = {}
    best = dict(ratio=-np.inf, u=None, st=None, T=0, measured=np.nan, bound=np.nan, terms={})
    used = 0

    first: list[float] = []

    batches = [0]

    def run(st, U):
        nonlocal used
        k = batches[0]
        batches[0] += 1
        ev = None
        if jr is not None:
            from .journal import digest

            key = digest(repr(st), np.asarray(U, dtype=float))
            rec = jr.get(k, key)
            ev = None if rec is None else _evaluation_from(rec)
        if ev is None:
            tick = time.perf_counter()
            ev = c.evaluate(cls, st, U)
            if not first:
                first.append(time.perf_counter() - tick)
                _check_time(first[0] * (budget - used) / len(U), c.id, budget, warn_seconds, max_seconds)
            if jr is not None:
                jr.record(k, key, _evaluation_to(ev))
        used += len(U)
        hist_r.append(np.asarray(ev.ratio, dtype=float))
        for s in ev.status:
            key = "error" if s.startswith("error") else s
            counts[key] = counts.get(key, 0) + 1
        r = np.where(np.isnan(ev.ratio), -np.inf, ev.ratio)
        j = int(np.argmax(r))
        if r[j] > best["ratio"]:
            best.update(
                ratio=float(r[j]),
                u=U[j].copy(),
                st=st,
                T=int(ev.T[j]),
                measured=float(ev.measured[j]),
                bound=float(ev.bound[j]),
                terms={k: float(v[j]) for k, v in ev.terms.items()},
            )
        if progress is not None:
            progress(used, best["ratio"])
        return r

    polish = budget // 5 if budget >= 100 else 0
    for k in range(n_restarts):
        share = (budget - polish - used) // (n_restarts - k)
        if share <= 0:
            continue
        st = c.structures(cls, rng)
        p = c.num_params(cls, st)
        n0 = max(1, min(share // 4, 2 * batch)) if share > 8 else share
        pop, fit = [], []
        done = 0
        while done < n0:
            U = _initial(rng, min(batch, n0 - done), p)
            pop.append(U)
            fit.append(run(st, U))
            done += len(U)
        P, F = np.concatenate(pop), np.concatenate(fit)
        for sigma in _annealed(share - done, batch, 0.25, 0.04):
            lam = min(batch, share - done)
            if lam <= 0:
                break
            order = np.argsort(-F)
            elite = P[order[: max(2, min(8, len(P) // 4))]]
            parents = elite[rng.integers(0, len(elite), lam)]
            cross = rng.random(lam) < 0.3
            if cross.any():
                mates = elite[rng.integers(0, len(elite), int(cross.sum()))]
                pick = rng.random(mates.shape) < 0.5
                parents[cross] = np.where(pick, mates, parents[cross])
            U = _mutate(rng, parents, sigma)
            r = run(st, U)
            P, F = np.concatenate([P, U]), np.concatenate([F, r])
            done += lam
    if best["u"] is not None and budget - used > 0:  # local polish around the best point found
        st, u0 = best["st"], best["u"]
        for sigma in _annealed(budget - used, batch, 0.05, 0.02):
            lam = min(batch, budget - used)
            if lam <= 0:
                break
            run(st, _mutate(rng, np.repeat(best["u"][None], lam, axis=0), sigma, pm=0.05, snap=0.0))
        del u0
    elapsed = time.perf_counter() - t0
    ratios = np.concatenate(hist_r) if hist_r else np.zeros(0)
    history = np.column_stack([np.arange(1, len(ratios) + 1), ratios])
    notes = []
    if jr is not None:
        notes.append(
            f"journal {jr.path}: {jr.reused} batch(es) read from it (resumed), {jr.recorded} evaluated and "
            f"recorded"
        )
    if cost is not None:
        notes.append(
            f"projected peak memory per batch {cost['bytes'] / 1024**2:.1f} MiB; first batch "
            f"{first[0] if first else float('nan'):.3g} s"
        )

    def worst_case(ratio, T, measured, bound, terms, shares, inst, st, **more):
        """The search's record at its worst point (the run's counts, history and timing are common)."""
        return WorstCase(
            c.id,
            ratio,
            T,
            measured,
            bound,
            terms,
            shares,
            inst,
            st,
            used,
            history,
            counts,
            cls,
            seed,
            elapsed,
            **more,
        )

    if best["u"] is None:
        nan = float("nan")
        notes.append("no candidate could be evaluated inside the conditions")
        return worst_case(nan, 0, nan, nan, {}, {}, None, None, notes=notes)
    inst = make_instance(c, cls, best["st"], best["u"], best["T"])
    total = sum(best["terms"].values())
    shares = {k: (v / total if total > 0 else float("nan")) for k, v in best["terms"].items()}
    wc = worst_case(
        best["ratio"],
        best["T"],
        best["measured"],
        best["bound"],
        best["terms"],
        shares,
        inst,
        best["st"],
        notes=notes,
        instance_u=best["u"],
    )
    if counts.get("diverged"):
        notes.append(
            f"{counts['diverged']} candidate(s) diverged inside the conditions (a finding if confirmed)"
        )
    if counts.get("error"):
        notes.append(f"{counts['error']} candidate(s) could not be evaluated (recorded, skipped)")
    if confirm_violation and best["ratio"] > 1 and c.theorem not in THEOREMS:
        notes.append(
            f"ratio > 1 for {c.id}: no Monte Carlo confirmation path for this claim (not called a violation)"
        )
    elif confirm_violation and best["ratio"] > 1:
        wc.confirmation = confirm(c, inst, seed=seed, replicates=replicates)
        wc.confirmation["search_lhs"] = best["measured"]
        wc.violated = bool(wc.confirmation["confirmed"])
    return wc


def _evaluation_to(ev) -> dict:
    """An ``Evaluation`` as a JSON-able dict for the journal (floats exact; NaN/inf encoded)."""
    return dict(
        ratio=ev.ratio,
        T=np.asarray(ev.T).astype(int),
        measured=ev.measured,
        bound=ev.bound,
        terms={k: np.asarray(v, dtype=float) for k, v in ev.terms.items()},
        status=list(ev.status),
    )


def _evaluation_from(d: dict):
    """The inverse of ``_evaluation_to``."""
    from .claims import Evaluation
    from .journal import decode_floats

    return Evaluation(
        decode_floats(d["ratio"]),
        np.asarray(d["T"], dtype=int),
        decode_floats(d["measured"]),
        decode_floats(d["bound"]),
        {k: decode_floats(v) for k, v in d["terms"].items()},
        list(d["status"]),
    )


def _check_time(
    projected: float, cid: str, budget: int, warn_seconds: float, max_seconds: float | None
) -> None:
    msg = (
        f"adversary search of {cid}: the first batch projects {projected:.3g} s for budget={budget} "
        f"evaluations"
    )
    if max_seconds is not None and projected > max_seconds:
        raise ValueError(msg + f" — refused: above max_seconds={max_seconds:g} (lower budget)")
    if projected > warn_seconds:
        warnings.warn(msg, SearchCostWarning, stacklevel=4)


def mirrored_lcb(mean: float, ucb: float) -> float:
    """The one-sided lower confidence bound of a mean, 2·mean − UCB, from its one-sided upper confidence bound
    ``ucb`` (``analysis.upper_confidence_bound``: mean + t_{level, R−1}·sd/√R, so this is
    mean − t_{level, R−1}·sd/√R); inf when ``ucb`` is not finite (a replicate diverged). The one lower bound
    both confirmations — the box search's ``confirm`` and ``adversary.generic``'s — decide a violation on,
    derived from the one upper bound every Monte Carlo verdict uses (so a statistics fault in that bound, e.g.
    the mutant ``stats.ucb_is_mean``, reaches both)."""
    mean, ucb = float(mean), float(ucb)
    if not np.isfinite(ucb):
        return float("inf")
    if not np.isfinite(mean):
        raise ValueError(f"mean={mean!r} must be finite when ucb={ucb!r} is")
    return 2.0 * mean - ucb


def confirm(
    claim: str | Claim, instance: Instance, *, seed: int = 0, replicates: int = 1000, level: float = 0.99
) -> dict:
    """Independent check of a violation: ``afltheory.simulate`` (Monte Carlo, ``replicates`` runs) with the
    theorem's ``bound`` on each realized schedule (τ = the law's largest delay); confirmed iff the instance is
    inside the claim's conditions (``instance_inside``) and the one-sided ``level`` lower confidence bound
    (Student t, ``mirrored_lcb`` of ``analysis.upper_confidence_bound``) on mean(LHS − bound) is > 0
    (``violation_detected``: the bound alone; ``why``: the reason). Also re-evaluates the left side with the
    general exact engine ``afltheory.exact.moments`` (a second implementation of the recursion)."""
    from .. import simulate
    from ..analysis import upper_confidence_bound
    from ..exact import ExactUnavailable, moments

    c = get_claim(claim)
    check_component(
        "instance",
        instance,
        Instance,
        "an afltheory.adversary Instance (WorstCase.instance, load_instance(path))",
    )
    replicates = check_int("replicates", replicates, low=2)
    inside, why = instance_inside(c, instance)
    prob, algo, beh = instance.problem(), instance.algorithm(), instance.behaviour()
    T, M = instance.rounds, instance.num_workers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = simulate(prob, algo, beh, rounds=T, replicates=replicates, seed=seed + 1, x0=instance.x0)
    lhs = tr.time_average(T)
    f0 = float(prob.value(instance.x0))
    tau = c.theorem_tau(instance)
    b = c.module.bound(
        tr.schedule, prob.constants, eta=instance.eta, eta_L=instance.eta_L, f0=f0, num_workers=M, tau=tau
    )
    diff = lhs - b
    n_div = int(np.sum(~np.isfinite(lhs)))
    if n_div:
        lcb, mean = float("inf"), float("inf")
    else:
        mean = float(diff.mean())
        lcb = mirrored_lcb(mean, upper_confidence_bound(diff, level))
    try:
        ex = moments(prob, algo, beh, T, x0=instance.x0).time_average(T)
    except ExactUnavailable:  # e.g. cyclic arrivals: the general engine needs i.i.d. rounds
        ex = None
    return {
        "method": f"monte-carlo simulate (R={replicates}, seed={seed + 1}) vs {c.theorem}.bound on the "
        f"realized schedules, tau={tau}",
        "replicates": replicates,
        "level": level,
        "lhs_mean": float(np.mean(lhs)),
        "bound_mean": float(b.mean()),
        "ratio_of_means": float(np.mean(lhs) / b.mean()) if b.mean() > 0 else float("inf"),
        "diff_mean": mean,
        "diff_lcb": lcb,
        "diverged_replicates": n_div,
        "violation_detected": bool(lcb > 0),
        "inside_conditions": inside,
        "confirmed": bool(lcb > 0) and inside is True,
        "why": (
            why
            if inside is not True
            else "the lower confidence bound on mean(LHS − bound) is above 0"
            if lcb > 0
            else "the lower confidence bound on mean(LHS − bound) is not above 0"
        ),
        "exact_engine_lhs": None if ex is None else float(ex),
    }


def instance_inside(claim: str | Claim, instance: Instance) -> tuple[bool | None, str]:
    """(inside, why): does ``instance`` satisfy ``claim``'s conditions (the theorem's numeric conditions at
    the instance's L, η, η_L, K_max, τ, M)? ``inside`` is None when they cannot be checked (a claim without
    numeric conditions); ``why`` says what failed. ``confirm`` calls a violation confirmed only inside."""
    c = get_claim(claim)
    check_component("instance", instance, Instance, "an afltheory.adversary Instance")
    try:
        L = float(instance.problem().constants.L)
        M, kmax = instance.num_workers, np.array([instance.K_max])
        # the theorem's τ (with a memory slot's round-robin/periodic age for m < M); m' from the delays alone
        tau, tau_delay = np.array([c.theorem_tau(instance)]), np.array([instance.tau])
        v = c._values(
            np.array([L]),
            np.array([float(instance.eta_L)]),
            kmax,
            tau,
            M,
            c.m_fresh(M, tau_delay, instance.m),
            np.array([float(instance.eta)]),
        )
        ok = bool(np.all(c.holds(v)))
    except Exception as exc:  # noqa: BLE001 - a claim without numeric conditions: say so, never confirm
        return None, (
            f"{c.id}'s conditions could not be checked on this instance ({type(exc).__name__}: {exc})"
        )
    if ok:
        return True, f"inside {c.id}'s conditions"
    return False, (
        f"outside {c.id}'s conditions (L={L:.4g}, eta={instance.eta:.4g}, "
        f"eta_L={instance.eta_L:.4g}, K_max={instance.K_max}, tau={int(tau[0])}, M={M}): a bound "
        "exceeded there is no violation of the claim"
    )
