"""The README is a first page (issue 43): at most 200 lines, its quick-start test command is what CI runs,
and every relative link in it points to a file of the repository (the moved histories and tables live in
docs/*.md)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_fits_200_lines():
    assert len(README.splitlines()) <= 200


def test_quick_start_commands_are_the_ones_ci_and_make_run():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make test" in ci.split("\n", 3)[-1]  # CI calls the README's test command
    assert "make check   #" in README and "make test    #" in README
    assert re.search(r"^check: ", make, re.M) and re.search(r"^test: ", make, re.M)


def _links(text: str) -> list[str]:
    return [m for m in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+://", m)]


def test_every_relative_link_resolves():
    links = _links(README)
    assert len(links) >= 10, links  # the "where to go next" table
    missing = [t for t in links if not (ROOT / t.split("#")[0]).exists()]
    assert missing == []


def test_link_check_sees_a_missing_file():
    assert _links("see [x](docs/nope.md#a) and [y](https://e.org)") == ["docs/nope.md#a"]
    assert not (ROOT / "docs/nope.md").exists()


def test_moved_sections_kept_in_docs():
    # the README's former sections (histories, tables, kill matrices, performance) moved, not deleted
    for page, heading in [
        ("docs/quick_tier.md", "| thm1.only_worker1 |"),
        ("docs/results.md", "## Verdict power"),
        ("docs/results.md", "## What the sweep store guarantees"),
        ("docs/measurements.md", "| contender | K = 5 | K = 1 |"),
        ("docs/guide.md", "## Reading the report"),
    ]:
        assert heading in (ROOT / page).read_text(encoding="utf-8"), (page, heading)
