"""Same spec and seed => identical stored results with 1 job, 2 jobs and a Dask LocalCluster on loopback."""

import pytest

from afltheory.sweep import DaskExecutor, LocalExecutor, Store, parse_spec, run_sweep


def _fingerprint(path):
    with Store(path, readonly=True) as st:
        return st.fingerprint()


def test_identical_results_across_executors(tmp_path, tiny_text):
    spec = parse_spec(tiny_text)
    run_sweep(spec, tmp_path / "j1.sqlite", jobs=1)
    rep2 = run_sweep(spec, tmp_path / "j2.sqlite", jobs=2)
    assert rep2.jobs == 2 and rep2.ran == len(spec.tasks)
    ref = _fingerprint(tmp_path / "j1.sqlite")
    assert len(ref) == 12 and ref == _fingerprint(tmp_path / "j2.sqlite")

    pytest.importorskip("distributed")
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    client = None
    try:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        client = Client(cluster)
        ex = DaskExecutor(client=client)
        rep = run_sweep(spec, tmp_path / "dask.sqlite", executor=ex)
        assert rep.executor == "dask" and rep.ran == 12
        ex2 = DaskExecutor(scheduler=cluster.scheduler_address)  # by address, as --scheduler ADDR does
        try:
            run_sweep(spec, tmp_path / "dask_addr.sqlite", executor=ex2)
        finally:
            ex2.close()
    finally:
        if client is not None:
            client.close()
        cluster.close()
    assert _fingerprint(tmp_path / "dask.sqlite") == ref
    assert _fingerprint(tmp_path / "dask_addr.sqlite") == ref


def test_local_executor_reports_task_errors(tmp_path):
    from afltheory.sweep.tasks import synthetic_task

    payloads = [
        {
            "id": f"{i:064x}",
            "seed": i,
            "config": {"rounds": 3, "replicates": 2, "checkpoints": 3, "algorithm": {"fail": i == 1}},
        }
        for i in range(3)
    ]
    for jobs in (1, 2):
        with LocalExecutor(jobs) as ex:
            out = {p["id"]: (r, e) for p, r, e in ex.imap_unordered(synthetic_task, payloads)}
        assert len(out) == 3
        assert out[payloads[1]["id"]][0] is None and "synthetic failure" in out[payloads[1]["id"]][1]
        assert out[payloads[0]["id"]][1] is None


def test_bad_executor_arguments():
    from afltheory.sweep import make_executor

    with pytest.raises(ValueError, match="jobs"):
        LocalExecutor(0)
    with pytest.raises(ValueError, match="executor"):
        make_executor("slurm")
    with pytest.raises(ValueError, match="scheduler"):
        make_executor("local", scheduler="tcp://127.0.0.1:1")


@pytest.mark.slow
def test_dask_own_local_cluster(tmp_path, tiny_text):
    """executor="dask" without --scheduler starts (and closes) its own LocalCluster on 127.0.0.1."""
    pytest.importorskip("distributed")
    spec = parse_spec(tiny_text)
    run_sweep(spec, tmp_path / "j1.sqlite")
    rep = run_sweep(spec, tmp_path / "d.sqlite", executor="dask", jobs=2)
    assert rep.executor == "dask" and rep.jobs == 2
    assert _fingerprint(tmp_path / "d.sqlite") == _fingerprint(tmp_path / "j1.sqlite")
