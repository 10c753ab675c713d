"""Issue 30 (verdict power, round 3): statistics that check themselves, the NaN-safe aggregation pinned on
``compression.error_feedback``, the kill matrix's verdict/crash split, and targeted kills of the new
agreement / law checks (each a single (mutant, check) pair, deterministic: fixed seeds)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from afltheory.checks import Context, Verdict


def _verdict(**kw):
    base = dict(id="x.y", claim="c", reference="r", measured=1.0, theoretical=2.0, passed=True, relation="<=")
    base.update(kw)
    return Verdict(**base)


# ------------------------------------------------------------------------------- UCB >= mean invariant
def test_verdict_refuses_a_ucb_below_its_mean():
    with pytest.raises(ValueError, match="below measured"):
        _verdict(measured=1.0, ci=(None, 0.9))
    with pytest.raises(ValueError, match="below measured"):
        _verdict(measured=1.0, ci=(0.5, 0.99))


def test_verdict_accepts_ucb_at_or_above_mean_and_non_numeric_cases():
    assert _verdict(measured=1.0, ci=(None, 1.0)).ci == (None, 1.0)  # exact: UCB = mean
    assert _verdict(measured=1.0, ci=(None, 1.0 - 1e-13)).ok  # rounding tolerated
    assert _verdict(measured=1.0, ci=(None, math.inf)).ok  # diverged replicate
    assert _verdict(measured="n/a", ci=(None, 0.5)).ok  # text: nothing to compare
    assert _verdict(measured=1.0, ci=(0.2, None)).ok  # a lower bound only
    # the JSON round trip still works (from_dict reconstructs through the same validation)
    v = _verdict(measured=1.0, ci=(None, 1.5))
    assert Verdict.from_json(v.to_json()) == v


# ------------------------------------------------------------------------------- NaN-safe aggregation
def test_finite_min_max_fail_on_nan_and_inf():
    from paper_checks._robust import finite_max, finite_min

    assert min([2.0, float("nan")]) == 2.0  # the defect: Python's min drops a NaN that is not first
    assert finite_min([2.0, float("nan")]) == -math.inf
    assert finite_min([2.0, math.inf]) == -math.inf
    assert finite_max([0.1, float("nan")]) == math.inf
    assert finite_min([2.0, 3.0]) == 2.0 and finite_max([2.0, 3.0]) == 3.0
    with pytest.raises(ValueError, match="empty"):
        finite_min([])


@pytest.mark.parametrize("bad", [float("nan"), math.inf])
def test_error_feedback_fails_when_a_run_diverges(monkeypatch, tmp_path, bad):
    """Pinned defect (issue 30): with one error-feedback run diverged (NaN or inf floor) the verdict used to
    aggregate its slopes with ``min`` (dropping the NaN that is not first) and passed on the other slope."""
    import paper_checks.compression as C
    from afltheory.compression import ErrorFeedback, Sign

    def fake_sim(p, algo, beh, T, R, seed):
        comp = algo.compressor
        g = algo.eta_L
        if isinstance(comp, ErrorFeedback):
            floor = bad if isinstance(comp.compressor, Sign) else g**2  # Sign+EF diverged; TopK+EF: slope 2
        else:
            floor = 1.0  # no EF: γ-independent floor
        return SimpleNamespace(grad_norm_sq=np.full((1, T + 1), floor))

    monkeypatch.setattr(C, "sim", fake_sim)
    v = C.check_error_feedback(Context(out=str(tmp_path)))
    assert not v.passed and v.measured == -math.inf

    # the same runs without the divergence pass (the fake is a faithful γ² law)
    def healthy(p, algo, beh, T, R, seed):
        ef = isinstance(algo.compressor, ErrorFeedback)
        return SimpleNamespace(grad_norm_sq=np.full((1, T + 1), algo.eta_L**2 if ef else 1.0))

    monkeypatch.setattr(C, "sim", healthy)
    assert C.check_error_feedback(Context(out=str(tmp_path))).ok


def test_law_statistics_never_nan():
    from paper_checks.laws import gaussian_law_z, zscore

    X = np.zeros((100, 3))  # a noise-free sample against a noisy law
    z = gaussian_law_z(X, np.zeros(3), np.ones(3))
    assert np.all(~np.isnan(z)) and np.max(np.abs(z)) == np.inf
    assert zscore(0.0, 0.0) == 0.0 and zscore(1.0, 0.0) == np.inf and zscore(1.0, 0.5) == 2.0


def test_binomial_interval_brackets_the_mean():
    from paper_checks.calibration import binomial_interval

    lo, hi = binomial_interval(4000, 0.01)
    assert lo < 40 < hi and (lo, hi) == (21, 63)


# ------------------------------------------------------------------------- kill matrix: verdict vs crash
def test_kill_matrix_separates_verdict_kills_from_crash_kills(monkeypatch):
    from afltheory.mutants import run
    from afltheory.mutants.run import KillMatrix

    monkeypatch.setitem(run.ONE_VERDICT_REASONS, "anarchy.event_no_wait", "only the wall clock sees it")
    ok = {"a.x": True, "a.y": True}
    base = {"a": {"ok": ok, "error": None}, "b": {"ok": {"b.z": True}, "error": None}}
    judged = {"ok": {"a.x": False, "a.y": False}, "error": None}
    crash = {"ok": {}, "error": "Traceback ... ValueError", "refused": False}
    same_b = {"ok": {"b.z": True}, "error": None}
    runs = {
        "afacd.eta_missing": {"a": judged, "b": same_b},
        "afacd.sum_K": {"a": crash, "b": same_b},
        "anarchy.event_no_wait": {"a": {"ok": {"a.x": False, "a.y": True}, "error": None}, "b": same_b},
    }
    km = KillMatrix(["a", "b"], list(runs), base, runs)
    assert km.killed_by_verdict("afacd.eta_missing") == ["a.x", "a.y"]
    assert km.killed_by_crash("afacd.sum_K") == ["a.x", "a.y"] and km.killed_by_verdict("afacd.sum_K") == []
    assert km.score == 1.0 and km.verdict_score == pytest.approx(2 / 3)
    weak = km.weak_kills()
    assert "afacd.eta_missing" not in weak
    assert weak["afacd.sum_K"].startswith("0 verdict kills, 2 by crash only: no stated reason")
    assert weak["anarchy.event_no_wait"] == "1 verdict kill: only the wall clock sees it"
    s = km.summary()
    assert "killed only by a crash (no verdict judged them): afacd.sum_K" in s
    d = km.to_dict()
    m = {x["name"]: x for x in d["mutants"]}
    assert m["afacd.sum_K"]["killed_by_crash"] == ["a.x", "a.y"]
    assert d["verdict_score"] == pytest.approx(2 / 3)


# ------------------------------------------------------------------------------ targeted kills (fast)
@pytest.mark.parametrize(
    "mutant, check, verdicts",
    [
        ("sim.K_max", "laws", {"laws.collapsed_update", "laws.stepwise_update"}),
        (
            "sim.noise_per_coordinate",
            "laws",
            {"laws.collapsed_update", "laws.stepwise_update", "laws.minibatch"},
        ),
        ("randk.no_rescale", "laws", {"laws.compressors"}),
        ("ef.memory_unused", "laws", {"laws.error_feedback"}),
        ("exact.noise_dropped", "agreement", {"agreement.stein", "agreement.stepwise_mc"}),
        ("afacs.wrong_slot", "agreement", {"agreement.simulate_vs_reference"}),
        ("scaffold.sign", "agreement", {"agreement.simulate_vs_reference"}),
        ("exact.noise_per_coordinate", "tightness", {"tightness.server_terms"}),
        ("sim.drift_sigma_q", "laws", {"laws.drift_increments"}),
        ("exact.round_late", "agreement", {"agreement.exact_vs_reference", "agreement.stepwise_mc"}),
    ],
)
def test_new_checks_kill_their_targets(mutant, check, verdicts):
    from afltheory.mutants.run import run_under

    base = run_under(None, check)
    assert base["error"] is None and all(base["ok"].values()), base["ok"]
    res = run_under(mutant, check)
    assert res["error"] is None, res["error"]  # killed by a verdict, not by a crash
    assert verdicts <= {v for v, ok in res["ok"].items() if not ok}, res["ok"]


def test_equivalent_controls_do_not_flip_the_agreement_check():
    from afltheory.mutants.run import run_under

    for ctl in ("control.afacd_subclass", "control.afacs_subclass"):
        res = run_under(ctl, "agreement")
        assert res["error"] is None and all(res["ok"].values()), (ctl, res["ok"])


def test_exact_vs_reference_is_vacuous_when_the_exact_engine_refuses_every_rule(monkeypatch, tmp_path):
    """No rule representable: the claim holds vacuously and its control (the same "every compared rule within
    tol" statement for the wrong reading's loop) is judged by the same criterion, and fails."""
    import paper_checks.agreement as A

    def refuse(*a, **k):
        raise TypeError("UnsupportedRule")

    monkeypatch.setattr(A, "moments", refuse)
    v = {x.id: x for x in A._reference(Context(out=str(tmp_path)))}["agreement.exact_vs_reference"]
    assert v.measured == "n/a" and v.passed and v.inside_conditions is False
    assert v.negative_control.failed_as_required and v.negative_control.measured > 1e-9 and v.ok


# ------------------------------------------------------------------ the four mutants of issue 30, pinned
def test_ef_residual_sign_is_the_flipped_residual():
    """``ef.residual_sign`` equals a hand computation: e_1 = C(G_0) − G_0, second message C(G_1 + e_1)."""
    from afltheory import mutants
    from afltheory.compression import Channel, ErrorFeedback, TopK

    rng = np.random.default_rng(3)
    G0, G1 = rng.standard_normal((1, 2, 5)), rng.standard_normal((1, 2, 5))
    w = np.arange(2)[None]

    def topk(v, k=2):
        out = np.zeros_like(v)
        idx = np.argsort(-np.abs(v), axis=-1, kind="stable")[..., :k]
        np.put_along_axis(out, idx, np.take_along_axis(v, idx, axis=-1), axis=-1)
        return out

    with mutants.injected("ef.residual_sign"):
        ch = Channel(ErrorFeedback(TopK(2)), 5, 2, 1, 0)
        _, _, state = ch.send(ch.init(), G0.copy(), w, 1)
        s1, _, _ = ch.send(state, G1.copy(), w, 2)
    np.testing.assert_allclose(s1, topk(G1 + (topk(G0) - G0)), rtol=0, atol=1e-15)


def test_sampling_with_replacement_draws_iid_indices():
    """``sampling.with_replacement`` equals the mean of B offsets at ``rng.integers(0, n, (draws, B))`` (same
    stream), for FiniteSumNoise and for Dynamic FedAvg's AgentSampleNoise (per-agent N_k)."""
    from afltheory import mutants
    from afltheory.problems import FiniteSumNoise
    from afltheory.problems.drifting import AgentSampleNoise

    rng = np.random.default_rng(0)
    o = rng.standard_normal((2, 6, 3))
    o -= o.mean(axis=1, keepdims=True)
    noise = FiniteSumNoise(o, 4)
    workers = np.array([[0, 1], [1, 0]])
    with mutants.injected("sampling.with_replacement"):
        got = noise.sample(np.random.default_rng(7), workers, 3)
    idx = np.random.default_rng(7).integers(0, 6, size=(4, 4))
    want = noise.offsets[workers.reshape(-1)[:, None], idx].mean(axis=1).reshape(2, 2, 3)
    np.testing.assert_array_equal(got, want)
    offs = [o[0], o[1][:5] - o[1][:5].mean(axis=0)]
    agent = AgentSampleNoise(offs, [3, 2])
    w = np.array([0, 1, 1])
    with mutants.injected("sampling.with_replacement"):
        got = agent.sample(np.random.default_rng(9), w, 3)
    idx = np.random.default_rng(9).integers(0, np.array([6, 5, 5])[:, None], size=(3, 3))
    pairs = enumerate(zip(w, [3, 2, 2], strict=True))
    want = [agent.offsets[k][idx[r, :b]].mean(axis=0) for r, (k, b) in pairs]
    np.testing.assert_allclose(got, np.stack(want), rtol=0, atol=1e-15)
    assert not np.allclose(agent.sample(np.random.default_rng(9), w, 3), got)  # the correct sampler differs


def test_mocha_omega_not_inverted_keeps_sigma():
    """``mocha.omega_not_inverted``: after one round Ω is the Σ of ``omega_step`` on the same W."""
    from afltheory import mutants
    from afltheory.mtl import mocha, omega_step, synthetic_tasks

    m = 4
    p = synthetic_tasks(m=m, d=3, n=10, lam1=0.5, lam2=0.1, Omega=np.eye(m) - np.ones((m, m)) / m, seed=1)
    with mutants.injected("mocha.omega_not_inverted"):
        res = mocha(p, 1, seed=0, local_passes=5)
    Omega, Sigma = omega_step(p.primal_point(res.alpha), 1e-4)
    np.testing.assert_allclose(res.Omega, Sigma, rtol=1e-12, atol=1e-14)
    assert np.max(np.abs(mocha(p, 1, seed=0, local_passes=5).Omega - Omega)) < 1e-9 * np.max(np.abs(Omega))


def test_stats_ucb_normal_quantile_is_the_z_bound():
    """``stats.ucb_normal_quantile``: the UCB is mean + z_level · sd/√R."""
    from scipy import stats as st

    from afltheory import mutants
    from afltheory.analysis import upper_confidence_bound

    s = np.array([1.0, 2.5, 0.5, 3.0, 1.7])
    want = s.mean() + st.norm.ppf(0.99) * s.std(ddof=1) / np.sqrt(s.size)
    with mutants.injected("stats.ucb_normal_quantile"):
        assert upper_confidence_bound(s, 0.99) == pytest.approx(want, rel=1e-14)
    assert upper_confidence_bound(s, 0.99) > want  # Student's t is wider


@pytest.mark.parametrize(
    "mutant, check, verdicts",
    [
        ("ef.residual_sign", "laws", {"laws.error_feedback"}),
        ("ef.residual_sign", "agreement", {"agreement.ef_reference"}),
        ("sampling.with_replacement", "laws", {"laws.minibatch", "laws.agent_minibatch"}),
        ("mocha.omega_not_inverted", "laws", {"laws.mocha_omega"}),
        (
            "stats.ucb_normal_quantile",
            "calibration",
            {"calibration.ucb_coverage", "calibration.bound_decision"},
        ),
    ],
)
def test_new_mutants_are_killed_by_verdicts(mutant, check, verdicts):
    from afltheory.mutants.run import run_under

    res = run_under(mutant, check)
    assert res["error"] is None, res["error"]
    assert verdicts <= {v for v, ok in res["ok"].items() if not ok}, res["ok"]
