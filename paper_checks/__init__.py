"""Paper checks: one module per claim of [Yang et al. 2022, "Anarchic Federated Learning"] (and Yu et al.'s
local-SGD bounds), each registered by id, each returning ``afltheory.analysis.Verdict``s with a negative control
that must fail. ``paper_checks.runner.main`` implements ``afltheory check``.
"""

from .registry import CHECKS, Context, load_all, register

__all__ = ["CHECKS", "Context", "load_all", "register"]
