"""Corollary 2 [Yang et al. 2022, Cor 2] (and the speedup half of Corollary 1): with η_L = 1/√T and η = √(mK),
AFA-CD's (1/T) Σ E‖∇f(x_t)‖² falls as 1/√(mKT): slope −1/2 in T, in m and in K.

Configuration: ``HeterogeneousQuadratic(dim=5, num_workers=16, L=0.1, mu=0.05, sigma_L=1, sigma_G=0,
seed=1)``, uniform arrivals, no delay, constant K. σ_G = 0 on purpose: with σ_G > 0 and m < M the
uniform-sampling variance adds Θ(√(K/(mT)) σ_G²) (see ``thm3.sampling_term``), which grows with K. L = 0.1
keeps (C1)–(C3) of Theorem 3 true on the whole grid at η_L = 1/√T (they are not scale-free in η_L).
Grids (base point m = 2, K = 1, T = 1000): T ∈ {500, 1000, 2000, 4000} (full adds 8000, 16000); m ∈ {1, 2, 4,
8}; K ∈ {1, 2, 4, 8} (quick: K only in the full tier). R = 16 (quick) / 48 (full) replicates; exact moments
when ``afltheory.exact`` applies, else Monte Carlo with a 95 % percentile bootstrap CI over replicates.
Regime: on every grid point the theory's O(1/√(mKT)) terms (4Δ/(ηη_L T) + 4Lηη_Lσ_L²/(mK)) make ≥ 80 % of
Theorem 3's bound (evaluated on the realized schedule); the check reports the minimum fraction and fails if
below. On a quadratic both leading terms scale exactly as 1/√(mKT) (transient Δ/(xT) and stationary noise ∝
x/(mK) with x = √(mK/T)), so slope −1/2 is expected up to O(√(mK/T)) corrections. Tolerance: CI widened by
0.03. Also a Monte Carlo version of the T slope (T ∈ {250, …, 2000}, exact moments off, bootstrap CI).
Negative control: the same fit against the wrong slope 0 (no speedup).
"""

from __future__ import annotations

from afltheory.algorithms import AFACD
from afltheory.anarchy import UniformArrivals
from afltheory.plots import speedup_plot
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory import theorem3

from ._rates import corollary_run, slope_verdict
from .registry import register

REF = "[Yang et al. 2022, Cor 2]"
M = 16


def problem():
    return HeterogeneousQuadratic(dim=5, num_workers=M, L=0.1, mu=0.05, sigma_L=1.0, sigma_G=0.0, seed=1)


def lead_fraction(p, beh, algo, T, seed):
    s = beh.sample(T, 1, p.num_workers, seed)
    x = algo.eta * algo.eta_L
    Delta = p.value(p.default_x0()) - p.constants.f_star
    L, sL = p.constants.L, p.constants.sigma_L
    lead = 4 * Delta / (x * T) + 4 * L * x * sL**2 / (s.m * float(s.K_harmonic.mean()))
    b = theorem3.bound(s, p.constants, eta=algo.eta, eta_L=algo.eta_L, f0=p.value(p.default_x0()),
                       num_workers=p.num_workers)
    conds = theorem3.conditions(L=L, eta=algo.eta, eta_L=algo.eta_L, K_max=int(s.local_steps.max()),
                                tau=int(s.tau.max()), num_workers=p.num_workers)
    return float(lead / b.mean()), all(c.holds for c in conds)


def sweep(ctx, key, p, algo_cls, grid, base, R, arrivals_fn, tau=0, n_eta_fn=None):
    exps, fr, okc = [], [], []
    for v in grid:
        cfg = dict(base, **{key: v})
        ex, beh, algo = corollary_run(p, algo_cls, arrivals_fn(cfg["m"]), cfg["m"], cfg["K"], cfg["T"], R,
                                      ctx.seed_for(key, v), tau=tau,
                                      n_eta=None if n_eta_fn is None else n_eta_fn(cfg))
        exps.append(ex)
        f, c = lead_fraction(p, beh, algo, cfg["T"], ctx.seed_for("lf", key, v))
        fr.append(f)
        okc.append(c)
    return exps, min(fr), all(okc)


def slope_checks(ctx, prefix, ref, p, algo_cls, arrivals_fn, keys, tau=0, label="AFA-CD", mc_T=True):
    R = 16 if ctx.quick else 48
    base = dict(m=2, K=1, T=1000)
    grids = {"T": [500, 1000, 2000, 4000] + ([] if ctx.quick else [8000, 16000]), "m": [1, 2, 4, 8],
             "K": [1, 2, 4, 8]}
    out, panels = [], []
    path, rel = ctx.fig(f"{prefix}_speedup")
    for key in keys:
        exps, frac, conds_ok = sweep(ctx, key, p, algo_cls, grids[key], base, R, arrivals_fn, tau=tau)
        v, fit = slope_verdict(f"{prefix}.slope_{key}", f"{label}: error ∝ {key}^(−1/2) at η_L=1/√T, η=√(mK)",
                               ref,
                               grids[key], exps, -0.5, xlabel=key, seed=ctx.seed_for("boot", key), fig=rel,
                               tol=0.03, wrong=0.0, also=frac >= 0.8 and conds_ok, inside_conditions=conds_ok,
                               details={"lead_fraction_min": frac},
                               notes=f"leading-term share of the bound ≥ {frac:.2f} on the grid (required ≥ "
                               "0.8); "
                                     f"all conditions hold: {conds_ok}; base point {base}")
        out.append(v)
        panels.append({"x": grids[key], "y": fit.y, "fit": fit, "theory_slope": -0.5, "xlabel": key,
                       "title": f"slope in {key}: {fit.slope:.3f}"})
    speedup_plot(path, panels, title=f"{label}: linear speedup")
    if mc_T:
        # Monte Carlo version of the T slope with a bootstrap CI (exact moments switched off)
        Ts = [250, 500, 1000, 2000]
        exps = [corollary_run(p, algo_cls, arrivals_fn(2), 2, 1, T, R, ctx.seed_for("mcT", T), tau=tau,
                              prefer_exact=False)[0] for T in Ts]
        path2, rel2 = ctx.fig(f"{prefix}_slope_T_mc")
        v, fit = slope_verdict(f"{prefix}.slope_T_mc",
                               f"{label}: error ∝ T^(−1/2), Monte Carlo + bootstrap CI", ref,
                               Ts, exps, -0.5, xlabel="T", seed=ctx.seed_for("bootmc"), fig=rel2, tol=0.03,
                               wrong=0.0)
        from afltheory.plots import rate_plot
        rate_plot(path2, Ts, fit.y, fit, -0.5, title=f"{label}: MC slope in T {fit.slope:.3f} {fit.ci}")
        out.append(v)
    return out


@register("cor2", "Corollary 2: slope −1/2 in T, m, K (uniform arrivals, σ_G = 0)", REF, slow=True)
def run(ctx):
    keys = ("T", "m") if ctx.quick else ("T", "m", "K")
    return slope_checks(ctx, "cor2", REF, problem(), AFACD, lambda m: UniformArrivals(m), keys)
