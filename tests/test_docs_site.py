"""The documentation site's sources (issue 43): every page is found by glob (docs/*.md, docs/<dir>/*.md,
the generated tutorial pages), docstrings are shown as written, and each docs/tutorial/*.py gets a page with
its source and its output. The build itself is `make docs` (CI: .ci/run)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _toctrees() -> list[str]:
    return re.findall(r"```\{toctree\}\n(.*?)```", (DOCS / "index.md").read_text(encoding="utf-8"), re.S)


def test_index_finds_pages_by_glob():
    trees = _toctrees()
    globbed = [t for t in trees if ":glob:" in t]
    entries = {ln.strip() for t in globbed for ln in t.splitlines() if ln.strip() and ln[0] not in ":"}
    assert {"*", "[!_]*/*", "_generated/tutorial/*"} <= entries
    named = {ln.strip() for t in trees for ln in t.splitlines() if ln.strip() and not ln.startswith(":")}
    missing = [n for n in named if "*" not in n and not (DOCS / f"{n}.md").exists()]
    assert missing == []  # a page named explicitly exists (new pages need no entry: the globs take them)


def test_conf_keeps_outside_links_plain_and_every_other_warning_fatal():
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert '"myst.xref_missing"' in conf and "myst_heading_anchors = 3" in conf
    assert "sphinx -W" in (ROOT / "Makefile").read_text(encoding="utf-8")


def test_plain_docstring_keeps_the_text_as_written():
    pytest.importorskip("sphinx")
    import sys

    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import tutorials
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    lines = ["The norm |x| of *a*", "and ``b``_.", "", "    y = |z|", "end"]
    tutorials.plain_docstring(None, "function", "f", None, {}, lines)
    assert lines == [
        r"The norm \|x\| of \*a\* and \`\`b\`\`\_.",
        "",
        "::",
        "",
        "        y = |z|",
        "    end",
        "",
    ]
    one = ["Only a summary."]
    tutorials.plain_docstring(None, "function", "f", None, {}, one)
    assert one == ["Only a summary.", ""]


def test_tutorial_page_has_source_and_output(monkeypatch):
    pytest.importorskip("sphinx")
    import sys

    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import tutorials
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    monkeypatch.setenv("AFLTHEORY_DOCS_RUN", "0")
    tut = DOCS / "tutorial" / "li2020_fedavg.py"
    text = tutorials.page(tut, ROOT)
    assert text.startswith('# Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data"')
    assert "```{literalinclude} ../../tutorial/li2020_fedavg.py" in text
    assert "not run in this build: AFLTHEORY_DOCS_RUN=0" in text and "$ afltheory verify" in text
