"""Published convergence theorems of federated learning beyond Yang et al. (issue 26; Yu et al. 2019's
local-SGD theorem, whose constants ``theory.yu_local_sgd`` states, joined them as ``yu2019``), as plain
data: one small module per paper, each a tuple ``STATEMENTS`` of ``afltheory.claims.Claim`` objects (source,
location, reading, confidence, the setting in the paper's words, bound and conditions as sympy over
``afltheory.published.symbols``, and — where an engine can run it — its engine form). Each is registered once
in the one registry, ``afltheory.published.registry``. docs/published.md describes each one and the checks run
on it.

A statement whose confidence is not "read" is never the basis of a finding.
"""

from __future__ import annotations

from ..claims import CONFIDENCES
from .registry import PAPERS, select

__all__ = [
    "CONFIDENCES",
    "PAPERS",
    "SELF_CHECKED",
    "STATEMENTS",
    "locations_markdown",
]

#: the paper modules that carry their own check (the one-module protocol, issue 38): ``STATEMENTS`` (its
#: claims, with their engine forms and per-reader setups), ``claims()`` (their engine forms) and ``verify()``
#: (its verdicts, each with a control that must fail); the checks plugin and the table command read them
SELF_CHECKED = tuple(p for p in PAPERS if hasattr(p, "claims") and hasattr(p, "verify"))

#: every published statement by id: a view of the registry (the claims of the paper modules)
STATEMENTS: dict = {c.id: c for p in PAPERS for c in select(paper=p.__name__.rsplit(".", 1)[1])}


def locations_markdown() -> str:
    """docs/published.md's "Where each statement was read" section: per statement its confidence, its
    location (index id, offset, theorem, the fragment that found it), its LaTeX bound and its named readings
    (deterministic; a test checks the docs carry it)."""
    out = [
        "| statement | confidence | location | bound as printed (LaTeX) | readings |",
        "|---|---|---|---|---|",
    ]
    for st in STATEMENTS.values():
        loc = str(st.location).replace("|", "\\|") if st.location else "—"
        tex = f"`{st.transcription.bound}`" if st.transcription else "—"
        rd = ", ".join(f"`{k}`" for k in st.readings) or "—"
        out.append(f"| {st.id} | {st.confidence} | {loc} | {tex} | {rd} |")
    n_read = sum(s.is_read for s in STATEMENTS.values())
    n_primary = sum(s.confidence == "read" for s in STATEMENTS.values())
    n_tex = sum(s.transcription is not None for s in STATEMENTS.values())
    out += [
        "",
        f"{len(STATEMENTS)} statements; {n_read} read ({n_primary} in the primary text), {n_tex} with a "
        "LaTeX transcription checked against the module's sympy bound (tests/published/test_locations.py).",
        "",
        "**Named readings** (one line per ambiguity of the text; the statements above list those they use):",
        "",
    ]
    seen: dict = {}
    for st in STATEMENTS.values():
        seen.update(st.readings)
    out += [f"- `{k}`: {v}" for k, v in seen.items()]
    return "\n".join(out) + "\n"
