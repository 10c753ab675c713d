"""Published convergence theorems of federated learning beyond Yang et al. (issue 26; Yu et al. 2019's
local-SGD theorem, whose constants ``theory.yu_local_sgd`` states, joined them as ``yu2019``), as plain
data: one small module per paper, each a tuple ``STATEMENTS`` of ``Statement`` objects (source, reading,
confidence, assumption class, algorithm, measured quantity, bound and conditions as sympy over
``afltheory.published.symbols``). docs/published.md describes each one and the checks run on it.

A statement whose confidence is not "read" is never the basis of a finding.
"""

from __future__ import annotations

from . import (
    fedbuff2022,
    fednova2020,
    fedprox2020,
    glasgow2022,
    khaled2019,
    khaled2020,
    koloskova2020,
    li2020,
    lian2015,
    scaffold2020,
    stich2019,
    woodworth2020,
    yu2019,
)
from ._statement import CONFIDENCES, Statement

__all__ = [
    "CONFIDENCES",
    "PAPERS",
    "SELF_CHECKED",
    "STATEMENTS",
    "Statement",
    "locations_markdown",
    "statement",
]

#: the paper modules, in the order of docs/published.md
PAPERS = (
    li2020,
    scaffold2020,
    khaled2019,
    khaled2020,
    stich2019,
    yu2019,
    lian2015,
    fedbuff2022,
    fednova2020,
    fedprox2020,
    koloskova2020,
    woodworth2020,
    glasgow2022,
)
#: the paper modules that carry their own engine form and check (the one-module protocol, issue 38): a
#: function ``claims()`` (its ``Claim`` objects), ``verify()`` (its verdicts, each with a control that must
#: fail) and optionally ``PEP_SETUPS``; the registries (``published.claims.CLAIMS``,
#: ``published.instances.VERIFICATIONS``, the checks plugin, the table command) collect them from here
SELF_CHECKED = tuple(p for p in PAPERS if hasattr(p, "claims") and hasattr(p, "verify"))
#: every statement by id
STATEMENTS: dict = {s.id: s for p in PAPERS for s in p.STATEMENTS}


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
        tex = f"`{st.latex.bound}`" if st.latex else "—"
        rd = ", ".join(f"`{k}`" for k in st.readings) or "—"
        out.append(f"| {st.id} | {st.confidence} | {loc} | {tex} | {rd} |")
    n_read = sum(s.is_read for s in STATEMENTS.values())
    n_primary = sum(s.confidence == "read" for s in STATEMENTS.values())
    n_tex = sum(s.latex is not None for s in STATEMENTS.values())
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


def statement(id: str) -> Statement:
    """The statement with this id (ValueError listing the known ids)."""
    try:
        return STATEMENTS[id]
    except KeyError:
        raise ValueError(f"id={id!r} is not a published statement; known: {sorted(STATEMENTS)}") from None
