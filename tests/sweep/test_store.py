import threading
import time
import warnings

import numpy as np
import pytest

from afltheory.sweep import Store, StoreMismatchError, decode_arrays, encode_arrays, parse_spec, run_sweep
from afltheory.sweep.store import StoreError

SYN = """
name = "syn"
rounds = 30
replicates = 5
seeds = [0, 1, 2]
checkpoints = 10
[problem]
family = "x"
[behaviour]
[algorithm]
name = "synthetic"
eta = 0.1
{extra}
[grid]
"algorithm.eta" = [0.05, 0.1, 0.2, 0.4]
"""


def syn(extra="", **fmt):
    return parse_spec(SYN.format(extra=extra, **fmt), check_objects=False)


def test_arrays_roundtrip_without_pickle():
    arrs = {"a": np.arange(5), "b": np.linspace(0, 1, 7).reshape(7, 1), "c": np.array([np.inf, 1.0])}
    names, blob = encode_arrays(arrs)
    back = decode_arrays(names, blob)
    for k in arrs:
        np.testing.assert_array_equal(back[k], arrs[k])
    assert encode_arrays(arrs)[1] == blob  # deterministic bytes
    with pytest.raises(TypeError):
        encode_arrays({"o": np.array([{}, 1], dtype=object)})


def test_resume_skips_finished_and_never_duplicates(tmp_path):
    spec = syn()
    store = tmp_path / "s.sqlite"
    r1 = run_sweep(spec, store, task="synthetic", max_tasks=5)
    assert (r1.ran, r1.skipped) == (5, 0)
    r2 = run_sweep(spec, store, task="synthetic")
    assert (r2.ran, r2.skipped, r2.total) == (7, 5, 12)
    r3 = run_sweep(spec, store, task="synthetic")
    assert r3.ran == 0 and r3.skipped == 12
    with Store(store, readonly=True) as st:
        s = st.status()
        assert (s["planned"], s["finished"], s["pending"]) == (12, 12, 0)
        rows = list(st.rows(with_arrays=True))
    assert sorted(r["id"] for r in rows) == sorted(spec.ids)
    full = tmp_path / "full.sqlite"
    run_sweep(spec, full, task="synthetic")
    with Store(store, readonly=True) as a, Store(full, readonly=True) as b:
        assert a.fingerprint() == b.fingerprint()
    r = rows[0]
    assert set(r["arrays"]) >= {"rounds", "grad_norm_sq_mean", "grad_norm_sq_sem", "loss_mean", "loss_sem"}
    assert r["arrays"]["rounds"][-1] == 30 and len(r["arrays"]["rounds"]) == 11


def test_store_schema_and_wal(tmp_path):
    store = tmp_path / "s.sqlite"
    with Store(store) as st:
        assert st.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert st.conn.execute("SELECT version FROM schema_version").fetchone()[0] == 1
        st.conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="schema 99"):
        Store(store, readonly=True)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError):
        Store(junk, readonly=True)
    with pytest.raises(StoreError, match="does not exist"):
        Store(tmp_path / "missing.sqlite", readonly=True)


def test_different_spec_is_detected(tmp_path):
    store = tmp_path / "s.sqlite"
    run_sweep(syn(), store, task="synthetic")
    other = parse_spec(SYN.format(extra="").replace("rounds = 30", "rounds = 31"), check_objects=False)
    with pytest.raises(StoreMismatchError, match="does not plan"):
        run_sweep(other, store, task="synthetic")
    # same id set, different spec hash (only the name changed): reported, not an error
    renamed = parse_spec(SYN.format(extra="").replace('name = "syn"', 'name = "syn2"'), check_objects=False)
    with pytest.warns(UserWarning, match="same task ids, different spec hash"):
        rep = run_sweep(renamed, store, task="synthetic")
    assert rep.ran == 0 and rep.store_note
    # extending the grid on purpose
    with pytest.warns(UserWarning, match="12 new task"):
        rep = run_sweep(other, store, task="synthetic", extend=True)
    assert rep.ran == 12
    with Store(store, readonly=True) as st:
        assert st.status()["finished"] == 24 and st.status()["specs"] == 3


def test_failed_tasks_are_recorded_and_retried(tmp_path):
    spec = parse_spec(
        SYN.format(extra="fail = true").replace(
            '"algorithm.eta" = [0.05, 0.1, 0.2, 0.4]', '"algorithm.fail" = [false, true]'
        ),
        check_objects=False,
    )
    store = tmp_path / "s.sqlite"
    rep = run_sweep(spec, store, task="synthetic")
    assert (rep.ran, rep.failed) == (3, 3) and not rep.ok
    assert "synthetic failure" in rep.failures[0][1]
    with Store(store, readonly=True) as st:
        assert st.status()["failed"] == 3 and st.status()["pending"] == 3
    rep = run_sweep(spec, store, task="synthetic")
    assert (rep.ran, rep.failed, rep.skipped) == (0, 3, 3)


def test_readers_are_safe_while_a_sweep_writes(tmp_path):
    spec = syn(extra="sleep = 0.02")
    store = tmp_path / "s.sqlite"
    Store(store).close()
    err = []

    def writer():
        try:
            run_sweep(spec, store, task="synthetic")
        except Exception as exc:  # pragma: no cover - reported below
            err.append(exc)

    th = threading.Thread(target=writer)
    th.start()
    seen = []
    while th.is_alive():
        with Store(store, readonly=True, timeout=5) as st:
            seen.append(st.status()["finished"])
            rows = list(st.rows(with_arrays=True))
            assert len(rows) >= seen[-1]
        time.sleep(0.005)
    th.join()
    assert not err
    assert seen == sorted(seen) and len(seen) > 3
    with Store(store, readonly=True) as st:
        assert st.status()["finished"] == 12


def test_divergence_is_reported_not_hidden(tmp_path):
    """A step size far past stability diverges: the metrics say so and the curves carry +inf, not NaN."""
    pytest.importorskip("afltheory.engine")
    import textwrap

    text = textwrap.dedent("""\
        rounds = 40
        replicates = 3
        [problem]
        family = "HeterogeneousQuadratic"
        dim = 3
        num_workers = 4
        L = 2.0
        [behaviour.arrivals]
        kind = "UniformArrivals"
        m = 2
        [algorithm]
        name = "AFACD"
        eta = 1.0
        [grid]
        "algorithm.eta_L" = [0.1, 5.0]
        """)
    store = tmp_path / "d.sqlite"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_sweep(text, store)
    with Store(store, readonly=True) as st:
        rows = {r["config"]["algorithm"]["eta_L"]: r for r in st.rows(with_arrays=True)}
        assert st.status()["diverged_tasks"] == 1
    bad, good = rows[5.0], rows[0.1]
    assert bad["metrics"]["diverged"] and bad["metrics"]["diverged_fraction"] == 1.0
    assert bad["metrics"]["divergence_round"] >= 1 and bad["metrics"]["final_grad_norm_sq"] is None
    assert np.isposinf(bad["arrays"]["grad_norm_sq_mean"][-1])
    assert not good["metrics"]["diverged"] and good["metrics"]["final_grad_norm_sq"] < 1.0
