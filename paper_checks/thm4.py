"""Theorem 4 [Yang et al. 2022, Thm 4]: AFA-CS bound on the realized schedules.

Configuration: ``HeterogeneousQuadratic(dim=5, num_workers=10, L=1, mu=0.1, sigma_L=0.5, sigma_G=1, seed=1)``
and ``NonconvexSinusoidal`` (same constants, μ = −0.5); paper's biased arrivals (m = 5), ``UniformDelay(2)``,
dynamic steps ``UniformSteps.paper(1)`` (K ∈ {1, 2}); quick T = 300, R = 32 (full T = 1000, R = 64). The
schedule is sampled first; τ = the realized maximum memory staleness (rare workers make it large), then η_L =
0.9·√(1/(120 τ K_max²)) ((C3) with 10 % room), η = 0.9 η_max from ``theorem4.admissible_step_sizes`` with m' =
0 (worst case for (C2)). The run replays that schedule (``Replay``). Bound: ``theorem4.bound`` (K̂² summed
over slots, f(x_T) replaced by f*, a valid weaker numerator), MC mean vs mean bound with a one-sided 99 %
t-UCB. Negative control bound/100.
"""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACS
from afltheory.anarchy import Behaviour, BiasedArrivals, Replay, UniformDelay, UniformSteps
from afltheory.theory import theorem4

from ._common import bound_verdict, plot_bound_verdicts, sim
from ._configs import families
from .registry import register

REF = "[Yang et al. 2022, Thm 4]"


@register("thm4", "Theorem 4 bound (AFA-CS, biased arrivals, bounded delays)", REF)
def run(ctx):
    T, R = (300, 32) if ctx.quick else (1000, 64)
    out = []
    fams = families()
    for name in ("quadratic", "nonconvex"):
        p = fams[name]
        M = p.num_workers
        beh = Behaviour(BiasedArrivals.paper(5), UniformDelay(2), UniformSteps.paper(1))
        sched = beh.sample(T, R, M, ctx.seed_for("thm4", name))
        stale, _ = sched.memory()
        tau = int(stale.max())
        kmax = int(max(sched.local_steps.max(), sched.init_local_steps.max()))
        L = p.constants.L
        eta_L = 0.9 * np.sqrt(1 / (120 * tau * kmax**2 * L**2))
        eta = 0.9 * theorem4.admissible_step_sizes(L=L, eta_L=eta_L, K_max=kmax, tau=tau, num_workers=M,
                                                   m_fresh=0).require()
        conds = theorem4.conditions(L=L, eta=eta, eta_L=eta_L, K_max=kmax, tau=tau, num_workers=M, m_fresh=0)
        assert all(c.holds for c in conds), conds
        tr = sim(p, AFACS(eta, eta_L), Replay(sched), T, R, ctx.seed_for("thm4r", name))
        b = theorem4.bound(tr.schedule, p.constants, eta=eta, eta_L=eta_L, f0=p.value(tr.x0), num_workers=M)
        out.append(bound_verdict(f"thm4.{name}",
                                 f"Thm 4 bound holds: AFA-CS, {name}, paper biased arrivals, τ≤2, "
                                 "K~U{1,2}", REF, tr.time_average(), b, figures=[ctx.fig("thm4_bounds")[1]],
                                 inside_conditions=True,
                                 notes=f"realized memory staleness τ={tau}, η_L={eta_L:.4g}, η={eta:.4g}; "
                                 "slacks "
                                       + ", ".join(f"{c.name} {c.slack:.3g}" for c in conds)))
    plot_bound_verdicts(ctx, "thm4_bounds", out, "Theorem 4 (AFA-CS): measured vs bound")
    return out
