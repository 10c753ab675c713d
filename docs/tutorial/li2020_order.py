# An O-statement: Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data", ICLR 2020 —
# the headline of its abstract and Theorem 1 (arXiv:1907.02189): FedAvg with η_t = 2/(μ(γ + t)) on strongly
# convex non-iid data converges as E F(w_T) − F* = O((κ/(γ + T)) (B/μ + μγ‖w_0 − w*‖²)), the constant hidden.
# Text NOT retrieved in this session: FROM MEMORY (confidence "from memory", never a finding).
# An O-statement is checked along a sweep of its variable: measured / shape must stay bounded (one-sided trend
# test), and the verdict reports the hidden constant's estimate. The control — the shape half an order
# smaller in T — must fail. Same instance as li2020_fedavg.py (E = 1, full participation, client weights).
import numpy as np
import sympy as sp

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register
from afltheory.claims import Assumptions, Claim, verify
from afltheory.claims.symbols import D0, E, Gamma, kappa, mu, sum_p2, t
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory.symbols import L, T, sigma_L

gamma = sp.Symbol("gamma", positive=True)
CLASS = Assumptions(function="strongly_convex", heterogeneity="Gamma", participation="full", max_delay=0,
                    max_local_steps=1, weights="data")
LI_O = Claim(id="li2020.order", title="Li et al. 2020: FedAvg, strongly convex, O(1/T)", assumptions=CLASS,
             rule=FedAvg, eta=1, eta_L=2 / (mu * (gamma + t)), measured="last_gap", constant="hidden",
             holds_from={"T": 50}, values={"gamma": sp.Max(8 * kappa, E)}, reference="Li et al. 2020, Thm 1",
             bound=kappa / (gamma + T) * ((sum_p2 * sigma_L**2 + 6 * L * Gamma) / mu + mu * gamma * D0),
             source="arXiv:1907.02189 abstract, Thm 1 (from memory)", confidence="from memory")
C, P = np.random.default_rng(0).normal(0, 0.1, (4, 3)), (0.1, 0.2, 0.3, 0.4)
p = HeterogeneousQuadratic.from_arrays(hessian_diag=np.ones(3), centers=C, sigma_L=1.0, weights=P)
beh = Behaviour(UniformArrivals(4), local_steps=ConstantSteps(1))


@register("li2020_order", "Li et al. 2020 as an O-statement: measured / shape bounded along T",
          LI_O.reference)
def run(ctx):
    return [verify(LI_O, p, beh, over="T", points=[50, 100, 200, 400])]
