"""A claim afltheory was not written for: local SGD (FedAvg, full participation) with the step-size rule
η_L = 1/(L K √T) — and a false variant that claims the faster rate 1/T.

Run: ``afltheory verify docs/tutorial/local_sgd_claim.py --out report-tutorial``.

Claim (ours, for this tutorial): FedAvg with η = 1, all M workers every round, K local steps and η_L = 1/(L K
√T) on an L-smooth objective with Assumption 3's σ_L, σ_G satisfies

    (1/T) Σ_{t<T} E‖∇f(x_t)‖² ≤ 4 L Δ/√T + 4 σ_L²/(M K √T) + 20 σ_L²/(K T) + 120 σ_G²/T      (Δ = f(x_0) − f*)

and its error falls as T^(−1/2). The false variant claims the rate 1/T (each √T replaced by T) and is declared
``expect="fails"``. Instance: ``HeterogeneousCurvatureQuadratic`` (per-worker Hessians, so client drift is
real), M = 8, K = 4, T = 256, σ_L = 0.5, σ_G = 0.3. The measured side is exact (``afltheory.exact`` applies
to this linear-Gaussian problem).
"""

import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register
from afltheory.claims import Assumptions, Claim, Delta, K, L, M, T, sigma_G, sigma_L, verify, verify_rate
from afltheory.problems import HeterogeneousCurvatureQuadratic

REF = "tutorial claim: local SGD with η_L = 1/(L K √T)"
CLAIM = Claim(id="tutorial.bound", title="local SGD bound, rate 1/√T", reference=REF, confidence="derived",
              assumptions=Assumptions(function="smooth", participation="full"), rule=FedAvg,
              eta=1, eta_L=1 / (L * K * sp.sqrt(T)), rate={"T": -0.5},
              bound={"transient": 4 * L * Delta / sp.sqrt(T), "noise": 4 * sigma_L**2 / (M * K * sp.sqrt(T)),
                     "drift_noise": 20 * sigma_L**2 / (K * T), "heterogeneity": 120 * sigma_G**2 / T})
FAST = Claim(**{**CLAIM.__dict__, "id": "tutorial.fast", "title": "false variant: the same bound at rate 1/T",
                "expect": "fails", "bound": {"transient": 4 * L * Delta / T,
                                             "noise": 4 * sigma_L**2 / (M * K * T),
                                             "drift_noise": 20 * sigma_L**2 / (K * T),
                                             "heterogeneity": 120 * sigma_G**2 / T}})

WORKERS, STEPS, ROUNDS = 8, 4, 256


def problem():
    return HeterogeneousCurvatureQuadratic(dim=5, num_workers=WORKERS, L=1.0, mu=0.1, sigma_L=0.5,
                                           sigma_G=0.3, seed=2)


def behaviour(_=None):
    return Behaviour(UniformArrivals(WORKERS), local_steps=ConstantSteps(STEPS))


@register("tutorial", "local SGD with η_L = 1/(LK√T): the bound, a false 1/T variant, the T^(−1/2) rate", REF)
def run(ctx):
    p = problem()    # η_L = 1/(L K √T) is resolved with the run's T, K and the problem's L
    return [verify(CLAIM, p, behaviour(), rounds=ROUNDS, seed=ctx.seed_for("bound")),
            verify(FAST, p, behaviour(), rounds=ROUNDS, seed=ctx.seed_for("bound")),
            verify_rate(CLAIM, p, behaviour, over="T", points=[64, 256, 1024, 4096], tol=0.05,
                        seed=ctx.seed_for("rate"))]
