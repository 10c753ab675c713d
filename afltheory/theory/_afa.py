"""The shape Theorems 2–4 share (AFA-CD / AFA-CS [Yang et al. 2022]), written once.

Each ``theoremK`` module states only what is its own: the conditions (``SPECS``, ``_quad``), the bound's named
terms (``TERM_EXPRS``), the run averages its reading takes from a ``Schedule``, and its citation. This module
holds what they do alike: the common argument checks of ``conditions`` / ``region``, the sympy views of the
terms (α_L, α_G, the bound), the argument checks and the scope check before a numeric bound, the run-average
dict its terms are evaluated on, and ``bound`` as the ordered sum of ``bound_terms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp

from ._condition import check_K, nonneg, pos
from ._scope import check_scope
from ._stats import bound_from_terms, check_constants, check_schedule, evaluate_terms, terms_in_force

__all__ = ["alphas", "bound_from_terms", "bound_sum", "per_replicate", "prepare", "run_stats", "values"]


def values(L, eta_L, K_max, tau, eta=None) -> dict[str, Any]:
    """The checked numbers every theorem's conditions read (``eta`` only if given)."""
    v = dict(L=pos("L", L), eta_L=pos("eta_L", eta_L), K_max=check_K("K_max", K_max), tau=nonneg("tau", tau))
    if eta is not None:
        v["eta"] = pos("eta", eta)
    return v


def alphas(
    term_exprs: Mapping[str, sp.Expr], scale_L: sp.Expr, scale_G: sp.Expr, subs: Mapping | None = None
) -> tuple[sp.Expr, sp.Expr]:
    """(α_L, α_G) read off the terms in force: the ``sigma_L*`` terms (``subs`` applied) over ``scale_L`` and
    the ``sigma_G*`` terms over ``scale_G`` (σ_L², or 4σ_L² where the bound is written 4(α_L σ_L² + ...))."""
    terms = terms_in_force(term_exprs)
    aL = sum(e for k, e in terms.items() if k.startswith("sigma_L"))
    if subs:
        aL = aL.subs(subs)
    aG = sum(e for k, e in terms.items() if k.startswith("sigma_G"))
    return sp.simplify(aL / scale_L), sp.simplify(aG / scale_G)


def bound_sum(term_exprs: Mapping[str, sp.Expr], subs: Mapping | None = None) -> sp.Expr:
    """The right-hand side as a sympy expression: the sum of the terms in force (``subs`` applied)."""
    total = sum(terms_in_force(term_exprs).values())
    return total.subs(subs) if subs else total


def prepare(
    theorem: str, schedule, constants, *, eta, eta_L, num_workers, scope
) -> tuple[tuple[float, float, float, float], float, float]:
    """The checks before a numeric bound, in order: the schedule (and ``num_workers``), the constants, η, η_L,
    then the theorem's scope. Returns ((L, σ_L, σ_G, f_*), η, η_L). Called from ``bound_terms`` (itself called
    from ``bound``): the scope warning points at the caller of ``bound``."""
    check_schedule(schedule, num_workers)
    consts = check_constants(constants)
    eta, eta_L = pos("eta", eta), pos("eta_L", eta_L)
    check_scope(theorem, schedule, constants, eta=eta, eta_L=eta_L, scope=scope, stacklevel=5)
    return consts, eta, eta_L


def run_stats(consts, *, T, tau, eta, eta_L, Delta, **averages) -> dict[str, Any]:
    """The values of a theorem's symbols on a run: the shared ones plus the theorem's own run ``averages``."""
    L, sL, sG, _ = consts
    return {
        "T": float(T),
        "tau": tau,
        "L": L,
        "sigma_L": sL,
        "sigma_G": sG,
        "eta": eta,
        "eta_L": eta_L,
        "Delta": Delta,
        **averages,
    }


def per_replicate(
    term_exprs: Mapping[str, sp.Expr], stats: Mapping[str, Any], R: int
) -> dict[str, np.ndarray]:
    """The terms evaluated on ``stats``, each as its own (R,) array."""
    return {k: np.broadcast_to(v, (R,)).copy() for k, v in evaluate_terms(term_exprs, stats).items()}
