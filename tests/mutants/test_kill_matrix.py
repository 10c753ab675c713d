"""Verdict power: the quick tier kills the mutation catalogue.

Default run: the kill-matrix machinery on cheap checks (a fast subset of mutant × check pairs that must kill,
the probe's soundness, the report and the CLI). Slow: every catalogued mutant is killed by the quick tier
(``afltheory check --quick --mutants``; ~10 min with 2 jobs). Checks are deterministic (seeded), so these
tests are too."""

from __future__ import annotations

import json

import pytest

from afltheory import mutants
from afltheory.mutants.run import kill_matrix, run_under, select_checks

#: a cheap killing check per mutant, from the measured kill matrix (docs/verdict_power.md); when a check is
#: reworked, re-measure (``afltheory check --quick --mutants``) and update
FAST_KILLS = {
    "afacd.eta_L_twice": "thm1",
    "afacs.memory_frozen": "thm1",
}


def test_fast_subset_is_killed():
    km = kill_matrix(list(FAST_KILLS), only=sorted(set(FAST_KILLS.values())))
    assert not km.baseline_failures(), km.baseline_failures()
    for mutant, check in FAST_KILLS.items():
        assert any(v.startswith(check + ".") for v in km.killed_by(mutant)), (
            f"{mutant} survives {check}: {km.runs[mutant][check]}"
        )
    assert km.score == 1.0 and not km.survivors


#: the compression and drift mutants: the checks that reach them, and a cheap killing pair each for the
#: default run (measured: docs/verdict_power.md, "Compression and drift mutants")
COMPRESSION_DRIFT = [
    "randk.no_rescale",
    "qsgd.max_norm",
    "channel.shared_stream",
    "ef.memory_unused",
    "diana.shift_frozen",
    "diana.shift_sign",
    "sim.drift_after",
    "sim.drift_sigma_q",
    "exact.drift_after",
    "exact.drift_sigma_q",
    "sim.drift_per_coordinate",
    "exact.drift_per_coordinate",
    "sim.drift_cov_as_scale",
    "exact.drift_cov_squared",
    "sim.drift_per_epoch",
    "exact.drift_per_epoch",
]
COMPRESSION_DRIFT_CHECKS = ["compression", "dynamic", "dynamic_mc", "dynamic_figure"]
#: (check function, mutant): the verdict it returns is ok on the correct code and not ok under the mutant
VERDICT_KILLS = [
    ("compression.check_gd_rate", "randk.no_rescale"),
    ("compression.check_variance_identity", "qsgd.max_norm"),
    ("compression.check_variance_identity", "channel.shared_stream"),
    ("compression.check_error_feedback", "ef.memory_unused"),
    ("compression.check_diana", "diana.shift_frozen"),
    ("compression.check_diana", "diana.shift_sign"),
    ("dynamic._mu_law", "exact.drift_sigma_q"),
    # the drift-scaling and bootstrap mutants (measured: afltheory check --quick --mutants NAME, catalogue4)
    ("dynamic._mu_law", "exact.drift_per_coordinate"),
    ("dynamic._mu_law", "exact.drift_cov_squared"),
    ("laws._drift", "sim.drift_per_coordinate"),
    ("laws._drift", "sim.drift_cov_as_scale"),
    ("dynamic._mu_law", "exact.drift_per_epoch"),  # the drift once per local epoch (catalogue5)
    ("calibration._slope", "stats.bootstrap_without_replacement"),
    ("calibration._slope", "stats.bootstrap_one_sided_tail"),
]
_BASE = {}


def _verdicts(fn_name, tmp, mutant=None):
    import importlib

    from afltheory.checks.registry import Context

    mod, fn = fn_name.split(".")
    f = getattr(importlib.import_module(f"paper_checks.{mod}"), fn)
    ctx = Context("quick", 0, str(tmp))
    if mutant is None:
        out = f(ctx)
    else:
        with mutants.injected(mutant):
            out = f(ctx)
    return {v.id: v.ok for v in (out if isinstance(out, list) else [out])}


@pytest.mark.parametrize("fn_name, mutant", VERDICT_KILLS)
def test_fast_subset_of_compression_and_drift_mutants_is_killed(fn_name, mutant, tmp_path):
    """One quick-tier verdict function (not the whole check) per compression/drift mutant, ~1 s each; the
    drift mutants that only Monte Carlo verdicts kill (``dynamic_mc``) are in the slow test below."""
    if fn_name not in _BASE:
        _BASE[fn_name] = _verdicts(fn_name, tmp_path)
    base, mut = _BASE[fn_name], _verdicts(fn_name, tmp_path, mutant)
    assert any(base.values())
    assert any(ok and not mut[v] for v, ok in base.items()), (mutant, base, mut)


@pytest.mark.slow
def test_compression_and_drift_mutants_are_killed():
    """The sixteen compression/drift mutants under the checks that reach them (quick tier, ~2 min alone)."""
    km = kill_matrix(COMPRESSION_DRIFT, only=COMPRESSION_DRIFT_CHECKS)
    assert not km.baseline_failures(), km.baseline_failures()
    assert not km.survivors, km.summary()


def test_drift_per_epoch_faults_scale_the_drift_by_the_rounds_epochs():
    """The drift-per-epoch faults: E = max_k E_k of Dynamic FedAvg (√E on the increments, E·Q on the
    covariance), 1 for a rule without epochs; the exact engine's Q under the mutant is E·Q (by hand)."""
    import numpy as np

    from afltheory.algorithms import DynamicFedAvg, FedAvg
    from afltheory.exact.drift import engine_drift
    from afltheory.mutants import faults as F

    Q = np.eye(3) / 3
    alg = DynamicFedAvg(mu=0.1, epochs=(1, 3, 2))
    assert F.drift_per_epoch_increments(alg) == pytest.approx(np.sqrt(3))
    assert F.drift_per_epoch_increments(DynamicFedAvg(mu=0.1, epochs=2)) == pytest.approx(np.sqrt(2))
    assert F.drift_per_epoch_increments(FedAvg(1.0, 0.1)) == 1.0
    np.testing.assert_array_equal(F.drift_per_epoch_cov(Q, alg), 3 * Q)
    assert engine_drift(Q, alg)[0] is Q  # the default path: unchanged
    with mutants.injected("exact.drift_per_epoch"):
        np.testing.assert_array_equal(engine_drift(Q, alg)[0], 3 * Q)


def test_probe_is_sound_for_a_mutant_the_check_never_reaches():
    """yu runs FedAvg only: the probe says FedBuff is never reached, and running yu under the FedBuff mutant
    anyway gives exactly the correct code's verdicts (so skipping such pairs loses nothing)."""
    base = run_under(None, "yu")
    assert "afltheory.algorithms.server.FedAvg" in base["seen"] and "sim.noise" in base["seen"]
    m = mutants.get("fedbuff.no_staleness")
    assert not m.exercised_by(base["seen"])
    assert run_under(m.name, "yu")["ok"] == base["ok"]
    assert mutants.get("fedavg.no_K").exercised_by(base["seen"])


def test_kill_matrix_report_and_cli(tmp_path):
    from afltheory.cli import main

    out = tmp_path / "rep"
    rc = main(["check", "--quick", "--only", "yu", "--out", str(out), "--mutants", "fedbuff.no_staleness"])
    assert rc == 1  # a surviving mutant fails the run like a failing verdict
    data = json.loads((out / "kill_matrix.json").read_text())
    assert data["total"] == 1 and data["killed"] == 0 and data["checks"] == ["yu"]
    assert data["mutants"][0]["name"] == "fedbuff.no_staleness" and not data["mutants"][0]["killed_by"]
    assert data["runs"]["fedbuff.no_staleness"]["yu"]["skipped"]  # never reached: not run
    assert data["check_kills"]["yu"] == []
    md = (out / "report.md").read_text()
    assert "mutation score: 0/1" in md and "Checks that kill no mutant" in md and "`yu`" in md
    assert "| kills (mutants) |" in md and md.count("| none |") >= 2  # each verdict row lists its kills
    assert "Verdict power: mutation kill matrix" in (out / "report.html").read_text()


def test_cli_lists_the_catalogue(capsys):
    from afltheory.cli import main

    assert main(["check", "--list-mutants"]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in mutants.CATALOGUE)


@pytest.mark.slow
def test_quick_tier_kills_every_catalogued_mutant():
    """The whole catalogue under every quick-tier check (2 processes): mutation score 100 %, by verdicts (a
    crash is not a kill that counts here), each mutant by two verdicts or a stated reason (issue 30) — or, for
    a bug no check can see by construction (a looser bound), by its named tests (issue 32)."""
    km = kill_matrix(only=select_checks(), jobs=2)
    assert not km.baseline_failures(), km.baseline_failures()
    assert not km.survivors, km.summary()
    assert all(km.killed_by_verdict(m) or km.killed_by_tests(m) for m in km.mutants), km.summary()
    assert all("no stated reason" not in why for why in km.weak_kills().values()), km.summary()


def test_flips_shared_with_an_equivalent_control_are_not_kills():
    """A verdict that flips under a control (here: a check crashing on any rule the exact engine refuses) does
    not count as killing the rule mutants the exact engine also refuses; it still kills the others."""
    from afltheory.mutants.run import KillMatrix

    ok = {"a.exact": True, "a.mc": True}
    flip = {"ok": {"a.exact": False, "a.mc": True}, "error": None}
    same = {"ok": dict(ok), "error": None}
    runs = {
        "afacd.one_arrival": {"a": flip},  # overrides aggregate: refused by the exact engine
        "afacd.eta_missing": {"a": flip},  # declarative hook: the exact engine runs it
        "control.afacd_subclass": {"a": flip},
    }
    km = KillMatrix(
        ["a"],
        ["afacd.one_arrival", "afacd.eta_missing"],
        {"a": {"ok": ok, "error": None}},
        runs,
        controls=["control.afacd_subclass"],
    )
    assert km.killed_by("afacd.one_arrival") == [] and km.suspect_kills("afacd.one_arrival") == ["a.exact"]
    assert km.killed_by("afacd.eta_missing") == ["a.exact"]
    assert km.survivors == ["afacd.one_arrival"]
    assert km.false_kills() == {"control.afacd_subclass": ["a.exact"]}
    runs["control.afacd_subclass"]["a"] = same
    assert km.killed_by("afacd.one_arrival") == ["a.exact"] and km.score == 1.0


def test_a_check_that_refuses_a_rule_gives_no_verdict_on_it():
    """A check whose backend raises ``UnsupportedRule`` (it cannot represent the mutated rule and says so) has
    no verdict on that mutant: not a kill, not a crash, and no artefact under an equivalent control."""
    from afltheory.mutants.run import KillMatrix

    ok = {"a.x": True}
    refused = {"ok": {"a": False}, "error": "Traceback ... UnsupportedRule", "refused": True}
    crashed = {"ok": {"a": False}, "error": "Traceback ... ValueError", "refused": False}
    runs = {
        "afacd.one_arrival": {"a": refused},
        "afacd.first_twice": {"a": crashed},
        "control.afacd_subclass": {"a": refused},
    }
    km = KillMatrix(
        ["a"],
        ["afacd.one_arrival", "afacd.first_twice"],
        {"a": {"ok": ok, "error": None}},
        runs,
        controls=["control.afacd_subclass"],
    )
    assert km.killed_by("afacd.one_arrival") == [] and km.crashed("afacd.one_arrival") == []
    assert km.killed_by("afacd.first_twice") == ["a.x"] and km.crashed("afacd.first_twice") == ["a"]
    assert km.false_kills() == {}
    assert km._cell("afacd.one_arrival", "a") == "refused"


def test_run_check_marks_an_unsupported_rule_as_refused(monkeypatch, tmp_path):
    """``run_check`` records a check that crashed with ``UnsupportedRule`` as refused (any other exception:
    a crash)."""
    from afltheory.algorithms import UnsupportedRule
    from afltheory.checks import registry, runner

    def refuses(ctx):
        raise UnsupportedRule("the exact engine cannot represent this rule")

    def breaks(ctx):
        raise ValueError("a bug")

    for name, f, want in (("t_refuses", refuses, True), ("t_breaks", breaks, False)):
        monkeypatch.setitem(
            registry.CHECKS,
            name,
            registry.CheckSpec(id=name, title=name, reference="-", func=f, module=__name__),
        )
        res = runner.run_check(name, out=str(tmp_path))
        assert res["error"] and res["refused"] is want
