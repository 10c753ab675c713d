"""A claim afltheory was not written for: local SGD (FedAvg, full participation) with the step-size rule
η_L = 1/(L K √T) — and a false variant that claims the faster rate 1/T.

Run: ``afltheory verify docs/tutorial/local_sgd_claim.py --out report-tutorial``.

Claim (ours, for this tutorial): FedAvg with η = 1, all M workers every round, K local steps and η_L = 1/(L K
√T) on an L-smooth objective with Assumption 3's σ_L, σ_G satisfies

    (1/T) Σ_{t<T} E‖∇f(x_t)‖² ≤ 4 L Δ/√T + 4 σ_L²/(M K √T) + 20 σ_L²/(K T) + 120 σ_G²/T      (Δ = f(x_0) − f*)

and its error falls as T^(−1/2). The false variant claims the rate 1/T (each √T replaced by T). Instance:
``HeterogeneousCurvatureQuadratic`` (per-worker Hessians, so client drift is real), M = 8, K = 4, T = 256,
σ_L = 0.5, σ_G = 0.3. The measured side is exact (``afltheory.exact`` applies to this linear-Gaussian
problem).
"""

import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register, verify_bound, verify_rate
from afltheory.problems import HeterogeneousCurvatureQuadratic
from afltheory.theory.symbols import Delta, K, L, M, T, sigma_G, sigma_L

REF = "tutorial claim: local SGD with η_L = 1/(L K √T)"
CLAIM = (4 * L * Delta / sp.sqrt(T) + 4 * sigma_L**2 / (M * K * sp.sqrt(T)) + 20 * sigma_L**2 / (K * T)
         + 120 * sigma_G**2 / T)
# the false variant: rate 1/T
FAST = 4 * L * Delta / T + 4 * sigma_L**2 / (M * K * T) + 20 * sigma_L**2 / (K * T) + 120 * sigma_G**2 / T

WORKERS, STEPS, ROUNDS = 8, 4, 256


def setup(rounds=ROUNDS):
    """(problem, algorithm, behaviour) with the step-size rule under test."""
    p = HeterogeneousCurvatureQuadratic(dim=5, num_workers=WORKERS, L=1.0, mu=0.1, sigma_L=0.5, sigma_G=0.3,
                                        seed=2)
    eta_L = 1.0 / (p.constants.L * STEPS * rounds**0.5)
    return p, FedAvg(eta=1.0, eta_L=eta_L), Behaviour(UniformArrivals(WORKERS),
                                                      local_steps=ConstantSteps(STEPS))


@register("tutorial", "local SGD with η_L = 1/(LK√T): the bound, a false 1/T variant, the T^(−1/2) rate", REF)
def run(ctx):
    p, algo, beh = setup()
    bound = verify_bound(p, algo, beh, CLAIM, rounds=ROUNDS, replicates=8, seed=ctx.seed_for("bound"),
                         id="tutorial.bound", reference=REF, claim="local SGD bound, rate 1/√T",
                         control=FAST, control_description="the same bound at rate 1/T (must fail)")
    false = verify_bound(p, algo, beh, FAST, rounds=ROUNDS, replicates=8, seed=ctx.seed_for("bound"),
                         id="tutorial.fast", reference=REF, claim="false variant: the same bound at rate 1/T")
    rate = verify_rate(lambda t: setup(int(t))[0], lambda t: setup(int(t))[1], lambda t: setup(int(t))[2],
                       over="T", values=[64, 256, 1024, 4096], slope=-0.5, replicates=8, tol=0.05,
                       seed=ctx.seed_for("rate"), id="tutorial.rate_T", reference=REF,
                       claim="error ∝ T^(−1/2) under η_L = 1/(LK√T)")
    return [bound, false, rate]
