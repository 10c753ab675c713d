"""Transition shim: the runner moved to ``afltheory.checks.runner`` (import from there)."""

from afltheory.checks.runner import check_main as main
from afltheory.checks.runner import run_check, run_checks
from afltheory.checks.runner import select_checks as _select

__all__ = ["_select", "main", "run_check", "run_checks"]
