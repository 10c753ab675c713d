"""Corollary 2 [Yang et al. 2022, Cor 2]: with η_L = 1/√T and η = √(mK), AFA-CD's error falls as 1/√(mKT) —
slope −1/2 in T, in m and in K — because the server averages the noise of m arrivals × K local gradients.

Mechanism (``cor2.slope_T``, ``cor2.slope_m``, ``cor2.slope_K``): the run starts at x* so there is no
transient, and the measured statistic is the stationary noise level, the mean of E‖∇f(x_t)‖² over t ∈ [T/2,
T). On ``HeterogeneousQuadratic(dim=5, num_workers=16, L=0.1, mu=0.1, sigma_L=1, sigma_G=0, seed=1)``
(isotropic Hessian, so x μ T ≥ 2 and the ramp from x* is over by T/2) that level is (ηη_L L σ_L²/(2mK))(1 +
O(ηη_L L)) = Θ(1/√(mKT)): the slopes test that the noise is averaged over the m arrivals and the K steps (a
server that averages over M, a worker that sums its K gradients, dropped or mis-scaled noise all change them).
Uniform arrivals, no delay, constant K; σ_G = 0 on purpose (with σ_G > 0 and m < M the sampling variance adds
Θ(√(K/(mT)))σ_G², see ``thm3.sampling_term``). Grids (base m = 2, K = 1, T = 1000): T ∈ {500, 1000, 2000,
4000} (full adds 8000, 16000); m ∈ {1, 2, 4, 8}; K ∈ {1, 2, 4, 8}. Exact moments (``afltheory.exact``) when
they apply, else Monte Carlo (R = 16 quick / 48 full) with a 95 % bootstrap CI. Terms: Theorem 3's bound at
x_0 = x* on the realized schedule; its σ_L² server term 4Lηη_Lσ_L²/(mK̄) — the O(1/√(mKT)) term — is reported
(minimum share over the grid) and Theorem 3's conditions are evaluated at every point (``inside_conditions``).
Full trajectory (``cor2.slope_T_full``, ``cor2.slope_m_full``): the same claim on (1/T) Σ_{t<T} E‖∇f(x_t)‖²
from the default x_0 (L = 0.1, μ = 0.05), where 84–86 % of the error is the noise-free transient 4Δ/(ηη_L T) —
it tests the step-size scaling, not the averaging; kept as a separate verdict. ``cor2.slope_T_mc``: its Monte
Carlo version (T ∈ {250, …, 2000}, exact moments off). ``cor2.mc_vs_exact``: the Monte Carlo engine vs the
exact moments at the mechanism's base point (z-scores of the tail and the time average, R = 64). Tolerance
±0.03 on the slope. Negative control of a slope: the same test against the slope a real mistake gives (T: 0,
step not scaled with T; m, K: +1/2, noise not averaged)."""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACD
from afltheory.analysis import term_shares
from afltheory.anarchy import UniformArrivals
from afltheory.plots import rate_plot, speedup_plot
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory import theorem3

from ._common import exact_moments, sim
from ._power import agreement_check
from ._rates import corollary_run, slope_verdict, statistic
from .registry import register

REF = "[Yang et al. 2022, Cor 2]"
M = 16
BASE = dict(m=2, K=1, T=1000)


def problem(mu=0.05, sigma_L=1.0):
    return HeterogeneousQuadratic(dim=5, num_workers=M, L=0.1, mu=mu, sigma_L=sigma_L, sigma_G=0.0, seed=1)


def theory_at(p, beh, algo, T, x0, seed, term="sigma_L_server"):
    """(share of ``term`` in Theorem 3's bound, whether Theorem 3's conditions hold) on a sampled schedule."""
    s = beh.sample(T, 1, p.num_workers, seed)
    terms = theorem3.bound_terms(
        s,
        p.constants,
        eta=algo.eta,
        eta_L=algo.eta_L,
        f0=p.value(x0),
        num_workers=p.num_workers,
        scope="ignore",
    )
    conds = theorem3.conditions(
        L=p.constants.L,
        eta=algo.eta,
        eta_L=algo.eta_L,
        K_max=int(s.local_steps.max()),
        tau=int(s.tau.max()),
        num_workers=p.num_workers,
    )
    shares = term_shares(terms)
    return (sum(shares[t] for t in term) if isinstance(term, tuple) else shares[term]), all(
        c.holds for c in conds
    )


def grids(quick):
    return {
        "T": [500, 1000, 2000, 4000] + ([] if quick else [8000, 16000]),
        "m": [1, 2, 4, 8],
        "K": [1, 2, 4, 8],
    }


def sweep(
    ctx, prefix, key, p, algo_cls, arrivals_fn, R, kind, x0=None, tau=0, term="sigma_L_server", floor=None
):
    vals, shares, inside = [], [], []
    for v in grids(ctx.quick)[key]:
        cfg = dict(BASE, **{key: v})
        ex, beh, algo = corollary_run(
            p,
            algo_cls,
            arrivals_fn(cfg["m"]),
            cfg["m"],
            cfg["K"],
            cfg["T"],
            R,
            ctx.seed_for(prefix, kind, key, v),
            tau=tau,
            x0=x0,
        )
        vals.append(statistic(ex, cfg["T"], kind, 0.0 if floor is None else floor(cfg)))
        sh, ok = theory_at(
            p,
            beh,
            algo,
            cfg["T"],
            p.default_x0() if x0 is None else x0,
            ctx.seed_for("lf", prefix, key, v),
            term,
        )
        shares.append(sh)
        inside.append(ok)
    return vals, min(shares), all(inside)


def slope_set(
    ctx,
    prefix,
    ref,
    p,
    algo_cls,
    arrivals_fn,
    keys,
    *,
    kind,
    x0,
    suffix,
    label,
    what,
    term,
    R,
    floor=None,
    tau=0,
):
    out, panels = [], []
    rel = ctx.fig(f"{prefix}_speedup{suffix}")[1]
    for key in keys:
        xs = grids(ctx.quick)[key]
        vals, share, inside = sweep(
            ctx, prefix, key, p, algo_cls, arrivals_fn, R, kind, x0=x0, term=term, floor=floor, tau=tau
        )
        v, fit = slope_verdict(
            f"{prefix}.slope_{key}{suffix}",
            f"{label}: {what} ∝ {key}^(−1/2) at η_L=1/√T, η=√(mK)",
            ref,
            xs,
            vals,
            -0.5,
            key=key,
            seed=ctx.seed_for("boot", prefix, key, suffix),
            fig=rel,
            inside_conditions=inside,
            terms={"O(1/√(mKT)) terms, min share on the grid": share},
            notes=f"{term} is ≥ {share:.0%} of Theorem 3's bound on the grid; base point {BASE}",
        )
        out.append(v)
        panels.append(
            {
                "x": xs,
                "y": fit.y,
                "fit": fit,
                "theory_slope": -0.5,
                "xlabel": key,
                "title": f"slope in {key}: {fit.slope:.3f}",
            }
        )
    speedup_plot(ctx.fig(f"{prefix}_speedup{suffix}")[0], panels, title=f"{label}: {what}")
    return out


def mc_vs_exact(ctx, prefix, ref, p, algo, beh, T, x0, R=64, notes=""):
    """Agreement verdict: MC tail and time averages vs exact moments; control: exact moments with σ_L²
    halved."""
    ex = exact_moments(p, algo, beh, T, x0=x0)
    half = HeterogeneousQuadratic(
        dim=p.dim,
        num_workers=p.num_workers,
        L=p.constants.L,
        mu=p.constants.mu,
        sigma_L=p.constants.sigma_L / np.sqrt(2),
        sigma_G=p.constants.sigma_G,
        seed=1,
    )
    exh = exact_moments(half, algo, beh, T, x0=x0)
    tr = sim(p, algo, beh, T, R, ctx.seed_for(prefix, "mc_vs_exact"), x0=x0)
    g = tr.grad_norm_sq
    samples = np.stack([g[:, :T].mean(axis=1), g[:, T // 2 : T].mean(axis=1)], axis=1)

    def stats_of(mo):
        if mo is None:
            return np.full(2, np.nan)
        c = np.asarray(mo.grad_norm_sq)
        return np.array([c[:T].mean(), c[T // 2 : T].mean()])

    return agreement_check(
        id=f"{prefix}.mc_vs_exact",
        claim="Monte Carlo engine = exact moments (time average and stationary tail of E‖∇f(x_t)‖²)",
        reference=ref,
        mc_samples=samples,
        exact_value=stats_of(ex),
        exact_wrong=stats_of(exh),
        wrong_desc="exact moments with σ_L² halved",
        notes=notes,
    )


@register(
    "cor2",
    "Corollary 2: noise averaging gives slope −1/2 in T, m, K (uniform arrivals, σ_G = 0); "
    "full-trajectory slopes; MC = exact",
    REF,
)
def run(ctx):
    R = 16 if ctx.quick else 48
    arr = lambda m: UniformArrivals(m)  # noqa: E731
    pm = problem(mu=0.1)
    xs = pm.constants.x_star
    out = slope_set(
        ctx,
        "cor2",
        REF,
        pm,
        AFACD,
        arr,
        ("T", "m", "K"),
        kind="tail",
        x0=xs,
        suffix="",
        label="AFA-CD from x*",
        what="stationary noise level",
        term="sigma_L_server",
        R=R,
    )
    keys = ("T", "m") if ctx.quick else ("T", "m", "K")
    out += slope_set(
        ctx,
        "cor2",
        REF,
        problem(),
        AFACD,
        arr,
        keys,
        kind="time_avg",
        x0=None,
        suffix="_full",
        label="AFA-CD, full trajectory",
        what="(1/T)ΣE‖∇f‖² (transient + noise)",
        term=("transient", "sigma_L_server"),
        R=R,
    )
    # Monte Carlo version of the full-trajectory T slope (exact moments off)
    Ts = [250, 500, 1000, 2000]
    vals = []
    for T in Ts:
        ex, _, _ = corollary_run(
            problem(), AFACD, UniformArrivals(2), 2, 1, T, R, ctx.seed_for("mcT", T), prefer_exact=False
        )
        vals.append(statistic(ex, T))
    path2, rel2 = ctx.fig("cor2_slope_T_mc")
    v, fit = slope_verdict(
        "cor2.slope_T_mc",
        "AFA-CD, full trajectory: error ∝ T^(−1/2), Monte Carlo + bootstrap CI",
        REF,
        Ts,
        vals,
        -0.5,
        key="T",
        seed=ctx.seed_for("bootmc"),
        fig=rel2,
        inside_conditions=True,
    )
    rate_plot(path2, Ts, fit.y, fit, -0.5, title=f"AFA-CD: MC slope in T {fit.slope:.3f} {fit.ci}")
    out.append(v)
    from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay

    T = BASE["T"]
    algo = AFACD(float(np.sqrt(BASE["m"] * BASE["K"])), float(1 / np.sqrt(T)))
    out.append(
        mc_vs_exact(
            ctx,
            "cor2",
            REF,
            pm,
            algo,
            Behaviour(UniformArrivals(BASE["m"]), NoDelay(), ConstantSteps(BASE["K"])),
            T,
            xs,
            notes="mechanism base point (x_0 = x*, m = 2, K = 1, T = 1000)",
        )
    )
    return out
