"""Dynamic FedAvg [Rizk, Vlaski, Sayed, SPAWC 2020; the Dynamic FL slides [Rizk et al.]] — docs/dynamic.md.

Configurations: ``DriftingQuadratic.slides`` (K = 20 agents, L = 7 sampled without replacement, offsets c_k
~ N(0, σ_c² I) with σ_c² = 0.1, d = 5, per-agent diagonal Hessians in [0.5, 2], N_k ∈ [40, 80] samples,
mini-batches B_k ∈ 1..8; problem seed 0) with epochs E_k ∈ {1, 2, 3} (``EPOCHS``) unless a verdict says
E_k = 1. Exact values: the exact engine (``afltheory.exact``) and the independent Stein solver
(``afltheory.exact.drift``). Monte Carlo: ``simulate``'s ``Trace.tracking_error``; a per-replicate time
average over the second half of the horizon, compared with the exact value by a z-score (|z| ≤ 4:
P(|Z| > 4) = 6.3e-5 under normality).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

import afltheory as aft
from afltheory.algorithms import DynamicFedAvg
from afltheory.analysis import affine_fit, fit_slope, z_interval, z_score
from afltheory.anarchy import Behaviour
from afltheory.anarchy.arrivals import Arrivals
from afltheory.checks import AllOf, AtMost, ControlMeasurement, Holds, Near, Verdict
from afltheory.exact import drift as dr
from afltheory.exact import moments, steady_state
from afltheory.problems import DriftingQuadratic

from .registry import register

REF = "[Rizk, Vlaski, Sayed 2020, Alg. 2 and the MSD analysis; the Dynamic FL slides [Rizk et al.]]"
K, L = 20, 7
EPOCHS = tuple(int(e) for e in np.random.default_rng(5).integers(1, 4, size=K))
Z_MAX = 4.0


# ------------------------------------------------------------------------------------------- mutants
# (controls)
class WithReplacementArrivals(Arrivals):
    """Mutant: the L agents drawn uniformly *with* replacement (a wrong implementation of Algorithm 2)."""

    def __init__(self, m):
        self.m = int(m)

    def sample(self, rng, rounds, num_workers):
        return rng.integers(0, num_workers, size=(rounds, self.m))


@dataclass(frozen=True)
class NoEpochScaling(DynamicFedAvg):
    """Mutant: agents step μ instead of μ/E_k (the 1/E_k scaling dropped); the server still averages the
    models."""

    @property
    def eta_L(self):
        return self.mu

    def local_step_sizes(self, num_workers):
        return np.full(num_workers, self.mu)

    def aggregate(self, state, x, G, workers, K, delays, num_workers):
        return x - self.mu * np.einsum("rn,rnd->rd", K.astype(float), G) / G.shape[1], state


# ------------------------------------------------------------------------------------------------- helpers
def problem(sigma_q2, hessian="agent"):
    return DriftingQuadratic.slides(sigma_q2=sigma_q2, hessian=hessian)


def mc_msd(p, alg, beh, rounds, R, seed):
    """Per-replicate time average of ‖x_t − w°_t‖² over t ≥ rounds/2, and the mean curve."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = aft.simulate(p, alg, beh, rounds=rounds, replicates=R, seed=seed)
    return tr.tracking_error[:, rounds // 2 :].mean(axis=1), tr.tracking_error


def z(samples, value):
    """(z, se) of the Monte Carlo mean against ``value`` (``afltheory.analysis.z_score``)."""
    return z_score(samples, value)


def ci(samples, level_z=Z_MAX):
    """mean ± level_z·se (``afltheory.analysis.z_interval``)."""
    return z_interval(samples, level_z)


def loglog_slope(x, y):
    """OLS slope of log y on log x (``afltheory.analysis.fit_slope``)."""
    return fit_slope(x, y).slope


def msd_exact(p, mu, epochs=EPOCHS, L=L, **kw):
    return dr.stein_steady_state(p, DynamicFedAvg(mu=mu, epochs=epochs), L, **kw).msd


def argmin_mu(p, epochs, lo=1e-3, hi=0.9):
    r = minimize_scalar(
        lambda lm: msd_exact(p, np.exp(lm), epochs),
        bounds=(np.log(lo), np.log(hi)),
        method="bounded",
        options={"xatol": 1e-7},
    )
    return float(np.exp(r.x)), float(r.fun)


# ------------------------------------------------------------------------------------------------- checks
@register(
    "dynamic",
    "Dynamic FedAvg (exact): the μ trade-off, μ*, the sampling factor, divergence, the seed's bound",
    REF,
)
def run(ctx):
    """Exact verdicts (no Monte Carlo except the divergence flags): fast."""
    return _mu_law(ctx) + _model_factor(ctx) + _divergence(ctx) + _seed_bound(ctx)


@register(
    "dynamic_mc",
    "Dynamic FedAvg: exact MSD vs Monte Carlo, with mutant implementations as controls",
    REF,
    slow=True,
)
def run_mc(ctx):
    R, T = (128, 150) if ctx.quick else (512, 800)
    out = []
    mu = 0.1
    beh = DynamicFedAvg.participation(L)
    alg = DynamicFedAvg(mu=mu, epochs=EPOCHS)
    method = f"monte-carlo (R={R}, T={T}, per-replicate time average t ≥ {T // 2}) vs exact steady state"
    # stationary: the sampling of agents (model variability) is a large share of the MSD
    p0 = problem(0.0)
    ex0 = steady_state(p0, alg, beh)
    st0 = dr.stein_steady_state(p0, alg, L)
    s0, _ = mc_msd(p0, alg, beh, T, R, ctx.seed_for("dynamic", "mc0"))
    z0, se0 = z(s0, ex0.msd)
    rep, _ = mc_msd(p0, alg, Behaviour(WithReplacementArrivals(L)), T, R, ctx.seed_for("dynamic", "rep"))
    z_rep, se_rep = z(rep, ex0.msd)
    rep_exact = dr.stein_steady_state(p0, alg, L, replace=True).msd
    out.append(
        Verdict.judged(
            id="dynamic.exact_vs_mc",
            claim="Exact steady-state MSD of Dynamic FedAvg (L of K sampled "
            "without replacement, per-agent epochs and mini-batches) equals Monte Carlo",
            reference=REF,
            measured=float(s0.mean()),
            ci=ci(s0),
            quantity="steady MSD, MC time average",
            interval=f"mean ± {Z_MAX:g} s.e.",
            theoretical=ex0.msd,
            criterion=Near(z=Z_MAX, text=f"|z| ≤ {Z_MAX:g} (MC standard error {se0:.2g})"),
            stats={"se": se0},
            method=method,
            control=ControlMeasurement(
                description="mutant: agents sampled with replacement (MC) vs the same exact value",
                measured=float(rep.mean()),
                theoretical=ex0.msd,
                stats={"se": se_rep},
            ),
            notes=(
                f"K={K}, L={L}, σ_c²=0.1, σ_q²=0, μ={mu}, E_k={list(EPOCHS)}; exact {ex0.msd:.5g} "
                f"(generic engine) = {st0.msd:.5g} (Stein solver), spectral radius "
                f"{ex0.spectral_radius:.4g}; MC z = {z0:.2f}. With replacement: MC {rep.mean():.5g}, "
                f"z = {z_rep:.1f} (its exact value {rep_exact:.5g})."
            ),
            details={"z": z0, "z_replacement": z_rep, "stein": st0.msd},
        )
    )
    # drifting: the order of drift and update, and the 1/E_k step scaling
    p1 = problem(0.01)
    ex1 = steady_state(p1, alg, beh)
    s1, _ = mc_msd(p1, alg, beh, T, R, ctx.seed_for("dynamic", "mc1"))
    z1, se1 = z(s1, ex1.msd)
    after = dr.stein_steady_state(p1, alg, L, drift_after=True).msd
    z_after = z(s1, after)[0]
    eps, _ = mc_msd(p1, NoEpochScaling(mu=mu, epochs=EPOCHS), beh, T, R, ctx.seed_for("dynamic", "eps"))
    z_eps, se_eps = z(eps, ex1.msd)
    base = dict(
        reference=REF,
        measured=float(s1.mean()),
        ci=ci(s1),
        quantity="steady MSD, MC time average",
        interval=f"mean ± {Z_MAX:g} s.e.",
        theoretical=ex1.msd,
        criterion=Near(z=Z_MAX, text=f"|z| ≤ {Z_MAX:g} (MC standard error {se1:.2g})"),
        stats={"se": se1},
        method=method,
    )
    common = f"σ_q² = 0.01, μ = {mu}: exact {ex1.msd:.5g}, MC z = {z1:.2f}."
    out.append(
        Verdict.judged(
            id="dynamic.drift_order",
            claim="The optimum drifts before the update (the paper's order): "
            "MC matches the exact value with drift first",
            control=ControlMeasurement(
                description="exact value with the drift applied after the update (+ tr Q) vs the same MC",
                measured=float(s1.mean()),
                theoretical=after,
                stats={"se": se1},
            ),
            notes=common + f" Drift-after prediction {after:.5g}, z = {z_after:.1f}.",
            details={"z": z1, "z_drift_after": z_after},
            **base,
        )
    )
    out.append(
        Verdict.judged(
            id="dynamic.epoch_scaling",
            claim="Agent k steps μ/E_k over its E_k epochs: MC matches the exact value",
            control=ControlMeasurement(
                description="mutant: the 1/E_k step scaling dropped (MC) vs the same exact value",
                measured=float(eps.mean()),
                theoretical=ex1.msd,
                stats={"se": se_eps},
            ),
            notes=common
            + (
                f" Without 1/E_k: MC {eps.mean():.5g}, z = {z_eps:.1f} (its exact value "
                f"{dr.stein_steady_state(p1, alg, L, drop_epoch_scaling=True).msd:.5g})."
            ),
            details={"z": z1, "z_no_epoch_scaling": z_eps},
            **base,
        )
    )
    out += _sigma_q(ctx)
    return out


def _mu_law(ctx):
    """Slopes +1 (σ_q = 0) and −1 (μ ≪ μ*), and μ* (first-order vs exact argmin)."""
    out = []
    stat, drift_small = problem(0.0), problem(1e-4)
    mus = np.geomspace(0.005, 0.02, 5)
    s_stat = loglog_slope(mus, [msd_exact(stat, m) for m in mus])
    fo = dr.first_order(drift_small, DynamicFedAvg(mu=0.1, epochs=EPOCHS), L)
    small = np.geomspace(fo["mu_star"] / 30, fo["mu_star"] / 10, 5)
    s_drift = loglog_slope(small, [msd_exact(drift_small, m) for m in small])
    s_drift_on_stat = loglog_slope(small, [msd_exact(stat, m) for m in small])
    s_stat_on_drift = loglog_slope(mus, [msd_exact(drift_small, m) for m in mus])
    tol = 0.05
    out.append(
        Verdict.judged(
            id="dynamic.slope_stationary",
            claim="σ_q = 0: steady MSD grows linearly in μ (log-log slope +1 for small μ)",
            reference=REF,
            ci=None,
            measured=s_stat,
            quantity="log–log slope of steady MSD in μ",
            theoretical=1.0,
            criterion=Near(tol=tol, text=f"±{tol}"),
            method="exact steady state (Stein), μ ∈ [0.005, 0.02]",
            control=ControlMeasurement(
                description="same fit on the drifting problem (σ_q² = 1e-4) over the same μ",
                measured=s_stat_on_drift,
                theoretical=1.0,
            ),
            notes=f"slope {s_stat:.4f}; on the drifting problem the same μ range gives {s_stat_on_drift:.3f}",
        )
    )
    out.append(
        Verdict.judged(
            id="dynamic.slope_drift",
            claim="σ_q > 0, μ ≪ μ*: steady MSD ∝ 1/μ (log-log slope −1)",
            reference=REF,
            ci=None,
            measured=s_drift,
            quantity="log–log slope of steady MSD in μ",
            theoretical=-1.0,
            criterion=Near(tol=tol, text=f"±{tol}"),
            method=f"exact steady state, σ_q² = 1e-4, μ ∈ [μ*/30, μ*/10], μ* = {fo['mu_star']:.4g}",
            control=ControlMeasurement(
                description="same fit on the stationary problem (σ_q = 0)",
                measured=s_drift_on_stat,
                theoretical=-1.0,
            ),
            notes=f"slope {s_drift:.4f}; stationary problem over the same μ: {s_drift_on_stat:.3f}",
        )
    )
    # μ*: small-drift configuration (inside the first-order regime) and the slides' σ_q² = 0.01 (reported)
    mstar, msd_star = argmin_mu(drift_small, EPOCHS)
    pred = fo["mu_star"]
    fo_wrong = dr.first_order(drift_small, DynamicFedAvg(mu=0.1, epochs=EPOCHS), L)
    wrong = float(np.sqrt(fo_wrong["tr_q"] / fo_wrong["tr_b"]))  # data variability C_s left out
    rel_tol = 0.10
    slides = problem(0.01)
    fo_s = dr.first_order(slides, DynamicFedAvg(mu=0.1, epochs=EPOCHS), L)
    ms_s, msd_s = argmin_mu(slides, EPOCHS)
    fo1 = dr.first_order(slides, DynamicFedAvg(mu=0.1), L)
    ms_1, msd_1 = argmin_mu(slides, 1)
    out.append(
        Verdict.judged(
            id="dynamic.mu_star",
            claim="The optimal step μ* = sqrt(Tr(H⁻¹Q)/Tr(H⁻¹(C_b + C_s))) "
            "(first order) locates the minimum of the exact steady MSD",
            reference=REF,
            ci=None,
            measured=mstar,
            quantity="argmin over μ of the exact steady MSD",
            theoretical=pred,
            criterion=Near(rel=rel_tol, text=f"relative error ≤ {rel_tol:.0%}"),
            method="exact steady state minimized over log μ (bounded Brent); σ_q² = 1e-4",
            control=ControlMeasurement(
                description="μ* without the data-variability term C_s",
                measured=mstar,
                theoretical=wrong,
            ),
            notes=(
                f"σ_q² = 1e-4: μ* {mstar:.4g} (first order {pred:.4g}), MSD(μ*) {msd_star:.4g} (first "
                f"order {fo['msd'](pred):.4g}). Slides' σ_q² = 0.01 (outside the small-μ regime, "
                f"reported): E_k as configured μ* {ms_s:.4g} vs {fo_s['mu_star']:.4g}, MSD(μ*) "
                f"{msd_s:.4g} vs {fo_s['msd'](fo_s['mu_star']):.4g}; E_k = 1: μ* {ms_1:.4g} vs "
                f"{fo1['mu_star']:.4g}, MSD(μ*) {msd_1:.4g} vs {fo1['msd'](fo1['mu_star']):.4g}."
            ),
            details={
                "small": {
                    "mu_star": mstar,
                    "msd": msd_star,
                    "fo_mu_star": pred,
                    "fo_msd": float(fo["msd"](pred)),
                },
                "slides": {
                    "mu_star": ms_s,
                    "msd": msd_s,
                    "fo_mu_star": fo_s["mu_star"],
                    "fo_msd": float(fo_s["msd"](fo_s["mu_star"])),
                },
                "slides_E1": {
                    "mu_star": ms_1,
                    "msd": msd_1,
                    "fo_mu_star": fo1["mu_star"],
                    "fo_msd": float(fo1["msd"](fo1["mu_star"])),
                },
            },
        )
    )
    return out


def _sigma_q(ctx):
    out = []
    # T = 300 in the quick tier (the other Monte Carlo verdicts: 150): at T = 150 the line's MC no longer
    # tells sim.noise_per_coordinate apart (|z| < 4), which it does at T = 300
    R, T = (128, 300) if ctx.quick else (512, 800)
    mu = 0.1
    grid = [0.0, 0.0025, 0.005, 0.01, 0.02]
    vals = np.array([msd_exact(problem(s), mu) for s in grid])
    line = affine_fit(grid, vals)
    fo_slope = dr.first_order(problem(1.0), DynamicFedAvg(mu=mu, epochs=EPOCHS), L)["tr_q"] / (2 * mu)
    resid = line.max_rel_residual
    line_after = affine_fit(grid, [msd_exact(problem(s), mu, drift_after=True) for s in grid])
    # MC at the largest σ_q² against both lines
    p = problem(0.02)
    samples, _ = mc_msd(
        p,
        DynamicFedAvg(mu=mu, epochs=EPOCHS),
        DynamicFedAvg.participation(L),
        T,
        R,
        ctx.seed_for("dynamic", "sq"),
    )
    z_line, se_line = z(samples, line.predict(0.02))
    z_after = z(samples, line_after.predict(0.02))[0]
    out.append(
        Verdict.judged(
            id="dynamic.linear_in_sigma_q2",
            claim="Steady MSD is affine in σ_q² (slope Tr of the "
            "drift-only Stein solution), confirmed by MC at σ_q² = 0.02",
            reference=REF,
            measured=float(samples.mean()),
            ci=ci(samples),
            quantity="steady MSD at σ_q² = 0.02, MC",
            interval=f"mean ± {Z_MAX:g} s.e.",
            theoretical=line.predict(0.02),
            criterion=Near(z=Z_MAX, text=f"exact residual ≤ 1e-9 relative and MC |z| ≤ {Z_MAX:g}"),
            stats={"se": se_line},
            requires={"exactly affine (relative residual ≤ 1e-9)": AtMost(limit=1e-9).judge(resid, 0.0)},
            method=f"exact steady state on σ_q² ∈ {grid}; monte-carlo (R={R}, T={T})",
            control=ControlMeasurement(
                description="the line of the drift-after-update variant vs the same MC",
                measured=float(samples.mean()),
                theoretical=line_after.predict(0.02),
                stats={"se": se_line},
            ),
            notes=(
                f"slope dMSD/dσ_q² = {line.slope:.5g} (first order Tr(H⁻¹Q̂)/(2μ) = "
                f"{fo_slope:.5g}), intercept {line.intercept:.5g}, max relative residual "
                f"{resid:.2g}; MC z = {z_line:.2f}, drift-after line z = {z_after:.1f}"
            ),
            details={"sigma_q2": grid, "msd": vals.tolist(), "slope": line.slope},
        )
    )
    return out


def _model_factor(ctx):
    out = []
    mu = 0.1
    # model-variability factor (K − L)/(L(K − 1)): shared Hessian, exact gradients, σ_q = 0, one epoch
    rng = np.random.default_rng(0)
    sh = DriftingQuadratic.federated(
        hessians=np.exp(rng.uniform(np.log(0.5), np.log(2.0), 5)),
        offsets=rng.standard_normal((K, 5)) * np.sqrt(0.1),
    )
    Ls = [1, 2, 4, 7, 10, 14, 19, 20]
    m = np.array([msd_exact(sh, mu, 1, L=l) for l in Ls])
    fac = np.array([(K - l) / (l * (K - 1)) for l in Ls])
    ratio = m[:-1] / fac[:-1]
    spread = float(ratio.max() / ratio.min() - 1)
    m_rep = np.array([msd_exact(sh, mu, 1, L=l, replace=True) for l in Ls])
    ratio_rep = m_rep[:-1] / fac[:-1]
    spread_rep = float(ratio_rep.max() / ratio_rep.min() - 1)
    agent = problem(0.0)
    ma = np.array([msd_exact(agent, 1e-3, 1, L=l) for l in Ls])
    fo_a = [dr.first_order(agent, DynamicFedAvg(mu=1e-3), l)["msd"](1e-3) for l in Ls]
    fo_ratio = ", ".join(f"{a / f:.4f}" for a, f in zip(ma, fo_a, strict=True))
    factor_law = AllOf(
        AtMost(on="spread", limit=1e-9),
        AtMost(on="MSD(L=K) - 1e-12·MSD(1)", limit=0.0),
        text="max/min of MSD(L)/((K−L)/(L(K−1))) − 1 ≤ 1e-9, MSD(L=K) ≤ 1e-12·MSD(1)",
    )
    out.append(
        Verdict.judged(
            id="dynamic.model_factor",
            claim="The model-variability term scales as (K−L)/(L(K−1)) and vanishes at L = K",
            reference=REF,
            ci=None,
            measured=spread,
            quantity="max/min of MSD(L)/((K−L)/(L(K−1))) − 1",
            theoretical=0.0,
            criterion=factor_law,
            stats={"spread": spread, "MSD(L=K) - 1e-12·MSD(1)": m[-1] - 1e-12 * m[0]},
            relation="~=",
            method="exact steady state (Stein), shared Hessian, exact gradients, σ_q = 0, E = 1, μ = 0.1",
            control=ControlMeasurement(
                description="agents sampled with replacement (factor 1/L)",
                measured=spread_rep,
                theoretical=0.0,
                stats={"spread": spread_rep, "MSD(L=K) - 1e-12·MSD(1)": m_rep[-1] - 1e-12 * m_rep[0]},
            ),
            notes=(
                f"L = {Ls}: MSD = {', '.join(f'{v:.4g}' for v in m)}; with replacement the "
                f"ratio spreads by {spread_rep:.3g} and MSD(L=K) = {m_rep[-1]:.3g}. Per-agent "
                f"Hessians with data noise at μ = 1e-3: exact/first-order = {fo_ratio}"
            ),
            details={"L": Ls, "msd": m.tolist(), "factor": fac.tolist()},
        )
    )
    return out


def _divergence(ctx):
    rng = np.random.default_rng(1)
    h = np.exp(rng.uniform(np.log(0.5), np.log(2.0), 5))
    h[0] = 2.0
    p = DriftingQuadratic.federated(
        hessians=h, offsets=rng.standard_normal((K, 5)) * np.sqrt(0.1), sigma_q=0.1
    )
    beh = DynamicFedAvg.participation(L)
    res = {}
    for f in (0.95, 1.05):
        mu = f * 2 / h.max()
        ss = steady_state(p, DynamicFedAvg(mu=mu), beh)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr = aft.simulate(
                p, DynamicFedAvg(mu=mu), beh, rounds=1000, replicates=4, seed=ctx.seed_for("div", f)
            )
        res[f] = (
            mu,
            ss,
            bool(tr.diverged.all()),
            bool(np.isnan(tr.tracking_error).any()),
            float((1 - mu * h.max()) ** 2),
        )
    mu, ss, div, nan, rho = res[1.05]
    mu0, ss0, div0, _, rho0 = res[0.95]
    diverges = AllOf(Holds(on="unstable"), Holds(on="diverged"))  # the detector, at both step sizes
    return [
        Verdict.judged(
            id="dynamic.divergence",
            claim="μ > 2/λ_max(H) (shared H, one epoch) diverges: reported as "
            "divergence with the spectral radius (1 − μλ_max)², never NaN",
            reference=REF,
            ci=None,
            measured=ss.spectral_radius,
            quantity="spectral radius ρ",
            theoretical=rho,
            criterion=AllOf(
                *diverges.criteria,
                text="|ρ − (1 − μλ_max)²| ≤ 1e-9, stable False, MSD inf, "
                "every MC replicate flagged diverged, no NaN",
            ),
            stats={"unstable": not ss.stable, "diverged": div},
            requires={
                "MSD inf": ss.msd == np.inf,
                "no NaN": not nan,
                "ρ = (1 − μλ_max)² to 1e-9": Near(tol=1e-9).judge(ss.spectral_radius, rho),
            },
            relation="~=",
            method="exact steady state + simulate (R=4, T=1000)",
            control=ControlMeasurement(
                description=f"the same detector at μ = 0.95·2/λ_max = {mu0:.4g}",
                measured=ss0.spectral_radius,
                theoretical=rho0,
                stats={"unstable": not ss0.stable, "diverged": div0},
            ),
            notes=(
                f"μ = {mu:.4g}: ρ = {ss.spectral_radius:.6g} (predicted {rho:.6g}), stable={ss.stable}, "
                f"MC diverged={div}; μ = {mu0:.4g}: ρ = {ss0.spectral_radius:.6g}, stable={ss0.stable}, "
                f"steady MSD {ss0.msd:.4g}"
            ),
        )
    ]


def _seed_bound(ctx):
    """The seed's constants: the derived steady-state bound at the slides' configuration (E_k = 1, inside),
    and the finding that its ε² (with τ_ε²) is below the exact model variability when L > (K + 1)/2."""
    out = []
    p = problem(0.01)
    mu = 0.1
    alg = DynamicFedAvg(mu=mu)
    sb = dr.seed_bound(p, alg, L)
    ex = msd_exact(p, mu, 1)
    no_drift = sb["terms"]["data"] + sb["terms"]["model"]
    shares = {k: v / sb["bound"] for k, v in sb["terms"].items()}
    out.append(
        Verdict.judged(
            id="dynamic.seed_bound",
            quantity="exact steady MSD",
            claim="Steady MSD ≤ [μ²(σ_s² + ε²) + λσ_q²]/(1 − λ), "
            "λ = 1 − 2μν + μ²(δ² + β_s²): the O(μ)(σ_s² + ε²) + O(σ_q²/μ) bound with the seed's constants "
            "(bound derived here)",
            reference=REF,
            ci=None,
            measured=ex,
            theoretical=sb["bound"],
            criterion=AtMost(text="exact ≤ bound"),
            slack=sb["bound"] / ex,
            method="exact steady state (Stein); E_k = 1, μ = 0.1, σ_q² = 0.01",
            control=ControlMeasurement(
                description="the bound without its O(σ_q²/μ) drift term",
                measured=ex,
                theoretical=no_drift,
            ),
            notes=(
                f"inside the conditions: {sb['inside']} (E_k = 1 so the seed's incremental term d_i = 0;"
                f" λ = {sb['lambda']:.4g} < 1). Constants: β_s² {sb['beta_s2']:.4g}, σ_s² "
                f"{sb['sigma_s2']:.4g}, ε² {sb['eps2']:.4g}, δ {sb['delta']:.4g}, ν {sb['nu']:.4g}. "
                f"Term shares: " + ", ".join(f"{k} {v:.0%}" for k, v in shares.items())
            ),
            inside_conditions=sb["inside"],
            terms=shares,
            details={"terms": sb["terms"]},
        )
    )
    # finding: ε² = (2/(KL)) Σ τ_ε² ‖∇P_k(w°)‖² < exact model variability when τ_ε < 1/2
    rng = np.random.default_rng(2)
    iso = DriftingQuadratic.federated(hessians=np.ones(5), offsets=rng.standard_normal((K, 5)) * np.sqrt(0.1))
    res = {}
    for l in (7, 16):
        c = dr.seed_constants(iso, DynamicFedAvg(mu=0.05), l)
        b = dr.seed_bound(iso, DynamicFedAvg(mu=0.05), l)
        res[l] = {
            "noise_exact": c["exact_noise_at_optimum"],
            "noise_bound": c["sigma_s2"] + c["eps2"],
            "msd": msd_exact(iso, 0.05, 1, L=l),
            "bound": b["bound"],
            "tau_eps": c["tau_eps"],
        }
    r = res[16]
    fires = lambda q: q["noise_exact"] > q["noise_bound"] and q["msd"] > q["bound"]  # noqa: E731
    out.append(
        Verdict.judged(
            id="dynamic.seed_eps_finding",
            claim="FINDING: the seed's ε² = (2/(KL)) Σ τ_ε² ‖∇P_k(w°)‖² "
            "is below the exact model variability (τ_ε/(KL)) Σ ‖∇P_k(w°)‖² when L > (K+1)/2, so the "
            "seed's gradient-noise bound and the steady-state bound built on it fail",
            reference=REF,
            ci=None,
            measured=r["msd"],
            quantity="exact steady MSD",
            theoretical=r["bound"],
            relation=">=",
            criterion=Holds(
                on="fires", text="exact E‖s‖² at w° > σ_s² + ε² and exact steady MSD > the derived bound"
            ),
            stats={"fires": fires(r)},
            finding=True,
            inside_conditions=True,
            method="exact (Stein); H = I, exact gradients, σ_q = 0, μ = 0.05, E = 1, K = 20, L = 16",
            control=ControlMeasurement(
                description="the same detector at L = 7 (τ_ε = 13/19 > 1/2)",
                measured=res[7]["msd"],
                theoretical=res[7]["bound"],
                stats={"fires": fires(res[7])},
            ),
            notes=(
                f"L = 16 (τ_ε = {r['tau_eps']:.3g}): E‖s‖² at w° = {r['noise_exact']:.4g} > σ_s² + ε² = "
                f"{r['noise_bound']:.4g} (ratio 2τ_ε); steady MSD {r['msd']:.4g} > bound "
                f"{r['bound']:.4g}. L = 7: {res[7]['noise_exact']:.4g} ≤ {res[7]['noise_bound']:.4g}, "
                f"MSD {res[7]['msd']:.4g} ≤ {res[7]['bound']:.4g}. τ_ε² may be an extraction artefact of "
                "the slides (τ_ε makes ε² = 2× the exact term for every L) — [M]."
            ),
            details=res,
        )
    )
    return out


# ------------------------------------------------------------------------------------------- the slides'
# figure
MUS_FIG = (0.03, 0.1, 0.3, 0.8)


@register(
    "dynamic_figure",
    "Dynamic FedAvg: the slides' experiment (MSD in dB vs iteration, stationary and drifting)",
    REF,
    slow=True,
)
def run_figure(ctx):
    """The slides' experiment. Quick tier: the same verdict on a shorter run (T = 100) and no figure; the
    figure (``dynamic_msd.png``) is drawn in the full tier."""
    R, T = (128, 100) if ctx.quick else (512, 1500)
    curves, steady, mcs, zs = {}, {}, {}, {}
    for sq in (0.0, 0.01):
        p = problem(sq)
        for mu in MUS_FIG:
            alg = DynamicFedAvg(mu=mu, epochs=EPOCHS)
            beh = DynamicFedAvg.participation(L)
            ex = moments(p, alg, beh, T)
            samples, te = mc_msd(p, alg, beh, T, R, ctx.seed_for("dynamic_figure", sq, mu))
            steady[(sq, mu)] = msd_exact(p, mu)
            mcs[(sq, mu)] = samples
            zs[(sq, mu)] = z(samples, float(ex.msd[T // 2 :].mean()))[0]
            curves[(sq, mu)] = (ex.msd, te)
    stat = [steady[(0.0, m)] for m in MUS_FIG]
    drift = [steady[(0.01, m)] for m in MUS_FIG]
    increasing = bool(np.all(np.diff(stat) > 0))
    u_shape = bool(
        drift[0] > min(drift) and drift[-1] > min(drift) and np.argmin(drift) not in (0, len(drift) - 1)
    )
    agree = all(abs(v) <= Z_MAX for v in zs.values())
    figures = ()
    if not ctx.quick:
        path, rel = ctx.fig("dynamic_msd")
        _figure(path, curves, R)
        figures = (rel,)
    grows = bool(np.all(np.diff(drift) > 0))  # "MSD grows with μ" claimed for the drifting case too
    return [
        Verdict.judged(
            id="dynamic.slides_experiment",
            claim="Slides' experiment: stationary MSD grows with μ; with drift "
            "σ_q² = 0.01 the steady MSD is U-shaped in μ; exact curves agree with MC",
            reference=REF,
            ci=None,
            measured=float(np.max(np.abs(list(zs.values())))),
            quantity="max |z| of MC time averages vs exact",
            theoretical=Z_MAX,
            relation="<=",
            criterion=Holds(
                on="MSD grows with μ",
                text=f"orderings exact; max |z| of MC time averages vs exact ≤ {Z_MAX:g}",
            ),
            stats={"MSD grows with μ": increasing},
            requires={"U-shaped in μ with drift": u_shape, "exact agrees with MC": agree},
            figures=figures,
            method=f"exact moments + monte-carlo (R={R}, T={T})",
            control=ControlMeasurement(
                description="the stationary claim 'MSD grows with μ' applied to the drifting case",
                measured=drift,
                theoretical=stat,
                stats={"MSD grows with μ": grows},
            ),
            notes=(
                "steady MSD (dB) stationary: "
                + ", ".join(f"μ={m}: {10 * np.log10(v):.1f}" for m, v in zip(MUS_FIG, stat, strict=True))
                + "; drifting: "
                + ", ".join(f"μ={m}: {10 * np.log10(v):.1f}" for m, v in zip(MUS_FIG, drift, strict=True))
                + f"; MC z-scores {', '.join(f'{v:.1f}' for v in zs.values())}"
            ),
            details={
                "mu": list(MUS_FIG),
                "stationary": stat,
                "drifting": drift,
                "z": [float(v) for v in zs.values()],
            },
        )
    ]


def _figure(path, curves, R):
    from afltheory.plots.figures import _fig, save

    fig, axes = _fig(ncols=2, width=5.0, height=3.8)
    for ax, sq in zip(axes, (0.0, 0.01), strict=True):
        for j, mu in enumerate(MUS_FIG):
            ex, te = curves[(sq, mu)]
            t = np.arange(len(ex))
            band = np.array([z_interval(te[:, i], 2.0) for i in range(te.shape[1])])  # mean ± 2 s.e.
            lo, hi = np.maximum(band[:, 0], 1e-12), band[:, 1]
            ax.fill_between(t, 10 * np.log10(lo), 10 * np.log10(hi), color=f"C{j}", alpha=0.25, lw=0)
            ax.plot(t, 10 * np.log10(ex), color=f"C{j}", lw=1.2, label=f"μ = {mu}")
        ax.set_xlabel("iteration i")
        ax.set_ylabel("MSD (dB)")
        ax.set_title(
            f"{'stationary' if sq == 0 else 'non-stationary'}: σ_q² = {sq}, K = {K}, L = {L}, σ_c² = 0.1",
            fontsize=9,
        )
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].text(
        0.01, 0.01, f"lines: exact; bands: MC mean ± 2 SE (R = {R})", transform=axes[0].transAxes, fontsize=7
    )
    save(fig, path)
