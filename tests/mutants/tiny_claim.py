"""A tiny claim with a known set of generated mutants and known kills (tests/mutants/test_generated.py).

FedAvg (η = 1, η_L = 0.1, K = 1, both of M = 2 clients every round) on f = ½‖x − x*‖² without noise:
x_T − x* = (1 − η_L)^T (x_0 − x*), so f(x_T) − f* = ½ (1 − η_L)^{2T} D0 exactly. The claim states 1.5× that.

A second check, ``tiny_claim_power``, gives the claim power over slips the bound cannot see: its LaTeX
(¾ D0 (1 − η_L)^{2T}, read again by ``verify_latex``) and the plain value ½ · 0.81^T · D0 of the run
(``verify_reference``: numbers, not the claim's η_L).
"""

import numpy as np

from afltheory.algorithms import FedAvg
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals
from afltheory.checks import register
from afltheory.claims import Assumptions, Claim, verify
from afltheory.claims.symbols import D0
from afltheory.claims.verify import verify_latex, verify_reference
from afltheory.problems import HeterogeneousQuadratic
from afltheory.theory.symbols import T, eta_L

TINY = Claim(
    id="tiny.contraction",
    title="tiny: noise-free FedAvg contracts as (1 − η_L)^{2T}",
    rule=FedAvg,
    eta=1,
    eta_L=0.1,
    measured="last_gap",
    assumptions=Assumptions(function="strongly_convex", participation="full", max_delay=0, max_local_steps=1),
    bound={"contraction": 1.5 * D0 * (1 - eta_L) ** (2 * T) / 2},
    latex={"bound": r"\frac{3}{4} D_0 \cdot (1 - \eta_L)^{2T}"},
)
P = HeterogeneousQuadratic.from_arrays(
    hessian_diag=np.ones(2), centers=np.array([[1.0, 0.0], [0.0, 1.0]]), sigma_L=0.0
)
BEH = Behaviour(UniformArrivals(2), local_steps=ConstantSteps(1))


@register("tiny_claim", "tiny noise-free contraction claim", "tests/mutants/tiny_claim.py")
def run(ctx):
    return [verify(TINY, P, BEH, rounds=20, x0=P.constants.x_star + 1.0)]


@register("tiny_claim_power", "tiny claim: its LaTeX and a plain reference", "tests/mutants/tiny_claim.py")
def power(ctx):
    x0 = P.constants.x_star + 1.0  # D0 = 2
    return [verify_latex(TINY), verify_reference(TINY, P, BEH, "D0 * 0.81**T / 2", rounds=20, x0=x0)]
