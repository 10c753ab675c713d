"""Theorems 2–4 at σ_L = 0, bracketed from both sides: [lower bound, PEP upper bound] vs the theorem's bound.

For a small configuration (M, m, K, T, τ, σ_G, Δ, L) *inside the theorem's conditions*, :func:`bracket` picks
the step sizes (η_L = 0.9 × the largest η_L the η-free conditions allow, η = the largest admissible η from
``theoremN.admissible_step_sizes``), builds a schedule (or takes one, or searches the worst one), and returns
  - ``upper``: the PEP worst case of (1/T) Σ_{t<T} ‖∇f(x_t)‖² over every L-smooth f_1..f_M with σ_G and Δ on
    that schedule (certified upper bound; see ``afltheory.pep.core``),
  - ``lower``: the best concrete certified instance found (``afltheory.pep.lower``'s quadratics or
    ``afltheory.pep.interpolant``'s shared L-smooth function, whichever is larger; a lower bound on the same
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
from typing import TYPE_CHECKING, Any

import numpy as np

from .._io import json_containers
from .._validation import check_int, check_real

if TYPE_CHECKING:
    from ..anarchy.schedule import Schedule

__all__ = [
    "LIMITS",
    "SETUPS",
    "Bracket",
    "BracketSetup",
    "bracket",
    "default_schedule",
    "json_safe",
    "step_sizes",
]

#: largest sizes ``bracket`` (and ``afltheory pep``) accept; checked before anything is allocated (the Gram
#: size, which is what a solve can afford, is checked next, also before allocation: ``max_gram``)
LIMITS = dict(m=64, M=64, K=64, T=1000, tau=1000, beam=64)


@dataclass(frozen=True)
class BracketSetup:
    """The bracket's setup of one of the paper's theorems (``Claim.setups["pep_bracket"]`` of
    ``afltheory.claims.paper``'s claims): ``key`` (the id ``bracket`` and ``afltheory pep`` take), the
    ``afltheory.theory`` module of its bound and the rule it is about."""

    key: str
    theory: str
    algorithm: str


#: the bracket's setups by key (``afltheory.pep`` sits below ``afltheory.claims``: the claims attach these)
SETUPS = {
    s.key: s
    for s in (
        BracketSetup("thm2", "theorem2", "AFACD"),
        BracketSetup("thm3", "theorem3", "AFACD"),
        BracketSetup("thm4", "theorem4", "AFACS"),
    )
}
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
        """A strict-JSON dict of the bracket (numpy scalars/arrays converted; a non-finite number becomes
        None, so ``json.dumps(..., allow_nan=False)`` never sees NaN or Infinity)."""
        d = asdict(self)
        d.update(
            pep_upper=self.upper,
            theorem_bound=self.bound,
            holds=self.holds,
            control_exceeded=self.control_exceeded,
            ratio_upper_to_bound=(None if self.upper is None else self.upper / self.bound),
            ratio_lower_to_bound=self.lower / self.bound,
        )
        return json_safe(d)


def json_safe(obj: object) -> object:
    """``obj`` with numpy scalars/arrays as Python numbers/lists, tuples as lists, non-finite floats as None
    and any other object as its ``str`` (strict JSON: no NaN, no Infinity)."""
    return json_containers(obj, _finite_or_text)


def _finite_or_text(obj: object) -> object:
    """``json_safe`` of a leaf: a finite float (non-finite: None), an int, a string or None, else its text."""
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, int):
        return int(obj)
    if obj is None or isinstance(obj, str):
        return obj
    return str(obj)


def step_sizes(
    claim: str, *, L: float, K: int, tau: int, M: int, m_fresh: int | None = None, fraction: float = 0.9
) -> tuple[float, float]:
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
        eta_L = 0.5 / L  # K = 1 and τ = 0: no local or delay condition; any η_L with η η_L fixed by η
    if claim == "thm2":
        adm = theorem2.admissible_step_sizes(L=L, eta_L=eta_L, K_max=K, tau=tau)
    elif claim == "thm3":
        adm = theorem3.admissible_step_sizes(L=L, eta_L=eta_L, K_max=K, tau=tau, num_workers=M)
    else:
        adm = theorem4.admissible_step_sizes(
            L=L, eta_L=eta_L, K_max=K, tau=tau, num_workers=M, m_fresh=m_fresh
        )
    return adm.require(), eta_L


def default_schedule(
    claim: str, *, M: int, m: int, K: int, T: int, tau: int, seed: int = 0, kind: str = "default"
) -> Schedule:
    """Thm 2/4: cyclic arrival sets {t, …, t + m − 1} mod M; Thm 3: uniform m-subsets (seeded);
    ``kind="fixed"``: the same set {0, …, m − 1} every round (biased participation; its workers are
    interchangeable, so the symmetry-reduced PEP applies). Every delay is the largest allowed, min(t, τ);
    K local steps everywhere (warm-start K too)."""
    from ..anarchy import Schedule

    if kind not in ("default", "fixed"):
        raise ValueError(f"kind={kind!r} must be one of ('default', 'fixed')")
    if kind == "fixed":
        W = np.tile(np.arange(m), (T, 1))
    elif claim == "thm3":
        rng = np.random.default_rng(np.random.SeedSequence([seed, 0x9E9]))
        W = np.array([np.sort(rng.choice(M, m, replace=False)) for _ in range(T)])
    else:
        W = np.array([[(t * m + j) % M for j in range(m)] for t in range(T)])
    D = np.array([[min(t, tau)] * m for t in range(T)])
    return Schedule(W, D, np.full((T, m), K), M, init_local_steps=np.full(M, K))


def bracket(
    claim: str,
    *,
    m: int,
    K: int,
    T: int,
    tau: int,
    M: int | None = None,
    sigma_G: float = 0.1,
    delta: float = 1.0,
    L: float = 1.0,
    schedule: Schedule | None = None,
    search: str | None = None,
    beam: int = 2,
    heterogeneity: str = "server",
    lower_grid: int = 7,
    max_gram: int | None = None,
    seed: int = 0,
    gamma: float | None = None,
    executor: str | object = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    schedule_kind: str = "default",
    journal: str | None = None,
    progress: Any = None,
) -> Bracket:
    """The bracket for ``claim`` ("thm2", "thm3", "thm4") at this size (see the module docstring).

    ``M`` defaults to m + 1 (partial participation). ``search``: None (the default or given schedule),
    "beam"/"exhaustive" via ``worst_schedule`` (delays ≤ τ, every m-subset; max over schedules).
    ``gamma``: override the server step η η_L (η = gamma/η_L) — exploratory; the result says whether the
    configuration is still inside the conditions. ``executor``, ``jobs``, ``scheduler``: where a ``search``
    runs its solves (``worst_schedule``; the result does not depend on them). ``schedule_kind="fixed"``: the
    same m workers every round (``default_schedule``). With ``heterogeneity="server"``, a schedule with
    interchangeable workers is solved by the symmetry-reduced PEP (``afltheory.pep.symmetric``; same value,
    smaller SDP), any other by PEPit.
    ``journal``/``progress``: with ``search``, passed to
    ``worst_schedule`` (a resumable journal of the solves; a callback after every search step).
    """
    from ..problems.base import Constants
    from ..theory import check_scope, theorem2, theorem3, theorem4
    from .core import MAX_GRAM, STEP_MAX, STEP_MIN, worst_case
    from .lower import quadratic_lower_bound

    if claim not in SETUPS:
        raise ValueError(f"claim={claim!r} must be one of {sorted(SETUPS)}")
    m = check_int("m", m, low=1, high=LIMITS["m"])
    M = m + 1 if M is None else check_int("M", M, low=m, high=max(m, LIMITS["M"]))
    K, T = check_int("K", K, low=1, high=LIMITS["K"]), check_int("T", T, low=1, high=LIMITS["T"])
    tau = check_int("tau", tau, low=0, high=LIMITS["tau"])
    beam = check_int("beam", beam, low=1, high=LIMITS["beam"])
    sigma_G = check_real("sigma_G", sigma_G, low=0.0, high=1e150)
    delta = check_real("delta", delta, low=1e-150, high=1e150)
    L = check_real("L", L, low=1e-150, high=1e150)
    if gamma is not None:
        try:
            gamma = check_real("gamma", gamma, low=STEP_MIN / L, high=STEP_MAX / L)
        except ValueError as exc:  # e.g. 5e-324: the bound's transient term divides by it
            raise ValueError(
                f"{exc} — a degenerate server step (gamma·L must lie in [{STEP_MIN:g}, {STEP_MAX:g}])"
            ) from None
    if max_gram is not None:
        max_gram = check_int("max_gram", max_gram, low=1, high=10_000)
    # a lower bound on the Gram dimension (M gradients at each of the T server iterates), checked before any
    # schedule or SDP is allocated; the exact size is checked by ``worst_case``
    limit = max_gram or MAX_GRAM
    n_lo = 1 + M * T if schedule_kind != "fixed" else 1 + (2 if m < M else 1) * T  # reduced: mean block
    if n_lo > limit:
        from .core import PEPSizeError, estimate_seconds

        raise PEPSizeError(
            f"PEP Gram dimension ≥ {n_lo} (M={M}, T={T}) exceeds max_gram={limit} (allowed "
            f"range [1, {limit}]; estimated solve time ≥ {estimate_seconds(n_lo):.3g} s); "
            f"reduce T or M, or pass max_gram deliberately"
        )
    thm = {"theorem2": theorem2, "theorem3": theorem3, "theorem4": theorem4}[SETUPS[claim].theory]
    consts = Constants(L=L, mu=-L, sigma_L=0.0, sigma_G=sigma_G, f_star=0.0, x_star=None)
    sched = (
        default_schedule(claim, M=M, m=m, K=K, T=T, tau=tau, seed=seed, kind=schedule_kind)
        if schedule is None
        else schedule
    )
    t0 = time.perf_counter()
    if claim == "thm4":
        stale, _ = sched.memory()
        tau_eff = int(stale.max())
        m_fresh = int((stale == 0).sum(axis=-1).min())
    else:
        tau_eff, m_fresh = tau, None
    eta, eta_L = step_sizes(claim, L=L, K=K, tau=tau_eff, M=M, m_fresh=m_fresh)
    if gamma is not None:
        eta = gamma / eta_L
    from ..algorithms import AFACD, AFACS

    algo = (AFACS if SETUPS[claim].algorithm == "AFACS" else AFACD)(eta=eta, eta_L=eta_L)
    kw = dict(max_gram=max_gram or MAX_GRAM)
    how = (
        "given schedule"
        if schedule is not None
        else f"{'fixed' if schedule_kind == 'fixed' else 'default'} schedule (max delays)"
    )
    if search:
        from .search import worst_schedule

        res = worst_schedule(
            algo,
            consts,
            num_workers=M,
            m=m,
            K=K,
            T=T,
            tau=tau,
            delta=delta,
            heterogeneity=heterogeneity,
            beam=beam,
            max_solves=10**9 if search == "exhaustive" else 64,
            executor=executor,
            jobs=jobs,
            scheduler=scheduler,
            journal=journal,
            progress=progress,
            **kw,
        )
        pep, sched = res.best, res.schedule
        how = (
            f"worst schedule, {res.method} over {res.count} schedules ({res.solves} solves"
            f"{', ' + str(res.uncertified) + ' uncertified' if res.uncertified else ''})"
        )
    else:
        from .core import skeleton
        from .symmetric import worker_classes

        sym = heterogeneity == "server" and any(len(c) > 1 for c in worker_classes(skeleton(algo, sched)))
        pep = worst_case(algo, sched, consts, delta=delta, heterogeneity=heterogeneity, symmetry=sym, **kw)
    lb = quadratic_lower_bound(algo, sched, L=L, sigma_G=sigma_G, delta=delta, grid=lower_grid)
    lower, lower_method = lb.value, lb.method
    # the shared-function instance: the exact worst case of a sub-class, an explicit L-smooth member run by
    # ``simulate`` (pep.interpolant); the larger of the two lower bounds is reported
    from .interpolant import interpolated_lower_bound

    il = None
    for tilt, cap in ((True, 40), (False, 200)):  # the tilted sub-class when small (its SDP is larger)
        try:
            il = interpolated_lower_bound(
                algo, sched, L=L, sigma_G=sigma_G, delta=delta, tilt=tilt, max_points=cap
            )
            break
        except (RuntimeError, ValueError):  # too many points, or the solver failed: try the next
            continue
    if il is not None and math.isfinite(il.value) and il.value > lower:
        lower, lower_method = il.value, il.method
    with warnings.catch_warnings():  # the problems are returned and reported, not warned about
        warnings.simplefilter("ignore")
        problems = tuple(check_scope(thm.__name__.rsplit(".", 1)[-1], sched, consts, eta=eta, eta_L=eta_L))
    terms = {
        k: float(v[0])
        for k, v in thm.bound_terms(sched, consts, eta=eta, eta_L=eta_L, f0=delta, scope="ignore").items()
    }
    bound = float(sum(terms.values()))
    control = bound - terms.get("transient", 0.0)
    bad = {
        k: v
        for k, v in dict(bound=bound, control=control, lower=lower, **terms).items()
        if not math.isfinite(v)
    }
    if bad or (pep.upper is not None and not math.isfinite(pep.upper)):
        raise ValueError(
            f"the bracket of {claim} is not finite at this configuration ({bad or pep.upper}; "
            f"eta={eta:.4g}, eta_L={eta_L:.4g}): degenerate step sizes or constants; nothing is certified"
        )
    return Bracket(
        claim,
        dict(
            M=M,
            m=m,
            K=K,
            T=T,
            tau=tau,
            sigma_G=sigma_G,
            delta=delta,
            L=L,
            gamma=eta * eta_L,
            heterogeneity=heterogeneity,
            tau_memory=tau_eff if claim == "thm4" else None,
        ),
        eta,
        eta_L,
        not problems,
        problems,
        pep.upper,
        pep.status,
        pep.certified,
        pep.primal,
        lower,
        lower_method,
        bound,
        terms,
        control,
        time.perf_counter() - t0,
        pep.gram_size,
        how,
        dict(
            workers=sched.workers[0].tolist(),
            delays=sched.delays[0].tolist(),
            K=sched.local_steps[0].tolist(),
        ),
    )
