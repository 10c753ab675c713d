"""The published statements (``afltheory.published``) that afltheory's engines can run, as ``Claim`` objects.

Each claim reuses its statement's sympy terms, re-expressed in the claim symbol set (``afltheory.claims``):
the paper's own clock becomes afltheory's (e.g. Li et al.'s T counts local SGD steps: T_Li = 1 + T·E with T
the rounds), the paper's extra symbols get values (σ_k = σ_L for every client, H = K, …). The instances the
checks run are in the checks plugin (its ``published`` module); the statements not expressible in the
engines (per-local-step schedules, sampling with replacement, weighted iterate averages, per-round decrease)
are checked on the independent plain references only (tests/published/).

``CLAIMS``: id -> Claim. ``FALSE_VARIANTS``: id -> a claim declared ``expect="fails"`` (it passes when its
bound is violated on the same instance).
"""

from __future__ import annotations

import sympy as sp

from ..algorithms import AsySG, FedAvg
from ..claims import Assumptions, Claim
from ..claims.symbols import D0, E, kappa, mu, zeta_star
from ..theory.symbols import K, L, M, T, eta, m, sigma_L
from . import SELF_CHECKED, khaled2020, lian2015, stich2019, yu2019
from .symbols import G, H, sigma_dif, sigma_star, t
from .symbols import T as T_paper

__all__ = ["CLAIMS", "FALSE_VARIANTS"]


def _source(st) -> str:
    """The statement's source, confidence, location and the named readings the verdict depends on."""
    out = f"{st.source}; confidence: {st.confidence}" + (f"; excerpt: “{st.excerpt}”" if st.excerpt else "")
    if st.location is not None:
        out += f"; {st.location}"
    if st.readings:
        out += "; readings: " + ", ".join(st.readings)
    return out


def _claim_confidence(st) -> str:
    return "read" if st.is_read else "from memory"


def _sub(terms: dict, subs: dict) -> dict:
    return {k: sp.sympify(v).subs(subs, simultaneous=True) for k, v in terms.items()}


# -- Lian et al. 2015, Thm 1: γ (the factor on the SUM of the m gradients) = η η_L / m for afltheory's AsySG
_g = sp.Symbol("gamma_lian", positive=True)
LIAN = Claim(
    id="published.lian2015.thm1",
    title=lian2015.THM1.title,
    reference=lian2015.THM1.reference,
    source=_source(lian2015.THM1),
    reading=lian2015.THM1.reading + " Engine form: γ = η η_L / m; the condition is read with τ² "
    "(another recollection has τ: the τ² reading is the more restrictive).",
    confidence="from memory",
    assumptions=Assumptions(
        function="smooth", noise="variance", heterogeneity="iid", participation="arbitrary"
    ),
    rule=AsySG,
    eta=0.2,
    measured="avg_grad_sq",
    bound=_sub(lian2015.THM1.bound, {eta: _g, sigma_star: sigma_L}),
    conditions={k: c.subs(eta, _g) for k, c in lian2015.THM1.conditions.items()},
    values={"gamma_lian": sp.Symbol("eta") * sp.Symbol("eta_L") / m, "sigma": sigma_L},
    extra_symbols={"gamma_lian": "Lian's γ"},
)

# -- Khaled et al. 2020, identical data: local SGD = FedAvg(η = 1, η_L = γ) with K = H local steps; the
# paper's T counts local steps (T·K); σ*² = E‖∇f(x*, ξ)‖² = σ_L² for additive noise.
_gam = sp.Symbol("eta_L", positive=True)
KHALED_ID = Claim(
    id="published.khaled2020.identical",
    title=khaled2020.IDENTICAL.title,
    reference=khaled2020.IDENTICAL.reference,
    source=_source(khaled2020.IDENTICAL),
    reading=khaled2020.IDENTICAL.reading + " Engine form: FedAvg(η = 1, η_L = γ), H = K, "
    "T_KMR = T·K, σ* = σ_L.",
    confidence="from memory",
    assumptions=Assumptions(
        function="strongly_convex", noise="variance", heterogeneity="iid", participation="full", max_delay=0
    ),
    rule=FedAvg,
    eta=1,
    eta_L=0.1,
    measured="last_dist_sq",
    bound=_sub(khaled2020.IDENTICAL.bound, {eta: _gam, T_paper: T * K, H: K, sigma_star: sigma_L}),
    conditions={"step": sp.Le(_gam, 1 / (4 * L))},
)

# -- Khaled et al. 2020, heterogeneous data, convex: with H = K = 1 (synchronisation after every step) the
# virtual averages x̄_t are the server iterates and the paper's T (local steps) is the rounds, so its output
# (1/T) Σ_{t<T} x̄_t is afltheory's averaged iterate (measured "avg_iterate_gap"); local SGD = FedAvg with one
# local step and γ = η η_L; σ_dif² = (1/M) Σ_m E‖∇f_m(x*, ξ)‖² = ζ*² + σ_L² (uniform weights, additive noise).
_gam_het = sp.Symbol("eta", positive=True) * sp.Symbol("eta_L", positive=True)
KHALED_HET = Claim(
    id="published.khaled2020.heterogeneous",
    title=khaled2020.HETEROGENEOUS.title,
    reference=khaled2020.HETEROGENEOUS.reference,
    source=_source(khaled2020.HETEROGENEOUS),
    reading=khaled2020.HETEROGENEOUS.reading + " Engine form: H = K = 1 (x̄_t = the server iterate, "
    "T_KMR = T rounds), FedAvg with γ = η η_L, σ_dif² = ζ*² + σ_L²; the drift term is 0 at H = 1.",
    confidence="from memory",
    assumptions=Assumptions(
        function="convex",
        noise="variance",
        heterogeneity="zeta_star",
        participation="full",
        max_delay=0,
        max_local_steps=1,
    ),
    rule=FedAvg,
    measured="avg_iterate_gap",
    bound=_sub(
        khaled2020.HETEROGENEOUS.bound,
        {eta: _gam_het, T_paper: T, H: K, sigma_dif: sp.sqrt(zeta_star**2 + sigma_L**2)},
    ),
    conditions={
        k: c.subs({eta: _gam_het, H: K}, simultaneous=True)
        for k, c in khaled2020.HETEROGENEOUS.conditions.items()
    },
)

# -- Stich 2019, Thm 2.2 with H = K = 1 (synchronisation after every step): the paper's T (local steps per
# worker) is the rounds, the per-step schedule η_t = 4/(μ(a+t)) is a per-round schedule, and x̂_T =
# Σ_{t<T} (a+t)² x_t / S_T is the average with weights ∝ η_t^{-2} (measured "weighted_avg_iterate_gap");
# S_T = Σ_{t<T} (a+t)² in closed form; σ = σ_L; G (a bound on E‖∇f(x, ξ)‖²) is given the value σ_L, a LOWER
# bound of the true second moment (as for Li et al.: the bound checked is smaller than the paper's).
_a, _Tst = stich2019.a_shift, T
_S_T = _Tst * _a**2 + _a * _Tst * (_Tst - 1) + (_Tst - 1) * _Tst * (2 * _Tst - 1) / 6
STICH = Claim(
    id="published.stich2019.thm2.2",
    title=stich2019.THM22.title,
    reference=stich2019.THM22.reference,
    source=_source(stich2019.THM22),
    reading=stich2019.THM22.reading + " Engine form: H = K = 1 (rounds = local steps; per-step and per-round "
    "schedules coincide), FedAvg(η = 1, η_L = 4/(μ(a+t))) with a = max(16κ, 1), σ = σ_L, G read as σ_L "
    "(a lower bound: conservative).",
    confidence=_claim_confidence(stich2019.THM22),
    assumptions=Assumptions(
        function="strongly_convex",
        noise="variance",
        heterogeneity="iid",
        participation="full",
        max_delay=0,
        max_local_steps=1,
    ),
    rule=FedAvg,
    eta=1,
    eta_L=4 / (mu * (_a + t)),
    measured="weighted_avg_iterate_gap",
    bound=_sub(
        stich2019.THM22.bound,
        {stich2019.S_T: _S_T, stich2019.sigma: sigma_L, G: sigma_L, H: K},
    ),
    values={"a": sp.Max(16 * kappa, E)},
    conditions={
        "one_local_step (engine form)": sp.Le(K, 1),
        "a": sp.Ge(_a, sp.Max(16 * kappa, K)),
    },
    extra_symbols={"a": "Stich's step-size shift a (η_t = 4/(μ(a+t)))"},
)

# -- Yu, Yang, Zhu 2019 (AAAI), Thm 1 and its corollary, with K = 1 (averaging after every iteration): the
# virtual average x̄^t is then the server iterate after t rounds, so the paper's left side (1/T) Σ_{t<T}
# E‖∇f(x̄^t)‖² over its T iterations IS afltheory's avg_grad_sq over T rounds — exactly, not a surrogate. Local
# SGD = FedAvg(η = 1, η_L = s) (the worker update −η_L Σ_k g_k); s = η η_L, N = M, σ = σ_L; G (unbounded on
# quadratics with noise) is given the value σ_L, a LOWER bound of the true second moment E‖∇F_i‖² ≥ σ_L²: the
# bound checked is smaller than the paper's, the check conservative. K > 1 (the left side averages the
# virtual average at EVERY local iteration, which the engines do not record) is checked on the plain
# reference only (tests/published/test_yu2019_reference.py).
_s_yu = sp.Symbol("eta", positive=True) * sp.Symbol("eta_L", positive=True)
_YU_SUBS = {yu2019.s: _s_yu, yu2019.N: M, yu2019.sigma: sigma_L}
_YU_READ = (
    " Engine form: K = 1 (x̄^t = the server iterate, T_Yu = T rounds), FedAvg with s = η η_L, N = M, σ = σ_L; "
    "G read as σ_L (a lower bound of the second moment: conservative). The notes' PR-SGD averages BEFORE the "
    "synchronising step, whose gradient is taken at the un-averaged local point; the engines run FedAvg "
    "(every worker restarts at the average; K = 1: parallel mini-batch SGD). Their virtual averages coincide "
    "on quadratics with a shared Hessian (the verdict instances), not in general "
    "(tests/published/test_yu2019_reference.py)."
)
_YU_CLASS = Assumptions(
    function="smooth",
    noise="variance",
    heterogeneity="iid",
    participation="full",
    max_delay=0,
    max_local_steps=1,
)
YU_THM1 = Claim(
    id="published.yu2019.thm1",
    title=yu2019.THM1.title,
    reference=yu2019.THM1.reference,
    source=_source(yu2019.THM1),
    reading=yu2019.THM1.reading + _YU_READ,
    confidence=_claim_confidence(yu2019.THM1),
    assumptions=_YU_CLASS,
    rule=FedAvg,
    measured="avg_grad_sq",
    bound=_sub(yu2019.THM1.bound, _YU_SUBS),
    values={"G": sigma_L},
    conditions={
        "one_local_step (engine form)": sp.Le(K, 1),
        "step": yu2019.THM1.conditions["step"].subs(_YU_SUBS, simultaneous=True),
    },
)
YU_COR2 = Claim(
    id="published.yu2019.cor2",
    title=yu2019.COR2.title,
    reference=yu2019.COR2.reference,
    source=_source(yu2019.COR2),
    reading=yu2019.COR2.reading + _YU_READ + " The step η_L = √M/(L√T) is the corollary's own (η = 1).",
    confidence=_claim_confidence(yu2019.COR2),
    assumptions=_YU_CLASS,
    rule=FedAvg,
    eta=1,
    eta_L=yu2019.COR2_STEP.subs(_YU_SUBS, simultaneous=True),
    measured="avg_grad_sq",
    bound=_sub(yu2019.COR2.bound, _YU_SUBS),
    values={"G": sigma_L},
    conditions={
        "one_local_step (engine form)": sp.Le(K, 1),
        "step": yu2019.COR2.conditions["step"].subs(_YU_SUBS, simultaneous=True),
    },
    rate={"T": -0.5},
)

CLAIMS = {
    c.id: c
    for c in (
        LIAN,
        KHALED_ID,
        KHALED_HET,
        STICH,
        YU_THM1,
        YU_COR2,
    )
}
#: the claims of the paper modules that carry their own (``afltheory.published.SELF_CHECKED``)
CLAIMS.update({c.id: c for p in SELF_CHECKED for c in p.claims()})


def _false(c: Claim, factor: float = 10.0) -> Claim:
    return Claim(
        **{
            **{k: getattr(c, k) for k in c.__dataclass_fields__},
            "id": c.id + ".bound_div10",
            "title": c.title + " — false variant: bound / 10",
            "expect": "fails",
            "bound": {k: v / factor for k, v in c.bound.items()},
        }
    )


FALSE_VARIANTS = {
    f.id: f
    for f in (_false(CLAIMS["published.li2020.thm1"]), _false(KHALED_ID), _false(LIAN), _false(YU_THM1))
}

# keep the import of M, G, zeta_star, D0 meaningful for readers of the symbol mapping
_ = (M, G, zeta_star, D0)
