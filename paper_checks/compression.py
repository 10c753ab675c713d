"""Compressed updates (issue 17; docs/theorems.md "Compression"; afltheory.theory.compression).

Verdicts (each with a negative control a real bug or a plausible wrong claim resembles):
- ``compression.gd_rate`` — compressed GD, f μ-strongly convex, γ = 1/((1+ω)L) (inside the condition):
  E‖x_k − x*‖² ≤ (1 − γμ)^k ‖x_0 − x*‖² for rand-k, Bernoulli mask, Gaussian sketch, low rank (exact moments,
  cross-checked against a plain recursion) and QSGD / rotated quantizer (Monte Carlo, 99 % UCB). x_0 − x* lies
  mostly along the slowest eigenvector, where the rate matters. Control: rand-k with its d/k rescaling
  dropped.
- ``compression.distributed_floor`` — distributed compressed GD (n nodes, exact gradients, γ = 1/((1+2ω/n)L)):
  E‖x_k − x*‖² ≤ (1 − γμ)^k D_0 + 2γωζ*²/(μn) (exact). Control: the bound without the floor term.
- ``compression.diana`` — DIANA's shifts remove that floor (E‖x_T − x*‖²/D_0 ≤ 1e-12, Monte Carlo).
  Control: DIANA with α = 0 (shifts never learned).
- ``compression.variance_identity`` — E‖(1/n)ΣC_i(g_i)‖² = ‖ḡ‖² + (1/n²)ΣE‖C_i(g_i) − g_i‖² for independent
  C_i (Monte Carlo z-scores against the exact right side). Control: every worker seeded identically.
- ``compression.fedpaq`` — FedPAQ's factors: the exact split (1/(rn))ΣE‖Q(Δ_i) − Δ_i‖² (q/n at r = n) +
  (n − r)/(r(n − 1))·spread, r of n without replacement. Control: the with-replacement factor 1/r.
- ``compression.error_feedback`` — biased compressors (top-k, scaled sign) need error feedback: with EF the
  floor of distributed GD shrinks like γ² (slope ≥ 1.5 in log γ); control: the same runs without EF.
- ``compression.exact_vs_mc`` — exact second-moment recursion with E[MΓMᵀ] vs Monte Carlo under AFA-CD with
  anarchic arrivals, delays and local steps. Control: the recursion without the compressor's term.
- ``compression.afacd_omega`` — *empirical law, not a verdict on the paper* (which has no compressed theorem):
  under AFA-CD with σ_G = 0 the exact stationary E‖∇f‖² scales by (1 + ω) — compression acts on the σ_L² term
  of Theorems 2/3 as σ_L² → (1 + ω)σ_L² (isotropic noise, small η_L). Control: the law (1 + ω/m).
Figure (full tier; no verdict reads it): error against rounds and against bits sent, several compressors under
AFA-CD (``compression_bits``).
"""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACD
from afltheory.analysis import fit_slope, max_abs_z, min_abs_z, upper_confidence_bound, z_score
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals, UniformDelay, UniformSteps
from afltheory.checks import AtLeast, AtMost, ControlMeasurement, Near, Verdict
from afltheory.compression import (
    DIANA,
    QSGD,
    BernoulliMask,
    Channel,
    ErrorFeedback,
    GaussianSketch,
    LowRank,
    RandK,
    Sign,
    StochasticQuantizer,
    TopK,
)
from afltheory.compression.analysis import compressed_gd_reference, zeta_star_sq
from afltheory.exact import exact_distance_sq, moments, steady_state, zscores
from afltheory.plots.compression import bits_plot
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory import compression as TC
from afltheory.theory import theorem2

from ._common import sim
from ._robust import finite_max, finite_min
from .registry import register

REF = "[docs/theorems.md Compression; Khirirat 2018, Gorbunov 2020, Mishchenko 2019, Reisizadeh 2020]"
Z_MAX = 4.0  # |z| tolerance for Monte Carlo identities (two-sided; per comparison p < 1e-4)


def _gd_beh(n):
    return Behaviour(arrivals=UniformArrivals(m=n), delays=NoDelay(), local_steps=ConstantSteps(1))


def _dist_mc(problem, algo, beh, T, R, seed, x0):
    tr = sim(problem, algo, beh, T, R, seed, x0=x0, record_x=True)
    return np.sum((tr.x - problem.constants.x_star) ** 2, axis=-1)  # (R, T+1)


def check_gd_rate(ctx):
    d, L, mu, T = 8, 1.0, 0.1, 200
    p = HeterogeneousQuadratic(dim=d, num_workers=1, L=L, mu=mu, sigma_L=0.0, sigma_G=0.0, seed=1)
    H = p.linear_gaussian().hessians[0]
    v = np.linalg.eigh(H)[1][:, 0]  # slowest direction (eigenvalue μ)
    x0 = p.constants.x_star + 2.0 * v + 0.2 * np.random.default_rng(ctx.seed_for("gd_x0")).standard_normal(d)
    D0 = float(np.sum((x0 - p.constants.x_star) ** 2))
    beh = _gd_beh(1)
    ratios, ref_err, conds = {}, 0.0, []
    for comp in (RandK(2), BernoulliMask(0.25), GaussianSketch(4), LowRank(2)):
        w = comp.omega(d)
        g = 1.0 / ((1.0 + w) * L)
        conds.append(TC.compressed_gd_condition(g, L, w).holds)
        ex = exact_distance_sq(p, AFACD(eta=1.0, eta_L=g, compressor=comp), beh, T, x0)
        ref = compressed_gd_reference(H, x0 - p.constants.x_star, g, comp, T)
        ref_err = max(ref_err, float(np.max(np.abs(ex - ref)) / D0))
        ratios[repr(comp)] = float(np.max(ex[1:] / TC.compressed_gd_bound(T, D0, g, mu)[1:]))
    R = 64 if ctx.quick else 256
    for comp in (QSGD(2), StochasticQuantizer(2, rotate=True)):
        w = comp.omega(d)
        g = 1.0 / ((1.0 + w) * L)
        conds.append(TC.compressed_gd_condition(g, L, w).holds)
        dist = _dist_mc(
            p, AFACD(eta=1.0, eta_L=g, compressor=comp), beh, T, R, ctx.seed_for("gd", repr(comp)), x0
        )
        bound = TC.compressed_gd_bound(T, D0, g, mu)
        ks = np.arange(10, T + 1, 10)
        ratios[repr(comp) + " (MC UCB)"] = max(
            upper_confidence_bound(dist[:, k] / bound[k], 0.99) for k in ks
        )
    comp = RandK(2)
    g = 1.0 / ((1.0 + comp.omega(d)) * L)
    bad = compressed_gd_reference(H, x0 - p.constants.x_star, g, comp, T, scale=comp.k / d)
    ctl = float(np.max(bad[1:] / TC.compressed_gd_bound(T, D0, g, mu)[1:]))
    worst = max(ratios.values())
    return Verdict.judged(
        id="compression.gd_rate",
        claim="compressed GD with γ = 1/((1+ω)L): E‖x_k − x*‖² ≤ (1 − γμ)^k‖x_0 − x*‖²",
        reference=REF,
        measured=worst,
        ci=None,
        theoretical=1.0,
        criterion=AtMost(tol=1e-9, text="max_k measured/bound ≤ 1"),
        requires={"inside the condition": all(conds)},
        quantity="max_k measured/bound",
        inside_conditions=bool(all(conds)),
        control=ControlMeasurement(
            description="rand-k with the d/k rescaling dropped (E C(x) = (k/d)x): max_k ratio ≤ 1",
            measured=ctl,
            theoretical=1.0,
        ),
        method="exact (linear compressors) + monte-carlo 99% UCB (QSGD, rotated quantizer)",
        notes=(
            f"d = {d}, μ = {mu}, L = {L}, T = {T}; inside the condition for every compressor; max ratio per "
            f"compressor: "
            + ", ".join(f"{k} {v:.3g}" for k, v in ratios.items())
            + f"; exact engine vs plain recursion: max |Δ|/D_0 = {ref_err:.1e}"
        ),
        details={"ratios": ratios, "exact_vs_reference": ref_err, "control_ratio": ctl},
    )


def _distributed_problem():
    return HeterogeneousQuadratic(dim=8, num_workers=4, L=1.0, mu=0.2, sigma_L=0.0, sigma_G=1.0, seed=0)


def check_distributed_floor(ctx):
    p = _distributed_problem()
    d, n, mu, L, T = p.dim, p.num_workers, 0.2, 1.0, 300
    z2 = zeta_star_sq(p)
    x0 = p.default_x0()
    ratios, shares, floors, no_floor, conds, at = {}, {}, {}, 0.0, [], {}
    for comp in (RandK(2), BernoulliMask(0.25), GaussianSketch(9)):
        w = comp.omega(d)
        g = 1.0 / ((1.0 + 2.0 * w / n) * L)
        conds.append(TC.distributed_condition(g, L, w, n).holds)
        ex = exact_distance_sq(p, AFACD(eta=1.0, eta_L=g, compressor=comp), _gd_beh(n), T, x0)
        terms = TC.distributed_bound(T, ex[0], g, mu, w, n, z2)
        b = terms["transient"] + terms["floor"]
        k = 1 + int(np.argmax(ex[1:] / b[1:]))
        ratios[repr(comp)] = float(ex[k] / b[k])
        at[repr(comp)] = {name: float(v[k] / b[k]) for name, v in terms.items()}
        shares[repr(comp)] = float(terms["floor"][-1] / b[-1])
        floors[repr(comp)] = (float(ex[-1]), float(terms["floor"][-1]))
        no_floor = max(no_floor, float(np.max(ex[1:] / terms["transient"][1:])))
    worst = max(ratios.values())
    worst_key = max(ratios, key=ratios.get)
    return Verdict.judged(
        id="compression.distributed_floor",
        claim="distributed compressed GD: E‖x_k − x*‖² ≤ (1−γμ)^k D_0 + 2γωζ*²/(μn), γ = 1/((1+2ω/n)L)",
        reference=REF,
        measured=worst,
        ci=None,
        theoretical=1.0,
        criterion=AtMost(tol=1e-9, text="max_k measured/bound ≤ 1 (exact)"),
        quantity="max_k measured/bound",
        control=ControlMeasurement(
            description="the bound without its floor term 2γωζ*²/(μn)",
            measured=no_floor,
            theoretical=1.0,
        ),
        method="exact moments",
        slack=1.0 / worst,
        inside_conditions=bool(all(conds)),
        terms=at[worst_key],
        notes=(
            f"n = {n}, d = {d}, ζ*² = {z2:.3g}, exact gradients, full participation, K = 1, τ = 0; inside "
            f"the step condition; terms = shares of the bound where the ratio peaks ({worst_key}). "
            f"Final E‖x_T − x*‖² vs the bound's floor (floor share of the bound at T): "
            + ", ".join(f"{k} {a:.3g} vs {b:.3g} ({shares[k]:.0%})" for k, (a, b) in floors.items())
        ),
        details={"ratios": ratios, "floors": floors, "floor_share": shares},
    )


def check_diana(ctx):
    p = _distributed_problem()
    d, n, T = p.dim, p.num_workers, 300
    x0 = p.default_x0()
    R = 32 if ctx.quick else 128
    res, ctl = {}, {}
    for comp in (RandK(2), GaussianSketch(9)):
        g = 1.0 / ((1.0 + 2.0 * comp.omega(d) / n) * 1.0)
        for alpha, out in ((None, res), (0.0, ctl)):
            dist = _dist_mc(
                p,
                AFACD(eta=1.0, eta_L=g, compressor=DIANA(comp, alpha)),
                _gd_beh(n),
                T,
                R,
                ctx.seed_for("diana", repr(comp)),
                x0,
            )
            out[repr(comp)] = float(dist[:, -1].mean() / dist[:, 0].mean())
    worst, best_ctl = max(res.values()), min(ctl.values())
    return Verdict.judged(
        id="compression.diana",
        claim="DIANA's learned shifts remove the heterogeneity floor: E‖x_T − x*‖²/D_0 → 0",
        reference=REF,
        measured=worst,
        ci=None,
        theoretical=1e-12,
        criterion=AtMost(text="E‖x_T − x*‖²/D_0 ≤ 1e-12 at T = 300"),
        quantity="E‖x_T − x*‖²/D_0",
        control=ControlMeasurement(
            description="DIANA with α = 0 (shifts never learned = plain compression)",
            measured=best_ctl,
            theoretical=1e-12,
        ),
        method=f"monte-carlo (R={R}), exact gradients",
        notes="α = 1/(1+ω); " + ", ".join(f"{k}: {v:.2e} (α=0: {ctl[k]:.3g})" for k, v in res.items()),
    )


def _independent_and_shared(comp, G, N, seed):
    """‖(1/n)Σ C_i(g_i)‖² per draw: independent per worker (Channel); the bug: one seed for all workers."""
    n, d = G.shape
    ch = Channel(comp, d, n, N, seed)
    out, _, _ = ch.send(
        ch.init(), np.broadcast_to(G, (N, n, d)).copy(), np.broadcast_to(np.arange(n), (N, n)), 1
    )
    ind = np.sum(out.mean(axis=1) ** 2, axis=1)
    shared = np.zeros((N, d))
    for i in range(n):
        shared += comp.compress(np.broadcast_to(G[i], (N, d)), np.random.default_rng(seed))[0]
    return ind, np.sum((shared / n) ** 2, axis=1)


def check_variance_identity(ctx):
    d, n = 8, 5
    rng = np.random.default_rng(ctx.seed_for("vi"))
    G = rng.standard_normal(d) + 0.5 * rng.standard_normal((n, d))  # correlated gradients
    N = 20000 if ctx.quick else 80000
    zs, zc = {}, {}
    for comp in (
        RandK(2),
        BernoulliMask(0.3),
        GaussianSketch(3),
        LowRank(1),
        QSGD(2),
        StochasticQuantizer(2),
        StochasticQuantizer(2, rotate=True),
    ):
        rhs = TC.variance_identity(G, [comp.error_sq(g) for g in G])
        ind, shared = _independent_and_shared(comp, G, N, ctx.seed_for("vi", repr(comp)))
        zs[repr(comp)], zc[repr(comp)] = z_score(ind, rhs)[0], z_score(shared, rhs)[0]
    worst, ctl = max_abs_z(zs.values()), min_abs_z(zc.values())
    return Verdict.judged(
        id="compression.variance_identity",
        claim="E‖(1/n)ΣC_i(g_i)‖² = ‖ḡ‖² + (1/n²)ΣE‖C_i(g_i) − g_i‖² (independent unbiased C_i)",
        reference=REF,
        measured=worst,
        ci=None,
        theoretical=0.0,
        criterion=Near(tol=Z_MAX, text=f"max |z| ≤ {Z_MAX}"),
        control=ControlMeasurement(
            description="every worker seeded identically (shared compression randomness): min |z|",
            measured=ctl,
            theoretical=0.0,
        ),
        method=f"monte-carlo (N={N}) against the exact right side (closed-form E‖C(g) − g‖²)",
        notes="z per compressor: "
        + ", ".join(f"{k} {v:+.2f}" for k, v in zs.items())
        + "; control |z|: "
        + ", ".join(f"{k} {abs(v):.0f}" for k, v in zc.items()),
    )


def check_fedpaq(ctx):
    d, n = 8, 10
    rng = np.random.default_rng(ctx.seed_for("fedpaq"))
    deltas = rng.standard_normal(d) + 1.5 * rng.standard_normal((n, d))
    comp = RandK(2)
    q = comp.omega(d)
    err = np.array([comp.error_sq(x) for x in deltas])
    N = 40000 if ctx.quick else 160000
    out, zs, zc = {}, {}, {}
    for r in (4, n):
        sub = np.argsort(rng.random((N, n)), axis=1)[:, :r]  # uniform r-subsets
        ch = Channel(comp, d, n, N, ctx.seed_for("fedpaq", r))
        msg, _, _ = ch.send(ch.init(), deltas[sub], sub, 1)
        s = np.sum((msg.mean(axis=1) - deltas.mean(axis=0)) ** 2, axis=1)
        parts = TC.fedpaq_variance(deltas, err, r)
        pred = parts["quantization"] + parts["sampling"]
        spread = parts["sampling"] / TC.sampling_factor(n, r) if r < n else 0.0
        wrong = parts["quantization"] + spread / r * (n - 1) / n * (r < n)  # with-replacement factor
        zs[r], zc[r] = z_score(s, pred)[0], z_score(s, wrong)[0]
        out[r] = (float(s.mean()), pred, parts)
    f = TC.fedpaq_factors(q, n, 4)
    worst, ctl = max_abs_z(zs.values()), min_abs_z([zc[4]])
    qn = out[n][2]["quantization"] / float(np.mean(np.sum(deltas**2, axis=1)))
    return Verdict.judged(
        id="compression.fedpaq",
        claim="FedPAQ's factors: quantization variance q/n·(1/n)Σ‖Δ_i‖² (r = n), sampling (n−r)/(r(n−1))",
        reference=REF,
        measured=worst,
        ci=None,
        theoretical=0.0,
        criterion=Near(tol=Z_MAX, text=f"max |z| ≤ {Z_MAX}"),
        requires={"exact sampling factor q/n": abs(qn - f["q/n"]) < 1e-12},
        control=ControlMeasurement(
            description="sampling factor 1/r·(n−1)/n (with replacement) for (n−r)/(r(n−1)), r = 4: |z|",
            measured=ctl,
            theoretical=0.0,
        ),
        method=f"monte-carlo (N={N}) against the exact split",
        notes=(
            f"Q = RandK(2), q = {q:g}, n = {n}; factors {', '.join(f'{k} = {v:.4g}' for k, v in f.items())}; "
            f"r = 4: measured {out[4][0]:.4g} vs {out[4][1]:.4g} (z {zs[4]:+.2f}); r = n: {out[n][0]:.4g} vs "
            f"{out[n][1]:.4g} (z {zs[n]:+.2f}); E‖Q(x)‖² = (1 + q)‖x‖² exactly for rand-k"
        ),
        details={"z": zs, "control_z": zc, "factors": f},
    )


def check_error_feedback(ctx):
    p = _distributed_problem()
    n = p.num_workers

    def floor(c, g):
        tr = sim(p, AFACD(eta=1.0, eta_L=g, compressor=c), _gd_beh(n), int(100 / g), 1, 0)
        return float(tr.grad_norm_sq[0, -40:].mean())

    slopes, ctl = {}, {}
    for comp in (TopK(2), Sign()):
        for wrap, out in ((ErrorFeedback, slopes), (lambda c: c, ctl)):
            a, b = floor(wrap(comp), 0.4), floor(wrap(comp), 0.1)
            out[repr(comp)] = float(np.log(a / b) / np.log(4.0))
    # NaN-safe (issue 30): a diverged run (inf or NaN floor) fails, where min(...) would drop a NaN
    worst, best_ctl = finite_min(slopes.values()), finite_max(ctl.values())
    return Verdict.judged(
        id="compression.error_feedback",
        claim="biased compressors need error feedback: with EF the floor of distributed GD vanishes like γ²",
        reference=REF,
        measured=worst,
        ci=None,
        theoretical=1.5,
        criterion=AtLeast(text="slope of log floor vs log γ (γ = 0.4 → 0.1) ≥ 1.5"),
        quantity="slope of log floor vs log γ (γ = 0.4 → 0.1)",
        control=ControlMeasurement(
            description="the same runs without error feedback",
            measured=best_ctl,
            theoretical=1.5,
        ),
        method="deterministic simulation (σ_L = 0), E‖∇f‖² over the last 40 of 100/γ rounds",
        notes="slopes with EF: "
        + ", ".join(f"{k} {v:.2f}" for k, v in slopes.items())
        + "; without EF: "
        + ", ".join(f"{k} {v:.2f}" for k, v in ctl.items())
        + " (no EF: a γ-independent floor — the fixed point of mean C(∇f_i(x)) = 0 is not x*)",
    )


def check_exact_vs_mc(ctx):
    p = HeterogeneousQuadratic(dim=6, num_workers=5, L=2.0, mu=0.2, sigma_L=0.5, sigma_G=1.0, seed=0)
    beh = Behaviour(
        arrivals=UniformArrivals(m=3), delays=UniformDelay(max_delay=2), local_steps=UniformSteps(1, 3)
    )
    R, T = (2000 if ctx.quick else 8000), 20
    zs, zc = {}, {}
    plain = moments(p, AFACD(eta=1.0, eta_L=0.1), beh, T)
    for comp in (RandK(2), BernoulliMask(0.5), GaussianSketch(3), LowRank(1)):
        algo = AFACD(eta=1.0, eta_L=0.1, compressor=comp)
        tr = sim(p, algo, beh, T, R, ctx.seed_for("evm", repr(comp)))
        zs[repr(comp)] = float(np.nanmax(np.abs(zscores(tr, moments(p, algo, beh, T)))))
        zc[repr(comp)] = float(np.nanmax(np.abs(zscores(tr, plain))))
    worst, ctl = max(zs.values()), min(zc.values())
    return Verdict.judged(
        id="compression.exact_vs_mc",
        claim="exact moments with E[MΓMᵀ] = Monte Carlo for linear compressors (AFA-CD)",
        reference=REF,
        measured=worst,
        ci=None,
        theoretical=0.0,
        criterion=Near(tol=4.5, text="max_t |z| ≤ 4.5 over 21 rounds"),
        quantity="max_t |z|",
        control=ControlMeasurement(
            description="the exact recursion without the compressor's term",
            measured=ctl,
            theoretical=0.0,
        ),
        method=f"exact vs monte-carlo (R={R})",
        notes=(
            "uniform arrivals m = 3 of 5, delays ≤ 2, K ∈ {1,2,3}, σ_L = 0.5, σ_G = 1; max |z|: "
            + ", ".join(f"{k} {v:.2f} (control {zc[k]:.0f})" for k, v in zs.items())
        ),
    )


def check_afacd_omega(ctx, figures=(), bits=None):
    p = HeterogeneousQuadratic(dim=8, num_workers=6, L=1.0, mu=0.1, sigma_L=1.0, sigma_G=0.0, seed=0)
    m = 3
    beh = Behaviour(
        arrivals=UniformArrivals(m=m), delays=UniformDelay(max_delay=2), local_steps=ConstantSteps(2)
    )
    eta_L = 0.005
    base = steady_state(p, AFACD(eta=1.0, eta_L=eta_L), beh).grad_norm_sq
    comps = (BernoulliMask(0.5), BernoulliMask(0.25), RandK(1), GaussianSketch(4))
    ratio, law, wrong = {}, {}, {}
    for comp in comps:
        w = comp.omega(p.dim)
        ratio[repr(comp)] = float(
            steady_state(p, AFACD(eta=1.0, eta_L=eta_L, compressor=comp), beh).grad_norm_sq / base
        )
        law[repr(comp)], wrong[repr(comp)] = 1.0 + w, 1.0 + w / m
    thm2 = theorem2.conditions(L=1.0, eta=1.0, eta_L=eta_L, K_max=2, tau=2)
    inside = all(c.holds for c in thm2)
    # a diverged steady state (inf, or inf/inf) is reported as an infinite ratio, never NaN; no slope then
    ratio = {k: v if np.isfinite(v) else float("inf") for k, v in ratio.items()}
    finite = all(np.isfinite(v) and v > 0 for v in ratio.values())
    err = max(abs(ratio[k] / law[k] - 1) for k in ratio)
    err_ctl = min(abs(ratio[k] / wrong[k] - 1) for k in ratio)
    slope = fit_slope([law[k] for k in ratio], list(ratio.values())).slope if finite else None
    return Verdict.judged(
        id="compression.afacd_omega",
        claim="empirical law (not the paper's claim): under AFA-CD compression scales the σ_L² floor by 1+ω",
        reference="[empirical; Yang et al. 2022 Thm 2/3 have no compressed form]",
        measured=err,
        ci=None,
        theoretical=0.0,
        criterion=Near(tol=0.05, text="max |floor(ω)/floor(0) / (1+ω) − 1| ≤ 0.05 (η_L = 0.005)"),
        quantity="max |floor(ω)/floor(0) / (1+ω) − 1|",
        control=ControlMeasurement(
            description="the law 1 + ω/m (compression noise averaged like σ_L²/m)",
            measured=err_ctl,
            theoretical=0.0,
        ),
        method="exact steady state",
        finding=False,
        inside_conditions=inside,
        notes=(
            f"σ_G = 0, isotropic σ_L = 1, m = {m} of 6, τ ≤ 2, K = 2, η = 1, η_L = {eta_L} (Theorem 2's "
            f"conditions (C1)–(C3) {'hold' if inside else 'fail'}); slope of log ratio vs log(1+ω) = "
            f"{'n/a (a run diverged)' if slope is None else f'{slope:.4f}'}; ratio vs 1+ω: "
            + ", ".join(f"{k} {ratio[k]:.4f} vs {law[k]:g}" for k in ratio)
            + ". Reading: in Theorems 2/3 replace σ_L² by (1+ω)σ_L² (plus O(η_L) corrections from the "
            "multiplicative noise on the gradient part). Labelled an empirical law: the paper states no "
            "compressed theorem."
        ),
        figures=list(figures),
        details={"ratios": ratio, "slope": slope, "bits_figure": bits},
    )


def bits_figure(path, *, rounds=200, replicates=32, seed=0, eta_L=0.2):
    """E‖∇f(x_t)‖² against rounds and against bits sent, for several compressors under AFA-CD (the README
    figure). Returns {label: (bits per round, E‖∇f(x_t)‖² averaged over the last quarter of the rounds)}."""
    p = HeterogeneousQuadratic(dim=16, num_workers=10, L=1.0, mu=0.1, sigma_L=0.1, sigma_G=0.5, seed=0)
    beh = Behaviour(
        arrivals=UniformArrivals(m=5), delays=UniformDelay(max_delay=2), local_steps=ConstantSteps(2)
    )
    comps = {
        "none (32·d bits)": None,
        "RandK(4)": RandK(4),
        "BernoulliMask(0.25)": BernoulliMask(0.25),
        "GaussianSketch(4)": GaussianSketch(4),
        "LowRank(1)": LowRank(1),
        "QSGD(2)": QSGD(2),
        "Quantizer(2 bits, rotated)": StochasticQuantizer(2, rotate=True),
        "EF(TopK(4))": ErrorFeedback(TopK(4)),
        "EF(Sign)": ErrorFeedback(Sign()),
    }
    runs, summary = {}, {}
    for lab, c in comps.items():
        tr = sim(p, AFACD(eta=1.0, eta_L=eta_L, compressor=c), beh, rounds, replicates, seed)
        runs[lab] = (tr.bits.mean(axis=0), tr.mean())
        summary[lab] = (float(tr.bits[:, -1].mean() / rounds), float(tr.mean()[-(rounds // 4) :].mean()))
    bits_plot(
        path,
        runs,
        title=f"AFA-CD (η = 1, η_L = {eta_L}), d = 16, m = 5 of 10, τ ≤ 2, K = 2, {replicates} replicates",
    )
    return summary


@register(
    "compression",
    "compressed updates: compressed GD, distributed floor and DIANA, variance identity, "
    "FedPAQ factors, error feedback, exact = MC, ω on AFA-CD's σ_L² term",
    REF,
)
def run(ctx):
    figures, summary = [], None
    if not ctx.quick:  # the figure decides nothing: the quick tier skips its 9 compressed runs
        path, rel = ctx.fig("compression_bits")
        figures, summary = [rel], bits_figure(path, replicates=64)
    return [
        check_gd_rate(ctx),
        check_distributed_floor(ctx),
        check_diana(ctx),
        check_variance_identity(ctx),
        check_fedpaq(ctx),
        check_error_feedback(ctx),
        check_exact_vs_mc(ctx),
        check_afacd_omega(ctx, figures=figures, bits=summary),
    ]
