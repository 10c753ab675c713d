"""``afltheory adversary ID --file F.py``: the scaling search runs on a user's claim (its class's open
directions), ``--scaling`` is validated before any search, and the box search's own options are refused on
the generic path (one line, exit 2) rather than silently ignored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from afltheory.cli import main

CLAIM_FILE = """
from afltheory.algorithms import FedAvg
from afltheory.claims import Assumptions, Claim, Delta, L, M, T, eta, eta_L, sigma_G, sigma_L
FALSE_MM = Claim(id="cli.false_mm", title="noise over M, not m",
                 assumptions=Assumptions(participation="uniform", max_delay=0, max_local_steps=1),
                 rule=FedAvg, eta=1.0,
                 bound={"transient": 2 * Delta / (eta * eta_L * T),
                        "noise": 4 * eta * eta_L * L * (sigma_L**2 + sigma_G**2) / M},
                 conditions={"step": eta * eta_L * L <= 1})
"""


@pytest.fixture
def claim_file(tmp_path):
    p = tmp_path / "c.py"
    p.write_text(CLAIM_FILE)
    return str(p)


@pytest.mark.parametrize("bad", ["-1", "nan", "inf", "1e9"])
def test_bad_scaling_is_refused_before_any_search(claim_file, bad, capsys, monkeypatch):
    import importlib

    generic = importlib.import_module("afltheory.adversary.generic")
    search = importlib.import_module("afltheory.adversary.search")

    def no_search(*a, **k):
        raise AssertionError("a search started before --scaling was validated")

    monkeypatch.setattr(generic, "search_claim", no_search)
    monkeypatch.setattr(search, "search", no_search)
    for claim in (["cli.false_mm", "--file", claim_file], ["thm2"]):
        assert main(["adversary", *claim, "--budget", "50", "--scaling", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--scaling" in err[0] and "[0, 86400]" in err[0]


@pytest.mark.parametrize(
    "opt", [["--isolate", "sigma_L"], ["--min-gap", "0.5"], ["--rotate"], ["--arrivals", "uniform"]]
)
def test_box_only_options_are_refused_on_the_generic_path(claim_file, opt, capsys):
    assert main(["adversary", "cli.false_mm", "--file", claim_file, "--budget", "3", *opt]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and opt[0] in err and "generic adversary" in err


def test_scaling_search_on_a_user_claim_finds_the_violation(claim_file, tmp_path, capsys):
    out = str(tmp_path / "r.json")
    argv = [
        "adversary",
        "cli.false_mm",
        "--file",
        claim_file,
        "--budget",
        "3",
        "--scaling",
        "20",
        "--json",
        out,
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "VIOLATED (exact moments)" in text and "coverage (a finite search)" in text and "M/m:" in text
    d = json.loads(Path(out).read_text())["scaling"]
    assert d["violated"] and d["certificate"]["inside"] and d["violation"]["point"]["M"] == 8
    assert d["confirmation"]["measured"] == pytest.approx(0.95) and d["confirmation"][
        "bound"
    ] == pytest.approx(0.5)
    assert d["class_directions"] == ["M/m", "T", "1/eta_L", "d"]


def test_scaling_zero_says_the_box_only(claim_file, capsys):
    assert main(["adversary", "cli.false_mm", "--file", claim_file, "--budget", "3", "--scaling", "0"]) == 0
    assert "coverage: the box above only" in capsys.readouterr().out
