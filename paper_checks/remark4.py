"""Remark 4 [Yang et al. 2022, Remark 4]: the error stops depending on the delay τ once τ ≲
min{T^{1/4}/(mK)^{1/4}, T^{1/2}/(m^{1/2}K^{5/2})}.

Configuration: ``HeterogeneousQuadratic(dim=5, num_workers=10, L=1, mu=0.2, sigma_L=1, sigma_G=0, seed=1)``,
uniform arrivals m = 2, K = 1, η_L = 1/√T, η = √(mK), T = 1000 ⇒ threshold τ* = min{4.73, 22.4} = 4.73;
deterministic delays ``FixedDelay(τ)`` for τ ∈ {0, 2, 4} (≤ τ*), R = 16 replicates with common random numbers
(same seed, so the gradient noise is shared and the τ-effect is measured without Monte Carlo noise in the
difference). Claim: max_τ≤τ* |E(τ)/E(0) − 1| ≤ 10 % (at τ* the τ²/T term equals the leading term, so an O(1)
constant-level effect near τ* is allowed by the remark; 10 % is our tolerance). Negative control: the
plausible wrong reading of the remark that takes the *larger* of its two printed thresholds,
T^{1/2}/(m^{1/2}K^{5/2}) = 22.4: at τ = 22 (not divergent) the same criterion must fail. (τ = 40 diverges: a
strawman.) Theorem 3's (C2) L ηη_L + L²η²η_L²τ² ≤ 1/(2M) fails here (ηη_L = √(mK/T) ≈ 0.045 > 1/(2M) = 0.05 −
…): Remark 4 is a statement about the rate, so the verdict is outside the conditions (exploratory), as
labelled."""

from __future__ import annotations

import numpy as np

from afltheory.algorithms import AFACD
from afltheory.anarchy import Behaviour, ConstantSteps, FixedDelay, NoDelay, UniformArrivals
from afltheory.checks import AtMost, ControlMeasurement, Verdict
from afltheory.plots import curves_plot
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory import corollaries, theorem3

from ._common import sim
from .registry import register

REF = "[Yang et al. 2022, Remark 4]"


@register("remark4", "Remark 4: below the τ threshold the error does not depend on τ", REF)
def run(ctx):
    T, m, K, R = 1000, 2, 1, 16
    p = HeterogeneousQuadratic(dim=5, num_workers=10, L=1.0, mu=0.2, sigma_L=1.0, sigma_G=0.0, seed=1)
    thr = min(T**0.25 / (m * K) ** 0.25, T**0.5 / (m**0.5 * K**2.5))
    nums = corollaries.remark4_numbers(T, m, K, L=1.0)
    algo = AFACD(float(np.sqrt(m * K)), float(1 / np.sqrt(T)))
    seed = ctx.seed_for("remark4")
    E, curves = {}, {}
    tau_wrong = int(np.floor(nums["printed"][1]))
    for tau in (0, 2, 4, tau_wrong):
        beh = Behaviour(UniformArrivals(m), FixedDelay(tau) if tau else NoDelay(), ConstantSteps(K))
        tr = sim(p, algo, beh, T, R, seed)
        E[tau] = float(tr.time_average().mean())
        curves[f"τ = {tau}"] = (np.arange(T + 1), tr.mean())
    dev = max(abs(E[t] / E[0] - 1) for t in (2, 4))
    ctl = abs(E[tau_wrong] / E[0] - 1)
    conds = [
        theorem3.conditions(L=1.0, eta=algo.eta, eta_L=algo.eta_L, K_max=K, tau=t, num_workers=10)
        for t in (2, 4)
    ]
    inside = all(c.holds for cs in conds for c in cs)
    path, rel = ctx.fig("remark4_tau")
    curves_plot(path, curves, title=f"E‖∇f(x_t)‖² for several τ (threshold τ* = {thr:.2f})", logx=True)
    return [
        Verdict.judged(
            id="remark4.tau_threshold",
            claim=f"error independent of τ for τ ≤ τ* = {thr:.2f} (T={T}, m={m}, K={K})",
            reference=REF,
            measured=dev,
            theoretical=0.0,
            criterion=AtMost(tol=0.10, text="max relative change ≤ 10 %"),
            relation="~=",
            quantity="max relative change",
            figures=(rel,),
            inside_conditions=inside,
            control=ControlMeasurement(
                description=f"τ = {tau_wrong}: the larger printed threshold "
                "T^(1/2)/(m^(1/2)K^(5/2)) read as the bound (max instead of min)",
                measured=ctl,
                theoretical=0.0,
            ),
            method=f"monte-carlo (R={R}), common random numbers",
            notes=(
                ("" if inside else "outside the conditions (exploratory): Theorem 3's (C2) fails; ")
                + f"(1/T)ΣE‖∇f‖² by τ: { ({k: round(v, 6) for k, v in E.items()}) }; thresholds from "
                f"theory.corollaries: printed {nums['printed']}, derived {nums['derived']}"
            ),
            details={"E": {str(k): v for k, v in E.items()}, "threshold": thr},
        )
    ]
