"""Lian, Huang, Li, Liu, "Asynchronous Parallel Stochastic Gradient for Nonconvex Optimization", NeurIPS 2015
(arXiv:1506.08272), Theorem 1 (AsySG-con, constant step).

Paper letters -> symbols: K (updates) -> ``T``; M (gradients per update, the minibatch) -> ``m``; T (delay
bound) -> ``tau``; γ (step) -> ``eta`` (the factor on the SUM of the m stale gradients).
"""

from __future__ import annotations

import sympy as sp

from ..algorithms import AsySG
from ..claims import Assumptions, EngineForm, Location, Transcription
from ..pep.claims import PepSetup
from ._paper import Paper
from .symbols import Delta, L, T, eta, m, sigma, sigma_L, tau

__all__ = ["CONTROL_FACTOR", "KILLS", "STATEMENTS", "THM1", "claims", "verify"]

_GAMMA = sp.Symbol("gamma_lian", positive=True)  # Lian's γ in the engines: η η_L / m

PAPER = Paper(
    "Lian, Huang, Li, Liu, NeurIPS 2015",
    "Theorem 1 as restated by Bhardwaj & Cong (IBM), 'Inefficiency of Stochastic Gradient Descent with "
    "Larger Mini-batches (and More Learners)', Sec. 4 eqs. 7-8, index id 62195766402 (a converted "
    "markdown copy); the primary text not found",
)

THM1 = PAPER.claim(
    "lian2015.thm1",
    "AsySG-con: asynchronous SGD, nonconvex, constant step",
    "Theorem 1",
    confidence="read (secondary: Bhardwaj & Cong, Sec. 4 eqs. 7-8, quoting Theorem 1)",
    reading=(
        "x_{k+1} = x_k − γ Σ_{m=1}^M G(x_{k−τ_{k,m}}; ξ_{k,m}): γ multiplies the SUM of the "
        "M stale gradients (afltheory's AsySG averages: γ = η η_L / m). Delays τ_{k,m} ≤ T. "
        "The left side averages E‖∇f(x_k)‖² over k = 1..K, the K iterates before the last "
        "(x_1 the start). σ² bounds the variance of one stochastic gradient; Δ = f(x_1) − f*."
    ),
    assumptions_text={
        "function": "smooth (nonconvex)",
        "noise": "variance σ²",
        "heterogeneity": None,
        "participation": "m stale gradients per update",
        "max_delay": "τ",
    },
    algorithm_text="AsySG-con (afltheory.algorithms.AsySG with η η_L = m γ)",
    measured_text="avg_grad_sq: (1/K) Σ_{k=1}^K E‖∇f(x_k)‖²",
    bound={
        "transient": 2 * Delta / (m * T * eta),
        "noise": sigma**2 * L * eta,
        "delay": 2 * sigma**2 * L**2 * m * tau * eta**2,
    },
    conditions={"step": sp.Le(L * m * eta + 2 * L**2 * m**2 * tau**2 * eta**2, 1)},
    notes="Corollary: γ ∝ 1/sqrt(MK) gives O(1/sqrt(MK)) when T ≤ O(sqrt(K/M)) (the corollary from memory).",
    location=Location(
        "62195766402",
        16000,
        "Theorem 1 of Lian et al. as restated (Sec. 4, eqs. 7-8) by Bhardwaj & Cong",
        "{M K \\gamma}",
        section="Sec. 4 (secondary; notation Sec. 1 eq. 1 at offset 4000)",
    ),
    transcription=Transcription(
        bound=r"\frac{2 D}{M K \gamma}+\sigma^{2} L \gamma+2 \sigma^{2} L^{2} M N \gamma^{2}",
        symbols={"D": Delta, "M": m, "K": T, "gamma": eta, "sigma": sigma, "L": L, "N": tau},
        conditions={"step": r"L M \gamma+2 L^{2} M^{2} N^{2} \gamma^{2} \le 1"},
        assumptions={
            "update": r"x_{k+1}=x_{k}-\gamma \sum_{i=1}^{M} G(x_{k-\tau}, z_{k}^{i})",
            "variance": r"\mathbb{E}_{z}\|G(x, z)-\nabla f(x)\|^{2} \le \sigma^{2}",
            "D": r"D_{f}=f(x_{1})-f(x^{*})",
            "output": r"\frac{1}{K}\sum_{k=1}^{K} \mathbb{E}\|\nabla f(x_{k})\|^{2}",
        },
        normalisations="D_f written D; the secondary's N (learners, bounding the delays) is the paper's T",
    ),
    readings={
        "lian15.gamma_on_sum": "γ multiplies the SUM of the M stale gradients (the secondary's eq. 1 and 6: "
        "G(x, z_k) = Σ_{i=1}^M G(x, z_k^i)); afltheory's AsySG averages, so γ = η η_L / m",
        "lian15.delay_bound": "the delays are bounded by the paper's T; the secondary bounds them by the "
        "number of learners N and writes N in eqs. 7-8; the module writes τ",
        "lian15.average_from_x1": "the left side is (1/K) Σ_{k=1}^K E‖∇f(x_k)‖², x_1 the start and "
        "D_f = f(x_1) − f(x^*) (the secondary: x^* a local optimum; the module reads f*)",
        "lian15.condition_tau_squared": "the step condition L M γ + 2 L² M² T² γ² ≤ 1 has the delay bound "
        "squared (the secondary's eq. 8 with N); the τ reading is not supported",
        "lian15.secondary_only": "transcribed from a restatement: the primary's further conditions (e.g. how "
        "the delays may depend on the samples) were not read",
    },
    # γ (the factor on the SUM of the m gradients) = η η_L / m for afltheory's AsySG; σ = σ_L
    engine_form=EngineForm(
        subs={eta: _GAMMA},
        reading=" Engine form: γ = η η_L / m; the condition has τ², as the secondary restatement prints it "
        "(the statement's location).",
    ),
    assumptions=Assumptions(
        function="smooth", noise="variance", heterogeneity="iid", participation="arbitrary"
    ),
    rule=AsySG,
    eta=0.2,
    measured="avg_grad_sq",
    values={"gamma_lian": sp.Symbol("eta") * sp.Symbol("eta_L") / m, "sigma": sigma_L},
    extra_symbols={"gamma_lian": "Lian's γ"},
    setups={
        "pep": PepSetup(
            values={"L": 1.0, "Delta": 1.0, "eta": 0.2, "eta_L": 1.0, "tau": 0.0},
            T=20,
            K=1,
            subclass={"participation": "full", "max_delay": 0},
            description="sub-class: every worker each update, no delay",
        )
    },
)

STATEMENTS = (THM1,)


# -- the engine form and the check (one module, one test: issue 38)

#: {verdict id: the catalogued mutants that flip it} (recorded 2026-11-26, afltheory/published/kill_record.py)
KILLS = {
    "published.lian2015.thm1.m1_tau0": ["asysg.step_twice"],
    "published.lian2015.thm1.m2_tau3": ["asysg.staleness_damped", "asysg.step_twice"],
}
#: the control divides the bound by this factor and must fail
CONTROL_FACTOR = 10


def claims() -> tuple:
    """Theorem 1's engine form (``Claim.engine()``: γ = η η_L / m for afltheory's AsySG; σ = σ_L)."""
    return tuple(st.engine() for st in STATEMENTS)


def verify() -> list:
    """Theorem 1 on identical workers (Hessian diag(1, .5), σ_L = 1), x_0 = (3, −2), 400 updates: m = 1
    without delay (γ = 0.2) and m = 2 with delay 3 (γ = 0.05) — two verdicts whose controls (bound / 10)
    must fail."""
    import numpy as np

    from ..algorithms import AsySG
    from ..anarchy import Behaviour, FixedDelay, NoDelay, UniformArrivals
    from ..problems import HeterogeneousQuadratic
    from ._runs import verify_with_control

    (claim,) = claims()
    p = HeterogeneousQuadratic.from_arrays(
        hessian_diag=np.array([1.0, 0.5]), centers=np.zeros((4, 2)), sigma_L=1.0
    )
    out = []
    for mm, tau_, gamma in ((1, 0, 0.2), (2, 3, 0.05)):
        beh = Behaviour(UniformArrivals(mm), delays=FixedDelay(tau_) if tau_ else NoDelay())
        out.append(
            verify_with_control(
                claim,
                p,
                beh,
                CONTROL_FACTOR,
                rounds=400,
                x0=np.array([3.0, -2.0]),
                algorithm=AsySG(gamma * mm, 1.0),
                id=f"published.lian2015.thm1.m{mm}_tau{tau_}",
            )
        )
    return out
