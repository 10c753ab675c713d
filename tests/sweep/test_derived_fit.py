"""Sweeps that can test a theorem (issue 21, points 4-6): derived parameters in a safe expression language,
zipped axes, user classes by import path, per-replicate summaries and `sweep fit` with bootstrap CIs."""

from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pytest

from afltheory.cli import main as cli_main
from afltheory.sweep.analysis import fit_store
from afltheory.sweep.expr import ExprError, evaluate, names_in
from afltheory.sweep.spec import SpecError, parse_spec
from afltheory.sweep.tasks import summarize

BASE = textwrap.dedent("""\
    rounds = 100
    replicates = 4
    [problem]
    family = "HeterogeneousQuadratic"
    dim = 3
    num_workers = 8
    [behaviour.arrivals]
    kind = "UniformArrivals"
    m = 2
    [behaviour.delays]
    kind = "NoDelay"
    [behaviour.local_steps]
    kind = "ConstantSteps"
    K = 2
    [algorithm]
    name = "AFACD"
    eta = 1.0
    eta_L = 0.05
    """)


def test_expressions_are_arithmetic_only():
    look = {"rounds": 400, "behaviour.arrivals.m": 4, "behaviour.local_steps.K": 2}.__getitem__
    assert evaluate("1/sqrt(rounds)", look) == 0.05
    assert evaluate("sqrt(behaviour.arrivals.m * behaviour.local_steps.K)", look) == math.sqrt(8)
    assert evaluate("max(1, floor(rounds / 3)) + 2**3 - -1", look) == 133 + 8 + 1
    assert names_in("sqrt(behaviour.arrivals.m * rounds)") == {"behaviour.arrivals.m", "rounds"}
    for bad in (
        "__import__('os')",
        "().__class__",
        "[1, 2]",
        "'a' * 3",
        "lambda: 1",
        "open('x')",
        "rounds if rounds else 1",
        "1e308 * 1e308",
        "2 ** 1000",
        "1/0",
        "sqrt(-1)",
        "nope + 1",
        "x" * 600,
    ):
        with pytest.raises(ExprError):
            evaluate(bad, look)


def test_derived_and_zipped_axes_expand_and_fix_task_ids():
    spec = parse_spec(
        BASE
        + textwrap.dedent("""\
        [grid]
        "behaviour.arrivals.m" = [1, 2, 4]
        [zip]
        rounds = [100, 400]
        "problem.sigma_L" = [1.0, 0.5]
        [derived]
        "algorithm.eta_L" = "0.1/sqrt(rounds)"
        "algorithm.eta" = "sqrt(behaviour.arrivals.m * behaviour.local_steps.K)"
        """)
    )
    got = sorted(
        (
            t.config["behaviour"]["arrivals"]["m"],
            t.config["rounds"],
            t.config["problem"]["sigma_L"],
            t.config["algorithm"]["eta"],
            t.config["algorithm"]["eta_L"],
        )
        for t in spec.tasks
    )
    want = sorted(
        (m, T, s, math.sqrt(2 * m), 0.1 / math.sqrt(T))
        for m in (1, 2, 4)
        for T, s in ((100, 1.0), (400, 0.5))
    )
    assert got == want and len({t.id for t in spec.tasks}) == 6
    # the same numbers written by hand give the same task ids (ids hash the computed config)
    hand = parse_spec(
        BASE.replace("eta = 1.0", f"eta = {math.sqrt(4)}")
        .replace("eta_L = 0.05", "eta_L = 0.01")
        .replace("num_workers = 8", "num_workers = 8\nsigma_L = 1.0")
    )
    assert hand.tasks[0].id in {t.id for t in spec.tasks}


@pytest.mark.parametrize(
    "extra, key",
    [
        ('[derived]\n"algorithm.eta_L" = "1/sqrt(roundz)"\n', "derived.algorithm.eta_L"),
        ('[derived]\n"algorithm.eta_L" = "__import__(1)"\n', "derived.algorithm.eta_L"),
        (
            '[grid]\n"algorithm.eta_L" = [0.1, 0.2]\n[derived]\n"algorithm.eta_L" = "0.1"\n',
            "derived.algorithm.eta_L",
        ),
        ('[zip]\nrounds = [10, 20]\n"algorithm.eta" = [1.0]\n', "zip.algorithm.eta"),
        ('[derived]\nrounds = "sqrt(2)"\n', "derived.rounds"),
    ],
)
def test_bad_derived_or_zip_name_the_key(extra, key):
    with pytest.raises(SpecError) as e:
        parse_spec(BASE + extra)
    assert e.value.key == key, str(e.value)


def test_user_classes_by_import_path(tmp_path, monkeypatch):
    (tmp_path / "mypkg_arrivals.py").write_text(
        textwrap.dedent("""\
        from afltheory.anarchy import UniformArrivals

        class Sticky(UniformArrivals):
            '''Uniform arrivals under another name (a user class).'''

        class NotArrivals:
            def __init__(self, m=1):
                self.m = m
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = parse_spec(BASE.replace('kind = "UniformArrivals"', 'kind = "mypkg_arrivals:Sticky"'))
    assert len(spec.tasks) == 1
    with pytest.raises(SpecError, match="not a subclass"):
        parse_spec(BASE.replace('kind = "UniformArrivals"', 'kind = "mypkg_arrivals:NotArrivals"'))
    with pytest.raises(SpecError, match="cannot import module"):
        parse_spec(BASE.replace('kind = "UniformArrivals"', 'kind = "no_such_module_xyz:Sticky"'))
    with pytest.raises(SpecError, match="unknown parameter 'q'"):
        parse_spec(
            BASE.replace("m = 2", "m = 2\nq = 1").replace(
                'kind = "UniformArrivals"', 'kind = "mypkg_arrivals:Sticky"'
            )
        )


def test_summaries_keep_per_replicate_values_and_divergence_is_inf():
    g = np.array([[4.0, 2.0, 1.0], [8.0, np.inf, np.inf]])
    _, arrays = summarize(g, g / 2, rounds=2, checkpoints=2)
    assert arrays["rep_avg_grad_norm_sq"][0] == 3.0 and arrays["rep_avg_grad_norm_sq"][1] == np.inf
    assert arrays["rep_final_grad_norm_sq"].tolist() == [1.0, np.inf]
    assert not np.isnan(arrays["rep_final_loss"]).any()


class _FakeStore:
    """Rows as ``Store.rows(with_arrays=True)`` yields them: y = 3 x^(-1/2) · lognormal(0, 0.1) per
    replicate."""

    path = "fake"

    def __init__(self, slope=-0.5, R=40, seed=0):
        rng = np.random.default_rng(seed)
        self._rows = []
        for x in (1, 2, 4, 8, 16):
            for T in (100, 400):
                y = 3 * x**slope * (T / 100) ** -1.0 * rng.lognormal(0, 0.1, size=R)
                cfg = {
                    "rounds": T,
                    "algorithm": {"eta": math.sqrt(x)},
                    "behaviour": {"arrivals": {"m": x}},
                    "seed": 0,
                    "block": 0,
                }
                arrays = {
                    "rounds": np.array([0, T]),
                    "grad_norm_sq_mean": np.ones(2),
                    "grad_norm_sq_sem": np.zeros(2),
                    "loss_mean": np.ones(2),
                    "loss_sem": np.zeros(2),
                    "grad_norm_sq_runavg": np.ones(2),
                    "rep_avg_grad_norm_sq": y,
                    "rep_final_grad_norm_sq": y,
                    "rep_final_loss": y,
                }
                self._rows.append(
                    {
                        "point_id": json.dumps([x, T]),
                        "config": cfg,
                        "arrays": arrays,
                        "metrics": {"replicates": R, "diverged_count": 0},
                    }
                )

    def rows(self, with_arrays=False):
        return iter(self._rows)


def test_fit_store_recovers_a_known_slope_per_series():
    """40 replicates per point, lognormal(0, 0.1) noise: the 95 % bootstrap CI covers −0.5 (seed fixed; at
    this noise level the CI half-width is ≈ 0.01). algorithm.eta is a function of m, so it does not split
    series."""
    fits = fit_store(_FakeStore(), x="behaviour.arrivals.m")
    assert [f["series"] for f in fits] == ["rounds=100", "rounds=400"]
    for f in fits:
        assert f["fit"].ci[0] <= -0.5 <= f["fit"].ci[1]
        assert f["fit"].ci[1] - f["fit"].ci[0] < 0.05
        assert np.allclose(f["fit"].end_slopes, -0.5, atol=0.1)
    with pytest.raises(ValueError, match="--metric"):
        fit_store(_FakeStore(), x="behaviour.arrivals.m", metric="accuracy")
    with pytest.raises(ValueError, match="--x 'problem.dim' is not a parameter"):
        fit_store(_FakeStore(), x="problem.dim")


def test_sweep_fit_cli_end_to_end(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(
        BASE.replace("replicates = 4", "replicates = 6")
        + textwrap.dedent("""\
        [grid]
        "behaviour.arrivals.m" = [1, 2, 4, 8]
        """)
    )
    store = str(tmp_path / "s.sqlite")
    assert cli_main(["sweep", "run", str(spec), "--store", store, "--progress", "none"]) == 0
    assert cli_main(["sweep", "fit", "--store", store, "--x", "behaviour.arrivals.m", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (fit,) = out["fits"]
    assert fit["x"] == [1, 2, 4, 8] and fit["slope"] < 0 and fit["ci"][0] <= fit["slope"] <= fit["ci"][1]
    assert cli_main(["sweep", "fit", "--store", store, "--x", "rounds"]) == 2  # does not vary
    assert (
        cli_main(
            [
                "sweep",
                "plot",
                "--store",
                store,
                "--x",
                "behaviour.arrivals.m",
                "--out",
                str(tmp_path / "p.png"),
            ]
        )
        == 0
    )
    with pytest.raises(SystemExit):
        cli_main(["sweep", "fit", "--store", store, "--x", "behaviour.arrivals.m", "--metric", "accuracy"])
