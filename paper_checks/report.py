"""Transition shim: the report writer moved to ``afltheory.checks.report`` (import from there)."""

from afltheory.checks.report import *  # noqa: F403
from afltheory.checks.report import __all__  # noqa: F401
