# Wang & Joshi, "Cooperative SGD: A unified framework for the design and analysis of communication-efficient
# SGD algorithms", 2018 (arXiv:1808.07576), Theorem 1, iid case — text NOT retrieved in this session: FROM
# MEMORY (confidence "from memory"). Local SGD on m workers, τ = K local steps between averagings, step η with
# ηL + η²L²τ(τ − 1) ≤ 1; the theorem bounds the VIRTUAL averaged model x̄_k = (1/m) Σ_i y_{i,k} at EVERY local
# iteration k < N = TK:  (1/N) Σ_k E‖∇f(x̄_k)‖² ≤ 2Δ/(ηN) + ηLσ²/m + η²L²σ²(τ − 1).
# With η = 1/(2L√T) the rate is O(1/√T): an upper rate, judged one-sided (a faster measured slope passes).
# The bound and the step condition are written as printed (LaTeX; N = TK, the paper's η our η_L, τ our K),
# and verify_latex checks the sympy claim against them; a plain loop (below) checks the run itself.
import numpy as np
import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register
from afltheory.claims import Assumptions, Claim, L, T, verify, verify_rate
from afltheory.claims.latex import latex, latex_condition
from afltheory.claims.verify import verify_latex, verify_reference
from afltheory.problems import HeterogeneousQuadratic

PAPER = {"N": "T*K", r"\eta": "eta_L", r"\tau": "K"}
WJ = Claim(id="wang2018.thm1", title="Wang & Joshi 2018 Thm 1: local SGD, virtual averaged model",
           assumptions=Assumptions(function="smooth", heterogeneity="iid", participation="full"),
           rule=FedAvg, eta=1, eta_L=1 / (2 * L * sp.sqrt(T)), measured="virtual_avg_grad_sq",
           rate={"T": -0.5},
           bound=latex(r"\frac{2\Delta}{\eta N} + \frac{\eta L \sigma^2}{m} + \eta^2 L^2 \sigma^2 (\tau - 1)",
                       PAPER, terms=("init", "noise", "drift")),
           conditions={"step": latex_condition(r"\eta L + \eta^2 L^2 \tau \cdot (\tau - 1) \le 1", PAPER)},
           reference="Wang & Joshi 2018, Thm 1", source="arXiv:1808.07576 (from memory)")
p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.array([1.0, 0.5, 0.25]), centers=np.zeros((4, 3)),
                                       sigma_L=1.0)  # identical workers: the iid case
beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(4))


# An independent reference (a plain loop, no afltheory): identical workers with ∇f(x) = h ⊙ x, so the virtual
# average moves at every local step as x̄ ← (1 − ηh) x̄ − η ξ̄ (averaging at the round's end does not move it),
# ξ̄ the mean of m = 4 workers' noises, each N(0, σ²/d) per coordinate (σ = 1, d = 3); η = 1/(2√T) (L = 1);
# from x̄_0 = x_0 = (1, 1, 1) (x* = 0).
# Per coordinate: mean ← (1 − ηh) mean, var ← (1 − ηh)² var + η²σ²/(dm); E‖∇f(x̄)‖² = Σ h² (mean² + var).
def virtual(T, K=4):
    h, eta, mean, var, acc = np.array([1.0, 0.5, 0.25]), 1 / (2 * np.sqrt(T)), np.ones(3), np.zeros(3), 0.0
    for _ in range(T * K):  # x̄ at every local iteration k < N = TK, before its step
        acc += np.sum(h**2 * (mean**2 + var))
        mean, var = (1 - eta * h) * mean, (1 - eta * h) ** 2 * var + eta**2 / (3 * 4)
    return acc / (T * K)


@register("wang2018", "Wang & Joshi 2018 Thm 1 on the virtual averaged model: bound, O(1/√T), LaTeX, loop",
          WJ.reference)
def run(ctx):
    return [verify(WJ, p, beh, rounds=256, replicates=16),
            verify_rate(WJ, p, beh, over="T", points=[64, 256, 1024], replicates=16, tol=0.05),
            verify_latex(WJ, PAPER), verify_reference(WJ, p, beh, virtual(64), rounds=64, x0=np.ones(3))]
