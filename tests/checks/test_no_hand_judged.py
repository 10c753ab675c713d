"""No verdict in paper_checks is judged by hand (docs/DESIGN.md "Checks as a library"): ``passed`` comes from
a criterion (``Verdict.judged``), never from a ``passed=`` keyword or a hand-built ``NegativeControl`` /
``make_control``. Read statically with ``ast``.

``UNCONVERTED``: the files still building verdicts by hand, with how many hand decisions each holds. It must
only shrink: a file with more fails (use ``Verdict.judged``), a file with fewer fails too (lower its count, or
delete the entry at 0).
"""

from __future__ import annotations

import ast
from pathlib import Path

PAPER_CHECKS = Path(__file__).resolve().parents[2] / "paper_checks"

#: file -> hand decisions left (``passed=`` keywords and hand-built controls). Must only shrink.
UNCONVERTED = {
    "_power.py": 3,  # the vacuous agreement verdict (exact moments refused); make_control itself
    "adversary.py": 4,  # a ratio > 1 passes unless Monte Carlo confirms it (coordinator: adversary)
    "mtl.py": 2,  # mtl.rate_bound: its control reads the mean, the claim a UCB (not one criterion)
}

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
    grew = {f: lines for f, lines in found.items() if len(lines) > UNCONVERTED.get(f, 0)}
    assert not grew, (
        "verdicts judged by hand (build them with Verdict.judged(criterion=..., control="
        f"ControlMeasurement(...))): {grew}"
    )
    shrank = {f: (n, len(found.get(f, []))) for f, n in UNCONVERTED.items() if len(found.get(f, [])) < n}
    assert not shrank, f"UNCONVERTED counts to lower (allowed, found): {shrank}"
