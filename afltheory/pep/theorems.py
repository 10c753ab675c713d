"""Theorems 2–4 at σ_L = 0, bracketed from both sides: [lower bound, PEP upper bound] vs the theorem's bound.

For a small configuration (M, m, K, T, τ, σ_G, Δ, L) *inside the theorem's conditions*, :func:`bracket` picks
the step sizes (η_L = 0.9 × the largest η_L the η-free conditions allow, η = the largest admissible η from
``theoremN.admissible_step_sizes``), builds a schedule (or takes one, or searches the worst one), and returns
  - ``upper``: the PEP worst case of (1/T) Σ_{t<T} ‖∇f(x_t)‖² over every L-smooth f_1..f_M with σ_G and Δ on
    that schedule (certified upper bound; see ``afltheory.pep.core``),
  - ``lower``: the best concrete certified instance found (``afltheory.pep.lower``; a lower bound on the same
    worst case),
  - ``bound``: the theorem's right-hand side on that schedule (``theoremN.bound``, σ_L = 0, f_0 − f_* = Δ) and
    its named terms (``bound_terms``); ``control``: the bound without its "transient" term.
The theorem is certified on the schedule when ``upper ≤ bound``; it is refuted only if ``lower > bound``.
Theorem 3's statement is an expectation over uniform arrival sets: certifying it on every sampled schedule is
a stronger (sufficient) statement, a failure on one schedule is not a refutation.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_int, check_nonnegative, check_positive

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule

__all__ = ["CLAIMS", "Bracket", "bracket", "default_schedule", "step_sizes"]

CLAIMS = {"thm2": ("theorem2", "AFACD"), "thm3": ("theorem3", "AFACD"), "thm4": ("theorem4", "AFACS")}
#: Largest m, M, K, T, tau accepted (checked before any allocation; the PEP's own limit is ``max_gram``).
MAX_SIZE = 10_000
#: Range of sigma_G (or 0), delta and L: their squares must stay finite in the PEP and the bound.
VALUE_RANGE = (1e-100, 1e100)
#: Admissible range of gamma·L for an explicit server step ``gamma``: outside it the bound is inf or 0.
GAMMA_L_RANGE = (1e-12, 1e3)


@dataclass(frozen=True)
class Bracket:
    claim: str
    config: dict
    eta: float
    eta_L: float
    inside_conditions: bool
    scope_problems: tuple
    upper: float | None
    status: str
    certified: bool
    pep_primal: float
    lower: float
    lower_method: str
    bound: float
    terms: dict
    control: float
    seconds: float
    gram_size: int
    search: str = "given schedule"
    schedule: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool | None:
        """PEP certifies the theorem on this schedule (None when the solve is not certified)."""
        return None if self.upper is None else self.upper <= self.bound

    @property
    def control_exceeded(self) -> bool | None:
        """True when the certified upper bound exceeds the control (the bound without its "transient" term);
        None without a certified upper bound."""
        return None if self.upper is None else self.upper > self.control

    def to_json(self) -> dict:
        """A JSON-safe dict of the bracket."""
        d = asdict(self)
        d.update(pep_upper=self.upper, theorem_bound=self.bound, holds=self.holds,
                 control_exceeded=self.control_exceeded, ratio_upper_to_bound=(
                     None if self.upper is None else self.upper / self.bound),
                 ratio_lower_to_bound=self.lower / self.bound)
        return d


def step_sizes(claim: str, *, L: float, K: int, tau: int, M: int, m_fresh: int | None = None,
               fraction: float = 0.9) -> tuple[float, float]:
    """(η, η_L) inside the theorem's conditions: η_L = ``fraction`` × the largest η_L allowed by the η-free
    conditions, η = the largest admissible η for that η_L (on the boundary of the η-condition, which
    holds)."""
    from ..theory import theorem2, theorem3, theorem4

    c1 = 1.0 / math.sqrt(6 * (2 * K**2 - 3 * K + 1)) / L if K > 1 else math.inf
    if claim == "thm2":
        c2 = 1.0 / math.sqrt(180 * K**2 * tau) / L if tau > 0 else math.inf
    elif claim == "thm3":
        c2 = 1.0 / math.sqrt(120 * K**2 * tau) / L if tau > 0 else math.inf
    else:
        c2 = math.sqrt(0.25 / (30 * tau * K**2)) / L if tau > 0 else math.inf
    eta_L = fraction * min(c1, c2)
    if not math.isfinite(eta_L):
        eta_L = 0.5 / L      # K = 1 and τ = 0: no local or delay condition; any η_L with η η_L fixed by η
    if claim == "thm2":
        adm = theorem2.admissible_step_sizes(L=L, eta_L=eta_L, K_max=K, tau=tau)
    elif claim == "thm3":
        adm = theorem3.admissible_step_sizes(L=L, eta_L=eta_L, K_max=K, tau=tau, num_workers=M)
    else:
        adm = theorem4.admissible_step_sizes(L=L, eta_L=eta_L, K_max=K, tau=tau, num_workers=M,
                                             m_fresh=m_fresh)
    return adm.require(), eta_L


def default_schedule(claim: str, *, M: int, m: int, K: int, T: int, tau: int, seed: int = 0) -> Schedule:
    """Thm 2/4: cyclic arrival sets {t, …, t + m − 1} mod M; Thm 3: uniform m-subsets (seeded). Every delay is
    the largest allowed, min(t, τ); K local steps everywhere (warm-start K too)."""
    from ..anarchy import Schedule

    if claim == "thm3":
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x9E9]))
        W = np.array([np.sort(rng.choice(M, m, replace=False)) for _ in range(T)])
    else:
        W = np.array([[(t * m + j) % M for j in range(m)] for t in range(T)])
    D = np.array([[min(t, tau)] * m for t in range(T)])
    return Schedule(W, D, np.full((T, m), K), M, init_local_steps=np.full(M, K))


def bracket(claim: str, *, m: int, K: int, T: int, tau: int, M: int | None = None, sigma_G: float = 0.1,
            delta: float = 1.0, L: float = 1.0, schedule: Schedule | None = None, search: str | None = None,
            beam: int = 2, heterogeneity: str = "server", lower_grid: int = 7, max_gram: int | None = None,
            seed: int = 0, gamma: float | None = None) -> Bracket:
    """The bracket for ``claim`` ("thm2", "thm3", "thm4") at this size (see the module docstring).

    ``M`` defaults to m + 1 (partial participation). ``search``: None (the default or given schedule),
    "beam"/"exhaustive" via ``worst_schedule`` (delays ≤ τ, every m-subset; max over schedules).
    ``gamma``: override the server step η η_L (η = gamma/η_L) — exploratory; the result says whether the
    configuration is still inside the conditions.
    """
    from ..problems.base import Constants
    from ..theory import theorem2, theorem3, theorem4
    from ..theory._scope import check_scope
    from .core import MAX_GRAM, worst_case
    from .lower import quadratic_lower_bound

    if claim not in CLAIMS:
        raise ValueError(f"claim={claim!r} must be one of {sorted(CLAIMS)}")
    # sizes bounded before anything is allocated (the Gram limit max_gram is checked later, per schedule)
    m = check_int("m", m, low=1, high=MAX_SIZE)
    M = m + 1 if M is None else check_int("M", M, low=m, high=MAX_SIZE)
    K, T = check_int("K", K, low=1, high=MAX_SIZE), check_int("T", T, low=1, high=MAX_SIZE)
    tau = check_int("tau", tau, low=0, high=MAX_SIZE)
    sigma_G, delta = check_nonnegative("sigma_G", sigma_G), check_positive("delta", delta)
    L = check_positive("L", L)
    lo, hi = VALUE_RANGE   # squared inside the SDP and the bound: keep them representable
    for name, v in (("sigma_G", sigma_G), ("delta", delta), ("L", L)):
        if v > hi or (0 < v < lo) or (v == 0 and name != "sigma_G"):
            raise ValueError(f"{name}={v!r} is outside the allowed range [{lo:g}, {hi:g}]"
                             + (" (or 0)" if name == "sigma_G" else ""))
    thm = {"thm2": theorem2, "thm3": theorem3, "thm4": theorem4}[claim]
    consts = Constants(L=L, mu=-L, sigma_L=0.0, sigma_G=sigma_G, f_star=0.0, x_star=None)
    sched = default_schedule(claim, M=M, m=m, K=K, T=T, tau=tau, seed=seed) if schedule is None else schedule
    t0 = time.perf_counter()
    if claim == "thm4":
        stale, _ = sched.memory()
        tau_eff = int(stale.max())
        m_fresh = int((stale == 0).sum(axis=-1).min())
    else:
        tau_eff, m_fresh = tau, None
    eta, eta_L = step_sizes(claim, L=L, K=K, tau=tau_eff, M=M, m_fresh=m_fresh)
    if gamma is not None:
        gamma = check_positive("gamma", gamma)
        if not GAMMA_L_RANGE[0] <= gamma * L <= GAMMA_L_RANGE[1]:
            raise ValueError(f"gamma={gamma!r} is a degenerate server step: gamma·L = {gamma * L:.3g} must "
                             f"lie in [{GAMMA_L_RANGE[0]:g}, {GAMMA_L_RANGE[1]:g}] (the bound's transient "
                             "term divides by it)")
        eta = gamma / eta_L
    from ..algorithms import AFACD, AFACS
    algo = (AFACS if CLAIMS[claim][1] == "AFACS" else AFACD)(eta=eta, eta_L=eta_L)
    kw = dict(max_gram=max_gram or MAX_GRAM)
    how = "given schedule" if schedule is not None else "default schedule (max delays)"
    if search:
        from .search import worst_schedule
        res = worst_schedule(algo, consts, num_workers=M, m=m, K=K, T=T, tau=tau, delta=delta,
                             heterogeneity=heterogeneity, beam=beam,
                             max_solves=10**9 if search == "exhaustive" else 64, **kw)
        pep, sched = res.best, res.schedule
        how = f"worst schedule, {res.method} over {res.count} schedules ({res.solves} solves" \
              f"{', ' + str(res.uncertified) + ' uncertified' if res.uncertified else ''})"
    else:
        pep = worst_case(algo, sched, consts, delta=delta, heterogeneity=heterogeneity, **kw)
    lb = quadratic_lower_bound(algo, sched, L=L, sigma_G=sigma_G, delta=delta, grid=lower_grid)
    with warnings.catch_warnings():      # the problems are returned and reported, not warned about
        warnings.simplefilter("ignore")
        problems = tuple(check_scope(thm.__name__.rsplit(".", 1)[-1], sched, consts, eta=eta, eta_L=eta_L))
    terms = {k: float(v[0]) for k, v in thm.bound_terms(sched, consts, eta=eta, eta_L=eta_L, f0=delta,
                                                       scope="ignore").items()}
    bound = float(sum(terms.values()))
    control = bound - terms.get("transient", 0.0)
    bad = {k: v for k, v in dict(bound=bound, control=control, lower=lb.value, **terms).items()
           if not math.isfinite(v)}
    if bad or (pep.upper is not None and not math.isfinite(pep.upper)):
        raise ValueError(f"the bracket of {claim} is not finite at this configuration ({bad or pep.upper}; "
                         f"eta={eta:.4g}, eta_L={eta_L:.4g}): degenerate step sizes or constants; nothing is "
                         "certified")
    return Bracket(claim, dict(M=M, m=m, K=K, T=T, tau=tau, sigma_G=sigma_G, delta=delta, L=L,
                               gamma=eta * eta_L,
                               heterogeneity=heterogeneity, tau_memory=tau_eff if claim == "thm4" else None),
                   eta, eta_L, not problems, problems, pep.upper, pep.status, pep.certified, pep.primal,
                   lb.value,
                   lb.method, bound, terms, control, time.perf_counter() - t0, pep.gram_size, how,
                   dict(workers=sched.workers[0].tolist(), delays=sched.delays[0].tolist(),
                        K=sched.local_steps[0].tolist()))
