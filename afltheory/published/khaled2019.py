"""Khaled, Mishchenko, Richtárik, "First Analysis of Local GD on Heterogeneous Data", NeurIPS 2019 Workshop
on Federated Learning (arXiv:1909.04715): Theorem 1 (local GD, convex, constant step, averaged iterate) and
Corollary 1 (γ = √M/(4L√T)).

Paper letters -> symbols: M (devices) -> ``M``; H (max steps between synchronisations) -> ``H``; T (total
local steps) -> ``T``; γ (step) -> ``eta``; σ² := (1/M) Σ_m ‖∇f_m(x_*)‖² (heterogeneity at the optimum,
no stochastic noise: local GD) -> ``sigma_dif``²; ‖x_0 − x_*‖² -> ``D0``.

One module, one test (issue 38): the statements (``STATEMENTS``), the engine form (``claims()``), the check
with its control (``verify()``) and its PEP setup (``setups["pep"]``) are all here; ``afltheory.published``
collects them (the claims registry, the checks plugin, the table command).
"""

from __future__ import annotations

import sympy as sp

from ..algorithms import FedAvg
from ..claims import Assumptions, EngineForm, Location, Transcription
from ..pep.claims import PepSetup
from ._paper import Paper
from .symbols import D0, H, K, L, M, T, eta, sigma_dif, zeta_star

__all__ = ["COR1", "KILLS", "STATEMENTS", "THM1", "claims", "verify"]

_LOC = Location(
    "785123747",
    45100,
    "Theorem 1 (eq. 5); Corollary 1",
    "# First Analysis of Local GD",
    section="Sec. 2.2, 2.4",
)
SOURCE = (
    "main text, index id 785123747 (a converted markdown copy, the file that also holds Li et al. 2020): "
    "Sec. 2.1 Assumption 1, Sec. 2.2 Lemmas 1-2 and Theorem 1, eq. 5, Sec. 2.4 Corollary 1"
)
PAPER = Paper("Khaled, Mishchenko, Richtárik, NeurIPS 2019 FL workshop", SOURCE)
READINGS = {
    "kmr19.average_iterate": "the output is x̄_T = (1/T) Σ_{t=0}^{T−1} x̂_t, the average over ALL local steps "
    "of the devices' mean x̂_t (not only the synchronisation points)",
    "kmr19.T_counts_steps": "T counts local steps (Algorithm 1's t), H = max_p |t_p − t_{p+1}|",
    "kmr19.sigma_at_optimum": "σ² = (1/M) Σ_m ‖∇f_m(x_*)‖², deterministic gradients (local GD)",
}
_ASSUME_TEX = {
    "A1": r"0 \le f_m(x)-f_m(y)-\langle\nabla f_m(y),x-y\rangle \le \frac{L}{2}\|x-y\|^2",
    "sigma": r"\sigma^2 = \frac{1}{M}\sum_{m=1}^M \|\nabla f_m(x_*)\|^2",
    "output": r"\bar{x}_T = \frac{1}{T}\sum_{t=0}^{T-1} \hat{x}_t",
}
#: the engine form: H = K = 1 (synchronisation after every step, so x̂_t is the server iterate and T counts
#: rounds; local GD with H = 1 is FedAvg with one local step and γ = η η_L); σ² = ζ*² (uniform weights, exact
#: gradients)
_SUBS = {eta: sp.Symbol("eta", positive=True) * sp.Symbol("eta_L", positive=True), H: K, sigma_dif: zeta_star}
_ENGINE = dict(
    assumptions=Assumptions.synchronous("convex", "none", "zeta_star", local_steps=1),
    rule=FedAvg,
    measured="avg_iterate_gap",
)
_COR1_STEP = sp.sqrt(M) / (4 * L * sp.sqrt(T))
_SYM = {"D": D0, "gamma": eta, "T": T, "sigma": sigma_dif, "H": H, "L": L, "M": M}

THM1 = PAPER.claim(
    "khaled2019.thm1",
    "Local GD, heterogeneous data, convex, constant step",
    "Theorem 1",
    confidence="read",
    reading="f(x̄_T) − f(x_*) ≤ 2‖x_0 − x_*‖²/(γT) + 24γ²σ²H²L for γ ≤ 1/(4LH); "
    + READINGS["kmr19.average_iterate"],
    assumptions_text={
        "function": "convex (each f_m L-smooth, convex)",
        "noise": "none (local GD)",
        "heterogeneity": "σ² at the optimum",
        "participation": "full",
    },
    algorithm_text="local GD (Algorithm 1): constant step γ, averaging at t_p, interval ≤ H",
    measured_text="avg_iterate_gap: f(x̄_T) − f(x_*)",
    bound={"init": 2 * D0 / (eta * T), "heterogeneity": 24 * eta**2 * sigma_dif**2 * H**2 * L},
    conditions={"step": sp.Le(eta, 1 / (4 * L * H))},
    location=_LOC,
    transcription=Transcription(
        bound=r"\frac{2 D}{\gamma T}+24 \gamma^{2} \sigma^{2} H^{2} L",
        symbols=_SYM,
        conditions={"step": r"\gamma \le \frac{1}{4 L H}"},
        assumptions=_ASSUME_TEX,
        normalisations="‖x_0 − x_*‖² written D",
    ),
    readings=READINGS,
    engine_form=EngineForm(subs=_SUBS, reading=" Engine form: H = K = 1, FedAvg with γ = η η_L, σ² = ζ*²."),
    **_ENGINE,
    setups={"pep": PepSetup(values={"L": 1.0, "D0": 1.0, "eta": 1.0, "eta_L": 0.25}, T=10, K=1)},
)

COR1 = PAPER.claim(
    "khaled2019.cor1",
    "Local GD at γ = √M/(4L√T), H ≤ √T/√M",
    "Corollary 1",
    kind="corollary",
    confidence="read",
    reading="Theorem 1 at γ = √M/(4L√T) (≤ 1/(4HL) when H ≤ √T/√M): 8L‖x_0 − x_*‖²/√(MT) + 3Mσ²H²/(2LT).",
    assumptions_text=THM1.assumptions_text,
    algorithm_text=THM1.algorithm_text,
    measured_text=THM1.measured_text,
    bound={"init": 8 * L * D0 / sp.sqrt(M * T), "heterogeneity": 3 * M * sigma_dif**2 * H**2 / (2 * L * T)},
    conditions={"H": sp.Le(H, sp.sqrt(T) / sp.sqrt(M))},
    definitions={"eta": _COR1_STEP},
    location=_LOC,
    transcription=Transcription(
        bound=r"\frac{8 L D}{\sqrt{M T}}+\frac{3 M \sigma^{2} H^{2}}{2 L T}",
        symbols=_SYM,
        conditions={
            "H": r"H \le \frac{\sqrt{T}}{\sqrt{M}}",
            "gamma": r"\gamma=\frac{\sqrt{M}}{4 L \sqrt{T}}",
        },
        assumptions=_ASSUME_TEX,
        normalisations="‖x_0 − x_*‖² written D",
    ),
    readings=READINGS,
    engine_form=EngineForm(
        subs=_SUBS, reading=" Engine form: H = K = 1, FedAvg(η = 1, η_L = √M/(4L√T)), σ² = ζ*²."
    ),
    eta=1,
    eta_L=_COR1_STEP,
    **_ENGINE,
    setups={"pep": PepSetup(values={"L": 1.0, "D0": 1.0}, T=16, K=1)},
)

STATEMENTS = (THM1, COR1)


#: {verdict id: the catalogued mutants that flip it}, recorded 2026-12-01 ~23:20 UTC from a live run,
#: ``kill_matrix(only=["published.khaled2019"], tier="quick", seed=0, jobs=1)`` (5 min wall on the loaded
#: shared machine, 100 s CPU)
#: Corollary 1's verdict added 2026-12-02 ~01:44 UTC from a live run, ``kill_matrix(only=[
#: "published.khaled2019", "published.fednova2020"], tier="quick", seed=0, jobs=1)`` (833 s wall under load
#: 12; thm1's entry confirmed)
KILLS = {
    "published.khaled2019.thm1": ["sim.K_plus_one", "sim.stale_off_by_one"],
    "published.khaled2019.cor1": ["sim.K_plus_one", "sim.stale_off_by_one"],
}

#: the control divides the bound by this factor and must fail (measured > bound / factor): the init term
#: 2‖x_0 − x_*‖²/(γT) is ≥ 9.5× the truth on the quadratics tried (ratio 0.1045 at T = 5, the best of T ≤ 12)
CONTROL_FACTOR = 10


def claims() -> tuple:
    """Theorem 1 and Corollary 1 in the engines' symbols (``Claim.engine()``): H = K = 1, γ = η η_L, σ² = ζ*²;
    Corollary 1 runs its own step, η = 1, η_L = γ = √M/(4L√T); its condition H ≤ √T/√M becomes T ≥ M."""
    return tuple(st.engine() for st in STATEMENTS)


def verify() -> list:
    """Theorem 1 (engine form) on 4 clients with different diagonal curvatures and centres ±e_1, ±e_2, exact
    gradients, γ = 1/(4L), x_0 = x* + 3e_1, T = 5 rounds (where the init term is attained best); Corollary 1
    on the same clients at its own step γ = √M/(4L√T) = 1/(2√5), x_0 = x* + 10e_1, T = 5 ≥ M (ratio 0.1117,
    the best of T = 4..32 and the starts tried); each control (bound / ``CONTROL_FACTOR``) must fail."""
    import numpy as np

    from ..algorithms import FedAvg
    from ._runs import curved_clients, synchronous, verify_with_control

    claim, cor1 = claims()
    het, beh = curved_clients(), synchronous(4)
    start = het.constants.x_star
    return [
        verify_with_control(
            claim,
            het,
            beh,
            CONTROL_FACTOR,
            rounds=5,
            replicates=2,
            x0=start + np.array([3.0, 0.0]),
            algorithm=FedAvg(1.0, 0.25),
        ),
        verify_with_control(
            cor1, het, beh, CONTROL_FACTOR, rounds=5, replicates=2, x0=start + np.array([10.0, 0.0])
        ),
    ]
