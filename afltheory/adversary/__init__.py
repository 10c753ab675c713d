"""The adversary: worst-case search inside a theorem's assumption class
[Yang et al. 2022, Thms 2–4, Cors 1–3].

``search(claim, budget=..., seed=...)`` → ``WorstCase`` (worst measured/bound ratio found, the bound's term
shares there, the instance as explicit arrays, the search history, Monte Carlo confirmation of any violation);
``CLAIMS`` / ``get_claim``: the registered claims; ``AssumptionClass``: the parameter box (every point
satisfies the claim's assumptions with exact constants); ``save_instance`` / ``load_instance``; ``confirm``.
See docs/adversary.md."""

from .claims import CLAIMS, Evaluation, SearchSpec, get_claim, register_claim
from .components import CovarianceNoise, PeriodicArrivals, PmfDelay, PmfSteps, biased_inclusion
from .instance import Instance, load_instance, save_instance
from .lemmas import DriftClaim, Lemma2Claim
from .search import SearchCostWarning, WorstCase, confirm, make_instance, project, search
from .space import AssumptionClass, Structure

__all__ = [
    "CLAIMS",
    "AssumptionClass",
    "SearchSpec",
    "CovarianceNoise",
    "DriftClaim",
    "Evaluation",
    "Instance",
    "Lemma2Claim",
    "PeriodicArrivals",
    "PmfDelay",
    "PmfSteps",
    "SearchCostWarning",
    "Structure",
    "WorstCase",
    "biased_inclusion",
    "confirm",
    "get_claim",
    "load_instance",
    "make_instance",
    "project",
    "register_claim",
    "save_instance",
    "search",
]
