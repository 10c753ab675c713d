"""Corollary 1 [Yang et al. 2022, Cor 1]: AFA-CD under general arrivals, η_L = 1/√T, η = √(mK): O(1/√(mKT)) +
O(τ²/T) + O(K²/T) + O(σ_G²) — linear speedup down to an O(σ_G²) error ball.

``cor1.slope_T`` (error − floor, σ_G > 0): ``HeterogeneousQuadratic(dim=5, num_workers=10, L=1, mu=0.2,
sigma_L=1, sigma_G=1, seed=1)``, the paper's biased arrivals (``BiasedArrivals.paper(2)``), no delay, K = 1, T
∈ {500, 1000, 2000, 4000} (full adds 8000). The floor is ‖∇f(x̂)‖² at the biased stationary point x̂ (Σ_i π_i
∇f_i(x̂) = 0, π_i the arrival law's inclusion probabilities): for K = 1 without delay E x_t → x̂ whatever the
step. The claim is that the rest, (1/T) Σ E‖∇f(x_t)‖² − ‖∇f(x̂)‖² (transient, σ_L² noise and the arrivals'
sampling variance around x̂), falls as T^(−1/2). With σ_G > 0 the biased arrivals matter (the old σ_G = 0
version coincided with ``cor2.slope_T`` to 1e-14). Exact moments when they apply (else MC, R = 16/48,
bootstrap CI); Theorem 2's conditions evaluated at every point; negative control: slope 0 (step not scaled
with T). ``cor1.floor_sigmaG``: σ_G ∈ {0.25, 0.5, 1, 2, 4}, σ_L = 0.1, concentrated biased arrivals (98 % on
the adversarial pair, m = 2), no delay, K = 2, T = 1000 (η_L = 1/√T, η = √(mK)), L = 1, μ = 0.2; measured:
E‖∇f(x_t)‖² over t ∈ [T/2, T) (exact moments when available). Claim: the floor scales as σ_G² (log–log slope 2
± 0.05) and does not vanish with T (T = 2000 within 10 % of T = 1000). Negative control: the slope a floor ∝
σ_G would have (1). ``cor1.mc_vs_exact``: MC (R = 64) vs exact moments on the σ_G = 1 floor configuration
(z-scores)."""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACD
from afltheory.analysis import fit_slope
from afltheory.anarchy import Behaviour, BiasedArrivals, ConstantSteps, NoDelay
from afltheory.checks import ControlMeasurement, Near, SlopeIn, Verdict
from afltheory.plots import rate_plot
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory import theorem2

from ._common import exact_moments, expectation, sim
from ._configs import concentrated_arrivals
from ._power import agreement_check
from ._rates import corollary_run, slope_verdict, statistic
from .registry import register

REF = "[Yang et al. 2022, Cor 1, Remark 2]"


def biased_point(p, pi):
    """x̂ with Σ_i π_i ∇f_i(x̂) = 0 (quadratic f_i: the weighted gradient is affine, solved exactly)."""
    d = p.dim

    def g(x):
        return sum(pi[i] * p.local_grad(x, i) for i in range(p.num_workers))

    b = g(np.zeros(d))
    A = np.stack([g(np.eye(d)[j]) - b for j in range(d)], axis=1)
    return np.linalg.solve(A, -b)


def floor_config(sg, T):
    q = HeterogeneousQuadratic(dim=5, num_workers=10, L=1.0, mu=0.2, sigma_L=0.1, sigma_G=sg, seed=1)
    beh = Behaviour(concentrated_arrivals(q), NoDelay(), ConstantSteps(2))
    return q, beh, AFACD(float(np.sqrt(2 * 2)), float(1 / np.sqrt(T)))


def floor_value(sg, T, seed, R):
    q, beh, algo = floor_config(sg, T)
    ex = expectation(q, algo, beh, T, R, seed)
    return statistic(ex, T, "tail")[0], ex.method


@register(
    "cor1", "Corollary 1: error − floor ∝ T^(−1/2) under biased arrivals with σ_G > 0; the σ_G² floor", REF
)
def run(ctx):
    return [_slope_T(ctx), _floor_sigmaG(ctx), _mc_vs_exact(ctx)]


def _replicates(ctx):
    """Monte Carlo replicates of the T- and σ_G-sweeps: 16 (quick) / 48 (full)."""
    return 16 if ctx.quick else 48


def _slope_T(ctx):
    """cor1.slope_T — Corollary 1: error − floor ∝ T^(−1/2) under biased arrivals (η_L = 1/√T, η = √(mK))."""
    R = _replicates(ctx)
    p = HeterogeneousQuadratic(dim=5, num_workers=10, L=1.0, mu=0.2, sigma_L=1.0, sigma_G=1.0, seed=1)
    arrivals = BiasedArrivals.paper(2)
    pi, _ = arrivals.inclusion(p.num_workers)
    floor = float(np.sum(p.grad(biased_point(p, pi)) ** 2))
    Ts = [500, 1000, 2000, 4000] + ([] if ctx.quick else [8000])
    vals, inside = [], []
    for T in Ts:
        ex, beh, algo = corollary_run(p, AFACD, arrivals, 2, 1, T, R, ctx.seed_for("cor1", T))
        vals.append(statistic(ex, T, "time_avg", floor))
        conds = theorem2.conditions(L=1.0, eta=algo.eta, eta_L=algo.eta_L, K_max=1, tau=0)
        inside.append(all(c.holds for c in conds))
    path, rel = ctx.fig("cor1_speedup")
    v, fit = slope_verdict(
        "cor1.slope_T",
        "AFA-CD, paper's biased arrivals, σ_G = 1: error − floor ∝ T^(−1/2) at η_L=1/√T, η=√(mK)",
        REF,
        Ts,
        vals,
        -0.5,
        key="T",
        seed=ctx.seed_for("boot", "cor1"),
        fig=rel,
        inside_conditions=all(inside),
        notes=f"floor ‖∇f(x̂)‖² = {floor:.4g} at the biased stationary point; error − "
        "floor " + ", ".join(f"{x:.4g}" for x, _ in vals),
    )
    rate_plot(
        path,
        Ts,
        fit.y,
        fit,
        -0.5,
        xlabel="T",
        ylabel="(1/T)ΣE‖∇f‖² − floor",
        title=f"Cor 1 (σ_G = 1, biased arrivals): slope {fit.slope:.3f}",
    )
    return v


def _floor_sigmaG(ctx):
    """cor1.floor_sigmaG — Corollary 1 / Remark 2: the O(σ_G²) floor (slope 2 in σ_G, persists in T)."""
    R = _replicates(ctx)
    sgs = [0.25, 0.5, 1.0, 2.0, 4.0]
    fl, methods = [], set()
    for sg in sgs:
        val, meth = floor_value(sg, 1000, ctx.seed_for("floor", sg), R)
        fl.append(val)
        methods.add(meth)
    fitf = fit_slope(sgs, fl)
    v2000, _ = floor_value(1.0, 2000, ctx.seed_for("floor4000"), R)
    persists = Near(tol=0.1).judge(v2000 / fl[2], 1.0)  # floor(T=2000)/floor(T=1000) within 10 %
    path, rel = ctx.fig("cor1_floor")
    rate_plot(
        path,
        sgs,
        fl,
        fitf,
        2.0,
        xlabel="σ_G",
        ylabel="E‖∇f(x_t)‖², t ∈ [T/2, T)",
        title=f"Cor 1 floor vs σ_G (slope {fitf.slope:.3f})",
    )
    algo = floor_config(1.0, 1000)[2]
    conds = theorem2.conditions(L=1.0, eta=algo.eta, eta_L=algo.eta_L, K_max=2, tau=0)
    return Verdict.judged(
        id="cor1.floor_sigmaG",
        claim="O(σ_G²) floor under general arrivals: slope 2 in σ_G, persists in T",
        reference=REF,
        measured=fitf.slope,
        theoretical=2.0,
        criterion=SlopeIn(tol=0.05, text="|slope − 2| ≤ 0.05 and floor(T=2000)/floor(T=1000) within 10 %"),
        requires={"floor persists in T": persists},
        figures=(rel,),
        control=ControlMeasurement(
            description="same fit against slope 1 (a floor ∝ σ_G)", measured=fitf.slope, theoretical=1.0
        ),
        method=", ".join(sorted(methods)),
        inside_conditions=all(c.holds for c in conds),
        notes=f"floors {[round(float(x), 6) for x in fl]}; σ_G=1 floor at T=1000 {fl[2]:.4g}, T=2000 "
        f"{v2000:.4g}",
        details={"floors": fl, "floor_T2000": v2000},
    )


def _mc_vs_exact(ctx):
    """cor1.mc_vs_exact — Monte Carlo vs exact moments on Corollary 1's σ_G = 1 floor configuration."""
    q, beh, algo = floor_config(1.0, 1000)
    T = 1000
    ex = exact_moments(q, algo, beh, T)
    half = HeterogeneousQuadratic(
        dim=5, num_workers=10, L=1.0, mu=0.2, sigma_L=0.1, sigma_G=1.0 / np.sqrt(2), seed=1
    )
    exh = exact_moments(half, algo, beh, T)
    tr = sim(q, algo, beh, T, 64, ctx.seed_for("cor1", "mc_vs_exact"))
    g = tr.grad_norm_sq
    checkpoints = (1, 4, 16, 64)

    def stats_of(mo):
        if mo is None:
            return np.full(len(checkpoints) + 2, np.nan)
        c = np.asarray(mo.grad_norm_sq)
        return np.array([c[t] for t in checkpoints] + [c[:T].mean(), c[T // 2 : T].mean()])

    samples = np.stack(
        [g[:, t] for t in checkpoints] + [g[:, :T].mean(axis=1), g[:, T // 2 : T].mean(axis=1)], axis=1
    )
    return agreement_check(
        id="cor1.mc_vs_exact",
        claim="Monte Carlo engine = exact moments (E‖∇f(x_t)‖² at t = 1, 4, 16, 64, "
        "time "
        "average, tail) on the floor "
        "configuration",
        reference=REF,
        mc_samples=samples,
        exact_value=stats_of(ex),
        exact_wrong=stats_of(exh),
        wrong_desc="exact moments with σ_G halved in square (σ_G² / 2)",
        notes="σ_G = 1, σ_L = 0.1, concentrated arrivals, K = 2, T = 1000",
    )
