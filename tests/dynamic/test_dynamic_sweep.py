"""The MSD(μ, σ_q) sweep spec (experiments/dynamic_msd.toml) expands and runs; MSD metrics reach the store and
`sweep fit` (the stationary grid gives a log-log slope near +1 in μ; loose tolerance: 16 replicates per
point, fixed seeds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from afltheory.sweep import Store, load_spec, parse_spec, run_sweep
from afltheory.sweep.analysis import fit_store, pooled_points

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "dynamic_msd.toml"


def test_spec_expands_to_the_mu_sigma_grid():
    spec = load_spec(SPEC)
    assert len(spec.tasks) == 7 * 3
    assert {t.config["problem"]["family"] for t in spec.tasks} == {"DriftingSlides"}


def test_tiny_grid_runs_and_stores_msd(tmp_path):
    text = SPEC.read_text()
    text = (
        text.replace("rounds = 400", "rounds = 120")
        .replace("replicates = 64", "replicates = 16")
        .replace('"algorithm.mu" = [0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8]', '"algorithm.mu" = [0.1, 0.2, 0.4]')
        .replace('"problem.sigma_q2" = [0.0, 0.0025, 0.01]', '"problem.sigma_q2" = [0.0]')
    )
    store = tmp_path / "dyn.sqlite"
    run_sweep(parse_spec(text), store)
    with Store(store, readonly=True) as st:
        pts = pooled_points(st)
        assert len(pts) == 3
        assert all(p["samples_avg_msd"].shape == (16,) and np.all(p["samples_avg_msd"] > 0) for p in pts)
        fits = fit_store(st, x="algorithm.mu", metric="avg_msd", n_boot=200)
    assert len(fits) == 1
    assert fits[0]["fit"].slope == pytest.approx(1.0, abs=0.35)
