"""Local SGD / FedAvg theorems of Yu et al. as given in the lecture notes (the lecture notes [Yu et al.]),
same shape as Theorems
2–4.

Reading encoded (docs/theorems.md, "Local SGD / FedAvg theorems"), s = step, N workers, K = synchronization
period:
  ``setting="iid"`` [Yu et al. AAAI'19, Thm 1], bounded second moment G², for s ≤ 1/L:
      (1/T) Σ E‖∇f(x̄_{t−1})‖² ≤ 2(f_0 − f_*)/(sT) + 4 s² K² G² L² + (L/N) s σ²
  ``setting="noniid"`` [Yu et al. ICML'19, momentum-less], for s ≤ 1/L and K ≤ 1/(6Ls):
      ≤ 2(f_0 − f_*)/(sT) + (L/N) s σ² + 4 s² K G² L² + 9 L² s² K² σ_G²
      (the G² term carries K, not K², exactly as printed in the notes).
Rate: s = √N/(L√T) gives O(1/√(NT)) plus O(N K² /T)-type terms.

The constants live once, in the sympy terms ``SETTING_TERM_EXPRS``: ``bound_expr``, ``bound_terms``/``bound``
(numeric, through ``theory._stats.evaluate_terms``) and the published ``Claim``s of
``afltheory.published.yu2019`` (registered once in ``afltheory.published.registry``) all read them.
"""

from __future__ import annotations

import sympy as sp

from . import symbols as S
from ._condition import AdmissibleStep, Condition, ConditionSpec, check_K, int_ge, nonneg, pos, real
from ._stats import BOUND_API, bound_from_terms, evaluate_terms

__all__ = [*BOUND_API, "SETTING_TERM_EXPRS", "SETTINGS"]

CITATION = "[Yu et al. 2019, via lecture notes the lecture notes [Yu et al.]]"
SETTINGS = ("iid", "noniid")

SPECS = {
    "iid": (ConditionSpec("s<=1/L", S.s, 1 / S.L, False, lambda s, L, **_: (s, 1.0 / L), "step size"),),
    "noniid": (
        ConditionSpec("s<=1/L", S.s, 1 / S.L, False, lambda s, L, **_: (s, 1.0 / L), "step size"),
        ConditionSpec(
            "K<=1/(6Ls)",
            S.K,
            1 / (6 * S.L * S.s),
            False,
            lambda s, L, K, **_: (K, 1.0 / (6 * L * s)),
            "synchronization period",
        ),
    ),
}


def _setting(setting):
    if setting not in SETTINGS:
        raise ValueError(f"setting={setting!r} must be one of {SETTINGS}")
    return setting


def conditions(
    *, setting: str = "iid", s: float | None = None, L: float | None = None, K: int | None = None
) -> list[Condition]:
    """The step-size conditions of ``setting`` evaluated at the given numbers (list of ``Condition``)."""
    _setting(setting)
    v = dict(s=pos("s", s), L=pos("L", L))
    if setting == "noniid" or K is not None:
        v["K"] = check_K("K", K)
    return [c.evaluate(v, S.s) for c in SPECS[setting]]


def admissible_step_sizes(
    *, setting: str = "iid", L: float | None = None, K: int | None = None
) -> AdmissibleStep:
    """Largest s: 1/L (iid) or min(1/L, 1/(6LK)) (noniid); always feasible for L > 0, K ≥ 1. Local SGD has one
    step size s (``eta_max``); ``eta_L`` is None (no separate local step)."""
    _setting(setting)
    L = pos("L", L)
    if setting == "iid":
        return AdmissibleStep(None, True, 1.0 / L, "s<=1/L", (), 1 / S.L)
    K = check_K("K", K)
    smax, binding = (1.0 / L, "s<=1/L") if 6 * K <= 1 else (1.0 / (6 * L * K), "K<=1/(6Ls)")
    return AdmissibleStep(None, True, smax, binding, (), sp.Min(1 / S.L, 1 / (6 * S.L * S.K)))


#: setting -> {term name: sympy term} (``TERMS`` order): the one statement of the bound's constants
SETTING_TERM_EXPRS: dict[str, dict[str, sp.Expr]] = {
    "iid": {
        "transient": 2 * S.Delta / (S.s * S.T),
        "sigma": S.L / S.N * S.s * S.sigma**2,
        "G_drift": 4 * S.s**2 * S.K**2 * S.G**2 * S.L**2,
    },
    "noniid": {
        "transient": 2 * S.Delta / (S.s * S.T),
        "sigma": S.L / S.N * S.s * S.sigma**2,
        "G_drift": 4 * S.s**2 * S.K * S.G**2 * S.L**2,
        "sigma_G_drift": 9 * S.L**2 * S.s**2 * S.K**2 * S.sigma_G**2,
    },
}


def bound_expr(setting: str = "iid") -> sp.Expr:
    """The right-hand side of [Yu et al. 2019]'s bound in ``setting`` ("iid" or "noniid") as a sympy
    expression: the sum of ``SETTING_TERM_EXPRS[setting]``."""
    return sp.Add(*SETTING_TERM_EXPRS[_setting(setting)].values())


def rate(setting: str = "iid") -> sp.Expr:
    """The bound with s = √N/(L√T)."""
    return sp.expand(bound_expr(setting).subs(S.s, sp.sqrt(S.N) / (S.L * sp.sqrt(S.T))))


#: Names of ``bound_terms`` per setting, in order.
TERMS = {
    "iid": ("transient", "sigma", "G_drift"),
    "noniid": ("transient", "sigma", "G_drift", "sigma_G_drift"),
}


def bound_terms(
    *,
    setting: str = "iid",
    T: int | None = None,
    s: float | None = None,
    L: float | None = None,
    K: int | None = None,
    N: int | None = None,
    sigma: float | None = None,
    G: float | None = None,
    sigma_G: float | None = None,
    f0: float | None = None,
    f_star: float | None = None,
) -> dict[str, float]:
    """The right-hand side split into its named terms (``TERMS[setting]``): transient 2(f_0 − f_*)/(sT),
    σ² term (L/N) s σ², G² drift term (4 s² K² G² L², or 4 s² K G² L² for ``noniid``) and, for ``noniid``, the
    σ_G² drift term 9 L² s² K² σ_G². They sum to ``bound`` exactly. Same arguments as ``bound``."""
    _setting(setting)
    T = int_ge("T", T, 1)
    s, L = pos("s", s), pos("L", L)
    K = check_K("K", K)
    N = int_ge("N", N, 1)
    sigma, G = nonneg("sigma", sigma), nonneg("G", G)
    f0, fs = real("f0", f0), real("f_star", f_star)
    if f0 < fs:
        raise ValueError(f"f0={f0} is below f_star={fs}")
    stats = dict(Delta=f0 - fs, s=s, T=T, L=L, N=N, sigma=sigma, G=G, K=K)
    if setting == "noniid":
        stats["sigma_G"] = nonneg("sigma_G", sigma_G)
    return {k: float(v) for k, v in evaluate_terms(SETTING_TERM_EXPRS[setting], stats).items()}


bound = bound_from_terms(
    bound_terms,
    """Right-hand side at the given numbers (G is the second-moment bound; σ_G only for ``noniid``):
    the ordered sum of ``bound_terms``.""",
    returns="float",
    total=float,
)
