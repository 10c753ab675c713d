"""``pep.worst_schedule`` with a journal: an interrupted schedule search resumes to the same worst schedule,
solving only what was not recorded. Deterministic (SDP solves). Skipped without the 'pep' extra."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PEPit")

from afltheory.algorithms import AFACD  # noqa: E402
from afltheory.pep import search as pep_search  # noqa: E402
from afltheory.pep.search import worst_schedule  # noqa: E402

pytestmark = pytest.mark.pep


class Stop(Exception):
    """Stands for an interruption after the first search step."""


def test_interrupted_schedule_search_resumes(tmp_path, monkeypatch):
    kw = dict(num_workers=3, m=2, K=1, T=2, tau=1, delta=1.0, max_solves=4, beam=1)
    algo, C = AFACD(eta=2.0, eta_L=0.3), dict(L=1.0, sigma_G=0.3)
    full = worst_schedule(algo, C, **kw)
    j = tmp_path / "pep.jsonl"

    def stop(n, best):
        raise Stop

    with pytest.raises(Stop):
        worst_schedule(algo, C, journal=j, progress=stop, **kw)
    assert len(j.read_text().splitlines()) == 2  # the stamp and round 0's one solve
    calls = []
    real = pep_search._solve
    monkeypatch.setattr(pep_search, "_solve", lambda task: calls.append(1) or real(task))
    res = worst_schedule(algo, C, journal=j, **kw)
    assert len(calls) == full.solves - 1  # round 0 was read from the journal
    assert res.best.value == pytest.approx(full.best.value, rel=1e-12)
    np.testing.assert_array_equal(res.schedule.workers, full.schedule.workers)
    np.testing.assert_array_equal(res.schedule.delays, full.schedule.delays)
    assert res.solves == full.solves and res.method == full.method
    calls.clear()
    again = worst_schedule(algo, C, journal=j, **kw)  # all recorded: only the worst is solved again
    assert len(calls) == 1 and again.best.value == pytest.approx(full.best.value, rel=1e-12)
    with pytest.raises(ValueError, match="another search"):
        worst_schedule(algo, C, journal=j, **{**kw, "beam": 2})
