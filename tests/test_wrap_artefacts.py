"""No line-wrap artefacts (issue #27, docs/DESIGN.md "Habits"): ``tools/wrap_artefacts.py`` finds string
concatenations that fit on fewer lines or hold a fragment of a few characters, and comment or docstring lines
of a few words whose continuation would have fitted on them. ``ruff format`` does not join these.

``LEFT_FOR_OWNERS``: files other helpers owned while the artefacts were joined (issue #27), with how many
artefacts each still holds. It must only shrink: a file with more fails, a file with fewer fails too (lower
its count, or delete the entry at 0).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: file -> artefacts left for its owner to join (`python tools/wrap_artefacts.py FILE` lists them)
LEFT_FOR_OWNERS = {
    "afltheory/adversary/claims.py": 2,
    "afltheory/adversary/cli.py": 1,
    "afltheory/adversary/fastexact.py": 2,
    "afltheory/adversary/search.py": 2,
    "afltheory/adversary/space.py": 2,
    "afltheory/engine.py": 5,
    "afltheory/exact/drift.py": 2,
    "afltheory/exact/law.py": 3,
    "afltheory/exact/local.py": 1,
    "afltheory/exact/moments.py": 7,
    "afltheory/pep/cli.py": 2,
    "afltheory/pep/convex.py": 1,
    "afltheory/pep/core.py": 2,
    "afltheory/pep/symmetric.py": 1,
    "afltheory/pep/theorems.py": 1,
    "afltheory/problems/curvature.py": 1,
    "afltheory/problems/drifting.py": 1,
    "afltheory/problems/logistic.py": 1,
    "afltheory/published/fednova2020.py": 3,
    "afltheory/published/fedprox2020.py": 3,
    "afltheory/published/glasgow2022.py": 1,
    "afltheory/published/khaled2020.py": 4,
    "afltheory/published/koloskova2020.py": 1,
    "afltheory/published/li2020.py": 3,
    "afltheory/published/lian2015.py": 1,
    "afltheory/published/scaffold2020.py": 2,
    "afltheory/published/stich2019.py": 2,
    "benchmarks/engine.py": 1,
    "benchmarks/peers.py": 1,
    "tests/published/cases.py": 1,
    "tests/published/reference_loops.py": 6,
    "tests/published/table.py": 1,
}


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
