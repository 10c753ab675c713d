# FedAdam: Reddi, Charles, Zaheer, Garrett, Rush, Konečný, Kumar, McMahan, "Adaptive Federated Optimization",
# ICLR 2021 (arXiv:2003.00295), Algorithm 2 and its FedAdam corollary — the paper's text is NOT
# retrievable in this environment: find_string("# Adaptive Federated Optimization") and "2003.00295" (session
# of 2026-12-02) find only reading notes, READMEs and library docstrings that cite it (Flower, NVFlare,
# FedML), none with the theorem. The statement below is FROM MEMORY (confidence "from memory", never a
# finding). Reading: with β1 = 0, τ = G/L, η = Θ(√(mK)) and
# η_l = Θ(1/(K L √T)), FedAdam on L-smooth (nonconvex) objectives with bounded gradients G satisfies
#   min_t E‖∇f(x_t)‖² = O((f(x_0) − f* + σ_l² L / G²) / √(m K T))   for T large enough,
# an O-statement: the constant is hidden, so "the bound / 10" is the same claim; its wrong variant is the
# shape half an order faster in T (the default control), which must fail. The server optimizer is a
# component (afltheory.algorithms.server_opt) applied after FedAvg's own aggregate — no `aggregate` override;
# the exact engine refuses it (nonlinear) and the verdict's method says so.
# A bounded ratio cannot see a slip in the shape's constants, the rule, the optimizer or the schedule (the
# hidden constant absorbs them), so two more verdicts give the check power: the sympy bound equals its LaTeX
# (verify_latex), and the run equals a plain loop of Algorithm 2 (verify_reference, below).
import numpy as np
import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.algorithms.server_opt import ServerAdam, optimized
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register
from afltheory.claims import Assumptions, Claim, verify
from afltheory.claims.latex import latex
from afltheory.claims.verify import verify_latex, verify_reference
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory.symbols import K, L, T, m

G_VALUE, C, H = 2.0, np.random.default_rng(0).normal(0, 0.5, (4, 3)), np.array([1.0, 0.5, 0.25])
PAPER = {r"\sigma_l": "sigma_L"}  # the paper's letter for the local noise
p = HeterogeneousQuadratic.from_arrays(hessian_diag=H, centers=C, sigma_L=0.5)
FEDADAM = Claim(id="reddi2021.fedadam", title="FedAdam (Reddi et al. 2021): min E‖∇f‖² = O(1/√(mKT))",
                assumptions=Assumptions(function="smooth", participation="full"), measured="min_grad_sq",
                rule=optimized(FedAvg, ServerAdam(beta1=0.0, tau=G_VALUE / float(p.constants.L))),
                eta=sp.sqrt(m * K), eta_L=1 / (K * L * sp.sqrt(T)), constant="hidden", holds_from={"T": 256},
                bound=latex(r"\left(f(x_0) - f^* + \frac{\sigma_l^2 L}{G^2}\right) \frac{1}{\sqrt{m K T}}",
                            PAPER, terms=("init", "noise")), values={"G": G_VALUE},
                reference="Reddi et al. 2021, FedAdam corollary", source="arXiv:2003.00295 (from memory)")
beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(2))
# The independent reference: Algorithm 2 as a plain loop (no afltheory) on the same clients without noise
# (σ_l = 0: the run is deterministic, so engine and loop must agree to rounding): ∇f_i(y) = h ⊙ (y − c_i),
# K = 2 local GD steps of η_l = 1/(K L √T) (L = 1), Δ_t the mean client update, β1 = 0 (m_t = Δ_t),
# v_t = β2 v_{t−1} + (1 − β2) Δ_t² from v_{−1} = τ² (β2 = 0.99, τ = G/L = 2), x_{t+1} = x_t + η Δ_t/(√v_t + τ)
# with η = √(mK); measured: min_{t<T} ‖∇f(x_t)‖², ∇f(x) = h ⊙ (x − mean_i c_i), from x_0 = (1, 1, 1).
p0 = HeterogeneousQuadratic.from_arrays(hessian_diag=H, centers=C, sigma_L=0.0)


def fedadam(T, K=2, M=4, tau=2.0, beta2=0.99):
    x, v, eta, eta_l, best = np.ones(3), tau**2, np.sqrt(M * K), 1 / (K * np.sqrt(T)), np.inf
    for _ in range(T):
        best, y = min(best, np.sum((H * (x - C.mean(axis=0))) ** 2)), np.repeat(x[None], M, axis=0)
        for _ in range(K):
            y = y - eta_l * H * (y - C)
        delta = (y - x).mean(axis=0)
        v = beta2 * v + (1 - beta2) * delta**2
        x = x + eta * delta / (np.sqrt(v) + tau)
    return best


@register("fedadam", "FedAdam as an O-statement: min E‖∇f‖² / shape bounded along T; LaTeX; plain loop",
          FEDADAM.reference)
def run(ctx):
    return [verify(FEDADAM, p, beh, over="T", points=[256, 1024, 4096], replicates=16),
            verify_latex(FEDADAM, PAPER),
            verify_reference(FEDADAM, p0, beh, fedadam(64), rounds=64, x0=np.ones(3), rtol=1e-9)]
