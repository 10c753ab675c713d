"""Theorem 4 [Yang et al. 2022, Thm 4]: AFA-CS bound on the realized schedules, run where its transient term
matters, and the simulated AFA-CS is Algorithm 3.

Configuration: ``HeterogeneousQuadratic(dim=5, num_workers=10, L=1, mu=0.1, sigma_L=0.5, sigma_G=1, seed=1)``
and ``NonconvexSinusoidal`` (same constants, μ = −0.5); biased arrivals without replacement, m = 5,
probabilities ∝ [2, 2, 1.5, 1.5, 1, 1, 1, 1, 0.5, 0.5], ``UniformDelay(2)``, dynamic steps
``UniformSteps.paper(1)`` (K ∈ {1, 2}); quick T = 300, R = 32 (full T = 1000, R = 64). The schedule is sampled
first; τ = the realized maximum memory staleness, then η_L = 0.9·√(1/(120 τ K_max²)) ((C3) with 10 % room), η
= 0.9 η_max from ``theorem4.admissible_step_sizes`` with m' = 0 (worst case for (C2)); the run replays that
schedule. Why not the paper's probabilities (two workers at 0.01): their memory slots go ~100 rounds stale,
(C3) then forces η_L ≈ 0.005 and the transient term is 99.6 % of the bound at any x_0 — a server that never
moves passes. Here τ ≈ 40 and the verdict is *about* the transient term: x_0 = x* + r v along the top
eigenvector of ∇²f(x*), r such that 4(f_0 − f_*)/(η η_L T) is 90 % of the bound (``_power.steep_start``).
Bound: ``theorem4.bound_terms`` (K̂² summed over slots, f(x_T) replaced by f*, a valid weaker numerator), MC
mean vs mean bound with a one-sided 99 % t-UCB. Negative control: the bound without the transient term. The
noise terms (σ_L² stale/server/drift, σ_G² drift) are ~100× loose at x_0 = x* (measured 4e-4 vs 4e-2), so no
verdict is run about them. ``thm4.engine_vs_reference``: with σ_L = 0 the simulated AFA-CS (paper's biased
arrivals: slots stale for up to ~100 rounds; delays; K ∈ {1, 2}; warm start) equals an independent plain loop
of Algorithm 3 (``_reference``) to 1e-8; control: the plain loop with the K gradients summed."""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACS
from afltheory.anarchy import Behaviour, BiasedArrivals, Replay, UniformDelay, UniformSteps
from afltheory.theory import theorem4

from ._common import sim
from ._configs import families
from ._power import (
    bound_check,
    bound_figure,
    conditions_note,
    reference_check,
    require_conditions,
    steep_start,
)
from .registry import register

REF = "[Yang et al. 2022, Thm 4]"
PROBS = np.array([2, 2, 1.5, 1.5, 1, 1, 1, 1, 0.5, 0.5]) / 12.0
SHARE = 0.9


def steps_for(schedule, L, M):
    """(η, η_L, τ, K_max, conditions) for a sampled AFA-CS schedule (see the module docstring)."""
    stale, _ = schedule.memory()
    tau = int(stale.max())
    kmax = int(max(schedule.local_steps.max(), schedule.init_local_steps.max()))
    eta_L = 0.9 * np.sqrt(1 / (120 * tau * kmax**2 * L**2))
    eta = (
        0.9
        * theorem4.admissible_step_sizes(
            L=L, eta_L=eta_L, K_max=kmax, tau=tau, num_workers=M, m_fresh=0
        ).require()
    )
    conds = theorem4.conditions(L=L, eta=eta, eta_L=eta_L, K_max=kmax, tau=tau, num_workers=M, m_fresh=0)
    require_conditions(conds, "thm4")
    return eta, eta_L, tau, kmax, conds


@register(
    "thm4", "Theorem 4 bound (AFA-CS, biased arrivals, bounded delays) by term; engine = Algorithm 3", REF
)
def run(ctx):
    T, R = (300, 32) if ctx.quick else (1000, 64)
    out = []
    fams = families()
    fig = ctx.fig("thm4_bounds")[1]
    for name in ("quadratic", "nonconvex"):
        p = fams[name]
        M = p.num_workers
        beh = Behaviour(BiasedArrivals(5, PROBS), UniformDelay(2), UniformSteps.paper(1))
        sched = beh.sample(T, R, M, ctx.seed_for("thm4", name))
        eta, eta_L, tau, _, conds = steps_for(sched, p.constants.L, M)

        def terms(x0, sched=sched, p=p, eta=eta, eta_L=eta_L, M=M):
            return theorem4.bound_terms(
                sched, p.constants, eta=eta, eta_L=eta_L, f0=p.value(x0), num_workers=M, scope="raise"
            )

        x0 = steep_start(p, sum(terms(p.constants.x_star).values()), eta * eta_L, T, SHARE)
        tr = sim(p, AFACS(eta, eta_L), Replay(sched), T, R, ctx.seed_for("thm4r", name), x0=x0)
        out.append(
            bound_check(
                id=f"thm4.{name}",
                claim=f"Thm 4 bound holds where its transient term matters: AFA-CS, {name}, "
                f"biased arrivals (m=5), delays ≤ 2 (memory staleness τ = {tau}), "
                "K~U{1,2}",
                reference=REF,
                measured=tr.time_average(),
                terms=terms(x0),
                about="transient",
                inside_conditions=True,
                figures=[fig],
                notes=(
                    f"realized memory staleness τ={tau}, η_L={eta_L:.4g}, η={eta:.4g}; conditions: "
                    f"{conditions_note(conds)}"
                ),
            )
        )
    bound_figure(ctx, "thm4_bounds", out, "Theorem 4 (AFA-CS): measured vs bound")
    q = families(sigma_L=0.0)["quadratic"]
    beh = Behaviour(BiasedArrivals.paper(5), UniformDelay(2), UniformSteps.paper(1))
    sref = beh.sample(80 if ctx.quick else 300, 2, q.num_workers, ctx.seed_for("thm4", "ref"))
    eta, eta_L, tau, _, _ = steps_for(sref, 1.0, q.num_workers)
    out.append(
        reference_check(
            id="thm4.engine_vs_reference",
            claim="the simulated AFA-CS is Algorithm 3 (slot i ← G_i on arrival, "
            "warm "
            "start at x_0, server step ηη_L × mean over all M slots)",
            reference=REF,
            problem=q,
            algorithm=AFACS(20 * eta, eta_L),
            schedule=sref,
            x0=q.default_x0(),
            seed=ctx.seed_for("thm4", "ref", "run"),
            notes=f"paper's biased arrivals (m=5), τ≤2, K~U{{1,2}}, σ_L = 0; realized memory staleness "
            f"{tau}; η ×20 so the memory's effect is visible within the horizon",
        )
    )
    return out
