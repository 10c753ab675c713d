"""Performance estimation (PEP): certified worst cases of the noise-free skeletons of AFA-CD, AFA-CS, FedAvg.

Optional: the SDP is built with PEPit and solved by Clarabel (extra ``pep``); nothing here imports PEPit until
a PEP is solved. ``worst_case`` (one schedule), ``worst_schedule`` (all small schedules), ``replay`` (the
recovered instance through the library's server rules), ``lower`` (certified concrete instances),
``brackets`` (Theorems 2–4: [lower, PEP upper] vs the theorem's bound), ``reduced_worst_case`` (the same
PEP with interchangeable workers sharing one Gram block), ``convex.certify`` (a strongly convex claim with
decreasing steps). See docs/pep.md.
"""

from __future__ import annotations

import importlib

_NAMES = {
    "reproduce": ("replay",),
    "anchors": ("delayed_gd_reference", "gd_known_value", "gd_schedule"),
    "lower": ("LowerBound", "quadratic_lower_bound"),
    "search": ("ScheduleSearch", "schedule_count", "worst_schedule"),
    "symmetric": ("reduced_sizes", "reduced_worst_case", "worker_classes"),
    "interpolant": (
        "InterpolatedLowerBound",
        "InterpolatedProblem",
        "SmoothInterpolant",
        "interpolated_lower_bound",
    ),
    "claims": ("ClaimPEP", "PepSetup", "claim_pep"),
    "theorems": ("SETUPS", "Bracket", "BracketSetup", "bracket"),
    "core": (
        "ALGORITHMS",
        "GAPS",
        "METRICS",
        "MAX_GRAM",
        "Instance",
        "PEPResult",
        "PEPSizeError",
        "Skeleton",
        "estimate_seconds",
        "gram_size",
        "skeleton",
        "worst_case",
    ),
}
_WHERE = {name: mod for mod, names in _NAMES.items() for name in names}
_SUBMODULES = {
    "anchors",
    "claims",
    "convex",
    "core",
    "interpolant",
    "journal",
    "reproduce",
    "lower",
    "search",
    "symmetric",
    "theorems",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'afltheory.pep' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_WHERE) | _SUBMODULES)
