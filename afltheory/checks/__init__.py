"""Checks as a public library API: ``Verdict`` and ``NegativeControl`` (frozen, keyword-only), the check
registry (``register``, ``Context``; plugins discovered through the entry-point group ``afltheory.checks``),
the runner and the report writer behind ``afltheory check`` / ``afltheory verify``.

Writing a check (in a package registered under the entry-point group, or in a file run with
``afltheory verify FILE.py``)::

    from afltheory.checks import AtMost, ControlMeasurement, Verdict, register

    @register("mine", "my claim", "[Me 2026, Thm 1]")
    def run(ctx):
        ...
        return [Verdict.judged(id="mine.bound", claim="...", reference="[Me 2026, Thm 1]",
                               criterion=AtMost(on="ucb"), measured=m, theoretical=b, stats={"ucb": u},
                               control=ControlMeasurement(description="the bound without the term under test",
                                                          measured=m, theoretical=b2, stats={"ucb": u}))]

One criterion (``afltheory.checks.criteria``: ``AtMost``, ``AtLeast``, ``Near``, ``Contains``, ``SlopeIn``,
``Holds``, ``AllOf``, ``UnlessConfirmed``) decides ``passed`` for the claim and for its control;
``Verdict(passed=...)`` is the deprecated path.
"""

from .criteria import (
    AllOf,
    AtLeast,
    AtMost,
    Contains,
    ControlMeasurement,
    Criterion,
    Holds,
    Near,
    SlopeIn,
    UnlessConfirmed,
)
from .registry import (
    CHECKS,
    ENTRY_POINT_GROUP,
    CheckSpec,
    Context,
    load_all,
    load_file,
    load_modules,
    register,
)
from .report import fmt
from .runner import run_check, run_checks
from .verdict import NegativeControl, Verdict, json_safe, verdicts_from_json, verdicts_to_json

_LAZY = ("SCHEDULE_SYMBOLS", "schedule_statistics", "verify_bound", "verify_rate")


def __getattr__(name: str):
    """``verify_bound`` & co. load ``afltheory.checks.verify`` (scipy.stats, sympy) on first use, so that
    ``afltheory --help`` and the check runner start without them."""
    if name in _LAZY:
        from . import verify

        return getattr(verify, name)
    raise AttributeError(f"module 'afltheory.checks' has no attribute {name!r}")


__all__ = [
    "CHECKS",
    "ENTRY_POINT_GROUP",
    "SCHEDULE_SYMBOLS",
    "AllOf",
    "AtLeast",
    "AtMost",
    "CheckSpec",
    "Contains",
    "Context",
    "ControlMeasurement",
    "Criterion",
    "Holds",
    "Near",
    "NegativeControl",
    "SlopeIn",
    "UnlessConfirmed",
    "Verdict",
    "fmt",
    "json_safe",
    "load_all",
    "load_file",
    "load_modules",
    "register",
    "run_check",
    "run_checks",
    "schedule_statistics",
    "verdicts_from_json",
    "verdicts_to_json",
    "verify_bound",
    "verify_rate",
]
