"""Fuzz the public entry points test_fuzz.py does not reach (issue 19): theory helpers, component-taking
constructors (worker rules, compute times, Replay, Schedule, compressors, adversary classes, noise models),
datasets (partitions, federate, IDX/CIFAR/Shakespeare readers on crafted small files — no downloads), sweep
specs (crafted TOML), ``exact.moments`` arguments, analysis functions and plots (Agg, ``tmp_path``).

Each call must either raise a ValueError/TypeError whose message names a parameter, or return a result
without NaN — never a bare internal exception (AttributeError, IndexError, ZeroDivisionError, OverflowError,
…), never a hang (every call runs under a 20 s deadline, ``_harness.deadline``) and never a huge allocation
(sizes are small or refused by ``afltheory._validation.MAX_ALLOC_BYTES``, lowered to 64 MiB here).

Confidence: the default run draws a fixed, derandomized set of examples (profile ``ci``, tests/conftest.py):
``EXAMPLES`` per entry point (fewer for plots and sweeps), the same examples on every run, so a failure is a
reproducible bug, never chance. A pass says nothing about inputs outside that set; the long run
(``pytest -m slow tests/fuzz``, ``SLOW_EXAMPLES`` per entry point) widens it."""

from __future__ import annotations

import inspect
import io
import json
import math
import pickle
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from afltheory import algorithms as al
from afltheory import analysis as an_
from afltheory import anarchy as an
from afltheory import compression as co
from afltheory import exact, mtl, plots
from afltheory import problems as pr
from afltheory.adversary import (
    AssumptionClass,
    CovarianceNoise,
    PmfDelay,
    PmfSteps,
    Structure,
    biased_inclusion,
    load_instance,
)
from afltheory.checks import schedule_statistics, verdicts_from_json
from afltheory.datasets import federated, loaders, partitions
from afltheory.sweep import spec as sweep_spec
from afltheory.theory import compression as thc
from afltheory.theory import (
    corollaries,
    inconsistencies,
    lemmas,
    mocha,
    theorem1,
    theorem2,
    theorem3,
    theorem4,
    yu_local_sgd,
)

from ._harness import ANY, FLOAT_ARRAYS, INT_ARRAYS, NUMBERS, call, check_kwargs_call, no_nan

EXAMPLES = 40
SLOW_EXAMPLES = 1000

SMALL = st.integers(-1, 6)
REALS = st.one_of(NUMBERS, st.floats(1e-3, 10.0))
TEXT = st.one_of(st.text(max_size=6), st.sampled_from(["iid", "noniid", "label", "dirichlet", "agent", "x"]))


# ------------------------------------------------------------------------------------------ components
def _workers():
    return st.one_of(
        ANY,
        st.sampled_from([al.SGD(), al.FedProx(0.1), al.SCAFFOLD()]),
        st.sampled_from([an.UniformArrivals(1), co.RandK(1), object()]),
    )


def _compressors():
    return st.one_of(
        st.none(),
        ANY,
        st.sampled_from([co.RandK(1), co.TopK(1), co.Sign(), co.QSGD(2), co.Identity(), an.NoDelay()]),
    )


def _times():
    return st.one_of(ANY, st.sampled_from([an.ExponentialTime(), an.FixedTime(2.0), an.ConstantSteps(1)]))


def _steps():
    return st.one_of(ANY, st.sampled_from([an.ConstantSteps(2), an.UniformSteps(1, 3), an.FixedTime()]))


def _schedules():
    good = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(1)).sample(4, 2, 3, seed=0)
    return st.one_of(ANY, st.just(good), st.just(good.workers))


COMPONENTS = {
    # server rules: worker=, compressor= and their hyperparameters
    "AFACD(worker, compressor)": (
        lambda **k: al.AFACD(1.0, 0.1, **k),
        {"worker": _workers(), "compressor": _compressors()},
    ),
    "AFACS(memory_init, worker)": (
        lambda **k: al.AFACS(1.0, 0.1, **k),
        {"memory_init": ANY, "worker": _workers()},
    ),
    "FedBuff(buffer_size, staleness, worker)": (
        lambda **k: al.FedBuff(1.0, 0.1, **k),
        {"buffer_size": ANY, "staleness": ANY, "worker": _workers()},
    ),
    "FedProx": (al.FedProx, {"mu": ANY}),
    "DynamicFedAvg": (
        al.DynamicFedAvg,
        {
            "mu": ANY,
            "epochs": st.one_of(ANY, st.tuples(SMALL, SMALL)),
            "batch": st.one_of(ANY, st.tuples(SMALL, SMALL)),
            "compressor": _compressors(),
        },
    ),
    # behaviours and their policies
    "Behaviour": (
        an.Behaviour,
        {
            "arrivals": st.one_of(ANY, st.just(an.UniformArrivals(2))),
            "delays": st.one_of(ANY, st.just(an.UniformDelay(1))),
            "local_steps": _steps(),
        },
    ),
    "EventDriven": (
        an.EventDriven,
        {
            "m": ANY,
            "compute_time": _times(),
            "local_steps": _steps(),
            "idle_time": st.one_of(st.none(), _times()),
        },
    ),
    "Synchronous": (
        an.Synchronous,
        {
            "arrivals": st.one_of(ANY, st.just(an.UniformArrivals(2))),
            "compute_time": _times(),
            "local_steps": _steps(),
        },
    ),
    "Replay": (an.Replay, {"schedule": _schedules()}),
    "ExponentialTime": (
        an.ExponentialTime,
        {"rate": ANY, "per_step": ANY, "speeds": st.one_of(ANY, FLOAT_ARRAYS)},
    ),
    "FixedTime": (an.FixedTime, {"value": ANY, "per_step": ANY}),
    "TimeVaryingSteps": (an.TimeVaryingSteps, {"Ks": st.one_of(ANY, INT_ARRAYS)}),
    "PerWorkerDelay": (an.PerWorkerDelay, {"max_delays": st.one_of(ANY, INT_ARRAYS)}),
    "Schedule": (
        an.Schedule,
        {
            "workers": st.one_of(ANY, INT_ARRAYS),
            "delays": st.one_of(ANY, INT_ARRAYS),
            "local_steps": st.one_of(ANY, INT_ARRAYS),
            "num_workers": ANY,
            "init_local_steps": st.one_of(st.none(), INT_ARRAYS),
            "wall_clock": st.one_of(st.none(), FLOAT_ARRAYS),
        },
    ),
    # compression
    "RandK": (co.RandK, {"k": ANY}),
    "TopK": (co.TopK, {"k": ANY}),
    "QSGD": (co.QSGD, {"s": ANY}),
    "StochasticQuantizer": (co.StochasticQuantizer, {"bits": ANY, "rotate": ANY}),
    "LowRank": (co.LowRank, {"rank": ANY, "shape": st.one_of(ANY, st.tuples(SMALL, SMALL))}),
    "BernoulliMask": (co.BernoulliMask, {"p": ANY}),
    "Subsample": (co.Subsample, {"p": ANY}),
    "GaussianSketch": (co.GaussianSketch, {"k": ANY}),
    "ErrorFeedback": (co.ErrorFeedback, {"compressor": _compressors()}),
    "DIANA": (co.DIANA, {"compressor": _compressors(), "alpha": ANY}),
    "Channel": (
        co.Channel,
        {"spec": _compressors(), "dim": ANY, "num_workers": ANY, "replicates": ANY, "seed": ANY},
    ),
    "uncompressed_bits": (co.uncompressed_bits, {"dim": ANY}),
    "fwht": (co.fwht, {"x": FLOAT_ARRAYS}),
    # problems, noise, constants
    "Constants": (
        pr.Constants,
        {
            "L": ANY,
            "mu": ANY,
            "sigma_L": ANY,
            "sigma_G": ANY,
            "f_star": ANY,
            "x_star": st.one_of(st.none(), FLOAT_ARRAYS),
            "radius": ANY,
        },
    ),
    "GaussianNoise": (pr.GaussianNoise, {"sigma_L": ANY}),
    "FiniteSumNoise": (pr.FiniteSumNoise, {"offsets": st.one_of(ANY, FLOAT_ARRAYS), "batch_size": ANY}),
    "as_noise": (pr.as_noise, {"noise_or_sigma": ANY}),
    "QuadraticProblem(noise)": (
        lambda **k: pr.QuadraticProblem(np.ones((1, 2)), np.zeros((3, 2)), np.zeros(3), kind="diag", **k),
        {"noise": st.one_of(ANY, st.just(pr.GaussianNoise(0.1)))},
    ),
    "LowerBoundPair": (pr.LowerBoundPair, {"G": ANY, "sigma_L": ANY}),
    "HeterogeneousQuadratic.from_arrays": (
        pr.HeterogeneousQuadratic.from_arrays,
        {
            "hessian_diag": st.one_of(st.none(), FLOAT_ARRAYS),
            "centers": st.one_of(ANY, FLOAT_ARRAYS),
            "sigma_L": ANY,
        },
    ),
    "HeterogeneousQuadratic.finite_sum": (
        pr.HeterogeneousQuadratic.finite_sum,
        {
            "dim": SMALL,
            "num_workers": SMALL,
            "sigma_L": ANY,
            "samples_per_worker": ANY,
            "batch_size": ANY,
            "seed": ANY,
        },
    ),
    "HeterogeneousCurvatureQuadratic.from_arrays": (
        pr.HeterogeneousCurvatureQuadratic.from_arrays,
        {
            "hessians": st.one_of(ANY, FLOAT_ARRAYS),
            "centers": st.one_of(ANY, FLOAT_ARRAYS),
            "sigma_L": ANY,
            "radius": ANY,
        },
    ),
    "NonconvexSinusoidal.from_arrays": (
        pr.NonconvexSinusoidal.from_arrays,
        {
            "centers": st.one_of(ANY, FLOAT_ARRAYS),
            "phases": st.one_of(ANY, FLOAT_ARRAYS),
            "mu0": ANY,
            "beta": ANY,
            "omega": ANY,
            "sigma_L": ANY,
        },
    ),
    "LogisticRegression": (
        pr.LogisticRegression,
        {
            "features": st.one_of(ANY, st.lists(FLOAT_ARRAYS, max_size=3)),
            "labels": st.one_of(ANY, st.lists(INT_ARRAYS, max_size=3)),
            "num_classes": ANY,
            "batch_size": ANY,
            "l2": ANY,
        },
    ),
    "DriftingQuadratic": (
        pr.DriftingQuadratic,
        {
            "dim": SMALL,
            "num_workers": SMALL,
            "L": ANY,
            "mu": ANY,
            "sigma_L": ANY,
            "sigma_G": ANY,
            "sigma_q": ANY,
            "seed": ANY,
            "hessian": TEXT,
        },
    ),
    "DriftingSlides": (
        pr.DriftingSlides,
        {
            "sigma_q2": ANY,
            "sigma_c2": ANY,
            "num_agents": SMALL,
            "dim": SMALL,
            "hessian": TEXT,
            "samples_min": SMALL,
            "samples_max": SMALL,
            "data_std": ANY,
            "w0_scale": ANY,
            "seed": ANY,
        },
    ),
    "DriftingQuadratic.from_problem": (
        pr.DriftingQuadratic.from_problem,
        {"base": st.one_of(ANY, st.just(pr.HeterogeneousQuadratic(dim=2, num_workers=2))), "sigma_q": ANY},
    ),
    # adversary, multi-task
    "AssumptionClass": (
        AssumptionClass,
        {
            "dim": ANY,
            "num_workers": ANY,
            "max_delay": ANY,
            "K_max": ANY,
            "rounds": ANY,
            "L": ANY,
            "mu": ANY,
            "sigma_L": ANY,
            "m": ANY,
            "arrivals": st.one_of(ANY, st.tuples(TEXT)),
            "hessian": TEXT,
            "noise": TEXT,
            "eta_L_decades": ANY,
            "radius_factor": ANY,
        },
    ),
    "Structure": (Structure, {"m": ANY, "arrivals": TEXT}),
    "PmfDelay": (PmfDelay, {"pmf": st.one_of(ANY, FLOAT_ARRAYS)}),
    "PmfSteps": (PmfSteps, {"pmfs": st.one_of(ANY, FLOAT_ARRAYS)}),
    "CovarianceNoise": (CovarianceNoise, {"covs": st.one_of(ANY, FLOAT_ARRAYS)}),
    "biased_inclusion": (biased_inclusion, {"probs": st.one_of(ANY, FLOAT_ARRAYS), "m": ANY}),
    "load_instance": (
        load_instance,
        {
            "path_or_dict": st.one_of(
                st.dictionaries(
                    st.sampled_from(["claim", "hessians", "centers", "eta", "rounds", "arrivals", "x0"]),
                    ANY,
                    max_size=6,
                ),
                st.just({"instance": {}}),
            )
        },
    ),
    "MultiTaskProblem": (
        mtl.MultiTaskProblem,
        {
            "X": st.one_of(ANY, st.lists(FLOAT_ARRAYS, max_size=3)),
            "y": st.one_of(ANY, st.lists(FLOAT_ARRAYS, max_size=3)),
            "loss": TEXT,
            "lam1": ANY,
            "lam2": ANY,
            "gamma": ANY,
        },
    ),
    "synthetic_tasks": (
        mtl.synthetic_tasks,
        {
            "m": SMALL,
            "d": SMALL,
            "n": SMALL,
            "clusters": SMALL,
            "spread": ANY,
            "noise": ANY,
            "loss": TEXT,
            "lam1": ANY,
            "lam2": ANY,
            "seed": ANY,
            "gamma": ANY,
        },
    ),
    "mocha": (
        lambda **k: mtl.mocha(mtl.synthetic_tasks(m=3, d=2, n=4), **k),
        {
            "rounds": SMALL,
            "theta": st.one_of(ANY, st.tuples(REALS, REALS)),
            "drop": ANY,
            "seed": ANY,
            "sigma_prime": ANY,
            "local_passes": SMALL,
            "behaviour": st.one_of(st.none(), ANY, st.just(an.Behaviour(an.UniformArrivals(2)))),
        },
    ),
    "omega_step": (mtl.omega_step, {"W": st.one_of(ANY, FLOAT_ARRAYS), "eps": ANY}),
    "arrival_probabilities": (
        mtl.arrival_probabilities,
        {
            "behaviour": st.one_of(ANY, st.just(an.Behaviour(an.UniformArrivals(2)))),
            "m": SMALL,
            "drop": ANY,
            "rounds": SMALL,
            "seed": ANY,
        },
    ),
}

_SCHED = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(1), an.UniformSteps(1, 3)).sample(
    4, 2, 3, seed=0
)
_PROB = pr.HeterogeneousQuadratic(dim=2, num_workers=3, sigma_L=0.1, seed=0)
_TRACE = None


def _trace():
    global _TRACE
    if _TRACE is None:
        import afltheory as aft

        _TRACE = aft.simulate(_PROB, al.AFACD(1.0, 0.05), an.Replay(_SCHED), rounds=4, replicates=2, seed=0)
    return _TRACE


def _objects():
    """Right and wrong objects for arguments that take a Schedule, Constants, Trace, Moments or dataset."""
    return st.one_of(
        ANY,
        st.sampled_from(["schedule", "constants", "trace", "dataset", "array"]).map(
            lambda k: {
                "schedule": _SCHED,
                "constants": _PROB.constants,
                "trace": _trace(),
                "dataset": federated.federate(
                    np.zeros((6, 2)), np.arange(6) % 2, np.zeros((2, 2)), np.arange(2) % 2, num_workers=2
                ),
                "array": np.zeros((1, 2, 1)),
            }[k]
        ),
    )


RECEIVERS = {
    "theorem2.bound": (
        lambda **k: theorem2.bound(**k, eta=1.0, eta_L=0.01, f0=1.0, scope="ignore"),
        {"schedule": _objects(), "constants": _objects()},
    ),
    "theorem3.bound_terms": (
        lambda **k: theorem3.bound_terms(**k, eta=1.0, eta_L=0.01, f0=1.0, scope="ignore"),
        {"schedule": _objects(), "constants": _objects(), "averaging": TEXT},
    ),
    "theorem4.bound": (
        lambda **k: theorem4.bound(**k, eta=1.0, eta_L=0.01, f0=1.0, scope="ignore"),
        {"schedule": _objects(), "constants": _objects(), "khat": TEXT},
    ),
    "theorem4.realized": (theorem4.realized, {"schedule": _objects()}),
    "theorem3.k_averages": (theorem3.k_averages, {"schedule": _objects(), "averaging": TEXT}),
    "corollaries.cor3_realized": (corollaries.cor3_realized, {"schedule": _objects(), "K": ANY, "L": ANY}),
    "exact.zscores": (exact.zscores, {"trace": _objects(), "exact": _objects(), "what": TEXT}),
    "schedule_statistics": (
        lambda **k: schedule_statistics(**k, algorithm=al.AFACD(1.0, 0.05)),
        {"trace": _objects(), "problem": st.one_of(ANY, st.just(_PROB))},
    ),
    "LogisticRegression.from_dataset": (pr.LogisticRegression.from_dataset, {"data": _objects()}),
    "LogisticRegression.from_partition": (
        pr.LogisticRegression.from_partition,
        {
            "X": st.one_of(ANY, FLOAT_ARRAYS),
            "y": st.one_of(ANY, INT_ARRAYS),
            "parts": st.one_of(ANY, st.lists(INT_ARRAYS, max_size=3)),
        },
    ),
    "Schedule.replicate": (lambda r: _SCHED.replicate(r), {"r": st.one_of(ANY, INT_ARRAYS)}),
}

THEORY = {
    "theorem1.contraction": (theorem1.contraction, {"eta": ANY, "eta_L": ANY, "K": ANY}),
    "theorem1.expected_grad_norm_sq": (
        theorem1.expected_grad_norm_sq,
        {"x0": ANY, "G": ANY, "eta": ANY, "eta_L": ANY, "K": ANY, "T": ANY},
    ),
    "theorem1.predicted_limit": (theorem1.predicted_limit, {"G": ANY}),
    "theorem1.construction": (theorem1.construction, {"G": ANY, "sigma_L": ANY}),
    "theorem2.admissible_step_sizes": (
        theorem2.admissible_step_sizes,
        {"L": ANY, "eta_L": ANY, "K_max": ANY, "tau": ANY},
    ),
    "theorem3.admissible_step_sizes": (
        theorem3.admissible_step_sizes,
        {"L": ANY, "eta_L": ANY, "K_max": ANY, "tau": ANY, "num_workers": ANY},
    ),
    "theorem4.admissible_step_sizes": (
        theorem4.admissible_step_sizes,
        {"L": ANY, "eta_L": ANY, "K_max": ANY, "tau": ANY, "num_workers": ANY, "m_fresh": ANY, "m": ANY},
    ),
    "theorem2.region": (
        theorem2.region,
        {
            "eta": st.one_of(ANY, FLOAT_ARRAYS),
            "eta_L": st.one_of(ANY, FLOAT_ARRAYS),
            "L": ANY,
            "K_max": ANY,
            "tau": ANY,
        },
    ),
    "theorem4.region": (
        theorem4.region,
        {
            "eta": st.one_of(ANY, FLOAT_ARRAYS),
            "eta_L": st.one_of(ANY, FLOAT_ARRAYS),
            "L": ANY,
            "K_max": ANY,
            "tau": ANY,
            "num_workers": ANY,
            "m_fresh": ANY,
        },
    ),
    "corollaries.remark4_numbers": (corollaries.remark4_numbers, {"T": ANY, "m": ANY, "K": ANY, "L": ANY}),
    "corollaries.min_memory_staleness": (corollaries.min_memory_staleness, {"M": ANY, "m": ANY}),
    "corollaries.printed": (corollaries.printed, {"k": ANY}),
    "corollaries.substitution": (corollaries.substitution, {"k": ANY}),
    "lemmas.drift_bound": (
        lemmas.drift_bound,
        {
            "grad_norm_sq": st.one_of(ANY, FLOAT_ARRAYS),
            "K": ANY,
            "eta_L": ANY,
            "sigma_L": ANY,
            "sigma_G": ANY,
            "L": ANY,
        },
    ),
    "lemmas.drift_condition": (lemmas.drift_condition, {"L": ANY, "eta_L": ANY, "K": ANY}),
    "lemmas.lemma1_variance_bound": (lemmas.lemma1_variance_bound, {"sigma_L": ANY, "K": ANY}),
    "lemmas.lemma1_mean": (lemmas.lemma1_mean, {"true_grads": st.one_of(ANY, FLOAT_ARRAYS)}),
    "lemmas.lemma2_bound": (
        lemmas.lemma2_bound,
        {
            "expected_updates": st.one_of(ANY, FLOAT_ARRAYS),
            "local_steps": st.one_of(ANY, INT_ARRAYS),
            "sigma_L": ANY,
        },
    ),
    "lemmas.local_drift": (
        lemmas.local_drift,
        {"trajectory": st.one_of(ANY, FLOAT_ARRAYS), "x": st.one_of(ANY, FLOAT_ARRAYS)},
    ),
    "compression.compressed_gd_bound": (
        thc.compressed_gd_bound,
        {"rounds": ANY, "dist0_sq": ANY, "gamma_value": ANY, "mu_value": ANY},
    ),
    "compression.distributed_bound": (
        thc.distributed_bound,
        {
            "rounds": ANY,
            "dist0_sq": ANY,
            "gamma_value": ANY,
            "mu_value": ANY,
            "omega_value": ANY,
            "n_value": ANY,
            "zeta_star_sq": ANY,
        },
    ),
    "compression.diana_step": (thc.diana_step, {"omega_value": ANY}),
    "compression.fedpaq_factors": (thc.fedpaq_factors, {"q_value": ANY, "n_value": ANY, "r_value": ANY}),
    "compression.fedpaq_variance": (
        thc.fedpaq_variance,
        {"deltas": st.one_of(ANY, FLOAT_ARRAYS), "err_sq": st.one_of(ANY, FLOAT_ARRAYS), "r_value": ANY},
    ),
    "compression.variance_identity": (
        thc.variance_identity,
        {"g": st.one_of(ANY, FLOAT_ARRAYS), "err_sq": st.one_of(ANY, FLOAT_ARRAYS)},
    ),
    "mocha.theta_bar": (mocha.theta_bar, {"p_max": ANY, "theta_max": ANY}),
    "mocha.bound": (
        mocha.bound,
        {"h": st.one_of(ANY, FLOAT_ARRAYS), "eps0": ANY, "theta_bar_": ANY, "s": ANY},
    ),
    "mocha.rounds_to_epsilon": (mocha.rounds_to_epsilon, {"n": ANY, "eps": ANY, "theta_bar_": ANY, "s": ANY}),
    "yu_local_sgd.bound": (
        yu_local_sgd.bound,
        {
            "setting": TEXT,
            "T": ANY,
            "s": ANY,
            "L": ANY,
            "K": ANY,
            "N": ANY,
            "sigma": ANY,
            "G": ANY,
            "sigma_G": ANY,
            "f0": ANY,
            "f_star": ANY,
        },
    ),
    "yu_local_sgd.admissible_step_sizes": (
        yu_local_sgd.admissible_step_sizes,
        {"setting": TEXT, "L": ANY, "K": ANY},
    ),
    "inconsistencies.demo_1": (
        inconsistencies.demo_1,
        {"eta": ANY, "eta_L": ANY, "L": ANY, "K": ANY, "T": ANY},
    ),
    "inconsistencies.demo_4": (inconsistencies.demo_4, {"T": ANY, "m": ANY, "K": ANY}),
    "inconsistencies.demo_5": (inconsistencies.demo_5, {"M": ANY, "K": ANY, "T": ANY, "L": ANY}),
    "inconsistencies.get": (inconsistencies.get, {"id_": st.one_of(ANY, st.sampled_from(["#1", "#6"]))}),
}


def _samples():
    return st.one_of(ANY, FLOAT_ARRAYS)


ANALYSIS = {
    "fit_slope": (an_.fit_slope, {"x": _samples(), "y": _samples()}),
    "local_slopes": (an_.local_slopes, {"x": _samples(), "y": _samples()}),
    "bootstrap_slope": (
        an_.bootstrap_slope,
        {"x": _samples(), "samples": _samples(), "n_boot": ANY, "level": ANY, "seed": ANY, "paired": ANY},
    ),
    "compare_bound": (
        an_.compare_bound,
        {"measured": _samples(), "bound": _samples(), "exact": ANY, "level": ANY},
    ),
    "mean_ci": (an_.mean_ci, {"samples": _samples(), "level": ANY}),
    "upper_confidence_bound": (an_.upper_confidence_bound, {"samples": _samples(), "level": ANY}),
    "slack_ratio": (an_.slack_ratio, {"bound": _samples(), "measured": _samples()}),
    "term_shares": (
        an_.term_shares,
        {"terms": st.one_of(ANY, st.dictionaries(st.text(max_size=3), REALS, max_size=4))},
    ),
    "dominant_term": (
        an_.dominant_term,
        {"terms": st.one_of(ANY, st.dictionaries(st.text(max_size=3), REALS, max_size=4))},
    ),
    "format_shares": (
        an_.format_shares,
        {"shares": st.one_of(ANY, st.dictionaries(st.text(max_size=3), REALS, max_size=4)), "min_share": ANY},
    ),
    "verdicts_from_json": (
        verdicts_from_json,
        {
            "s": st.one_of(
                st.text(max_size=30),
                st.sampled_from(
                    [
                        "[]",
                        "[{}]",
                        '[{"id": 1}]',
                        "{}",
                        "null",
                        '[{"id": "a", "claim": "c", "reference": "r", "measured": NaN, "theoretical": 1, '
                        '"passed": true}]',
                        '[{"id": "a", "claim": "c", "reference": "r", "measured": 1, "theoretical": 2, '
                        '"passed": 1, "negative_control": "x"}]',
                    ]
                ),
            )
        },
    ),
}

EXACT_PROBLEM = pr.HeterogeneousQuadratic(dim=2, num_workers=3, sigma_L=0.1, seed=0)


def _exact_moments(rounds, x0, max_memory, divergence_threshold, max_seconds, K, max_delay, eta_L):
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(max_delay), an.ConstantSteps(K))
    return exact.moments(
        EXACT_PROBLEM,
        al.AFACD(1.0, eta_L),
        beh,
        rounds,
        None if x0 is None else np.full(2, x0) if isinstance(x0, (int, float)) else x0,
        max_memory=max_memory,
        divergence_threshold=divergence_threshold,
        max_seconds=max_seconds,
    )


def _exact_uniform_steps(low, high, rounds):
    beh = an.Behaviour(an.UniformArrivals(2), an.NoDelay(), an.UniformSteps(low, high))
    return exact.moments(EXACT_PROBLEM, al.AFACD(1.0, 0.05), beh, rounds, max_seconds=10.0)


RUNS = {
    "exact.moments": (
        _exact_moments,
        {
            "rounds": st.one_of(SMALL, ANY),
            "x0": st.one_of(st.none(), NUMBERS),
            "max_memory": ANY,
            "divergence_threshold": ANY,
            "max_seconds": st.one_of(st.none(), st.just(10.0), ANY),
            "K": ANY,
            "max_delay": ANY,
            "eta_L": ANY,
        },
    ),
    "exact.moments(UniformSteps)": (_exact_uniform_steps, {"low": ANY, "high": ANY, "rounds": SMALL}),
    "exact.round_law": (
        lambda **k: exact.round_law(an.Behaviour(an.UniformArrivals(2)), **k),
        {"num_workers": ANY, "fixed_local_steps": ANY},
    ),
    "exact.estimate_memory": (
        exact.estimate_memory,
        {"dim": ANY, "num_workers": ANY, "max_delay": ANY, "memory_slots": ANY},
    ),
    "Behaviour.sample": (
        lambda **k: an.Behaviour(an.UniformArrivals(2), an.UniformDelay(2), an.UniformSteps(1, 3)).sample(
            **k
        ),
        {"rounds": SMALL, "replicates": SMALL, "num_workers": SMALL, "seed": ANY},
    ),
    "EventDriven.sample": (
        lambda speeds=None, **k: an.EventDriven(2, an.ExponentialTime(speeds=speeds)).sample(**k),
        {
            "rounds": SMALL,
            "replicates": SMALL,
            "num_workers": SMALL,
            "seed": ANY,
            "speeds": st.one_of(st.none(), st.lists(st.floats(0.1, 2.0), min_size=1, max_size=5)),
        },
    ),
    "Synchronous.sample": (
        lambda **k: an.Synchronous(an.UniformArrivals(2)).sample(**k),
        {"rounds": SMALL, "replicates": SMALL, "num_workers": SMALL, "seed": ANY},
    ),
    "Replay.sample": (
        lambda **k: an.Replay(an.Behaviour(an.UniformArrivals(2)).sample(3, 2, 3)).sample(**k),
        {"rounds": SMALL, "replicates": SMALL, "num_workers": SMALL, "seed": ANY},
    ),
    "compress": (
        lambda name, v, seed: {
            "RandK": co.RandK(1),
            "TopK": co.TopK(2),
            "QSGD": co.QSGD(2),
            "Sign": co.Sign(),
            "SQ": co.StochasticQuantizer(2),
            "SQrot": co.StochasticQuantizer(2, rotate=True),
            "Mask": co.BernoulliMask(0.5),
            "Sketch": co.GaussianSketch(1),
            "LowRank": co.LowRank(1),
        }[name].compress(np.asarray(v, dtype=float).reshape(1, 1, -1), np.random.default_rng(seed)),
        {
            "name": st.sampled_from(
                ["RandK", "TopK", "QSGD", "Sign", "SQ", "SQrot", "Mask", "Sketch", "LowRank"]
            ),
            "v": st.lists(st.floats(-1e300, 1e300), min_size=4, max_size=4),
            "seed": st.integers(0, 9),
        },
    ),
}


# --------------------------------------------------------------------------------------------- datasets
LABELS = st.one_of(ANY, INT_ARRAYS, st.lists(st.integers(0, 3), min_size=1, max_size=40))

DATASETS = {
    "iid_partition": (
        partitions.iid_partition,
        {"n": st.one_of(SMALL, ANY), "num_workers": ANY, "samples_per_worker": ANY, "seed": ANY},
    ),
    "label_partition": (
        partitions.label_partition,
        {"y": LABELS, "num_workers": ANY, "classes_per_worker": ANY, "samples_per_worker": ANY, "seed": ANY},
    ),
    "dirichlet_partition": (
        partitions.dirichlet_partition,
        {"y": LABELS, "num_workers": ANY, "alpha": ANY, "min_size": ANY, "seed": ANY, "max_tries": ANY},
    ),
    "partition_classes": (
        partitions.partition_classes,
        {"y": LABELS, "parts": st.one_of(ANY, st.lists(INT_ARRAYS, max_size=3))},
    ),
    "stratified_split": (federated.stratified_split, {"y": LABELS, "test_fraction": ANY, "seed": ANY}),
    "federate": (
        lambda n_train, n_test, **k: federated.federate(
            np.arange(2.0 * n_train).reshape(n_train, 2),
            np.arange(n_train) % 3,
            np.zeros((n_test, 2)),
            np.arange(n_test) % 3,
            **k,
        ),
        {
            "n_train": st.integers(0, 30),
            "n_test": st.integers(0, 5),
            "num_workers": ANY,
            "partition": TEXT,
            "classes_per_worker": ANY,
            "alpha": ANY,
            "samples_per_worker": ANY,
            "num_classes": ANY,
            "seed": ANY,
        },
    ),
}


def _idx_bytes():
    """IDX files: a (possibly lying) header — magic, dtype code, ndim, dims — then a short payload."""
    return st.builds(
        lambda code, ndim, dims, payload: (
            b"\x00\x00" + bytes([code, ndim]) + b"".join(struct.pack(">I", d) for d in dims) + payload
        ),
        st.sampled_from([0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x00, 0xFF]),
        st.integers(0, 5),
        st.lists(st.one_of(st.integers(0, 5), st.integers(0, 2**32 - 1)), max_size=5),
        st.binary(max_size=64),
    )


def _pickles():
    objs = st.one_of(
        st.fixed_dictionaries({b"data": st.just(np.zeros((2, 3072), np.uint8)), b"labels": ANY}),
        st.fixed_dictionaries({"data": ANY, "labels": INT_ARRAYS}),
        st.dictionaries(st.text(max_size=3), ANY, max_size=3),
        ANY,
    )
    return st.one_of(objs.map(lambda o: pickle.dumps(o, protocol=2)), st.binary(max_size=64))


def _shakespeare_json():
    user = st.text(min_size=1, max_size=3)
    data = st.dictionaries(
        user,
        st.one_of(
            ANY,
            st.fixed_dictionaries(
                {
                    "x": st.lists(st.text(max_size=90), max_size=3),
                    "y": st.lists(st.text(max_size=2), max_size=3),
                }
            ),
        ),
        max_size=3,
    )
    doc = st.one_of(
        st.fixed_dictionaries({"users": st.lists(user, max_size=3), "user_data": data}),
        st.dictionaries(st.text(max_size=5), ANY, max_size=3),
        ANY,
    )
    return st.one_of(doc.map(json.dumps), st.text(max_size=40))


#: other names a message may use for a parameter (the documented name of what it stands for)
ALIASES = {
    "as_noise": ["sigma_L"],
    "Channel": ["compressor"],
    "load_instance": ["instance"],
    "synthetic_tasks": ["Omega", "X", "y"],
    "mocha": ["problem", "theta"],
    "federate": ["X_train", "y_train", "X_test", "y_test"],
    "exact.moments(UniformSteps)": ["local_steps"],
    "exact.moments": ["local_steps", "delays", "x0"],
}

FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
FEW = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
TABLES = {**COMPONENTS, **RECEIVERS, **THEORY, **ANALYSIS, **RUNS, **DATASETS}


def _signature_names(fn) -> list[str]:
    """The parameters of ``fn`` (a message naming any of them names a parameter)."""
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return []


def _fuzz_table(target, data):
    fn, strategies = TABLES[target]
    chosen = data.draw(
        st.lists(st.sampled_from(sorted(strategies)), unique=True, max_size=len(strategies)), label="params"
    )
    kwargs = {k: data.draw(strategies[k], label=k) for k in chosen}
    check_kwargs_call(
        fn,
        kwargs,
        names=list(strategies) + ALIASES.get(target, []) + _signature_names(fn),
        seconds=60.0 if target in RUNS else 20.0,
    )


@pytest.mark.parametrize("target", sorted(TABLES))
@FUZZ
@given(data=st.data())
def test_entry_points_fail_clearly_or_succeed(target, data):
    """Every target in COMPONENTS/THEORY/ANALYSIS/RUNS/DATASETS: a clear ValueError/TypeError naming one
    of its parameters, or a NaN-free result (``EXAMPLES`` derandomized examples each)."""
    _fuzz_table(target, data)


def test_a_wrong_component_is_a_type_error_naming_parameter_and_type():
    """Pinned: each component argument is checked at construction (issue 19: 319 AttributeErrors later)."""
    cases = [
        (lambda: al.AFACD(1.0, 0.1, worker="sgd"), "worker"),
        (lambda: al.FedAvg(1.0, 0.1, worker=an.UniformArrivals(1)), "worker"),
        (lambda: an.EventDriven(2, compute_time=2.0), "compute_time"),
        (lambda: an.EventDriven(2, idle_time="exp"), "idle_time"),
        (lambda: an.Synchronous(an.UniformArrivals(2), compute_time=an.ConstantSteps(1)), "compute_time"),
        (lambda: an.Synchronous(an.UniformArrivals(2), local_steps=3), "local_steps"),
        (lambda: an.Behaviour(an.UniformArrivals(2), delays=1), "delays"),
        (lambda: an.Replay(np.zeros((1, 2, 1))), "schedule"),
        (lambda: co.ErrorFeedback("topk"), "compressor"),
        (
            lambda: pr.QuadraticProblem(np.ones((1, 2)), np.zeros((3, 2)), np.zeros(3), 0.1, kind="diag"),
            "noise",
        ),
    ]
    for make, name in cases:
        with pytest.raises(TypeError, match=rf"{name}=.*\(type \w+\) must be") as info:
            make()
        assert isinstance(info.value, ValueError)  # callers catching the library's ValueError still do
    with pytest.raises(ValueError, match="speeds has 2 entries; expected one per worker"):
        an.EventDriven(2, an.ExponentialTime(speeds=[1.0, 2.0])).sample(3, 1, 4)


@pytest.mark.parametrize(
    "fn, kwargs",
    [
        (theorem1.predicted_limit, dict(G=1e300)),  # 4G² beyond the float range: inf
        (theorem1.contraction, dict(eta=1.0, eta_L=1e300, K=3)),  # q^K overflows: inf
        (lemmas.drift_condition, dict(L=2.7, eta_L=1e300, K=3)),  # 6η_L²…: fails, no OverflowError
        (inconsistencies.demo_5, dict(M=3, K=3, T=1e-300, L=1e300)),  # ZeroDivisionError/Overflow before
        (corollaries.remark4_numbers, dict(T=1e300, m=2**63, K=2**63, L=1e-300)),
        (theorem3.admissible_step_sizes, dict(L=2.7, eta_L=1e-3, K_max=3, tau=1e300, num_workers=5)),
    ],
)
def test_theory_helpers_at_huge_finite_values_answer_in_ieee_arithmetic(fn, kwargs):
    """Finite inputs never give a bare OverflowError/ZeroDivisionError (issue 19): the answer is a number
    (±inf or 0 beyond the float range), never NaN — or a ValueError saying the value is out of range."""
    out = call(fn, **kwargs)
    if isinstance(out, ValueError):
        assert "range" in str(out)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(T=0.0, m=1, K=1), "T=0.0"),
        (dict(T=1e4, m=0, K=1), "m=0"),
        (dict(T=1e4, m=2, K=2.5), "K=2.5"),
        (dict(T=1e4, m=2, K=2, L=float("nan")), "L=nan"),
    ],
)
def test_remark4_numbers_validates(kw, match):
    with pytest.raises(ValueError, match=match):
        corollaries.remark4_numbers(**kw)


# ------------------------------------------------------------------------------------- crafted files
@FUZZ
@given(blob=_idx_bytes(), gz=st.booleans())
def test_read_idx_on_crafted_files(tmp_path_factory, blob, gz):
    """A crafted IDX file (lying header, truncated payload, gzip or not): a clear ValueError, or an array
    whose size matches its header."""
    import gzip

    p = tmp_path_factory.mktemp("idx") / ("f.idx.gz" if gz else "f.idx")
    p.write_bytes(gzip.compress(blob) if gz else blob)
    out = call(loaders.read_idx, p)
    if isinstance(out, np.ndarray):
        assert out.ndim == blob[3] and out.size == math.prod(out.shape)


@FUZZ
@given(arr=st.one_of(INT_ARRAYS, FLOAT_ARRAYS, ANY))
def test_write_idx_round_trips_or_refuses(tmp_path_factory, arr):
    p = tmp_path_factory.mktemp("widx") / "w.idx"
    out = call(loaders.write_idx, p, arr)
    if not isinstance(out, (ValueError, TypeError)):
        back = loaders.read_idx(p)
        assert back.shape == np.asarray(arr).shape


@FUZZ
@given(blob=_pickles())
def test_cifar_loader_on_crafted_pickles(tmp_path_factory, blob):
    d = tmp_path_factory.mktemp("cifar")
    sub = d / "cifar-10-batches-py"
    sub.mkdir()
    for name in [f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]:
        (sub / name).write_bytes(blob)
    call(loaders.load_cifar10, d)


@FUZZ
@given(doc=_shakespeare_json(), seq_len=st.one_of(SMALL, ANY))
def test_shakespeare_loader_on_crafted_json(tmp_path_factory, doc, seq_len):
    d = tmp_path_factory.mktemp("shakespeare")
    for sub in ("train", "test"):
        (d / sub).mkdir()
        (d / sub / "all_data.json").write_text(doc)
    call(loaders.load_shakespeare, d, seq_len=seq_len)


@FUZZ
@given(blob=st.one_of(st.binary(max_size=80), _idx_bytes()))
def test_mnist_loader_on_crafted_files(tmp_path_factory, blob):
    d = tmp_path_factory.mktemp("mnist")
    for name in (
        "train-images-idx3-ubyte",
        "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte",
        "t10k-labels-idx1-ubyte",
    ):
        (d / name).write_bytes(blob)
    call(loaders.load_mnist, d)


@FUZZ
@given(
    blob=st.binary(max_size=200),
    arrays=st.dictionaries(
        st.sampled_from(
            ["workers", "delays", "local_steps", "num_workers", "init_local_steps", "wall_clock"]
        ),
        st.one_of(INT_ARRAYS, FLOAT_ARRAYS, st.integers(-3, 10)),
        max_size=6,
    ),
)
def test_schedule_load_on_crafted_npz(tmp_path_factory, blob, arrays):
    d = tmp_path_factory.mktemp("npz")
    (d / "raw.npz").write_bytes(blob)
    call(an.Schedule.load, d / "raw.npz")
    with zipfile.ZipFile(d / "z.npz", "w") as zf:
        for name, a in arrays.items():
            buf = io.BytesIO()
            try:
                a = np.asarray(a)
            except ValueError:  # a ragged list: no .npy for it
                continue
            np.save(buf, a)
            zf.writestr(name + ".npy", buf.getvalue())
    call(an.Schedule.load, d / "z.npz")


# ------------------------------------------------------------------------------------------ sweep specs
_SPEC_KEYS = [
    "name",
    "rounds",
    "replicates",
    "seed",
    "problem.family",
    "problem.dim",
    "problem.num_workers",
    "problem.L",
    "problem.sigma_L",
    "behaviour.arrivals.kind",
    "behaviour.arrivals.m",
    "behaviour.delays.kind",
    "behaviour.delays.max_delay",
    "algorithm.name",
    "algorithm.eta",
    "algorithm.eta_L",
    "algorithm.worker.name",
    "algorithm.compressor.name",
    "algorithm.compressor.k",
    'grid."algorithm.eta_L"',
    'grid."problem.dim"',
    "measure.what",
    'zip."algorithm.eta"',
]
_TOML_VALUES = st.one_of(
    st.integers(-3, 10),
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.sampled_from(
        [
            "nan",
            "inf",
            "-inf",
            "1e308",
            "0.0",
            "true",
            "[]",
            "[1, 2]",
            "[0.1, 0.2, 0.3]",
            '"x"',
            '""',
            '"HeterogeneousQuadratic"',
            '"Problem"',
            '"UniformArrivals"',
            '"AFACD"',
            '"AFACS"',
            '"SCAFFOLD"',
            '"RandK"',
            "{}",
            "[[1], [2]]",
            "[nan]",
            "1979-05-27",
            '["a", 1]',
        ]
    ),
)
BASE_SPEC = {
    "name": '"x"',
    "rounds": "5",
    "problem.family": '"HeterogeneousQuadratic"',
    "problem.dim": "2",
    "problem.num_workers": "3",
    "behaviour.arrivals.kind": '"UniformArrivals"',
    "behaviour.arrivals.m": "2",
    "algorithm.name": '"AFACD"',
    "algorithm.eta": "1.0",
    "algorithm.eta_L": "0.05",
}


def _render(flat: dict) -> str:
    """Dotted keys -> TOML text (top-level keys first, then one table per prefix)."""
    top = [f"{k} = {v}" for k, v in flat.items() if "." not in k]
    tables: dict[str, list[str]] = {}
    for k, v in flat.items():
        if "." in k:
            if k.endswith('"'):  # grid."problem.dim": a quoted dotted key inside [grid]
                head, _, leaf = k.partition(".")
            else:
                head, _, leaf = k.rpartition(".")
            tables.setdefault(head, []).append(f"{leaf} = {v}")
    return "\n".join(top + [f"[{h}]\n" + "\n".join(lines) for h, lines in tables.items()]) + "\n"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    edits=st.dictionaries(st.sampled_from(_SPEC_KEYS), _TOML_VALUES, max_size=5),
    drop=st.lists(st.sampled_from(sorted(BASE_SPEC)), max_size=2),
)
def test_sweep_specs_fail_with_a_spec_error_or_validate(edits, drop):
    """A crafted spec (wrong types, nan/inf, huge ints, unknown names, missing keys): ``parse_spec`` raises
    SpecError (a ValueError naming the key) or returns a spec whose tasks all build."""
    flat = {k: v for k, v in BASE_SPEC.items() if k not in drop}
    flat.update({k: str(v) for k, v in edits.items()})
    text = _render(flat)
    out = call(sweep_spec.parse_spec, text)
    if isinstance(out, (ValueError, TypeError)):
        assert isinstance(out, sweep_spec.SpecError), f"{type(out).__name__} instead of SpecError: {out}"
    else:
        assert len(out.tasks) >= 1


# ------------------------------------------------------------------------------------------------ plots
_CURVES = st.dictionaries(st.text(max_size=4), st.one_of(FLOAT_ARRAYS, ANY), max_size=3)
PLOTS = {
    "rate_plot": (
        plots.rate_plot,
        {"x": _samples(), "y": _samples(), "theory_slope": ANY, "yerr": st.one_of(st.none(), _samples())},
    ),
    "curves_plot": (
        plots.curves_plot,
        {
            "curves": st.one_of(ANY, _CURVES),
            "hlines": st.one_of(st.none(), st.dictionaries(st.text(max_size=3), REALS, max_size=2)),
            "logy": ANY,
            "logx": ANY,
        },
    ),
    "bound_plot": (
        plots.bound_plot,
        {
            "labels": st.one_of(ANY, st.lists(st.text(max_size=3), max_size=3)),
            "measured": _samples(),
            "bound": _samples(),
            "ucb": st.one_of(st.none(), _samples()),
        },
    ),
    "lower_bound_plot": (plots.lower_bound_plot, {"curves": st.one_of(ANY, _CURVES), "sigma_G2": ANY}),
    "speedup_plot": (plots.speedup_plot, {"panels": st.one_of(ANY, st.lists(ANY, max_size=2))}),
    "stability_region_plot": (
        plots.stability_region_plot,
        {
            "eta": _samples(),
            "eta_L": _samples(),
            "theory_region": st.one_of(ANY, INT_ARRAYS),
            "diverged": st.one_of(ANY, INT_ARRAYS),
        },
    ),
    "new_figure": (plots.new_figure, {"nrows": ANY, "ncols": ANY, "width": ANY, "height": ANY}),
}


@pytest.mark.parametrize("target", sorted(PLOTS))
@FEW
@given(data=st.data())
def test_plots_fail_clearly_or_write_a_file(target, data, tmp_path_factory):
    """Plots (Agg): a clear ValueError/TypeError naming a parameter, or a written file (8 examples each:
    rendering is slow)."""
    fn, strategies = PLOTS[target]
    chosen = data.draw(st.lists(st.sampled_from(sorted(strategies)), unique=True, max_size=len(strategies)))
    kwargs = {k: data.draw(strategies[k], label=k) for k in chosen}
    if target == "new_figure":
        out = check_kwargs_call(fn, kwargs, names=list(strategies))
        if not isinstance(out, Exception):
            import matplotlib.figure

            fig = out[0]
            assert isinstance(fig, matplotlib.figure.Figure)
        return
    path = tmp_path_factory.mktemp("plot") / "p.png"
    out = check_kwargs_call(lambda **k: fn(path, **k), kwargs, names=list(strategies))
    if not isinstance(out, Exception):
        assert path.exists() and path.stat().st_size > 0


# ------------------------------------------------------------------------------------------------- slow
@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(TABLES))
@settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_long_fuzz_entry_points(target, data):
    """The long run (``-m slow``): ``SLOW_EXAMPLES`` examples per entry point."""
    _fuzz_table(target, data)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    edits=st.dictionaries(st.sampled_from(_SPEC_KEYS), _TOML_VALUES, max_size=6),
    drop=st.lists(st.sampled_from(sorted(BASE_SPEC)), max_size=3),
)
def test_long_fuzz_sweep_specs(edits, drop):
    test_sweep_specs_fail_with_a_spec_error_or_validate.hypothesis.inner_test(edits, drop)


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(PLOTS))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_long_fuzz_plots(target, data, tmp_path_factory):
    test_plots_fail_clearly_or_write_a_file.hypothesis.inner_test(target, data, tmp_path_factory)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(blob=_idx_bytes(), gz=st.booleans())
def test_long_fuzz_read_idx(tmp_path_factory, blob, gz):
    test_read_idx_on_crafted_files.hypothesis.inner_test(tmp_path_factory, blob, gz)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(blob=_pickles())
def test_long_fuzz_cifar(tmp_path_factory, blob):
    test_cifar_loader_on_crafted_pickles.hypothesis.inner_test(tmp_path_factory, blob)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=_shakespeare_json(), seq_len=st.one_of(SMALL, ANY))
def test_long_fuzz_shakespeare(tmp_path_factory, doc, seq_len):
    test_shakespeare_loader_on_crafted_json.hypothesis.inner_test(tmp_path_factory, doc, seq_len)


def test_harness_catches_what_it_should():
    """Negative controls for the harness itself: a bare IndexError, a NaN result and a hang all fail."""
    with pytest.raises(AssertionError, match="bare IndexError"):
        call(lambda: [][1])
    with pytest.raises(AssertionError, match="NaN"):
        call(lambda: {"x": float("nan")})
    with pytest.raises(AssertionError, match="hang"):
        call(lambda: [0 for _ in iter(int, 1)], seconds=0.2)
    assert isinstance(call(lambda: int("x")), ValueError)
    no_nan([1.0, np.inf, {"a": np.zeros(2)}])


# ----------------------------------------------------------------------- pinned reproducers (fuzz finds)
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: an.Behaviour(an.UniformArrivals(2)).sample(3, 1, 3, seed=-1), r"seed=-1"),
        (
            lambda: an.Behaviour(an.UniformArrivals(2)).sample(3, 1, 3, seed=2**64),
            r"seed=18446744073709551616",
        ),
        (lambda: an.PerWorkerDelay([[0], [0, 0]]), "max_delays"),
        (lambda: an.Schedule([[0], [0, 0]], 0, 0, 2), "workers"),
        (lambda: an_.term_shares(1), "terms"),
        (lambda: an_.fit_slope([1.0], [1.0]), "x and y"),
        (lambda: pr.DriftingSlides(samples_max=0), "samples_max=0"),
        (lambda: pr.LogisticRegression.from_partition([], [], []), "parts is empty"),
        (lambda: theorem1.contraction(eta=1.0, eta_L=1.0, K=1.5), "K=1.5 must be an integer"),  # was NaN
        (lambda: pr.DriftingQuadratic(L=1.03e307), r"\bL="),  # was "Constants: f_star=nan"
        (lambda: mtl.omega_step([[0.0, 0.0], [1.0, 2.0]], eps=1e300), "eps"),  # was LinAlgError (eigh)
        (
            lambda: mtl.mocha(mtl.synthetic_tasks(m=3, d=2, n=4), 1, sigma_prime=2503028600920218.0),
            "sigma_prime",
        ),
        (lambda: pr.NonconvexSinusoidal(sigma_G=3.69e153), "sigma_G"),  # was "Constants: f_star=nan"
        (lambda: partitions.label_partition([0, 0, 0, 1], 4, 1), "num_workers=4"),
        (lambda: plots.new_figure(width=None), "width"),
        (lambda: co.fwht([1.0, 2.0, 3.0]), "power-of-two"),
        (lambda: partitions.label_partition(None, 2, 1), r"\by\b"),
        (lambda: al.FedBuff(1.0, 0.1, staleness=[]), "staleness"),
        (lambda: theorem2.region(eta="", eta_L=[0.1], L=1.0, K_max=1, tau=0), "eta"),
        (
            lambda: exact.moments(
                EXACT_PROBLEM,
                al.AFACD(1.0, 0.05),
                an.Behaviour(an.UniformArrivals(2), an.NoDelay(), an.UniformSteps(1, 40_000)),
                1,
            ),
            "MAX_LOCAL_STEP_TOTAL",
        ),
        (
            lambda: sweep_spec.parse_spec(_render(dict(BASE_SPEC, **{"problem.family": "nan"}))),
            r"key 'problem.family'.*nan is not allowed",
        ),
        (
            lambda: sweep_spec.parse_spec(_render(dict(BASE_SPEC, **{"problem.family": "1979-05-27"}))),
            r"key 'problem.family'.*datetime.date\(1979, 5, 27\) is not allowed",
        ),
        (lambda: an_.local_slopes([1, 1, 2], [1, 1, 1]), "distinct x"),
        (lambda: thc.compressed_gd_bound(2**62, 1.0, 0.5, 0.1), "MAX_ALLOC_BYTES"),
        (lambda: corollaries.cor3_realized(_SCHED, K=0, L=1.0), "K=0"),
    ],
)
def test_fuzz_findings_are_clear_errors(make, match):
    """Inputs the fuzz run found giving a bare/unnamed error, a NaN or a > 20 s hang, pinned."""
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_drifting_slides_with_few_samples_builds():
    """Fuzz find: samples_min=2 failed (default batch sizes up to 8 exceeded an agent's samples); now B_k <=
    N_k (the same draws, capped: the default configuration, N_k >= 40, is unchanged)."""
    p = pr.DriftingSlides(samples_min=2, samples_max=3, seed=0)
    assert p.num_workers == 20 and np.isfinite(p.constants.sigma_L)
    # num_agents = dim made the (K, d) per-agent diagonals read as one shared (d, d) Hessian
    assert pr.DriftingSlides(num_agents=5, dim=5, seed=0).num_workers == 5


def test_fuzz_findings_give_numbers_not_nan():
    """Huge finite updates compress to finite values or ±inf (were NaN: ‖x‖² and level spans overflowed);
    z-scores at zero standard error are 0 or ±inf (were NaN)."""
    v = np.array([1e308, -1e308, 1e308, 1e308]).reshape(1, 1, -1)
    for comp in (
        co.QSGD(2),
        co.StochasticQuantizer(2),
        co.StochasticQuantizer(2, rotate=True),
        co.Sign(),
        co.TopK(2),
        co.RandK(1),
        co.GaussianSketch(1),
        co.LowRank(1),
    ):
        y, bits = comp.compress(v, np.random.default_rng(0))
        assert not np.isnan(y).any() and not np.isnan(bits).any(), comp
    small = np.array([1.0, -2.0, 0.5, 0.25]).reshape(1, 1, -1)  # normal rows are not rescaled: same bits
    assert np.array_equal(
        co.QSGD(2).compress(small, np.random.default_rng(3))[0],
        co.QSGD(2).compress(small * 2.0**600, np.random.default_rng(3))[0] / 2.0**600,
    )
    assert an_.upper_confidence_bound([0.0, 0.0, 0.0, 0.0], level=1e-300) == 0.0  # was NaN (ppf · 0)
    assert not np.isnan(an_.mean_ci([1.0, 1.0, 1.0], level=1e-300)).any()
    assert an_.mean_ci([8.988465674311579e307, 8.98846567431158e307])[0] == 8.98846567431158e307  # was NaN
    assert theorem2.region([1.0], [0.1], L=1.34e154, K_max=1, tau=0).tolist() == [[False]]  # OverflowError
    import afltheory as aft

    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(1))
    tr = aft.simulate(_PROB, al.AFACD(1.0, 0.05), beh, rounds=4, replicates=3, seed=0)
    z = exact.zscores(tr, exact.moments(_PROB, al.AFACD(1.0, 0.05), beh, 4))
    assert not np.isnan(z).any() and z[0] == 0.0  # t = 0: deterministic x_0, mean equals the exact value
