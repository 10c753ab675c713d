"""The kill matrix counts what the test suite kills (issue 32 item 4): a mutant names the tests that kill it
(``Mutant.tests``), ``suite_kills`` runs each named test in its own pytest process on the correct code and
under the mutant (``AFLTHEORY_MUTANT``, injected for the session by tests/conftest.py), and the matrix gains
a "killed by tests" column. Also the step-by-step noise mutant pinned against the exact moments and by
equivalences. Deterministic (fixed seeds) except the one Monte Carlo comparison, whose confidence is stated
there."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from afltheory import mutants, simulate
from afltheory.algorithms import AFACD
from afltheory.anarchy import Behaviour, ConstantSteps, NoDelay, UniformArrivals
from afltheory.exact import moments, zscores
from afltheory.mutants.run import KillMatrix, run_test, suite_kills
from afltheory.problems import HeterogeneousQuadratic

TEST_ONLY = ["theorem2.floor_looser", "theorem2.delay_tighter", "theorem3.drift_looser"]


def _sim(*a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate(*a, **kw)


def _noisy(sigma_L=1.0):
    return HeterogeneousQuadratic(dim=6, num_workers=4, L=1.0, mu=0.2, sigma_L=sigma_L, sigma_G=0.5, seed=0)


def _beh(K):
    return Behaviour(UniformArrivals(4), delays=NoDelay(), local_steps=ConstantSteps(K))


# ------------------------------------------------------------------------------------------ the catalogue
def test_every_named_test_exists_and_the_bound_mutants_name_one():
    for m in mutants.CATALOGUE.values():
        for t in m.tests:
            path, _, fn = t.partition("::")
            src = open(path, encoding="utf-8").read() if not path.startswith("/") else ""
            assert fn and f"def {fn}(" in src, t
    assert all(mutants.get(n).tests and mutants.get(n).category == "bound terms" for n in TEST_ONLY)
    assert "only a test" in mutants.get("theorem2.floor_looser").description


# ----------------------------------------------------------------------------- the bootstrap slope
def test_bootstrap_slope_ci_is_the_central_percentile_interval_of_with_replacement_draws():
    """``bootstrap_slope``'s CI at level ℓ is the ((1 − ℓ)/2, (1 + ℓ)/2) quantiles of its bootstrap slopes
    (``SlopeFit.boot``), and those come from resamples drawn *with* replacement: on 3 points × 5 replicates,
    at least one of 400 resamples repeats a replicate (a permutation-only draw would give the point estimate
    400 times; the chance that 400 with-replacement draws of 5 indices are all permutations is
    (5!/5⁵)^400 < 1e-600). Deterministic (seed 4). Kills ``stats.bootstrap_one_sided_tail`` (the quantiles
    (1 − ℓ, ℓ)) and ``stats.bootstrap_without_replacement``."""
    from afltheory.analysis import bootstrap_slope

    rng = np.random.default_rng(4)
    x = np.array([1.0, 2.0, 4.0])
    samples = [xi**-0.5 * rng.lognormal(0.0, 0.3, 5) for xi in x]
    for level in (0.95, 0.9, 0.5):
        f = bootstrap_slope(x, samples, n_boot=400, level=level, seed=4)
        lo, hi = np.quantile(f.boot[:, 0], [(1 - level) / 2, (1 + level) / 2])
        assert f.ci == (pytest.approx(lo, abs=1e-15), pytest.approx(hi, abs=1e-15)), level
    assert np.ptp(f.boot[:, 0]) > 1e-3 and f.ci[1] > f.ci[0]


# ------------------------------------------------------------------------------- the claims path
@pytest.mark.parametrize("name", TEST_ONLY)
def test_bound_term_mutants_reach_the_claims_path(name):
    """A bound-term mutant (fault point ``theory.terms``) reaches the claims path (``Claim.terms``, so
    ``claims.verify``'s verdicts, the generic adversary and the PEP claims) exactly as it reaches the theory
    module's ``bound``: the mis-transcribed term scaled once by the mutant's factor, the other terms
    unchanged, and verify's bound equal to ``bound`` under the mutant. Deterministic (seed 0)."""
    import afltheory as aft
    from afltheory.claims import verify
    from afltheory.claims.paper import THEOREM2, THEOREM3
    from afltheory.theory import theorem2, theorem3

    fault = next(iter(mutants.get(name).faults.values()))
    claim, mod = (THEOREM2, theorem2) if fault.module == "theorem2" else (THEOREM3, theorem3)
    p = HeterogeneousQuadratic(dim=4, num_workers=6, L=1.0, mu=0.1, sigma_L=0.5, sigma_G=0.5, seed=0)
    beh = Behaviour(UniformArrivals(3), delays=aft.anarchy.UniformDelay(2), local_steps=ConstantSteps(2))
    alg = AFACD(eta=1.0, eta_L=0.02)
    stats = {str(x): 1.5 for e in mod.TERM_EXPRS.values() for x in e.free_symbols}

    def both():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = verify(claim, p, beh, rounds=40, replicates=2, algorithm=alg)
            tr = simulate(p, alg, beh, rounds=40, replicates=2, seed=0)
        b = mod.bound(tr.schedule, p.constants, eta=1.0, eta_L=0.02, f0=float(p.value(tr.x0)), scope="ignore")
        return claim.terms(stats), v.theoretical, float(b.mean())

    terms, v_ok, b_ok = both()
    with mutants.injected(name):
        mterms, v_mut, b_mut = both()
        assert claim.expr() != sum(mod.TERM_EXPRS.values())
    for k in terms:
        want = terms[k] * float(fault.factor) if k == fault.term else terms[k]
        assert mterms[k] == pytest.approx(want, rel=1e-14), k
    assert v_ok == pytest.approx(b_ok, rel=1e-12) and v_mut == pytest.approx(b_mut, rel=1e-12)
    assert v_mut != pytest.approx(v_ok, rel=1e-9)


# ------------------------------------------------------------------------------- the step-by-step noise
def test_stepwise_noise_sum_has_the_variance_of_K_independent_draws():
    """simulate's step-by-step path (collapse=False, K = 4 local steps, σ_L = 2) against the exact moments:
    |z| < 5 at every round 1..6 (4000 replicates, seed 11: a false alarm over 6 rounds has probability
    < 4e-6). Kills ``sim.step_noise_reused`` (the K-step noise sum with K² instead of K times one draw's
    variance)."""
    p, beh, alg = _noisy(2.0), _beh(4), AFACD(1.0, 0.3)  # noise-dominated: under the mutant z reaches ~19
    ex = moments(p, alg, beh, 6)
    tr = _sim(p, alg, beh, rounds=6, replicates=4000, seed=11, collapse=False)
    assert np.all(np.abs(zscores(tr, ex)[1:]) < 5)


def test_step_noise_reused_changes_only_the_stepwise_path_with_K_at_least_2():
    p, alg = _noisy(), AFACD(1.0, 0.1)
    kw = dict(
        rounds=5, replicates=3, seed=2, fast=False
    )  # under a sim.* fault simulate runs the reference path
    ref = {
        (K, c): _sim(p, alg, _beh(K), collapse=c, **kw).grad_norm_sq for K in (1, 3) for c in (True, False)
    }
    quiet = _sim(_noisy(0.0), alg, _beh(3), collapse=False, **kw).grad_norm_sq
    with mutants.injected("sim.step_noise_reused"):
        mut = {k: _sim(p, alg, _beh(k[0]), collapse=k[1], **kw).grad_norm_sq for k in ref}
        mut_quiet = _sim(_noisy(0.0), alg, _beh(3), collapse=False, **kw).grad_norm_sq
    np.testing.assert_array_equal(mut[(1, False)], ref[(1, False)])  # one step: nothing to reuse
    np.testing.assert_array_equal(mut[(3, True)], ref[(3, True)])  # the collapsed path is untouched
    np.testing.assert_array_equal(mut_quiet, quiet)  # σ_L = 0: no noise to reuse
    assert not np.allclose(mut[(3, False)], ref[(3, False)])


# ---------------------------------------------------------------------------------- the tests column
def test_a_named_test_passes_on_correct_code_and_fails_under_its_mutant():
    """Two pytest processes: theorem3's hand-derived terms pass on the correct code, fail under the looser
    transcription (which every numeric check passes by construction)."""
    res = suite_kills(["theorem3.drift_looser"])
    ((t, r),) = [(t, r) for t, r in res["theorem3.drift_looser"].items() if "test_bound_terms" in t]
    assert t.endswith("::test_theorem3_terms_hand")
    assert r["baseline"]["passed"] and r["mutant"]["failed"] and r["killed"], r
    assert "Expected" in r["mutant"]["tail"]


def test_an_unknown_test_is_neither_pass_nor_failure_and_an_unknown_mutant_is_refused():
    r = run_test("tests/mutants/test_killed_by_tests.py::no_such_test")
    assert not r["passed"] and not r["failed"] and r["rc"] not in (0, 1)
    with pytest.raises(ValueError, match="not catalogued"):
        run_test("tests/theory/test_bound_terms.py::test_theorem3_terms_hand", "no.such_mutant")


def _matrix(test_runs):
    ok = {"ok": {"c.v": True}, "error": None, "elapsed": 0.0}
    names = ["theorem2.floor_looser", "afacd.eta_L_twice"]
    runs = {
        "theorem2.floor_looser": {"c": dict(ok)},
        "afacd.eta_L_twice": {"c": {"ok": {"c.v": False}, "error": None, "elapsed": 0.0}},
    }
    return KillMatrix(["c"], names, {"c": ok}, runs, test_runs=test_runs)


def test_the_matrix_reports_kills_by_tests(tmp_path):
    t = "tests/theory/test_bound_terms.py::test_theorem2_terms_hand"
    run = {"baseline": {"passed": True}, "mutant": {"failed": True}, "killed": True}
    km = _matrix({"theorem2.floor_looser": {t: run}})
    assert km.killed_by("theorem2.floor_looser") == [] and km.killed_by_tests("theorem2.floor_looser") == [t]
    assert km.survivors == [] and km.score == 1.0 and km.verdict_score == 0.5
    assert km.killed_only_by_tests == ["theorem2.floor_looser"]
    assert "killed only by named tests" in km.summary()
    assert "named tests" in km.weak_kills()["theorem2.floor_looser"]
    md = km.to_markdown()
    assert "| killed by tests | killed |" in md and "`test_theorem2_terms_hand` | yes |" in md
    assert "<th>killed by tests</th>" in km.to_html()
    back = KillMatrix.from_json(km.write_json(str(tmp_path / "km.json")))
    assert back.killed_by_tests("theorem2.floor_looser") == [t] and not back.survivors
    # not run: a survivor, and the cell says so
    km0 = _matrix({})
    assert km0.survivors == ["theorem2.floor_looser"] and "| not run | **NO** |" in km0.to_markdown()
    assert "| — | yes |" in km0.to_markdown()  # afacd.eta_L_twice names no test


@pytest.mark.slow
def test_every_named_test_kills_its_mutant():
    """The whole "killed by tests" column: every catalogued mutant's named tests pass on the correct code and
    at least one fails under the mutant."""
    res = suite_kills(jobs=2)
    assert set(res) == {m for m in mutants.CATALOGUE if mutants.get(m).tests}
    for m, runs in res.items():
        assert all(r["baseline"]["passed"] for r in runs.values()), (m, runs)
        assert any(r["killed"] for r in runs.values()), (m, runs)


def test_a_mutant_killed_only_by_tests_is_not_a_crash_kill():
    t = "tests/theory/test_bound_terms.py::test_theorem2_terms_hand"
    km = _matrix({"theorem2.floor_looser": {t: {"killed": True}}})
    assert "killed only by a crash" not in km.summary()


def test_a_test_that_injects_a_mutant_itself_is_no_judgement():
    """Under the session's mutant a test calling ``mutants.injected`` fails on the nesting guard: no kill."""
    r = run_test(
        "tests/mutants/test_fault_points.py::test_a_member_and_its_name_reach_the_same_fault",
        "theorem3.drift_looser",
    )
    assert r["rc"] == 1 and not r["failed"] and not r["passed"]


def test_mocha_omega_is_the_inverse_of_sigma():
    """After one MOCHA round its Ω is Σ⁻¹ for the Σ of ``omega_step`` on the round's W (Ω Σ = I to 1e-8);
    kills ``mocha.omega_not_inverted`` (Ω = Σ, so Ω Σ = Σ² ≠ I) run as the session's mutant."""
    from afltheory.mtl import mocha, omega_step, synthetic_tasks

    m = 4
    p = synthetic_tasks(m=m, d=3, n=10, lam1=0.5, lam2=0.1, Omega=np.eye(m) - np.ones((m, m)) / m, seed=1)
    res = mocha(p, 1, seed=0, local_passes=5)
    _, Sigma = omega_step(p.primal_point(res.alpha), 1e-4)
    np.testing.assert_allclose(res.Omega @ Sigma, np.eye(m), atol=1e-8)
