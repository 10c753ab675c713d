"""The published statements (``afltheory.published``) that afltheory's engines can run, as ``Claim`` objects,
collected from the paper modules (issue 38's one-module pattern: each paper module states its engine form in
``claims()``, re-expressing its statement's sympy terms in the claim symbol set — the paper's own clock
becomes afltheory's, e.g. Li et al.'s T counts local SGD steps: T_Li = 1 + T·E — and checks it in
``verify()``). The statements not expressible in the engines (per-round decrease, lower bounds, limits as
η → 0) are checked by their module's ``verify()`` on closed forms, plain numpy, with a control each.

``CLAIMS``: id -> Claim. ``FALSE_VARIANTS``: id -> a claim declared ``expect="fails"`` (it passes when its
bound is violated on the same instance).
"""

from __future__ import annotations

from ..claims import Claim
from . import SELF_CHECKED

__all__ = ["CLAIMS", "FALSE_VARIANTS"]

#: the claims of the paper modules (``afltheory.published.SELF_CHECKED``), by id
CLAIMS: dict[str, Claim] = {c.id: c for p in SELF_CHECKED for c in p.claims()}


def _false(c: Claim, factor: float = 10.0) -> Claim:
    return Claim(
        **{
            **{k: getattr(c, k) for k in c.__dataclass_fields__},
            "id": c.id + ".bound_div10",
            "title": c.title + " — false variant: bound / 10",
            "expect": "fails",
            "bound": {k: v / factor for k, v in c.bound.items()},
        }
    )


FALSE_VARIANTS = {
    f.id: f
    for f in (
        _false(CLAIMS[i])
        for i in (
            "published.li2020.thm1",
            "published.khaled2020.identical",
            "published.lian2015.thm1",
            "published.yu2019.thm1",
        )
    )
}
