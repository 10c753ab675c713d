"""Theorem 1 [Yang et al. 2022, Thm 1]: lower bound Ω(σ_G²) for any AFL algorithm.

Configuration: ``LowerBoundPair(G)`` (f_1 = (x + G)², f_2 = (x − G)², σ_G = 2G), σ_L = 0, x_0 = 1, G ∈ {0.5,
1, 2}.
- Only worker 1 arrives (``FixedArrivals([0])``, m = 1): AFA-CD(η = 1, η_L = 0.1, K = 5), FedAvg(η = 1, η_L =
  0.1, K = 5) and AFA-CS(η = 1, η_L = 0.1, K = 5, memory_init="zeros"), T = 400 rounds (deterministic, one
  replicate). Claim: ‖∇f(x_T)‖² = σ_G² (relative error ≤ 1e-6). AFA-CD's trajectory is also held against the
  closed form ``theory.theorem1.expected_grad_norm_sq`` (relative error ≤ 1e-9).
  AFA-CS with its default warm-started memory is *not* "only worker 1 participates": worker 2's update at x_0
  stays in slot 2 forever (unbounded staleness), and the run ends at x = −x_0 (‖∇f‖² = 4x_0²), reported in
  notes.
- Uniform arrivals (``UniformArrivals(1)`` over the 2 workers), K = 1, η = 1, η_L ∈ {0.05, 0.01}, T = 600, R =
  32 (quick) / 128 (full) replicates; measured: E‖∇f(x_t)‖² averaged over t ∈ [300, 600), relative to σ_G².
  Claim: it goes to 0 with the step (≤ 0.05 σ_G² at η_L = 0.01; AFA-CS → exactly 0). Monte Carlo mean with a
  99 % one-sided t upper bound.
Negative controls (each judged by its verdict's own criterion, ``Verdict.judged``): the uniform runs held to
the lower-bound claim (≈ σ_G² within 1e-6), and the fixed-arrival runs held to the uniform claim (≤ 0.05
σ_G²).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from afltheory.algorithms import AFACD, AFACS, FedAvg
from afltheory.analysis import upper_confidence_bound
from afltheory.anarchy import Behaviour, ConstantSteps, FixedArrivals, UniformArrivals
from afltheory.checks import AtMost, ControlMeasurement, Near, Verdict
from afltheory.plots import lower_bound_plot
from afltheory.problems import LowerBoundPair
from afltheory.theory import theorem1

from ._common import sim
from .registry import register

REF = "[Yang et al. 2022, Thm 1]"


def _algos(eta, eta_L):
    return {
        "AFA-CD": AFACD(eta, eta_L),
        "FedAvg": FedAvg(eta, eta_L),
        "AFA-CS": AFACS(eta, eta_L, memory_init="zeros"),
    }


@register("thm1", "lower bound: only worker 1 arrives ⇒ E‖∇f(x̂)‖² → σ_G²; uniform arrivals ⇒ → 0", REF)
def run(ctx):
    runs = _runs(ctx)
    return [_only_worker1(runs), _uniform_to_zero(runs)]


@dataclass(frozen=True)
class _Runs:
    """The lower-bound pair runs shared by both verdicts (each one's control is the other's runs):
    ``finals[(G, name)]`` = ‖∇f(x_T)‖²/σ_G² with only worker 1 arriving, ``ratios[(η_L, G, name)]`` = (mean,
    99 % UCB) of E‖∇f‖²/σ_G² over rounds 300–600 with uniform arrivals, and the figure's report path."""

    finals: dict
    closed: list
    warm: float
    ratios: dict
    R: int
    rel: str

    @property
    def key(self) -> list:
        """The uniform runs at η_L = 0.01."""
        return [k for k in self.ratios if k[0] == 0.01]


def _runs(ctx) -> _Runs:
    """Fixed-arrival (only worker 1, T = 400) and uniform-arrival (T = 600) runs of AFA-CD, FedAvg, AFA-CS."""
    x0 = np.array([1.0])
    Gs = (0.5, 1.0, 2.0)
    T = 400
    fixed = Behaviour(FixedArrivals([0]), local_steps=ConstantSteps(5))
    closed, finals, curves = [], {}, {}
    for G in Gs:
        p = LowerBoundPair(G)
        sG2 = p.constants.sigma_G**2
        for name, algo in _algos(1.0, 0.1).items():
            tr = sim(p, algo, fixed, T, 1, ctx.seed_for("thm1", G, name), x0=x0)
            final = tr.grad_norm_sq[0, -1]
            finals[(G, name)] = final / sG2
            if G == 1.0:
                curves[f"{name}, only worker 1"] = (np.arange(T + 1), tr.grad_norm_sq[0])
            if name == "AFA-CD":
                ref = theorem1.expected_grad_norm_sq(1.0, G, 1.0, 0.1, 5, T)
                closed.append(float(np.max(np.abs(tr.grad_norm_sq[0] - ref) / np.maximum(ref, 1e-300))))
    warm = sim(LowerBoundPair(1.0), AFACS(1.0, 0.1), fixed, T, 1, 0, x0=x0).grad_norm_sq[0, -1]
    # uniform arrivals
    R = 32 if ctx.quick else 128
    Tu = 600
    uni = Behaviour(UniformArrivals(1), local_steps=ConstantSteps(1))
    ratios = {}
    samples = {}
    for eta_L in (0.05, 0.01):
        for G in (1.0,) if ctx.quick else Gs:
            p = LowerBoundPair(G)
            sG2 = p.constants.sigma_G**2
            for name, algo in _algos(1.0, eta_L).items():
                tr = sim(p, algo, uni, Tu, R, ctx.seed_for("thm1u", G, name, eta_L), x0=x0)
                s = tr.grad_norm_sq[:, Tu // 2 :].mean(axis=1) / sG2
                samples[(eta_L, G, name)] = s
                ratios[(eta_L, G, name)] = (float(s.mean()), upper_confidence_bound(s, 0.99))
                if G == 1.0 and eta_L == 0.01:
                    curves[f"{name}, uniform, η_L={eta_L}"] = (np.arange(Tu + 1), tr.grad_norm_sq.mean(0))
    path, rel = ctx.fig("thm1_lower_bound")
    curves = {k: (x[: T + 1], np.maximum(y[: T + 1], 1e-12)) for k, (x, y) in curves.items()}
    lower_bound_plot(path, curves, {"G=1": 4.0})
    return _Runs(finals, closed, warm, ratios, R, rel)


def _only_worker1(r: _Runs):
    """thm1.only_worker1 — Theorem 1's lower bound: only worker 1 arrives ⇒ ‖∇f(x̂)‖² → σ_G²."""
    finals, ratios, closed, warm, rel = r.finals, r.ratios, r.closed, r.warm, r.rel
    uniform_far = max((ratios[k][0] for k in r.key), key=lambda v: abs(v - 1))  # the run farthest from σ_G²
    fixed_far = max(finals.values(), key=lambda v: abs(v - 1))
    at_floor = Near(tol=1e-6, on="worst", text="max |‖∇f(x_T)‖²/σ_G² − 1| ≤ 1e-6 (deterministic)")
    return Verdict.judged(
        id="thm1.only_worker1",
        claim="only worker 1 arrives: AFA-CD, FedAvg, AFA-CS end at ‖∇f(x̂)‖² = σ_G² (G = 0.5, 1, 2)",
        reference=REF,
        measured=float(np.mean(list(finals.values()))),
        ci=(min(finals.values()), max(finals.values())),
        theoretical=1.0,
        criterion=at_floor,
        stats={"worst": fixed_far},
        figures=[rel],
        control=ControlMeasurement(
            description="uniform runs (η_L = 0.01) held to the same claim ‖∇f‖²/σ_G² = 1 ± 1e-6",
            measured=uniform_far,
            theoretical=1.0,
            stats={"worst": uniform_far},
        ),
        quantity="‖∇f(x_T)‖²/σ_G² (mean of 9 runs)",
        interval="min–max over the 9 runs",
        method="deterministic simulation (σ_L = 0)",
        notes=(
            "measured is ‖∇f(x_T)‖²/σ_G² (mean, [min, max]) over 9 runs; AFA-CD vs closed form: max rel. "
            f"error {max(closed):.2e}. AFA-CS with warm-started memory ends at ‖∇f‖² = {warm:.4g} = "
            "4x_0² (slot 2 keeps worker 2's update at x_0: the lower-bound scenario needs empty memory)"
        ),
        details={"closed_form_max_rel_err": max(closed), "afacs_warm_final": float(warm)},
    )


def _uniform_to_zero(r: _Runs):
    """thm1.uniform_to_zero — Theorem 1's contrast: with uniform arrivals the same algorithms go to 0."""
    finals, ratios, R, rel, key = r.finals, r.ratios, r.R, r.rel, r.key
    fixed_as_uniform = max(finals.values())
    worst_u = max(ratios[k][1] for k in key)
    big = {k: ratios[k][0] for k in ratios if k[0] == 0.05}
    return Verdict.judged(
        id="thm1.uniform_to_zero",
        claim="uniform arrivals: the same algorithms go to 0 (E‖∇f‖²/σ_G² ≤ 0.05 at η_L = 0.01)",
        reference=REF,
        measured=float(np.mean([ratios[k][0] for k in key])),
        ci=(None, worst_u),
        theoretical=0.0,
        criterion=AtMost(tol=0.05, on="ucb", text="max 99 % UCB ≤ 0.05"),
        stats={"ucb": worst_u},
        figures=[rel],
        control=ControlMeasurement(
            description="fixed-arrival runs (deterministic: UCB = value) held to the "
            "same claim ‖∇f‖²/σ_G² ≤ 0.05",
            measured=fixed_as_uniform,
            theoretical=0.0,
            stats={"ucb": fixed_as_uniform},
        ),
        quantity="E‖∇f‖²/σ_G² (mean over runs)",
        interval="largest 99 % UCB",
        relation="~=",
        method=f"monte-carlo (R={R}), rounds 300–600",
        notes="per algorithm at η_L=0.01: "
        + ", ".join(f"{k[2]} (G={k[1]}) {ratios[k][0]:.2e}" for k in key)
        + "; at η_L=0.05: "
        + ", ".join(f"{k[2]} {v:.2e}" for k, v in big.items())
        + " — the floor shrinks with the step (AFA-CS: 0, variance reduction)",
    )
