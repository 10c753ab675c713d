"""The per-check progress line counts passing verdicts whether the check's result holds verdict dicts (the
check tier) or ``Verdict`` objects (``afltheory verify``'s isolated runner): it printed "None/6 verdicts pass"
for every verified file before (2026-12-02)."""

from __future__ import annotations

import io

from afltheory.checks.runner import _progress_printer
from afltheory.checks.verdict import NegativeControl, Verdict


def _verdict(i: int, passed: bool, control_passed: bool | None) -> Verdict:
    nc = (
        None
        if control_passed is None
        else NegativeControl(description="bound / 2", measured=1.0, theoretical=0.5, passed=control_passed)
    )
    return Verdict(
        id=f"v{i}",
        claim="c",
        reference="r",
        measured=1.0,
        theoretical=2.0,
        passed=passed,
        negative_control=nc,
    )


def _line(verdicts, n=0):
    out = io.StringIO()
    _progress_printer(n, out)({"verdicts": verdicts, "spec": {"id": "x"}, "elapsed": 0.25, "error": None})
    return out.getvalue().strip()


def test_objects_and_dicts_count_the_same():
    # ok = passed and the control failed: v0 ok, v1 not (failed), v2 not (its control passed), v3 ok
    objs = [
        _verdict(0, True, False),
        _verdict(1, False, None),
        _verdict(2, True, True),
        _verdict(3, True, None),
    ]
    assert _line(objs) == "[1] x: 2/4 verdicts pass (0.2 s)"
    dicts = [{"ok": v.ok} for v in objs]
    assert _line(dicts, n=3) == "[1/3] x: 2/4 verdicts pass (0.2 s)"
    assert _line([]) == "[1] x: 0/0 verdicts pass (0.2 s)"
