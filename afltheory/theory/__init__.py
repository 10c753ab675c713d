"""Theorems of [Yang et al. 2022] (and Yu et al.'s local SGD) as executable sympy/numpy objects.

One module per result: ``theorem1`` (lower bound), ``theorem2`` (AFA-CD, general arrivals), ``theorem3``
(AFA-CD, uniform arrivals), ``theorem4`` (AFA-CS), ``corollaries`` (Cor 1–3, Remark 4), ``lemmas``,
``yu_local_sgd``, ``inconsistencies`` (#1–#5), ``symbols``, ``compression`` (compressed GD, DIANA,
the variance identity, FedPAQ's factors). Each of theorem2–4 exposes ``conditions``,
``admissible_step_sizes``, ``region``, ``bound`` (on a realized Schedule), ``bound_expr`` and ``rate``.
``check_scope`` (where a bound applies: ``ScopeWarning`` / ``OutOfScope``) and ``evaluate_terms`` (a bound's
sympy terms on run statistics) are what the bounds use, public for the PEP and adversary checks.
"""

from . import (
    compression,
    corollaries,
    inconsistencies,
    lemmas,
    symbols,
    theorem1,
    theorem2,
    theorem3,
    theorem4,
    yu_local_sgd,
)
from ._condition import AdmissibleStep, Condition, Infeasible
from ._scope import SCOPES, OutOfScope, ScopeWarning, check_scope
from ._stats import evaluate_terms

__all__ = [
    "AdmissibleStep",
    "Condition",
    "Infeasible",
    "OutOfScope",
    "SCOPES",
    "ScopeWarning",
    "check_scope",
    "compression",
    "corollaries",
    "evaluate_terms",
    "inconsistencies",
    "lemmas",
    "symbols",
    "theorem1",
    "theorem2",
    "theorem3",
    "theorem4",
    "yu_local_sgd",
]
