"""``scaling.coverage_lines``: the one wording of a scaling search's coverage, read by the built-in claims'
``ScalingResult`` and the generic search's result (pinned on a hand-written case)."""

from __future__ import annotations

from afltheory.adversary.scaling import coverage_lines


def test_coverage_lines_pinned():
    dirs = {
        "M/m": {"max_size": 16, "best": 1.234567, "trend": {"slope": 0.9, "ci95": (0.85, 0.95)}},
        "T": {"max_size": 400.0, "best": 0.5, "trend": None},
    }
    assert coverage_lines(dirs) == (
        "M/m: followed to 16, best ratio 1.23, trend slope +0.90 (95% CI +0.85..+0.95)\n"
        "T: followed to 400, best ratio 0.5, trend —"
    )
    assert coverage_lines({}) == ""
