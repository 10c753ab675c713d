"""Sweeps at scale: TOML grid specs, executors (local processes; Dask), a resumable SQLite results store.

    from afltheory.sweep import load_spec, run_sweep, Store
    spec = load_spec("experiments/smoke.toml")      # validates everything; raises SpecError(key, line)
    report = run_sweep(spec, "smoke.sqlite", jobs=2) # or executor="dask", scheduler="tcp://host:8786"
    with Store("smoke.sqlite", readonly=True) as st:
        st.status(); list(st.rows(with_arrays=True))

CLI: ``afltheory sweep run|status|export|plot`` (see ``afltheory.sweep.cli``); also ``python -m
afltheory.sweep``.
"""

from .analysis import export_csv, plot_store, pooled_points
from .executors import DaskExecutor, Executor, LocalExecutor, make_executor
from .runner import SweepReport, run_sweep
from .spec import Spec, SpecError, Task, allowed_names, build_objects, load_spec, parse_spec
from .store import Store, StoreError, StoreMismatchError
from .tasks import decode_arrays, encode_arrays, run_task, summarize, synthetic_task

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "Spec",
    "SpecError",
    "Store",
    "StoreError",
    "StoreMismatchError",
    "SweepReport",
    "Task",
    "allowed_names",
    "build_objects",
    "decode_arrays",
    "encode_arrays",
    "export_csv",
    "load_spec",
    "make_executor",
    "parse_spec",
    "plot_store",
    "pooled_points",
    "run_sweep",
    "run_task",
    "summarize",
    "synthetic_task",
]
