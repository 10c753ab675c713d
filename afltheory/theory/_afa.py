"""The shape Theorems 2–4 share (AFA-CD / AFA-CS [Yang et al. 2022]), written once.

Each ``theoremK`` module states only what is its own: the conditions (``SPECS``, ``_quad``), the bound's named
terms (``TERM_EXPRS``), the run averages its reading takes from a ``Schedule``, and its citation. This module
holds what they do alike: the common argument checks of ``conditions`` / ``region``, the sympy views of the
terms (α_L, α_G, the bound), the argument checks and the scope check before a numeric bound, the run-average
dict its terms are evaluated on, and ``bound`` as the ordered sum of ``bound_terms``.

``condition_functions`` writes a theorem's ``conditions``, ``admissible_step_sizes`` and ``region`` from its
declared parameter list (``Param``: the keywords beyond L, η, η_L, K_max, τ), so the three public signatures
and their common argument checks stand here once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from . import symbols as S
from ._condition import (
    AdmissibleStep,
    ConditionSpec,
    admissible_from,
    check_K,
    nonneg,
    pos,
    quadratic_root_expr,
    region_from,
)
from ._scope import check_scope, register_run_conditions
from ._stats import (
    BOUND_API,
    bound_from_terms,
    check_constants,
    check_f0,
    check_schedule,
    evaluate_terms,
    tau_for,
    terms_in_force,
)

__all__ = [
    "THEOREM_API",
    "alphas",
    "bound_from_terms",
    "bound_function",
    "bound_sum",
    "cd_functions",
    "cd_run_stats",
    "cd_term_exprs",
    "condition_functions",
    "Param",
    "per_replicate",
    "prepare",
    "run_stats",
    "sympy_views",
    "values",
]


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
    theorem: str, schedule, constants, *, eta, eta_L, num_workers, scope, stacklevel: int = 5
) -> tuple[tuple[float, float, float, float], float, float]:
    """The checks before a numeric bound, in order: the schedule (and ``num_workers``), the constants, η, η_L,
    then the theorem's scope. Returns ((L, σ_L, σ_G, f_*), η, η_L). Called from ``bound_terms`` (itself called
    from ``bound``): the scope warning points at the caller of ``bound`` (``stacklevel`` one more for each
    frame between ``prepare`` and ``bound_terms``)."""
    check_schedule(schedule, num_workers)
    consts = check_constants(constants)
    eta, eta_L = pos("eta", eta), pos("eta_L", eta_L)
    check_scope(theorem, schedule, constants, eta=eta, eta_L=eta_L, scope=scope, stacklevel=stacklevel)
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


def cd_term_exprs(
    *, delay: sp.Expr, drift: sp.Expr, khat: sp.Expr, floor: sp.Expr | None = None
) -> dict[str, sp.Expr]:
    """The named terms of an AFA-CD bound (Theorems 2 and 3), in order: 4Δ/(η η_L T) + 4(α_L σ_L² + α_G σ_G²)
    with α_L = (L η η_L + ``delay`` τ² L² η² η_L²)/(m K̄) + ``drift`` L² η_L² K̃ and α_G = ``floor`` +
    ``khat`` L² η_L² K̂² (no ``sigma_G_floor`` term when ``floor`` is None), over the run averages of
    ``symbols`` (Kbar, Ktilde, Khat2, per-replicate τ). Each theorem states its own constants."""
    x = S.eta * S.eta_L
    terms = {
        "transient": 4 * S.Delta / (x * S.T),
        "sigma_L_server": 4 * S.sigma_L**2 * S.L * x / (S.m * S.Kbar),
        "sigma_L_delay": 4 * S.sigma_L**2 * delay * S.tau**2 * S.L**2 * x**2 / (S.m * S.Kbar),
        "sigma_L_drift": 4 * S.sigma_L**2 * drift * S.L**2 * S.eta_L**2 * S.Ktil,
    }
    if floor is not None:
        terms["sigma_G_floor"] = 4 * S.sigma_G**2 * floor
    terms["sigma_G_drift"] = 4 * S.sigma_G**2 * khat * S.L**2 * S.eta_L**2 * S.Khat2
    return terms


def cd_run_stats(schedule, consts, k_averages, *, eta, eta_L, f0, tau) -> dict[str, Any]:
    """The values of ``cd_term_exprs``' symbols on each replicate: from ``k_averages`` = (1/K̄_t, K̃_t, K̂_t²),
    each (replicates, rounds), Kbar = ((1/T) Σ_t 1/K̄_t)⁻¹ and the round means Ktilde, Khat2; τ from
    ``tau_for``."""
    inv_kbar, ktil, khat2 = k_averages
    return run_stats(
        consts,
        T=schedule.rounds,
        tau=tau_for(schedule, tau),
        eta=eta,
        eta_L=eta_L,
        Delta=f0 - consts[3],
        m=float(schedule.m),
        Kbar=1.0 / inv_kbar.mean(axis=1),
        Ktilde=ktil.mean(axis=1),
        Khat2=khat2.mean(axis=1),
    )


#: The ``scope`` paragraph of every AFA theorem's ``bound`` docstring.
SCOPE_DOC = """
    ``scope``: "warn" (default) / "raise" / "ignore" when the run is outside the theorem (wrong algorithm
    or arrivals, or (η, η_L) outside its conditions at the realized K_max and τ) — see ``theory._scope``.
    """


def bound_function(bound_terms: Callable[..., dict[str, np.ndarray]], doc: str) -> Callable[..., np.ndarray]:
    """A theorem's public ``bound`` (``bound_from_terms``): its docstring is ``doc`` then ``SCOPE_DOC``."""
    return bound_from_terms(bound_terms, doc + SCOPE_DOC)


def per_replicate(
    term_exprs: Mapping[str, sp.Expr], stats: Mapping[str, Any], R: int
) -> dict[str, np.ndarray]:
    """The terms evaluated on ``stats``, each as its own (R,) array."""
    return {k: np.broadcast_to(v, (R,)).copy() for k, v in evaluate_terms(term_exprs, stats).items()}


@dataclass(frozen=True)
class Param:
    """A keyword of a theorem's condition functions beyond (L, η, η_L, K_max, τ): its name, its annotation
    (as the signature shows it) and whether ``admissible_step_sizes`` / ``region`` take it too
    (``conditions`` takes every one)."""

    name: str
    annotation: str = "int | None"
    admissible: bool = True
    region: bool = True
    default: Any = None


#: The public names every ``theoremK`` module (K = 2, 3, 4) defines; each adds its own to its ``__all__``.
THEOREM_API = (*BOUND_API, "alpha_exprs", "region", "TERM_EXPRS")

_KW = inspect.Parameter.KEYWORD_ONLY
_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _signature(
    names: Sequence[str], params: Sequence[Param], returns: str, positional: Mapping[str, str] | None = None
) -> inspect.Signature:
    """Positional parameters ``positional`` (name → annotation), then keyword-only ``names`` (default None)
    and ``params``."""
    ann = {"K_max": "int | None"}
    ps = [inspect.Parameter(n, _POS, annotation=a) for n, a in (positional or {}).items()]
    ps += [inspect.Parameter(n, _KW, default=None, annotation=ann.get(n, "float | None")) for n in names]
    ps += [inspect.Parameter(p.name, _KW, default=p.default, annotation=p.annotation) for p in params]
    return inspect.Signature(ps, return_annotation=returns)


def _function(name: str, module: str, doc: str, sig: inspect.Signature, body: Callable[..., Any]) -> Callable:
    """A public function ``name`` of ``module`` with signature ``sig``: binds its arguments (defaults applied)
    and calls ``body`` with all of them by keyword."""

    def f(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}() {e}") from None
        bound.apply_defaults()
        return body(**bound.arguments)

    f.__name__ = f.__qualname__ = name
    f.__module__ = module
    f.__doc__ = doc
    f.__signature__ = sig
    f.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()}
    f.__annotations__["return"] = sig.return_annotation
    return f


def condition_functions(
    theorem: str,
    module: str,
    specs: Sequence[ConditionSpec],
    *,
    params: Sequence[Param] = (),
    extra_values: Callable[..., dict[str, Any]] | None = None,
    quad: Callable[[dict], tuple[float, float, float]],
    root: tuple[sp.Expr, sp.Expr, sp.Expr],
    step: str,
    run_values: Callable[[Any], dict[str, Any]],
    docs: tuple[str, str],
) -> tuple[Callable[..., list], Callable[..., AdmissibleStep], Callable[..., np.ndarray]]:
    """A theorem's (``conditions``, ``admissible_step_sizes``, ``region``), all keyword-only but region's
    (eta, eta_L) grid, from its declared parameter list.

    ``extra_values(**params)`` checks the theorem's own keywords and returns what its ``specs`` read of them
    (e.g. ``{"M": ...}``); the common numbers are checked first (η, then L, η_L, K_max, τ). ``quad(values)``
    is the step condition ``step`` as a x² + b x ≤ c in x = η η_L, ``root`` its sympy (a, b, c). The
    conditions at a run's worst case are registered for ``check_scope`` under ``theorem``: ``run_values(
    schedule)`` gives τ (and the theorem's own keywords) there. ``docs``: the three docstrings."""
    extra_values = extra_values or (lambda: {})
    root_expr = quadratic_root_expr(*root) / S.eta_L

    def checked(L, eta_L, K_max, tau, extras, eta=None):  # eta: already checked
        v = {**values(L, eta_L, K_max, tau), **extra_values(**extras)}
        if eta is not None:
            v["eta"] = eta
        return v

    def conditions_body(L, eta, eta_L, K_max, tau, **extras):
        return [s_.evaluate(checked(L, eta_L, K_max, tau, extras, pos("eta", eta)), S.eta) for s_ in specs]

    def admissible_body(L, eta_L, K_max, tau, **extras):
        v = checked(L, eta_L, K_max, tau, extras)
        return admissible_from(specs, v, v["eta_L"], quad, root_expr, step, S.eta)

    def region_body(eta, eta_L, L, K_max, tau, **extras):
        v = checked(L, 1.0, K_max, tau, extras)
        v.pop("eta_L")
        return region_from(specs, v, eta, eta_L)

    common = ("L", "eta", "eta_L", "K_max", "tau")
    conditions = _function(
        "conditions", module, docs[0], _signature(common, params, "list[Condition]"), conditions_body
    )
    admissible = _function(
        "admissible_step_sizes",
        module,
        docs[1],
        _signature(("L", "eta_L", "K_max", "tau"), [p for p in params if p.admissible], "AdmissibleStep"),
        admissible_body,
    )
    region = _function(
        "region",
        module,
        "Boolean (len(eta_L), len(eta)) grid: True where all of the theorem's conditions hold.",
        _signature(
            ("L", "K_max", "tau"),
            [p for p in params if p.region],
            "np.ndarray",
            {"eta": "ArrayLike", "eta_L": "ArrayLike"},
        ),
        region_body,
    )

    def on_run(schedule, constants, *, eta, eta_L, K_max):
        return conditions(L=constants.L, eta=eta, eta_L=eta_L, K_max=K_max, **run_values(schedule))

    on_run.__doc__ = f"The conditions of {theorem} at a run's worst case (``theory._scope``)."
    register_run_conditions(theorem, on_run)
    return conditions, admissible, region


def cd_functions(
    module: str,
    term_exprs: Mapping[str, sp.Expr],
    k_averages: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]],
    bound_doc: str,
    *,
    params: Sequence[Param] = (),
) -> tuple[Callable, ...]:
    """An AFA-CD theorem's public (``alpha_exprs``, ``bound_expr``, ``rate``, ``bound_terms``, ``bound``)
    (Theorems 2 and 3, ``module`` = ``afltheory.theory.theoremK``), all read off its ``term_exprs``
    (``cd_term_exprs``). The sympy views are ``sympy_views``' (the bound is 4Δ/(η η_L T) + 4(α_L σ_L² +
    α_G σ_G²)). ``bound_terms(schedule, constants, *, eta, eta_L, f0, num_workers, tau, <params>,
    scope="warn")``: ``prepare``, then f_0, then the terms on the run averages ``k_averages(schedule,
    **params)`` = (1/K̄_t, K̃_t, K̂_t²) (``cd_run_stats``), each (replicates,); ``bound`` is their ordered sum,
    documented by ``bound_doc`` (then ``SCOPE_DOC``)."""
    theorem = module.rsplit(".", 1)[-1]
    views = sympy_views(
        module,
        term_exprs,
        4 * S.sigma_L**2,
        4 * S.sigma_G**2,
        """(α_L, α_G) as sympy expressions in the run averages, read off ``TERM_EXPRS`` (bound =
    4Δ/(η η_L T) + 4(α_L σ_L² + α_G σ_G²)).""",
    )

    def body(schedule, constants, eta, eta_L, f0, num_workers, tau, scope, **extras):
        # frames: check_scope < prepare < body < bound_terms < bound < the caller of ``bound``
        consts, eta, eta_L = prepare(
            theorem,
            schedule,
            constants,
            eta=eta,
            eta_L=eta_L,
            num_workers=num_workers,
            scope=scope,
            stacklevel=6,
        )
        f0 = check_f0(f0, consts[3], schedule.replicates)
        averages = k_averages(schedule, **extras)
        stats = cd_run_stats(schedule, consts, averages, eta=eta, eta_L=eta_L, f0=f0, tau=tau)
        return per_replicate(term_exprs, stats, schedule.replicates)

    more = (
        Param("f0", "float | ArrayLike | None"),
        Param("num_workers"),
        Param("tau", "float | None"),
        *params,
        Param("scope", "str", default="warn"),
    )
    positional = {"schedule": "Schedule", "constants": "Constants"}
    sig = _signature(("eta", "eta_L"), more, "dict[str, np.ndarray]", positional)
    terms_doc = """The right-hand side split into its named terms (``TERMS``), each (replicates,):
    ``TERM_EXPRS`` evaluated on the realized schedule; they sum to ``bound`` exactly. Same arguments as
    ``bound``."""
    bound_terms = _function("bound_terms", module, terms_doc, sig, body)
    return (*views, bound_terms, bound_function(bound_terms, bound_doc))


def sympy_views(
    module: str, term_exprs: Mapping[str, sp.Expr], scale_L: sp.Expr, scale_G: sp.Expr, alpha_doc: str
) -> tuple[Callable[[], tuple[sp.Expr, sp.Expr]], Callable[[], sp.Expr], Callable[[], sp.Expr]]:
    """A theorem's (``alpha_exprs``, ``bound_expr``, ``rate``) read off its ``term_exprs`` (``alphas``,
    ``bound_sum``; the rate at constant K, ``symbols.CONSTANT_K``), as public functions of ``module``."""

    def rate():
        return bound_sum(term_exprs).subs(S.CONSTANT_K)

    views = (
        ("alpha_exprs", alpha_doc, "tuple[sp.Expr, sp.Expr]", lambda: alphas(term_exprs, scale_L, scale_G)),
        (
            "bound_expr",
            "Right-hand side as a sympy expression (Delta = f_0 − f_*): the sum of ``TERM_EXPRS``.",
            "sp.Expr",
            lambda: bound_sum(term_exprs),
        ),
        ("rate", "The bound for constant K (K̄ = K̃ = K, K̂² = K²) as a sympy expression.", "sp.Expr", rate),
    )
    return tuple(
        _function(name, module, doc, inspect.Signature([], return_annotation=ret), body)
        for name, doc, ret, body in views
    )
