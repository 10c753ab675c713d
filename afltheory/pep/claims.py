"""PEP for a ``Claim`` (afltheory.claims): the certified worst case of the claim's measured quantity over its
function class, on the noise-free skeleton of its rule, next to the claim's bound.

Representable claims: function class "smooth" (nonconvex), "convex" or "strongly_convex" (interpolation
conditions exist for all three); full participation with no delays (every worker arrives every round; the M
workers are interchangeable, so the symmetry-reduced SDP is used and its size does not depend on M);
heterogeneity "sigma_G_max" (imposed at the server iterates, a relaxation: still an upper bound) or "iid"
(identical workers: M = 1); uniform client weights; measured "avg_grad_sq" (initial condition
f(x_0) − f_* ≤ Δ), "last_gap" or "last_dist_sq" (initial condition ‖x_0 − x_*‖² ≤ D0, convex classes). The
rule is the claim's own (``claim.algorithm(values)``, step-size schedule included, read round by round).
Anything else (partial participation, delays, Γ or ζ_* heterogeneity, data weights, min/weighted/averaged
iterates) is refused with a ValueError saying why — never approximated.

The bound is evaluated at σ_L = 0 with the claim's own ``bound_value`` on the run's constants; the claim's
conditions are checked on the same values (``inside_conditions``). ``holds`` is True when the certified PEP
value is ≤ the bound: the claim is then certified on this (T, M, K) for the whole class (noise-free part);
``lower`` (the recovered instance replayed through the rule's ``aggregate``) > bound would be a refutation
only where the instance is a member of the class everywhere (M = 1, convex classes), which ``exact`` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._validation import check_int, check_real

__all__ = ["ClaimPEP", "PepSetup", "claim_pep"]

_MEASURED = {
    "avg_grad_sq": ("average", "f_star"),
    "last_gap": ("last_gap", "distance"),
    "last_dist_sq": ("last_dist", "distance"),
}


@dataclass(frozen=True)
class PepSetup:
    """The PEP's setup of one claim (``Claim.setups["pep"]``, read by ``afltheory published``'s PEP column):
    ``claim_pep(claim, T=T, K=K, values=values)``; the step sizes in ``values`` are the claim's own (the bound
    is evaluated at the step the rule runs). ``subclass``: the ``Assumptions`` fields replaced when the PEP
    refuses the claim's own class ({}: its own class), ``description`` says which sub-class that is."""

    values: Mapping[str, float]
    T: int
    K: int
    subclass: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        check_int("T", self.T, low=1)
        check_int("K", self.K, low=1)


@dataclass(frozen=True)
class ClaimPEP:
    """``upper``: certified worst case of the measured quantity (None if the solve was not certified);
    ``lower``: the recovered instance's value through the rule's ``aggregate``; ``bound``: the claim's bound
    at σ_L = 0 on these constants; ``holds``: upper ≤ bound; ``exact``: the SDP is exact (the instance is a
    member of the class everywhere); ``conditions``: name -> (holds, slack)."""

    claim: str
    T: int
    M: int
    K: int
    upper: float | None
    lower: float
    bound: float
    conditions: dict
    exact: bool
    gram: tuple
    seconds: float

    @property
    def inside_conditions(self) -> bool:
        """Every condition of the claim holds at these values."""
        return all(ok for ok, _ in self.conditions.values())

    @property
    def holds(self) -> bool | None:
        """The claim is certified on this configuration (None without a certified value)."""
        return None if self.upper is None else self.upper <= self.bound


def claim_pep(claim: Any, *, T: int, M: int = 2, K: int = 1, values: dict | None = None) -> ClaimPEP:
    """The PEP certificate of ``claim`` at (T, M, K) (module docstring). ``values``: the constants the claim
    and its class need — ``L``, ``mu`` (strongly convex), ``sigma_G`` ("sigma_G_max"), ``Delta``
    ("avg_grad_sq") or ``D0`` (the distance measures), and the claim's own symbols; for a claim that fixes
    no step size (``eta`` and ``eta_L`` None: any step inside its conditions) ``eta_L`` (``eta``: 1 by
    default)."""
    import numpy as np

    from .convex import full_participation
    from .core import worst_case
    from .reproduce import replay

    # duck-typed (layers: afltheory.pep sits below afltheory.claims and does not import it)
    if not all(
        hasattr(claim, n)
        for n in ("assumptions", "measured", "algorithm", "bound_value", "check_conditions", "id")
    ):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    a = claim.assumptions
    T, K = check_int("T", T, low=1, high=1000), check_int("K", K, low=1, high=64)
    M = check_int("M", M, low=1, high=64)
    v = dict(values or {})
    why = []
    if a.participation != "full":
        why.append(f"participation={a.participation!r} (the PEP skeleton here: full participation)")
    if a.max_delay not in (None, 0):
        why.append(f"max_delay={a.max_delay} (delays are not represented here)")
    if a.heterogeneity not in ("sigma_G_max", "iid") and not (a.heterogeneity is None and M == 1):
        why.append(f"heterogeneity={a.heterogeneity!r} (no PEP condition; allowed: 'sigma_G_max', 'iid')")
    if a.weights != "uniform":
        why.append(f"weights={a.weights!r} (allowed: 'uniform')")
    if claim.measured not in _MEASURED:
        why.append(f"measured={claim.measured!r} (allowed: {sorted(_MEASURED)})")
    if why:
        raise ValueError(f"claim {claim.id!r} cannot be analysed by the PEP: " + "; ".join(why))
    L = check_real("values['L']", v.get("L", 1.0), low=1e-150, high=1e150)
    mu = None
    if a.function == "convex":
        mu = 0.0
    elif a.function == "strongly_convex":
        mu = check_real("values['mu']", v.get("mu"), low=0.0, high=L, low_open=True, high_open=True)
    metric, gap = _MEASURED[claim.measured]
    if gap == "distance":
        if mu is None:
            raise ValueError(f"measured={claim.measured!r} needs a convex class (function={a.function!r})")
        delta = check_real("values['D0']", v.get("D0", 1.0), low=1e-150, high=1e150)
    else:
        delta = check_real("values['Delta']", v.get("Delta", v.get("f0", 1.0)), low=1e-150, high=1e150)
    if a.heterogeneity == "iid":
        M, sG = 1, 0.0
    else:
        sG = check_real("values['sigma_G']", v.get("sigma_G", 0.0), low=0.0, high=1e150)
    stats = dict(v)
    stats.update(
        T=T,
        K=K,
        E=K,
        M=M,
        m=M,
        L=L,
        sigma_L=0.0,
        sigma_G=sG,
        f_star=0.0,
        Delta=delta,
        f0=delta,
        D0=delta if gap == "distance" else v.get("D0", np.nan),
    )
    if mu is not None:
        stats.update(mu=mu)
        if mu > 0:
            stats.update(kappa=L / mu)
    if getattr(claim, "eta", None) is None and getattr(claim, "eta_L", None) is None and "eta_L" in v:
        # a claim for every step inside its conditions (no schedule of its own): the values fix the step
        rule = claim.rule(eta=float(v.get("eta", 1.0)), eta_L=float(v["eta_L"]))
    else:
        rule = claim.algorithm(stats)
    r = worst_case(
        rule,
        full_participation(T, M, K),
        dict(L=L, sigma_G=sG),
        delta=delta,
        mu=mu,
        metric=metric,
        gap=gap,
        heterogeneity="server",
        symmetry=True,
        max_gram=1000,
    )
    _, _, lower = replay(r)
    bound = float(np.asarray(claim.bound_value(stats)).reshape(-1)[0])
    conds = claim.check_conditions(stats)
    return ClaimPEP(
        claim.id,
        T,
        M,
        K,
        r.upper,
        float(lower),
        bound,
        conds,
        mu is not None and M == 1,
        tuple(r.constants.get("blocks", (r.gram_size,))),
        r.seconds,
    )
