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
from afltheory.claims.verify import verify_latex, verify_reference
from afltheory.problems import HeterogeneousCurvatureQuadratic, HeterogeneousQuadratic

REF = "tutorial claim: local SGD with η_L = 1/(L K √T)"
CLAIM = Claim(id="tutorial.bound", title="local SGD bound, rate 1/√T", reference=REF, confidence="derived",
              assumptions=Assumptions(function="smooth", participation="full"), rule=FedAvg,
              eta=1, eta_L=1 / (L * K * sp.sqrt(T)), rate={"T": -0.5},
              bound={"transient": 4 * L * Delta / sp.sqrt(T), "noise": 4 * sigma_L**2 / (M * K * sp.sqrt(T)),
                     "drift_noise": 20 * sigma_L**2 / (K * T), "heterogeneity": 120 * sigma_G**2 / T},
              # the statement as printed above, transcribed once more (verify_latex compares the two)
              latex={"bound": r"\frac{4L\Delta}{\sqrt{T}} + \frac{4\sigma_L^2}{MK\sqrt{T}}"
                              r" + \frac{20\sigma_L^2}{KT} + \frac{120\sigma_G^2}{T}",
                     "eta_L": r"\frac{1}{LK\sqrt{T}}"})
FAST = Claim(**{**CLAIM.__dict__, "id": "tutorial.fast", "title": "false variant: the same bound at rate 1/T",
                "expect": "fails", "latex": {}, "bound": {"transient": 4 * L * Delta / T,
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


# Power over a slip in the bound, the rule or the step: the LaTeX above read again, and a plain reference on
# f = ½‖x − x*‖² without noise, where K local steps contract by (1 − η_L)^K: at T = 64, K = 4, η_L = 1/32, so
# (1/T) Σ_{t<T} ‖∇f(x_t)‖² = D0 (1 − r^T)/(T (1 − r)) with r = (31/32)^8 (numbers, not the claim's η_L).
@register("tutorial_power", "local SGD claim: its LaTeX transcription and a plain reference", REF)
def power(ctx):
    iso = HeterogeneousQuadratic(5, WORKERS, mu=1.0, sigma_L=0.0, sigma_G=0.0)
    ref = "D0*(1 - (31/32)**(8*T))/(T*(1 - (31/32)**8))"
    return [verify_latex(CLAIM), verify_reference(CLAIM, iso, behaviour(), ref, rounds=64)]
