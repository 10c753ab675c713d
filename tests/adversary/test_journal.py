"""Resumable searches: an interrupted adversary search resumes from its journal to the same result as an
uninterrupted run, reading the completed evaluations instead of repeating them.

Deterministic (fixed seeds; exact evaluations)."""

import json

import numpy as np
import pytest

from afltheory.adversary import get_claim, search
from afltheory.adversary.journal import SearchJournal


class Stop(Exception):
    """Stands for an interruption (Ctrl-C, a killed job) after some batches."""


def _stop_after(n_evals):
    def progress(n, best):
        if n >= n_evals:
            raise Stop

    return progress


def test_interrupted_search_resumes_to_the_same_result(tmp_path, monkeypatch):
    kw = dict(budget=120, batch=16, seed=2, confirm_violation=False)
    full = search("thm2", journal=tmp_path / "full.jsonl", **kw)
    n_batches = len((tmp_path / "full.jsonl").read_text().splitlines()) - 1
    j = tmp_path / "thm2.jsonl"
    with pytest.raises(Stop):
        search("thm2", journal=j, progress=_stop_after(48), **kw)
    done = len(j.read_text().splitlines()) - 1  # the stamp, then one line per completed batch
    assert 0 < done < n_batches
    c = get_claim("thm2")
    calls = []
    real = type(c).evaluate
    monkeypatch.setattr(type(c), "evaluate", lambda self, *a: calls.append(1) or real(self, *a))
    seen = []
    res = search("thm2", journal=j, progress=lambda n, b: seen.append(n), **kw)
    assert res.ratio == full.ratio and res.T == full.T
    np.testing.assert_array_equal(res.history, full.history)
    np.testing.assert_array_equal(res.instance_u, full.instance_u)
    assert len(calls) == n_batches - done  # only the batches after the interruption were evaluated
    assert seen[-1] == 120 and any(f"{done} batch(es) read" in n for n in res.notes)
    # a rerun of the finished search reads everything; a control that can fail: another seed differs
    calls.clear()
    again = search("thm2", journal=j, **kw)
    assert not calls and again.ratio == full.ratio
    other = search("thm2", **{**kw, "seed": 3})
    assert other.ratio != full.ratio


def test_a_cut_line_is_dropped_and_another_search_is_refused(tmp_path):
    kw = dict(budget=64, batch=16, seed=0, confirm_violation=False)
    full = search("thm4", **kw)
    j = tmp_path / "j.jsonl"
    with pytest.raises(Stop):
        search("thm4", journal=j, progress=_stop_after(32), **kw)
    text = j.read_text()
    j.write_text(text + text.splitlines()[-1][:40])  # an append cut short by the interruption
    res = search("thm4", journal=j, **kw)
    assert res.ratio == full.ratio
    np.testing.assert_array_equal(res.history, full.history)
    for line in j.read_text().splitlines():
        json.loads(line)  # the journal is valid JSON lines again
    with pytest.raises(ValueError, match="another search"):
        search("thm4", journal=j, **{**kw, "seed": 1})
    with pytest.raises(ValueError, match="journal"):
        SearchJournal(tmp_path, {"a": 1})  # a directory
