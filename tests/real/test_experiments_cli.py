"""The real-data experiment drivers (``experiments.real_data``) and the ``afltheory real`` CLI (registered
through the entry-point group ``afltheory.commands``) on a tiny budget."""

import json

import numpy as np
import pytest

from experiments.real_data import RealConfig, figure5, mean_ci, table2, wallclock

TINY = RealConfig(rounds=8, seeds=2, K=2)


def test_mean_ci():
    mu, hw = mean_ci(np.array([1.0, 2.0, 3.0]))
    assert mu == 2.0 and abs(hw - 4.302652729911275 * 1 / np.sqrt(3)) < 1e-9


def test_table2_and_figure5_tiny(tmp_path):
    r = table2(TINY, ps=(2,), out=tmp_path)
    assert len(r["rows"]) == 4 and "| 2 |" in r["table"]
    assert (tmp_path / "table2.png").stat().st_size > 1000
    assert json.loads((tmp_path / "table2.json").read_text())["rows"][0]["seeds"] == 2
    f = figure5(TINY, ps=(1,))
    assert [row["method"] for row in f["rows"]] == ["AFA-CD uniform", "AFA-CD biased", "AFA-CS biased"]


def test_wallclock_tiny():
    r = wallclock(RealConfig(rounds=30, seeds=2, K=2), p=10, target=0.5)
    assert r["rows"][0]["reached"] == 2
    assert 0.1 < r["ratios"]["round_time_ratio"] < 0.6  # theory: 0.646/2.283 = 0.283


def test_config_validation():
    with pytest.raises(ValueError, match="backend='torch'"):
        RealConfig(model="cnn")
    with pytest.raises(ValueError, match="data_dir"):
        table2(RealConfig(dataset="mnist", rounds=1, seeds=1), ps=(1,))


def test_cli_real(tmp_path, capsys):
    from afltheory.cli import main

    rc = main(
        [
            "real",
            "table3",
            "--ps",
            "5",
            "--rounds",
            "5",
            "--seeds",
            "2",
            "--K",
            "2",
            "--settings",
            "async-dyn",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "SCAFFOLD async-dyn" in out and (tmp_path / "table3.md").exists()
    assert main(["real", "table2", "--model", "cnn", "--rounds", "1"]) == 2  # bad combination: exit 2


def test_accuracy_ci_stays_in_unit_interval_and_json_is_strict(tmp_path):
    """Two seeds with accuracies 0.05 and 0.7 gave "0.378 ± 2.118" with a raw t-interval; the logit-scale
    interval stays inside [0, 1] and contains the mean; one seed has no interval; the JSON has no NaN."""
    import json

    import numpy as np

    from afltheory.checks import json_safe
    from experiments.real_data import _write, accuracy_ci

    mu, lo, hi = accuracy_ci(np.array([0.05, 0.7]))
    assert 0.0 <= lo <= mu <= hi <= 1.0 and np.isclose(mu, 0.375)
    assert accuracy_ci(np.array([0.5]))[1:] == (None, None)
    mu, lo, hi = accuracy_ci(np.array([1.0, 1.0, 1.0]))
    assert mu == 1.0 and lo <= 1.0 and hi == 1.0
    res = {"table": "t", "rows": [{"rounds_to_target": float("nan"), "x": np.inf, "to_target_reason": "r"}]}
    _write(tmp_path, "e", res)
    text = (tmp_path / "e.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["rows"][0]["rounds_to_target"] is None
    assert json_safe([np.float64("nan"), 1], nonfinite="null") == [None, 1]


def _add_hello(subparsers):
    """A third-party command for the plugin test: ``afltheory hello`` prints a line; ``--bad`` raises."""
    p = subparsers.add_parser("hello")
    p.add_argument("--bad", action="store_true")

    def run(args):
        if args.bad:
            raise ValueError("bad=True is not allowed")
        print("hello from a plugin")
        return 0

    p.set_defaults(func=run)
    return p


def test_real_is_a_plugin_command_and_third_party_commands_work(monkeypatch, capsys):
    """``real`` reaches the CLI only through the entry-point group ``afltheory.commands`` (the library never
    imports ``experiments``); a third-party entry point adds a command; a broken one is a warning that leaves
    the other commands working; a ValueError in a plugin's handler is one line and exit 2."""
    import importlib.metadata as md

    from afltheory.cli import COMMANDS_GROUP, main

    real = [ep for ep in md.entry_points(group=COMMANDS_GROUP) if ep.name == "real"]
    assert [ep.value for ep in real] == ["experiments.cli:add_real_parser"]
    eps = [
        md.EntryPoint("broken", "no_such_module_xyz:add_parser", COMMANDS_GROUP),
        md.EntryPoint("hello", f"{__name__}:_add_hello", COMMANDS_GROUP),
    ]
    monkeypatch.setattr(md, "entry_points", lambda group=None, **kw: eps if group == COMMANDS_GROUP else [])
    with pytest.warns(RuntimeWarning, match="'broken'.*failed to load"):
        assert main(["hello"]) == 0
    assert "hello from a plugin" in capsys.readouterr().out
    with pytest.warns(RuntimeWarning):
        assert main(["hello", "--bad"]) == 2
    assert "bad=True" in capsys.readouterr().err
