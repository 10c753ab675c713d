"""The simulated algorithms are the papers' algorithms: engine vs an independent plain loop (``_reference``)
for the rules no other check runs — FedBuff [Nguyen et al. 2022] and the worker-side optimizers of the paper's
Table 3, FedProx (μ = 0.1) and SCAFFOLD (option II), inside AFA-CD [Yang et al. 2022, Table 3].

Configuration: ``HeterogeneousCurvatureQuadratic(dim=5, num_workers=10, L=1, mu=0.1, sigma_L=0, sigma_G=1,
seed=1)`` (per-worker Hessians, deterministic gradients), the paper's biased arrivals (m = 5),
``UniformDelay(3)``, ``UniformSteps.paper(2)`` (K ∈ {1, …, 4}); T = 40 (full 120), R = 2; the schedule is
sampled once and replayed. Claim: max over rounds and replicates of |‖∇f(x_t)‖²_engine − ‖∇f(x_t)‖²_loop| /
max ‖∇f‖² ≤ 1e-8. Negative control: the plain loop of the nearest wrong reading (the K gradients summed)
differs beyond the tolerance."""

from __future__ import annotations

from afltheory.algorithms import AFACD, FedBuff
from afltheory.algorithms.workers import SCAFFOLD, FedProx
from afltheory.anarchy import Behaviour, BiasedArrivals, UniformDelay, UniformSteps

from ._configs import families
from ._power import reference_check
from .registry import register

REF = "[Yang et al. 2022, Table 3; Nguyen et al. 2022 (FedBuff)]"


@register("engines", "engine = the papers' algorithms: FedBuff, AFA-CD with FedProx / SCAFFOLD workers", REF)
def run(ctx):
    p = families(sigma_L=0.0)["curvature"]
    beh = Behaviour(BiasedArrivals.paper(5), UniformDelay(3), UniformSteps.paper(2))
    sched = beh.sample(40 if ctx.quick else 120, 2, p.num_workers, ctx.seed_for("engines"))
    x0 = p.default_x0()
    cases = (
        (
            "fedbuff",
            FedBuff(1.0, 0.05, staleness="sqrt"),
            "FedBuff: x ← x + η mean_i w(τ_i)(−η_L K_i G_i), w(τ) = 1/√(1+τ)",
        ),
        (
            "fedprox",
            AFACD(5.0, 0.02, worker=FedProx(0.1)),
            "AFA-CD with FedProx workers (μ = 0.1): local gradient ∇f_i(y) + μ(y − y_0)",
        ),
        (
            "scaffold",
            AFACD(5.0, 0.02, worker=SCAFFOLD()),
            "AFA-CD with SCAFFOLD workers (option II): ∇f_i(y) − c_i + c, "
            "c_i ← c_i − c + (y_0 − y_K)/(Kη_L), c ← c + (1/M)Σ(c_i⁺ − c_i)",
        ),
    )
    return [
        reference_check(
            id=f"engines.{name}",
            claim=f"the simulated {claim}",
            reference=REF,
            problem=p,
            algorithm=algo,
            schedule=sched,
            x0=x0,
            seed=ctx.seed_for("engines", name),
            notes="paper's biased arrivals (m=5), τ≤3, K~U{1..4}, σ_L = 0",
        )
        for name, algo, claim in cases
    ]
