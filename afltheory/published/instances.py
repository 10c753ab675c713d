"""Which function returns the verdicts of each published claim: ``VERIFICATIONS`` maps a claim id to its
paper module's ``verify()`` (the one-module pattern, issue 38: the instances, their controls and why each
is inside its statement's conditions are written in the paper module, next to the statement). Shared by the
checks plugin (the project's published checks, one check ``published.<module>`` per paper module) and the
table command (``afltheory published``).

Controls (must fail): the same claim with its bound divided by the module's ``CONTROL_FACTOR`` (10; Khaled
et al. 2020's heterogeneous claim: 20, see ``khaled2020.CONTROL_FACTORS``), i.e. "the theorem holds with
constants 10× smaller"; for SCAFFOLD and FedNova the same claim on FedAvg (the nearest wrong rule); for the
plain checks (FedProx Thm 4, Li et al. Thm 4, FedNova Thm 1, SCAFFOLD Thm II) a transcription slip (a dropped
term, a missing factor, a lost square). No verdict is a finding (none is a violation).
"""

from __future__ import annotations

from collections.abc import Callable

from . import SELF_CHECKED

__all__ = ["CONTROL_FACTOR", "VERIFICATIONS"]

#: the bound-division factor of the controls (the paper modules carry their own copy)
CONTROL_FACTOR = 10

#: claim id -> the function returning its verdicts (its paper module's ``verify()``)
VERIFICATIONS: dict[str, Callable[[], list]] = {c.id: p.verify for p in SELF_CHECKED for c in p.claims()}
