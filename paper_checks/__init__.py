"""Paper checks: one module per claim of [Yang et al. 2022, "Anarchic Federated Learning"] (and Yu et al.'s
local-SGD bounds), each registered by id, each returning ``afltheory.checks.Verdict``s with a negative control
that must fail. A plugin of ``afltheory`` (entry-point group ``afltheory.checks``): ``afltheory check`` runs
it.
"""

from .registry import CHECKS, Context, load_all, register

__all__ = ["CHECKS", "Context", "load_all", "register"]
