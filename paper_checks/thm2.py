"""Theorem 2 [Yang et al. 2022, Thm 2]: AFA-CD under general arrival processes — the bound on (1/T) Σ
E‖∇f(x_t)‖² holds on configurations that satisfy (C1)–(C3), each verdict run where the term it is about
matters; the simulated AFA-CD is the paper's algorithm; and what happens just outside the conditions.

Common configuration (L = 1, σ_L = 0.5, σ_G = 1, dim 5, M = 10, problem seed 1; quick T = 300, R = 32, full T
= 1000, R = 64): biased arrivals without replacement, m = 2, 98 % of the mass on the adversarial pair
(``_configs.concentrated_arrivals``), delays ``UniformDelay(4)`` (τ ≤ 4), dynamic steps
``UniformSteps.paper(2)`` (K ∈ {1, …, 4}); η_L = 0.009 ((C2) needs η_L < 1/√(180·16·4) ≈ 0.00932), η = 0.9
η_max (``theorem2.admissible_step_sizes``, (C3) binding). The schedule is sampled first and replayed, so the
bound's terms (``theorem2.bound_terms``) are those of the realized schedule.
- ``thm2.<family>`` (quadratic, curvature, nonconvex), about the **transient** term 4(f_0 − f_*)/(η η_L T):
  x_0 = x* + r v along the top eigenvector of ∇²f(x*), r such that the transient is 90 % of the bound
  (``_power.steep_start``). At the paper's default x_0 the constant 6σ_G² floor is 94 % of the bound and a
  server that never moves passes; here a server that moves by a constant factor too slowly exceeds the bound.
  Negative control: the bound without the transient term (the plausible claim "the floor and noise terms
  suffice").
- ``thm2.floor`` (quadratic), about the **σ_G² floor** 6σ_G²: x_0 = x*, so the transient vanishes and the
  measurement is the floor the concentrated arrivals create; control: the bound without 6σ_G².
- ``thm2.engine_vs_reference``: with σ_L = 0 the simulated AFA-CD on the realized schedule (delays, dynamic K,
  concentrated arrivals) equals an independent plain loop of Algorithm 2 as proved (``_reference``) to 1e-8;
  control: the plain loop of the nearest wrong reading (sum instead of mean of the K gradients).
- measured: MC mean of the per-replicate time average with a one-sided 99 % t-UCB; bound: mean over
  replicates.
- paper's biased arrivals (m = 5, [0.19, 0.19, 0.1×6, 0.01, 0.01]) at the default x_0 (quadratic): reported in
  the notes of ``thm2.floor`` (slack > 10: the 6σ_G² term is a worst case).
Stability region (quadratic, same behaviour): grid η ∈ geomspace(0.3, 300, 7) × η_L ∈ geomspace(0.002, 0.5, 6)
(full: 10 × 8), T = 100 (full 200), R = 4 per point. A point "diverged" if any replicate diverged or
E‖∇f(x_T)‖² > 10 ‖∇f(x_0)‖². Claim: no point inside ``theorem2.region`` diverges. Negative control: the region
inflated ×100 in η. Just-outside runs (η = 2 and 10 η_max): reported, labelled exploratory."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afltheory.algorithms import AFACD
from afltheory.analysis import compare_bound
from afltheory.anarchy import Behaviour, BiasedArrivals, Replay, UniformDelay, UniformSteps
from afltheory.checks import AtMost, ControlMeasurement, Verdict
from afltheory.plots import stability_region_plot
from afltheory.theory import theorem2

from ._common import sim
from ._configs import concentrated_arrivals, families
from ._power import (
    bound_check,
    bound_figure,
    conditions_note,
    reference_check,
    require_conditions,
    steep_start,
)
from .registry import register

REF = "[Yang et al. 2022, Thm 2]"
ETA_L, K_MAX, TAU = 0.009, 4, 4
SHARE = 0.9


def behaviour(problem):
    return Behaviour(concentrated_arrivals(problem), UniformDelay(TAU), UniformSteps.paper(2))


def steps(L=1.0):
    eta = 0.9 * theorem2.admissible_step_sizes(L=L, eta_L=ETA_L, K_max=K_MAX, tau=TAU).require()
    conds = theorem2.conditions(L=L, eta=eta, eta_L=ETA_L, K_max=K_MAX, tau=TAU)
    require_conditions(conds, "thm2")
    return eta, conds


def terms_of(schedule, problem, eta, x0):
    return theorem2.bound_terms(
        schedule,
        problem.constants,
        eta=eta,
        eta_L=ETA_L,
        f0=problem.value(x0),
        num_workers=problem.num_workers,
        scope="raise",
    )


def run_bound(problem, behaviour, eta, eta_L, T, R, seed, x0=None):
    """Simulate AFA-CD and evaluate Theorem 2's bound on the realized schedule (used by other checks)."""
    tr = sim(problem, AFACD(eta, eta_L), behaviour, T, R, seed, x0=x0)
    b = theorem2.bound(
        tr.schedule,
        problem.constants,
        eta=eta,
        eta_L=eta_L,
        f0=problem.value(tr.x0),
        num_workers=problem.num_workers,
        scope="ignore",
    )
    return tr, b


def stability_grid(problem, behaviour, etas, eta_Ls, T, R, seed, bound_fn):
    div = np.zeros((len(eta_Ls), len(etas)), dtype=bool)
    held = np.zeros_like(div)
    for a, eL in enumerate(eta_Ls):
        for b_, e in enumerate(etas):
            tr = sim(problem, AFACD(e, eL), behaviour, T, R, seed)
            g0 = tr.grad_norm_sq[0, 0]
            last = tr.grad_norm_sq[:, -1]
            div[a, b_] = tr.divergence.any or not np.all(np.isfinite(last)) or last.mean() > 10 * g0
            if not div[a, b_]:
                held[a, b_] = compare_bound(tr.time_average(), bound_fn(tr, e, eL)).holds
    return div, held


@register(
    "thm2",
    "Theorem 2 bound (AFA-CD, general arrivals) by term on 3 families; engine = Algorithm 2; "
    "stability region",
    REF,
)
def run(ctx):
    cfg = _config(ctx)
    bounds = [_transient(ctx, cfg, name) for name in cfg.fams] + [_floor(ctx, cfg)]
    bound_figure(ctx, "thm2_bounds", bounds, "Theorem 2: measured vs bound (slack annotated)")
    return bounds + [_engine_vs_reference(ctx, cfg), _stability(ctx, cfg)]


@dataclass(frozen=True)
class _Config:
    """The common configuration: horizon, replicates, the three families, η = 0.9 η_max, the conditions
    and the bound figure's report path."""

    T: int
    R: int
    fams: dict
    eta: float
    conds: list
    fig: str


def _config(ctx) -> _Config:
    """Tier-dependent T, R; the families; Theorem 2's admissible η at η_L = 0.009 ((C1)–(C3) required)."""
    T, R = (300, 32) if ctx.quick else (1000, 64)
    eta, conds = steps()
    return _Config(T, R, families(), eta, conds, ctx.fig("thm2_bounds")[1])


def _transient(ctx, cfg: _Config, name: str):
    """thm2.<name> (quadratic, curvature, nonconvex) — Theorem 2's bound where its transient term is 90 %."""
    T, R, eta, p = cfg.T, cfg.R, cfg.eta, cfg.fams[name]
    sched = behaviour(p).sample(T, R, p.num_workers, ctx.seed_for("thm2", name))
    rest = sum(terms_of(sched, p, eta, p.constants.x_star).values())
    x0 = steep_start(p, rest, eta * ETA_L, T, SHARE)
    tr = sim(p, AFACD(eta, ETA_L), Replay(sched), T, R, ctx.seed_for("thm2", name, "run"), x0=x0)
    return bound_check(
        id=f"thm2.{name}",
        claim=f"Thm 2 bound holds where its transient term matters: AFA-CD, {name}, "
        "concentrated biased arrivals, τ≤4, K~U{1..4}",
        reference=REF,
        measured=tr.time_average(),
        terms=terms_of(sched, p, eta, x0),
        about="transient",
        inside_conditions=True,
        figures=[cfg.fig],
        notes=(
            f"x_0 = x* + r·v_top with f(x_0) − f* = {p.value(x0) - p.constants.f_star:.4g}; η={eta:.4g}, "
            f"η_L={ETA_L}, x=ηη_L={eta * ETA_L:.4g}; conditions: {conditions_note(cfg.conds)}; "
            f"replicates leaving the certified region: {int((tr.left_region >= 0).sum())}"
        ),
    )


def _floor(ctx, cfg: _Config):
    """thm2.floor — Theorem 2's constant 6σ_G² term covers the biased-arrival floor at x_0 = x*."""
    T, R, eta, p = cfg.T, cfg.R, cfg.eta, cfg.fams["quadratic"]
    sched = behaviour(p).sample(T, R, p.num_workers, ctx.seed_for("thm2", "floor"))
    xs = p.constants.x_star
    tr = sim(p, AFACD(eta, ETA_L), Replay(sched), T, R, ctx.seed_for("thm2", "floor", "run"), x0=xs)
    beh_p = Behaviour(BiasedArrivals.paper(5), UniformDelay(TAU), UniformSteps.paper(2))
    trp, bp = run_bound(p, beh_p, eta, ETA_L, T, R, ctx.seed_for("thm2", "paper"))
    cp = compare_bound(trp.time_average(), bp)
    return bound_check(
        id="thm2.floor",
        claim="Thm 2's constant 6σ_G² term covers the error floor of biased arrivals (x_0 = "
        "x*, "
        "quadratic, concentrated arrivals)",
        reference=REF,
        measured=tr.time_average(),
        terms=terms_of(sched, p, eta, xs),
        about="sigma_G_floor",
        inside_conditions=True,
        figures=[cfg.fig],
        notes=(
            f"paper's biased arrivals (m=5) at the default x_0: measured {cp.measured:.4g}, "
            f"bound {cp.bound:.4g}, slack {cp.slack:.3g}, holds {cp.holds}"
        ),
        details={"paper_biased": {"measured": cp.measured, "bound": cp.bound, "slack": cp.slack}},
    )


def _engine_vs_reference(ctx, cfg: _Config):
    """thm2.engine_vs_reference — the simulated AFA-CD is Algorithm 2 as proved (deterministic gradients)."""
    q = families(sigma_L=0.0)["curvature"]
    sref = behaviour(q).sample(60 if ctx.quick else 200, 2, q.num_workers, ctx.seed_for("thm2", "ref"))
    return reference_check(
        id="thm2.engine_vs_reference",
        claim="the simulated AFA-CD is Algorithm 2 as proved (stale start "
        "x_{t−τ}, "
        "mean of K local gradients, server step ηη_L × mean over the m arrivals)",
        reference=REF,
        problem=q,
        algorithm=AFACD(cfg.eta, ETA_L),
        schedule=sref,
        x0=q.default_x0(),
        seed=ctx.seed_for("thm2", "ref", "run"),
        notes="curvature family (per-worker Hessians), concentrated arrivals, τ≤4, K~U{1..4}, σ_L = 0",
    )


def _stability(ctx, cfg: _Config):
    """thm2.stability — inside Theorem 2's (C1)–(C3) no run diverges (stability-region grid)."""
    T, R, eta, p = cfg.T, cfg.R, cfg.eta, cfg.fams["quadratic"]
    beh = behaviour(p)
    if ctx.quick:
        etas, eta_Ls, Ts = np.geomspace(0.3, 300, 7), np.geomspace(0.002, 0.5, 6), 100
    else:
        etas, eta_Ls, Ts = np.geomspace(0.3, 300, 10), np.geomspace(0.002, 0.5, 8), 200
    L = p.constants.L

    def bound_fn(tr, e, eL):
        return theorem2.bound(
            tr.schedule, p.constants, eta=e, eta_L=eL, f0=p.value(tr.x0), num_workers=10, scope="ignore"
        )

    div, held = stability_grid(p, beh, etas, eta_Ls, Ts, 4, ctx.seed_for("thm2", "grid"), bound_fn)
    region = theorem2.region(etas, eta_Ls, L=L, K_max=K_MAX, tau=TAU)
    inflated = theorem2.region(etas / 100, eta_Ls, L=L, K_max=K_MAX, tau=TAU)
    path, rel = ctx.fig("thm2_stability")
    stability_region_plot(
        path,
        etas,
        eta_Ls,
        region,
        div,
        bound_held=held,
        chosen=(eta, ETA_L),
        title="Thm 2 (quadratic, τ≤4, K≤4)",
    )
    bad_in = int((region & div).sum())
    bad_inflated = int((inflated & div).sum())
    E, EL = np.meshgrid(etas, eta_Ls)
    xdiv = float((E * EL)[div].min()) if div.any() else float("inf")
    xmax = eta / 0.9 * ETA_L
    outside = {}
    for fac in (2.0, 10.0):
        e = fac * eta / 0.9
        tr, b = run_bound(p, beh, e, ETA_L, T, R, ctx.seed_for("thm2", "out", fac))
        c = compare_bound(tr.time_average(), b)
        outside[fac] = {
            "diverged": bool(tr.divergence.any),
            "measured": c.measured,
            "bound": c.bound,
            "held": c.holds,
        }
    return Verdict.judged(
        id="thm2.stability",
        claim="inside (C1)–(C3) no run diverges (the conditions are sufficient)",
        reference=REF,
        measured=bad_in,
        theoretical=0,
        criterion=AtMost(text="divergent grid points inside the region = 0"),
        relation="~=",
        quantity="divergent grid points inside the region",
        figures=(rel,),
        inside_conditions=True,
        control=ControlMeasurement(
            description="theory region inflated ×100 in η", measured=bad_inflated, theoretical=0
        ),
        method=f"grid {len(etas)}×{len(eta_Ls)}, T={Ts}, R=4",
        notes=(
            f"{int(region.sum())} grid points inside the region, {int(div.sum())} divergent overall; "
            f"smallest divergent x=ηη_L on the grid {xdiv:.3g} vs theory's x_max {xmax:.3g} "
            f"(conservative ×{xdiv / xmax:.3g}); converged points outside the region where the bound "
            f"still held: {int((held & ~region).sum())}/{int((~div & ~region).sum())}. Just outside "
            f"(η_L={ETA_L}; outside the conditions (exploratory)): "
            + "; ".join(
                f"η = {f:g}·η_max: diverged {o['diverged']}, measured {o['measured']:.3g}, bound "
                f"{o['bound']:.3g}, bound held {o['held']}"
                for f, o in outside.items()
            )
        ),
        details={"outside": {str(k): v for k, v in outside.items()}, "x_div_min": xdiv, "x_max": xmax},
    )
