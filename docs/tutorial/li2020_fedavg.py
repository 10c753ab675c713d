# Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data", ICLR 2020, Theorem 1.
# Source: arXiv:1907.02189 (v4), Section 3.2, Theorem 1 — the paper is retrievable there; its text was NOT
# retrieved in this session: the statement below is FROM MEMORY (confidence "from memory", never a finding).
# Statement: F = Σ_k p_k F_k, each F_k L-smooth and μ-strongly convex (Assumptions 1–2),
# E‖∇F_k(w, ξ) − ∇F_k(w)‖² ≤ σ_k² (3), E‖∇F_k(w, ξ)‖² ≤ G² (4); κ = L/μ, γ = max{8κ, E},
# η_t = 2/(μ(γ + t)); full participation:
#   E F(w_T) − F* ≤ κ/(γ + T − 1) · (2B/μ + (μγ/2) ‖w_1 − w*‖²),  B = Σ p_k² σ_k² + 6LΓ + 8(E − 1)²G²,
# Γ = F* − Σ_k p_k F_k*.
# Reading: T counts SGD iterations and η_t decays per iteration; we run E = 1 (one local step per round),
# where iterations and rounds coincide, so the (E−1)²G² term vanishes and G needs no value (G is not
# certified for quadratics): the claim's class says so (max_local_steps=1, no delays). σ_k = σ_L for every
# client. Instance: 4 clients with weights p = (.1, .2, .3, .4), identity Hessian (κ = 1), start near w* so
# the noise term dominates; the bound is then ~3.7× the exact E F(w_T) − F*.
# At E = 5 (li2020.thm1.E5): η decays per local step, η_s = 2/(μ(γ + s)) with s = tE + k the iteration
# counter (afltheory.algorithms.schedules, per="step"; every engine runs it), and T in the bound counts
# iterations, E·T. G is not given: a quadratic certifies none (Li's Assumption 4 fails on the whole space),
# so verify ESTIMATES it on the realized trajectory (σ² + max_t,k ‖∇F_k(w_t)‖²) and its notes say so.
import numpy as np
import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register
from afltheory.claims import Assumptions, Claim, E, kappa, mu, t, verify, verify_rate
from afltheory.claims.latex import latex
from afltheory.claims.verify import verify_latex, verify_reference
from afltheory.problems import HeterogeneousQuadratic

# The bound as printed; Li's own γ and B are the claim's values (docs/claims_latex.md: the letters' table)
gamma, PAPER = sp.Symbol("gamma", positive=True), {r"\gamma": "gamma", "B": "B"}
INNER = r"\left(\frac{2B}{\mu}+\frac{\mu\gamma}{2}\|w_1-w^*\|^2\right)"  # E = 5: T counts E·T iterations
CLASS = Assumptions(function="strongly_convex", heterogeneity="Gamma", participation="full", max_delay=0,
                    max_local_steps=1, weights="data")
LI = Claim(id="li2020.thm1", title="Li et al. 2020 Thm 1: FedAvg, strongly convex, E F(w_T) − F* = O(1/T)",
           assumptions=CLASS, rule=FedAvg, eta=1, eta_L=2 / (mu * (gamma + t)), measured="last_gap",
           values={"gamma": sp.Max(8 * kappa, E), "G": 0,
                   "B": latex(r"\sum_{k=1}^N p_k^2 \sigma_k^2 + 6 L \Gamma + 8 (E-1)^2 G^2")},
           bound=latex(r"\frac{\kappa}{\gamma+T-1}" + INNER, PAPER, terms=("noise", "init")), rate={"T": -1},
           reference="Li et al. 2020, Thm 1", source="arXiv:1907.02189 Thm 1 (from memory)",
           confidence="from memory")
FALSE = Claim(**{**LI.__dict__, "id": "li2020.false", "title": "false variant: the bound / 10", "latex": {},
                 "expect": "fails", "bound": {k: e / 10 for k, e in LI.bound.items()}})
C, P = np.random.default_rng(0).normal(0, 0.1, (4, 3)), (0.1, 0.2, 0.3, 0.4)
p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(3), centers=C, sigma_L=1.0, weights=P)
beh, x0 = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(1)), p.constants.x_star + 0.05
LI5 = Claim(**{**LI.__dict__, "id": "li2020.thm1.E5", "title": "Li Thm 1, E = 5, η per local step",
               "latex": {}, "assumptions": Assumptions(**{**CLASS.__dict__, "max_local_steps": 5}),
               "values": {k: v for k, v in LI.values.items() if k != "G"},  # G: estimated (see above)
               "eta_L": LI.eta_L.subs(t, sp.Symbol("s")),  # η per local step: s = tE + k
               "bound": latex(r"\frac{\kappa}{\gamma+E \cdot T-1}" + INNER, PAPER, terms=("noise", "init"))})
# An independent reference (a plain loop, no afltheory): identity Hessians and E = 1, so e_t = w_t − w* obeys
# E‖e_{t+1}‖² = (1 − η_t)² E‖e_t‖² + η_t² Σ p_k² σ² (Σ p_k² = 0.3, σ = 1), η_t = 2/(8 + t), ‖e_0‖² = 3·0.05².
# At E = 5 the same recursion holds per local step (the p-weighted mean of the clients' iterates moves as one
# SGD step on F, and FedAvg's average is that mean), with η_s = 2/(8 + s): T rounds of E = 5 are gap(5T).
gap = lambda T, S=0.3, s=0.0075: [s := (1 - e) ** 2 * s + e * e * S for e in 2 / (8 + np.arange(T))][-1] / 2


@register("li2020", "Li et al. 2020 Thm 1 (FedAvg): bound, false 1/10, 1/T, E = 5, LaTeX, loop", LI.reference)
def run(ctx):  # the last four give the checks power over a slip in the bound, the rule or the schedule
    beh5 = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(5))  # 100 rounds of E = 5: 500 iterations
    return [verify(LI, p, beh, rounds=500, x0=x0), verify(FALSE, p, beh, rounds=500, x0=x0),
            verify_rate(LI, p, beh, over="T", points=[100, 300, 1000], tol=0.05),
            verify(LI5, p, beh5, rounds=100, x0=x0), verify_latex(LI, PAPER), verify_latex(LI5, PAPER),
            verify_reference(LI, p, beh, gap(100), rounds=100, x0=x0),
            verify_reference(LI5, p, beh5, gap(5 * 20), rounds=20, x0=x0)]
