"""The ONE registry of claims (issue 38): every theorem the package states, registered once under one id — the
paper's own (Yang et al. 2022's Theorems 2–4 and the compression bound, ``afltheory.claims.paper``), the
statements no engine runs (Theorem 1, Corollaries 1–3, the lemmas, Dynamic FedAvg, MOCHA:
``afltheory.claims.stated``) and every published statement (the paper modules of ``afltheory.published``, in
the order of docs/published.md).

A claim's engine form (``Claim.engine()``) and its per-reader setups (``Claim.setups``: the adversary's search
spec, the PEP setup, …) are attached to the claim, not registered again. The readers are views over this
registry: ``afltheory published`` (the table), the published checks (the check suite's published module), the
adversary's ``get_claim`` (``by_setup("search", "thm2")``), the generated docs.

It lives in ``afltheory.published`` because the layers put the paper modules above ``afltheory.claims``
(docs/DESIGN.md "Layers"): a registry in ``claims`` could not import them.
"""

from __future__ import annotations

from typing import Any

from ..claims import KINDS, Claim
from ..claims.paper import PAPER_CLAIMS
from ..claims.stated import STATED
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

__all__ = [
    "CLAIMS",
    "PAPERS",
    "attach",
    "by_setup",
    "engine_forms",
    "get",
    "register",
    "select",
    "setup",
    "setups",
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

#: id -> claim (insertion order: the paper's own, then the published modules in ``PAPERS`` order)
CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add ``claim`` under its id (ValueError when the id, or one of its setups' keys, is taken)."""
    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r} must be an afltheory.claims.Claim")
    if claim.id in CLAIMS:
        raise ValueError(f"claim id {claim.id!r} is already registered (each theorem is registered once)")
    for reader, setup in claim.setups.items():
        key = getattr(setup, "key", None)
        if key is not None and key in _SETUP_KEYS.setdefault(reader, {}):
            raise ValueError(
                f"{reader} setup key {key!r} of {claim.id!r} is taken by {_SETUP_KEYS[reader][key]!r}"
            )
    CLAIMS[claim.id] = claim
    for reader, setup in claim.setups.items():
        key = getattr(setup, "key", None)
        if key is not None:
            _SETUP_KEYS[reader][key] = claim.id
    if claim.runnable and claim.engine_form is not None:
        _ENGINE_IDS[claim.engine().id] = claim.id
    return claim


#: reader -> {setup key (e.g. the adversary's "thm2"): claim id}
_SETUP_KEYS: dict[str, dict[str, str]] = {}
#: engine-form id (the verdict id, "published." + the claim id by default) -> claim id
_ENGINE_IDS: dict[str, str] = {}


def get(id: str) -> Claim:
    """The registered claim with this id, or whose engine form has this id (``Claim.engine().id``, e.g.
    "published.<paper>.<statement>"); ValueError listing the known ids."""
    cid = _ENGINE_IDS.get(id, id)
    try:
        return CLAIMS[cid]
    except KeyError:
        raise ValueError(f"id={id!r} is not a registered claim; known: {sorted(CLAIMS)}") from None


def select(*, kind: str | None = None, paper: str | None = None, runnable: bool | None = None) -> list[Claim]:
    """The registered claims (registration order), filtered by ``kind`` (one of ``claims.KINDS``), ``paper``
    (e.g. "li2020") and ``runnable`` (None: either)."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind={kind!r} must be one of {KINDS}")
    return [
        c
        for c in CLAIMS.values()
        if (kind is None or c.kind == kind)
        and (paper is None or c.paper == paper)
        and (runnable is None or c.runnable == runnable)
    ]


def engine_forms() -> dict[str, Claim]:
    """{engine-form id: the claim the engines run} for the registered claims with an engine form."""
    return {c.engine().id: c.engine() for c in CLAIMS.values() if c.runnable and c.engine_form is not None}


#: reader -> {setup key: setup} for the setups attached by a reader above this layer (``attach``)
_ATTACHED: dict[str, dict[str, Any]] = {}


def attach(claim_id: str | None, reader: str, setup: Any) -> Any:
    """Attach ``setup`` (a small frozen value with a unique ``key``; e.g. the adversary's ``SearchSpec``) to
    the registered claim ``claim_id`` as ``Claim.setups[reader]`` — a tuple of that reader's setups for the
    claim (Corollary 1's search on Corollary 1's claim, though it evaluates Theorem 2's bound). For readers
    above this layer, which attach their setups when they are imported; ``claim_id`` None: a setup whose
    statement is not a registered claim (e.g. a user's search spec). ValueError when the key is taken or the
    claim unknown."""
    key = getattr(setup, "key", None)
    if not isinstance(key, str) or not key:
        raise ValueError(f"setup={setup!r} must have a non-empty string key")
    if key in _ATTACHED.setdefault(reader, {}) or key in _SETUP_KEYS.get(reader, {}):
        raise ValueError(f"{reader} setup key {key!r} is registered twice")
    if claim_id is not None:
        claim = get(claim_id)
        claim.setups[reader] = (*claim.setups.get(reader, ()), setup)  # the claim's own per-reader table
        _SETUP_KEYS.setdefault(reader, {})[key] = claim.id
    _ATTACHED[reader][key] = setup
    return setup


def setups(reader: str) -> dict[str, Any]:
    """{key: setup} of the setups attached for ``reader`` (registration order)."""
    return dict(_ATTACHED.get(reader, {}))


def setup(reader: str, key: str) -> Any:
    """The setup attached for ``reader`` under ``key``; ValueError listing the known keys."""
    try:
        return _ATTACHED[reader][key]
    except KeyError:
        raise ValueError(
            f"{reader}={key!r} is not registered; allowed: {sorted(_ATTACHED.get(reader, {}))}"
        ) from None


def by_setup(reader: str, key: str) -> Claim:
    """The claim whose setup for ``reader`` has this ``key`` (e.g. ``by_setup("search", "thm2")``);
    ValueError listing the known keys."""
    try:
        return CLAIMS[_SETUP_KEYS[reader][key]]
    except KeyError:
        known = sorted(_SETUP_KEYS.get(reader, {}))
        raise ValueError(f"{reader} id {key!r} is not registered; known: {known}") from None


for _claim in (*PAPER_CLAIMS.values(), *STATED):
    register(_claim)
for _paper in PAPERS:
    for _claim in _paper.STATEMENTS:
        register(_claim)
