"""The recorded kill matrix of the published checks (issue 26): {verdict id: the catalogued mutants
(``afltheory.mutants.CATALOGUE``) that flip it}, the kill-matrix column of ``afltheory published``.

Recorded 2026-11-26 03:01 UTC from a real run: ``afltheory.adversary.published_table.live_kills()`` =
``afltheory.mutants.kill_matrix(only=PUBLISHED_CHECKS, tier="quick", seed=0, jobs=1)`` over the 45 catalogued
mutants (31.1 s wall on the shared 2-core machine, load average 6.9). ``afltheory published --kill-matrix``
runs it again and prints the live column; the slow test ``tests/published/test_table_command.py::
test_kill_record_is_current`` checks that this record is current. An empty list: no catalogued mutant flips
that verdict.

The four ``published.yu2019.*`` entries were added 2026-11-26 ~05:33 UTC from a live run of the new check
only, ``kill_matrix(only=["published.yu2019"], tier="quick", seed=0, jobs=1)`` (128 s wall on the shared
machine, load average ~5), the other entries untouched (their checks did not change).

The kills of the three mutants added for Li et al.'s Thms 2–3 and Lian et al. (``fedavg.sampled_unscaled``,
``asysg.step_twice``, ``asysg.staleness_damped``; ``afltheory.mutants.published``) were added 2026-11-26
~06:10 UTC from a live run of those three mutants over every published check, ``kill_matrix([the three],
only=PUBLISHED_CHECKS, tier="quick", seed=0, jobs=1)`` (6 s wall): they flip only the four verdicts below
(``fedavg.sampled_unscaled`` through the negative control: the gap falls below bound/10); the other entries
untouched (no check changed).

Since issue 38's one-module pattern every paper module (``afltheory.published.SELF_CHECKED``) records its
kills in the module (``KILLS``), the entries above moved there unchanged; they are merged here.
"""

from __future__ import annotations

from . import SELF_CHECKED

__all__ = ["KILLS"]

KILLS: dict[str, list[str]] = {}
for _paper in SELF_CHECKED:
    KILLS.update(getattr(_paper, "KILLS", {}))
