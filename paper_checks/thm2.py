"""Theorem 2 [Yang et al. 2022, Thm 2]: AFA-CD under general arrival processes — the bound on (1/T) Σ
E‖∇f(x_t)‖² holds on every configuration that satisfies (C1)–(C3); and what happens just outside the
conditions.

Configurations (each family with L = 1, σ_L = 0.5, σ_G = 1, dim 5, M = 10, problem seed 1; quick: T = 300, R =
32; full: T = 1000, R = 64):
- arrivals: biased without replacement, m = 2, 98 % of the mass on the adversarial pair (``_configs.
  concentrated_arrivals``: the two workers whose gradients at x* add up most), so the σ_G² floor is reached;
  delays ``UniformDelay(4)`` (τ ≤ 4); dynamic local steps ``UniformSteps.paper(2)`` (K ∈ {1, …, 4}).
- steps: η_L = 0.009 (C2 needs η_L < 1/√(180·16·4) ≈ 0.00932), η = 0.9 η_max with η_max from
  ``theorem2.admissible_step_sizes`` (C3 binding).
- families: ``HeterogeneousQuadratic`` (shared Hessian), ``HeterogeneousCurvatureQuadratic`` (per-worker
  Hessians; σ_G certified on a ball, departures reported), ``NonconvexSinusoidal`` (nonconvex).
- measured: MC mean of the per-replicate time average, one-sided 99 % t-UCB; bound: ``theorem2.bound`` on each
  replicate's realized schedule (τ, K̄_t, K̃_t, K̂_t²), averaged over replicates. Slack = bound / measured.
  Negative control: the same measurement against bound/100.
- paper's biased arrivals (m = 5, probabilities [0.19, 0.19, 0.1×6, 0.01, 0.01]) on the shared-Hessian
  quadratic: reported in the notes of the quadratic verdict (its slack exceeds 100: the 6σ_G² term is a worst
  case).
Stability region (shared-Hessian quadratic, same behaviour): grid η ∈ geomspace(0.3, 300, 7) × η_L ∈
geomspace(0.002, 0.5, 6) (full: 10 × 8), T = 100 (full 200), R = 4 per point. A point "diverged" if any
replicate diverged in the engine's sense or E‖∇f(x_T)‖² > 10 · ‖∇f(x_0)‖². Claim: no point inside the theory's
region (``theorem2.region``) diverges. Negative control: the theory region inflated ×100 in η (must contain
divergent points). Just-outside runs: η = 2 η_max and 10 η_max at the checked η_L; whether they diverged and
whether the bound still held are reported (the bound is not guaranteed there).
"""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACD
from afltheory.analysis import compare_bound
from afltheory.anarchy import Behaviour, BiasedArrivals, UniformDelay, UniformSteps
from afltheory.checks import NegativeControl, Verdict
from afltheory.plots import stability_region_plot
from afltheory.theory import theorem2

from ._common import bound_verdict, plot_bound_verdicts, sim
from ._configs import concentrated_arrivals, families
from .registry import register

REF = "[Yang et al. 2022, Thm 2]"
ETA_L, K_MAX, TAU = 0.009, 4, 4


def run_bound(problem, behaviour, eta, eta_L, T, R, seed):
    tr = sim(problem, AFACD(eta, eta_L), behaviour, T, R, seed)
    b = theorem2.bound(tr.schedule, problem.constants, eta=eta, eta_L=eta_L, f0=problem.value(tr.x0),
                       num_workers=problem.num_workers)
    return tr, b


def stability_grid(problem, behaviour, etas, eta_Ls, T, R, seed, bound_fn):
    div = np.zeros((len(eta_Ls), len(etas)), dtype=bool)
    held = np.zeros_like(div)
    g0 = None
    for a, eL in enumerate(eta_Ls):
        for b_, e in enumerate(etas):
            tr = sim(problem, AFACD(e, eL), behaviour, T, R, seed)
            g0 = tr.grad_norm_sq[0, 0]
            last = tr.grad_norm_sq[:, -1]
            div[a, b_] = tr.divergence.any or not np.all(np.isfinite(last)) or last.mean() > 10 * g0
            if not div[a, b_]:
                bnd = bound_fn(tr, e, eL)
                held[a, b_] = compare_bound(tr.time_average(), bnd).holds
    return div, held


@register("thm2", "Theorem 2 bound (AFA-CD, general arrivals) on 3 families; stability region", REF,
          slow=True)
def run(ctx):
    T, R = (300, 32) if ctx.quick else (1000, 64)
    fams = families()
    out = []
    for name, p in fams.items():
        beh = Behaviour(concentrated_arrivals(p), UniformDelay(TAU), UniformSteps.paper(2))
        adm = theorem2.admissible_step_sizes(L=p.constants.L, eta_L=ETA_L, K_max=K_MAX, tau=TAU)
        eta = 0.9 * adm.require()
        conds = theorem2.conditions(L=p.constants.L, eta=eta, eta_L=ETA_L, K_max=K_MAX, tau=TAU)
        assert all(c.holds for c in conds), conds
        tr, b = run_bound(p, beh, eta, ETA_L, T, R, ctx.seed_for("thm2", name))
        notes = (f"η={eta:.4g}, η_L={ETA_L}, x=ηη_L={eta * ETA_L:.4g}; conditions slack "
                 + ", ".join(f"{c.name} {c.slack:.3g}" for c in conds)
                 + f"; replicates leaving the certified region: {(tr.left_region >= 0).sum()}")
        details = {}
        if name == "quadratic":
            beh_p = Behaviour(BiasedArrivals.paper(5), UniformDelay(TAU), UniformSteps.paper(2))
            trp, bp = run_bound(p, beh_p, eta, ETA_L, T, R, ctx.seed_for("thm2", "paper"))
            cp = compare_bound(trp.time_average(), bp)
            notes += (f"; paper's biased arrivals (m=5): measured {cp.measured:.4g}, bound {cp.bound:.4g}, "
                      f"slack {cp.slack:.3g}, holds {cp.holds}")
            details["paper_biased"] = {"measured": cp.measured, "bound": cp.bound, "slack": cp.slack}
        out.append(bound_verdict(f"thm2.{name}",
                                 f"Thm 2 bound holds: AFA-CD, {name}, concentrated biased arrivals, "
                                 f"τ≤4, K~U{{1..4}}", REF, tr.time_average(), b, notes=notes, details=details,
                                 figures=[ctx.fig("thm2_bounds")[1]], inside_conditions=True))
    plot_bound_verdicts(ctx, "thm2_bounds", out, "Theorem 2: measured vs bound (slack annotated)")
    # stability region
    p = fams["quadratic"]
    beh = Behaviour(concentrated_arrivals(p), UniformDelay(TAU), UniformSteps.paper(2))
    if ctx.quick:
        etas, eta_Ls, Ts = np.geomspace(0.3, 300, 7), np.geomspace(0.002, 0.5, 6), 100
    else:
        etas, eta_Ls, Ts = np.geomspace(0.3, 300, 10), np.geomspace(0.002, 0.5, 8), 200
    L = p.constants.L

    def bound_fn(tr, e, eL):
        return theorem2.bound(tr.schedule, p.constants, eta=e, eta_L=eL, f0=p.value(tr.x0), num_workers=10)

    div, held = stability_grid(p, beh, etas, eta_Ls, Ts, 4, ctx.seed_for("thm2", "grid"), bound_fn)
    region = theorem2.region(etas, eta_Ls, L=L, K_max=K_MAX, tau=TAU)
    inflated = theorem2.region(etas / 100, eta_Ls, L=L, K_max=K_MAX, tau=TAU)
    eta_c = 0.9 * theorem2.admissible_step_sizes(L=L, eta_L=ETA_L, K_max=K_MAX, tau=TAU).eta_max
    path, rel = ctx.fig("thm2_stability")
    stability_region_plot(path, etas, eta_Ls, region, div, bound_held=held, chosen=(eta_c, ETA_L),
                          title="Thm 2 (quadratic, τ≤4, K≤4)")
    bad_in = int((region & div).sum())
    bad_inflated = int((inflated & div).sum())
    # conservativeness: smallest divergent x = η η_L on the grid vs the theory's x_max
    E, EL = np.meshgrid(etas, eta_Ls)
    xdiv = float((E * EL)[div].min()) if div.any() else float("inf")
    xmax = eta_c / 0.9 * ETA_L
    # just outside
    outside = {}
    for fac in (2.0, 10.0):
        e = fac * eta_c / 0.9
        tr, b = run_bound(p, beh, e, ETA_L, T, R, ctx.seed_for("thm2", "out", fac))
        c = compare_bound(tr.time_average(), b)
        outside[fac] = {"diverged": bool(tr.divergence.any), "measured": c.measured, "bound": c.bound,
                        "held": c.holds}
    out.append(Verdict(
        id="thm2.stability", claim="inside (C1)–(C3) no run diverges (the conditions are sufficient)",
        reference=REF,
        measured=bad_in, theoretical=0, tolerance="divergent grid points inside the theory region = 0",
        passed=bad_in == 0, figures=[rel],
        negative_control=NegativeControl(description="theory region inflated ×100 in η",
                                         measured=bad_inflated,
                                         theoretical=0, passed=bad_inflated == 0),
        method=f"grid {len(etas)}×{len(eta_Ls)}, T={Ts}, R=4",
        notes=(f"{int(region.sum())} grid points inside the region, {int(div.sum())} divergent overall; "
               "smallest "
               f"divergent x=ηη_L on the grid {xdiv:.3g} vs theory's x_max {xmax:.3g} (conservative ×"
               f"{xdiv / xmax:.3g}); converged points outside the region where the bound still held: "
               f"{int((held & ~region).sum())}/{int((~div & ~region).sum())}. Just outside (η_L={ETA_L}): "
               + "; ".join(f"η = {f:g}·η_max: diverged {o['diverged']}, measured {o['measured']:.3g}, bound "
                           f"{o['bound']:.3g}, bound held {o['held']}" for f, o in outside.items())),
        details={"outside": {str(k): v for k, v in outside.items()}, "x_div_min": xdiv, "x_max": xmax}))
    return out
