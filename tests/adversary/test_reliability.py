"""Issue 28, adversary: `load_instance` validates every field (probability vectors, integers: rounds=2.7 is
refused, never truncated); `confirm` confirms only inside the claim's conditions and says why otherwise; a
class where no candidate satisfies the conditions prints no `nan` worst ratio (it says why, exit 1); the
JSON is strict (no NaN/Infinity tokens). Deterministic (fixed seeds)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from afltheory.adversary import load_instance, search
from afltheory.adversary.search import confirm, instance_inside
from afltheory.cli import main


@pytest.fixture(scope="module")
def thm2_case():
    wc = search("thm2", budget=64, seed=3, confirm_violation=False)
    return wc.instance


def _strict(text):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c} in the output"))


@pytest.mark.parametrize(
    "field,value,match",
    [
        ("rounds", 2.7, "rounds"),
        ("rounds", "3", "rounds"),
        ("rounds", True, "rounds"),
        ("rounds", 0, "rounds"),
        ("delay_pmf", [0.5, 0.6], "delay_pmf"),
        ("delay_pmf", [1.5, -0.5], "delay_pmf"),
        ("eta", float("nan"), "eta"),
        ("eta_L", -1.0, "eta_L"),
        ("eta", "big", "eta"),
    ],
)
def test_load_instance_validates_every_field(thm2_case, field, value, match):
    d = thm2_case.to_dict()
    d[field] = value
    with pytest.raises(ValueError, match=match):
        load_instance(d)


def test_load_instance_validates_arrays_and_arrivals(thm2_case):
    base = thm2_case.to_dict()
    M = base["num_workers"]
    bad = [
        ("k_pmf", [[0.5, 0.2]] * M, "k_pmf"),
        ("arrivals", {"kind": "biased", "m": 1, "probs": [0.9] + [0.0] * (M - 1)}, "probs"),
        ("arrivals", {"kind": "biased", "m": 1, "probs": [-0.5, 1.5] + [0.0] * (M - 2)}, "probs"),
        ("arrivals", {"kind": "uniform", "m": 2.5}, "m"),
        ("arrivals", {"kind": "fixed", "m": 2, "workers": [0, M]}, "workers"),
        ("arrivals", {"kind": "teleport", "m": 1}, "kind"),
        ("x0", base["x0"] + [0.0], "shapes"),
        ("hessian", [[[1.0, 2.0], [0.0, 1.0]]] * M, "symmetric|shapes"),
    ]
    for field, value, match in bad:
        d = dict(base)
        d[field] = value
        with pytest.raises(ValueError, match=match):
            load_instance(d)
    assert load_instance(json.loads(json.dumps(base))) is not None


def test_confirm_only_inside_the_conditions(thm2_case):
    assert instance_inside("thm2", thm2_case)[0] is True
    outside = dataclasses.replace(thm2_case, eta=thm2_case.eta * 1e4)  # far beyond the step-size conditions
    inside, why = instance_inside("thm2", outside)
    assert inside is False and "outside thm2's conditions" in why
    cf = confirm("thm2", outside, seed=0, replicates=20)
    assert cf["confirmed"] is False and cf["inside_conditions"] is False and "outside" in cf["why"]


def test_no_nan_worst_ratio(tmp_path, capsys):
    out = tmp_path / "adv.json"
    code = main(
        ["adversary", "cor1", "--K-max", "64", "--rounds", "20", "--budget", "64", "--json", str(out)]
    )
    text = capsys.readouterr().out.splitlines()[0]  # the summary (the path below may contain anything)
    assert code == 1 and "nan" not in text.lower() and "no worst ratio" in text and "outside" in text
    d = _strict(out.read_text())
    assert d["worst_ratio"] is None and d["instance"] is None


def test_unusable_json_refused_before_the_search(tmp_path, capsys):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["adversary", "thm2", "--budget", "10", "--json", str(fifo)]) == 2
    err = capsys.readouterr()
    assert "--json" in err.err and "FIFO" in err.err and "worst ratio" not in err.out
