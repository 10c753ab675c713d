"""The box's size options (--dim, --num-workers, --max-delay, --K-max, --rounds) also cap the scaling search:
no point it evaluates exceeds them (the scaling JSON's ``searched`` lists every evaluated point), its start is
lowered into them, and a cap the scaling search cannot stay within (below the class's lower bound on that
size) is refused with one line naming the option, before any search runs."""

from __future__ import annotations

import importlib
import json

import pytest

from afltheory.adversary.generic import ScalePoint
from afltheory.adversary.scaling import Point, fit_limits, within_limits
from afltheory.cli import main

CLAIM_FILE = """
from afltheory.algorithms import FedAvg
from afltheory.claims import Assumptions, Claim, Delta, L, M, T, eta, eta_L, sigma_G, sigma_L
FALSE_MM = Claim(id="lim.false_mm", title="noise over M, not m",
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


def test_fit_limits_lowers_the_start_and_refuses_the_impossible():
    p = fit_limits(Point(), {"M": 3, "T": 50, "d": 4})  # d = 1 is already within 4
    assert (p.M, p.m, p.T, p.d, p.K, p.tau) == (3, 1, 50, 1, 1, 0)
    assert within_limits(p, {"M": 3, "T": 50}) and not within_limits(p.move("M/m"), {"M": 3})
    assert not within_limits(p.move("T"), {"T": 50}) and within_limits(p.move("T"), {"T": 100})
    assert fit_limits(Point(), None) == Point()  # no limits: the start unchanged
    q = fit_limits(ScalePoint(M=4, m=4), {"M": 2})  # m follows M down (m ≤ M)
    assert (q.M, q.m) == (2, 2)
    with pytest.raises(ValueError, match=r"limits\['tau'\]=-1: .*tau must be an integer ≥ 0"):
        fit_limits(Point(), {"tau": -1})
    with pytest.raises(ValueError, match=r"--num-workers=1: .*M must be an integer ≥ 2 — the claim's class"):
        fit_limits(ScalePoint(), {"M": 1}, {"M": "--num-workers"}, {"M": 2})
    with pytest.raises(ValueError, match=r"--rounds=2\.5"):
        fit_limits(Point(), {"T": 2.5}, {"T": "--rounds"})
    with pytest.raises(ValueError, match="'m' is not a capped size"):
        fit_limits(Point(), {"m": 1})


def test_builtin_scaling_never_exceeds_the_size_options(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["adversary", "thm2", "--budget", "16", "--scaling", "3", "--json", str(out)]
    caps = {"--num-workers": 3, "--dim": 2, "--rounds": 50, "--K-max": 2, "--max-delay": 1}
    assert main(argv + [str(x) for kv in caps.items() for x in kv]) in (0, 1)
    capsys.readouterr()
    d = json.loads(out.read_text())["scaling"]
    pts = d["searched"]
    assert len(pts) == d["evaluations"] > 0
    top = {f: max(p[f] for p in pts) for f in ("M", "d", "T", "K", "tau")}
    assert top["M"] <= 3 and top["d"] <= 2 and top["T"] <= 50 and top["K"] <= 2 and top["tau"] <= 1
    assert pts[0]["M"] == 3 and pts[0]["T"] == 50  # the start (M = 5, T = 200) lowered into the caps
    assert max(d["directions"]["M/m"]["sizes"]) <= 3 and max(d["directions"]["T"]["sizes"]) <= 50


def test_generic_scaling_never_exceeds_the_size_options(claim_file, tmp_path, capsys):
    # uncapped, this claim's scaling search finds its violation at M = 8 (test_generic_cli.py); M ≤ 4 keeps
    # the search below it: nothing beyond the cap is evaluated, so nothing there is found
    out = tmp_path / "r.json"
    argv = ["adversary", "lim.false_mm", "--file", claim_file, "--budget", "3", "--scaling", "6"]
    assert main(argv + ["--num-workers", "4", "--rounds", "40", "--json", str(out)]) == 0
    capsys.readouterr()
    d = json.loads(out.read_text())["scaling"]
    pts = d["searched"]
    assert pts and max(p["M"] for p in pts) <= 4 and max(p["T"] for p in pts) <= 40
    assert max(d["directions"]["M/m"]["sizes"]) == 4  # followed up to the cap, not past it
    assert d["violated"] is False


def test_impossible_cap_is_refused_before_any_search(claim_file, capsys, monkeypatch):
    generic = importlib.import_module("afltheory.adversary.generic")

    def no_search(*a, **k):
        raise AssertionError("a search started before the size caps were checked")

    monkeypatch.setattr(generic, "search_claim", no_search)
    monkeypatch.setattr(generic, "scale_claim", no_search)
    # the generic instances have M ≥ 2 workers and T ≥ 5 rounds: --num-workers 1 / --rounds 4 leave no point
    argv = ["adversary", "lim.false_mm", "--file", claim_file, "--budget", "3"]
    for opt, low in (("--num-workers", 2), ("--rounds", 5)):
        for scaling in ("5", "0"):  # with or without the scaling search
            assert main(argv + ["--scaling", scaling, opt, str(low - 1)]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and f"{opt}={low - 1}" in err[0] and f"at least {low}" in err[0], err
