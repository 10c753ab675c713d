"""Fuzz public constructors and entry points with arbitrary arguments (issue 19): each call either raises
a ValueError/TypeError whose message names the parameter, or returns a valid result without NaN — never a bare
internal exception (AttributeError, ZeroDivisionError, OverflowError, IndexError, KeyError, RuntimeError, …),
never a huge allocation (arguments are bounded by the library's limits, see docs/reliability.md).

Default run: a few dozen derandomized examples per target (profile ``ci``); the long run is
``HYPOTHESIS_PROFILE=fuzz pytest -m slow tests/fuzz`` (2,000 examples per target)."""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory import problems as pr
from afltheory.theory import theorem2, theorem3, theorem4

# values a careless or hostile caller might pass: edge numbers, wrong types, huge sizes (bounded by limits)
NUMBERS = st.one_of(
    st.integers(-3, 12),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 0.0, 0.5, 1.0, 1e-300, 1e300, 1e160, -1e160, 2.7, float("nan"), float("inf")]),
)
ANY = st.one_of(
    NUMBERS,
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.lists(st.integers(-2, 5), max_size=4),
    st.lists(st.floats(-2, 2), max_size=4),
)

TARGETS = {
    "HeterogeneousQuadratic": (
        pr.HeterogeneousQuadratic,
        ["dim", "num_workers", "L", "mu", "sigma_L", "sigma_G", "seed", "hessian"],
    ),
    "HeterogeneousCurvatureQuadratic": (
        pr.HeterogeneousCurvatureQuadratic,
        ["dim", "num_workers", "L", "mu", "sigma_L", "sigma_G", "seed"],
    ),
    "NonconvexSinusoidal": (pr.NonconvexSinusoidal, ["dim", "num_workers", "L", "mu", "sigma_L", "sigma_G"]),
    "UniformArrivals": (an.UniformArrivals, ["m"]),
    "BiasedArrivals": (an.BiasedArrivals, ["m", "probs"]),
    "FixedArrivals": (an.FixedArrivals, ["workers"]),
    "CyclicArrivals": (an.CyclicArrivals, ["m"]),
    "MarkovAvailability": (an.MarkovAvailability, ["m", "p_on", "p_off", "max_wait"]),
    "UniformDelay": (an.UniformDelay, ["max_delay"]),
    "FixedDelay": (an.FixedDelay, ["delay"]),
    "GeometricDelay": (an.GeometricDelay, ["p", "max_delay"]),
    "ConstantSteps": (an.ConstantSteps, ["K"]),
    "UniformSteps": (an.UniformSteps, ["low", "high"]),
    "PerWorkerSteps": (an.PerWorkerSteps, ["Ks"]),
    "AFACD": (al.AFACD, ["eta", "eta_L"]),
    "AFACS": (al.AFACS, ["eta", "eta_L"]),
    "FedAvg": (al.FedAvg, ["eta", "eta_L"]),
    "FedBuff": (al.FedBuff, ["eta", "eta_L"]),
    "AsySG": (al.AsySG, ["eta", "eta_L"]),
    "theorem2.conditions": (theorem2.conditions, ["L", "eta", "eta_L", "K_max", "tau"]),
    "theorem3.conditions": (theorem3.conditions, None),
    "theorem4.conditions": (theorem4.conditions, None),
}
INTERNAL = (
    AttributeError,
    ZeroDivisionError,
    OverflowError,
    IndexError,
    KeyError,
    RuntimeError,
    NotImplementedError,
    RecursionError,
    MemoryError,
    AssertionError,
    FloatingPointError,
)


def _params(fn, names):
    if names is not None:
        return names
    return [
        p
        for p, q in inspect.signature(fn).parameters.items()
        if q.kind in (q.KEYWORD_ONLY, q.POSITIONAL_OR_KEYWORD)
    ]


def _no_nan(obj, depth=0):
    if depth > 3:
        return
    if isinstance(obj, (float, np.floating)):
        assert not np.isnan(obj), "NaN in a result"
    elif isinstance(obj, np.ndarray) and obj.dtype.kind == "f":
        assert not np.isnan(obj).any(), "NaN in a result"
    elif isinstance(obj, (list, tuple)):
        for o in obj[:50]:
            _no_nan(o, depth + 1)
    elif hasattr(obj, "__dict__") and not inspect.isclass(obj):
        for v in list(vars(obj).values())[:50]:
            _no_nan(v, depth + 1)


def _call(fn, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(**kwargs)
        except (ValueError, TypeError) as exc:
            msg = str(exc)
            assert msg, f"{type(exc).__name__} without a message"
            return exc
        except INTERNAL as exc:  # pragma: no cover - the failure hypothesis reports
            raise AssertionError(f"bare {type(exc).__name__} from {kwargs}: {exc}") from exc
    _no_nan(out)
    return out


def _names_a_parameter(exc, names):
    msg = str(exc)
    return any(re.search(rf"\b{re.escape(k)}\b", msg) for k in names) or "argument" in msg


FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("target", sorted(TARGETS))
@FUZZ
@given(data=st.data())
def test_constructors_and_conditions_fail_clearly_or_succeed(target, data):
    fn, names = TARGETS[target]
    names = _params(fn, names)
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    kwargs = {k: data.draw(ANY, label=k) for k in chosen}
    out = _call(fn, kwargs)
    if isinstance(out, (ValueError, TypeError)) and kwargs:
        assert _names_a_parameter(out, names), f"{type(out).__name__} does not name a parameter: {out}"


@FUZZ
@given(rounds=NUMBERS, replicates=NUMBERS, seed=NUMBERS, thr=NUMBERS, x0=NUMBERS, eta_L=NUMBERS)
def test_simulate_fails_clearly_or_returns_a_nan_free_trace(rounds, replicates, seed, thr, x0, eta_L):
    p = pr.HeterogeneousQuadratic(dim=2, num_workers=3, sigma_L=0.1)
    beh = an.Behaviour(an.UniformArrivals(2), an.UniformDelay(1), an.ConstantSteps(2))
    small = lambda v: v if not isinstance(v, int) or isinstance(v, bool) or v < 60 else 60  # bounded runtime
    try:
        algo = al.AFACD(1.0, eta_L)
    except (ValueError, TypeError):
        algo = al.AFACD(1.0, 0.05)
    kwargs = dict(
        problem=p,
        algorithm=algo,
        behaviour=beh,
        rounds=small(rounds),
        replicates=small(replicates),
        seed=seed,
        divergence_threshold=thr,
        x0=None if isinstance(x0, bool) else np.full(2, x0) if isinstance(x0, (int, float)) else x0,
    )
    out = _call(aft.simulate, kwargs)
    if not isinstance(out, Exception):
        for a in (out.grad_norm_sq, out.loss, out.x_final):
            assert not np.isnan(a).any()


@pytest.mark.slow
@pytest.mark.parametrize("target", sorted(TARGETS))
@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_long_fuzz_run(target, data):
    """The long run (``-m slow``): the same property with 2,000 examples per target."""
    test_constructors_and_conditions_fail_clearly_or_succeed.hypothesis.inner_test(target, data)
