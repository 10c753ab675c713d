"""Sphinx configuration of the afltheory documentation site (``make docs``; docs/DESIGN.md says why Sphinx +
furo + MyST). Every page is found by glob — docs/*.md, docs/*/*.md, docs/tutorial/*.py — so a new page or
tutorial appears without editing an index; docs/index.md is the only hand-written table of contents."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # autodoc imports this clone's afltheory
sys.path.insert(0, str(HERE / "_ext"))

project = "afltheory"
author = "afltheory contributors"
copyright = "afltheory contributors, MIT license"  # noqa: A001 - Sphinx's name
try:
    from afltheory import __version__ as release
except Exception:  # noqa: BLE001 - the site still builds (the API pages then say what failed)
    release = "unknown"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "tutorials",  # docs/_ext/tutorials.py: docs/tutorial/*.py rendered with their real output
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_generated/**/*.py", "**/*.json", "README.md"]
templates_path: list[str] = []

smartquotes = False  # --verbose stays two hyphens, "quotes" stay as typed
html_theme = "furo"
html_title = f"afltheory {release}"
html_static_path: list[str] = []

# MyST: the docs are GitHub-flavoured Markdown; headings get anchors so [x](page.md#a-heading) links resolve
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autosummary_generate = True
autosummary_imported_members = False
# a module's page documents what it defines (a name re-exported through __all__ is documented where it is
# defined, once)
autodoc_default_options = {
    "members": True,
    "undoc-members": False,
    "show-inheritance": True,
    "ignore-module-all": True,
}
autodoc_typehints = "none"  # signatures show the annotations as written; no ambiguous type cross-references
autodoc_mock_imports = ["torch", "dask", "distributed", "PEPit", "cvxpy", "clarabel", "sklearn", "tqdm"]

# The pages are also read on GitHub, where a link may point outside docs/ (../experiments/README.md, a
# source file) or to a page another contributor has not written yet: such a link stays a plain link
# instead of failing the build (-W). Every other warning fails `make docs`.
suppress_warnings = ["myst.xref_missing", "myst.header", "misc.highlighting_failure", "ref.python"]
nitpicky = False

# The docstrings are plain text (``literals``, |x| for a norm, indented formulas), not strict
# reStructuredText: docs/_ext/tutorials.py's `plain_docstring` shows each one as written — its first
# paragraph as text, the rest as a literal block — so no docstring can break the build.
