"""No line-wrap artefacts (issue #27, docs/DESIGN.md "Habits"): ``tools/wrap_artefacts.py`` finds string
concatenations that fit on fewer lines or hold a fragment of a few characters, and comment or docstring lines
of a few words whose continuation would have fitted on them. ``ruff format`` does not join these.

``LEFT_FOR_OWNERS``: files allowed to hold artefacts, with how many (empty since the wave-3 merge joined the
last ones). It must only shrink: a file with more fails, a file with fewer fails too (lower its count, or
delete the entry at 0).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: file -> artefacts left for its owner to join (`python tools/wrap_artefacts.py FILE` lists them)
LEFT_FOR_OWNERS: dict[str, int] = {}


def _tool():
    spec = importlib.util.spec_from_file_location("wrap_artefacts", ROOT / "tools" / "wrap_artefacts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_wrap_artefacts():
    tool = _tool()
    found: dict[str, list[str]] = {}
    for root in tool.ROOTS:
        for f in sorted((ROOT / root).rglob("*.py")):
            arts = tool.find_artefacts(f)
            if arts:
                found[f.relative_to(ROOT).as_posix()] = [f"{a[1]}: {a[2]}: {a[3][:80]}" for a in arts]
    grew = {f: a for f, a in found.items() if len(a) > LEFT_FOR_OWNERS.get(f, 0)}
    assert not grew, f"line-wrap artefacts (join them; `python tools/wrap_artefacts.py FILE`): {grew}"
    shrank = {f: (n, len(found.get(f, []))) for f, n in LEFT_FOR_OWNERS.items() if len(found.get(f, [])) < n}
    assert not shrank, f"LEFT_FOR_OWNERS counts to lower (allowed, found): {shrank}"


def test_the_detector_finds_each_kind_and_the_fixer_joins_strings(tmp_path):
    """Controls: one artefact of each kind is found; a clean wrap, a list and a fenced block are not."""
    tool = _tool()
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""Module docstring broken after\nthe\nfirst line of its paragraph."""\n\n'
        "# a comment broken after\n# the\n# second line\n"
        "X = (\n"
        '    "error "\n'
        '    f"{1 + 1} happened"\n'
        ")\n",
        encoding="utf-8",
    )
    kinds = sorted(a[2] for a in tool.find_artefacts(bad))
    assert kinds == ["comment", "docstring", "string"]
    fixed = tool.reflow_strings(bad.read_text(encoding="utf-8"))
    assert '    f"error {1 + 1} happened"\n' in fixed
    ns: dict = {}
    exec(compile(fixed, "fixed", "exec"), ns)
    assert ns["X"] == "error 2 happened"
    good = tmp_path / "good.py"
    long = "word " * 20
    good.write_text(
        f'"""{long}\n{long}\n\n- a list item\n- another\n\n```python\nx = 1\ny = 2\n```\n"""\n\n'
        f"# {long}\n# {long}\n"
        f'Y = (\n    "{long * 1}"\n    "{long}"\n)\n'
        'Z = (\n    "line one\\n"\n    "two\\n"\n)\n',
        encoding="utf-8",
    )
    assert tool.find_artefacts(good) == []
