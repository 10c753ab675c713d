"""No verdict in paper_checks is judged by hand (docs/DESIGN.md "Checks as a library"): ``passed`` comes from
a criterion (``Verdict.judged``), never from a ``passed=`` keyword or a hand-built ``NegativeControl``.
Read statically with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PAPER_CHECKS = Path(__file__).resolve().parents[2] / "paper_checks"

_HAND_BUILDERS = {"NegativeControl", "make_control"}


def _hand_decisions(path: Path) -> list[int]:
    """Lines of ``passed=`` keywords in calls and of calls to a hand-built control."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in _HAND_BUILDERS or any(k.arg == "passed" for k in node.keywords):
            lines.append(node.lineno)
    return lines


def test_paper_checks_verdicts_are_judged_by_a_criterion():
    found = {p.name: _hand_decisions(p) for p in sorted(PAPER_CHECKS.glob("*.py"))}
    hand = {f: lines for f, lines in found.items() if lines}
    assert not hand, (
        "verdicts judged by hand (build them with Verdict.judged(criterion=..., control="
        f"ControlMeasurement(...))): {hand}"
    )


def test_the_scan_finds_a_hand_judged_verdict(tmp_path):
    """Control: a ``passed=`` keyword and a hand-built control are found."""
    f = tmp_path / "x.py"
    f.write_text("v = Verdict(passed=True, negative_control=NegativeControl('d', passed=False))\n")
    assert _hand_decisions(f) == [1, 1]
