# Wang & Joshi, "Cooperative SGD: A unified framework for the design and analysis of communication-efficient
# SGD algorithms", 2018 (arXiv:1808.07576), Theorem 1, iid case — text NOT retrieved in this session: FROM
# MEMORY (confidence "from memory"). Local SGD on m workers, τ = K local steps between averagings, step η with
# ηL + η²L²K(K − 1) ≤ 1; the theorem bounds the VIRTUAL averaged model x̄_k = (1/m) Σ_i y_{i,k} at EVERY local
# iteration k < N = TK:  (1/N) Σ_k E‖∇f(x̄_k)‖² ≤ 2Δ/(ηN) + ηLσ²/m + η²L²σ²(K − 1).
# With η = 1/(2L√T) the rate is O(1/√T): an upper rate, judged one-sided (a faster measured slope passes).
import numpy as np
import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register
from afltheory.claims import Assumptions, Claim, Delta, K, L, T, eta_L, m, sigma_L, verify, verify_rate
from afltheory.problems import HeterogeneousQuadratic

WJ = Claim(id="wang2018.thm1", title="Wang & Joshi 2018 Thm 1: local SGD, virtual averaged model",
           assumptions=Assumptions(function="smooth", heterogeneity="iid", participation="full"),
           rule=FedAvg, eta=1, eta_L=1 / (2 * L * sp.sqrt(T)), measured="virtual_avg_grad_sq",
           rate={"T": -0.5},
           bound={"init": 2 * Delta / (eta_L * T * K), "noise": eta_L * L * sigma_L**2 / m,
                  "drift": eta_L**2 * L**2 * sigma_L**2 * (K - 1)},
           conditions={"step": eta_L * L + eta_L**2 * L**2 * K * (K - 1) <= 1},
           reference="Wang & Joshi 2018, Thm 1", source="arXiv:1808.07576 (from memory)")
p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0, 0.5, 0.25]), centers=np.zeros((4, 3)),
                                       sigma_L=1.0)  # identical workers: the iid case
beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(4))


@register("wang2018", "Wang & Joshi 2018 Thm 1 on the virtual averaged model: bound, O(1/√T)", WJ.reference)
def run(ctx):
    return [verify(WJ, p, beh, rounds=256, replicates=16),
            verify_rate(WJ, p, beh, over="T", points=[64, 256, 1024], replicates=16, tol=0.05)]
