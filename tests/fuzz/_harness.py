"""Shared fuzz harness (issue 19): value strategies a careless or hostile caller might pass, and ``call`` —
run an entry point under a deadline and a memory cap, and accept only (a) a ValueError/TypeError with a
message, or (b) a result without NaN. Anything else (AttributeError, ZeroDivisionError, OverflowError,
IndexError, KeyError, RuntimeError, MemoryError, a hang past the deadline, …) fails the test."""

from __future__ import annotations

import contextlib
import inspect
import re
import signal
import warnings

import numpy as np
from hypothesis import strategies as st

#: numbers: edge values, wrong-sign, huge (2**63), non-finite
NUMBERS = st.one_of(
    st.integers(-3, 12),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 0.0, 0.5, 1.0, 1e-300, 1e300, 1e160, -1e160, 2.7, float("nan"), float("inf")]),
)
#: anything: numbers, None, booleans, short text, short lists
ANY = st.one_of(
    NUMBERS,
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.lists(st.integers(-2, 5), max_size=4),
    st.lists(st.floats(-2, 2), max_size=4),
)
#: small arrays of arbitrary floats (incl. nan/inf/huge), shapes up to (4, 4)
FLOAT_ARRAYS = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6),
    st.lists(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=4), min_size=1, max_size=4),
    st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=8),
)
INT_ARRAYS = st.one_of(
    st.lists(st.integers(-2, 6), max_size=12),
    st.lists(st.lists(st.integers(-1, 4), min_size=1, max_size=3), min_size=1, max_size=4),
)

#: bare exceptions a clear argument check would have prevented
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


class Hang(Exception):
    """The call ran past its deadline."""


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise ``Hang`` in the main thread after ``seconds`` (POSIX interval timer); a no-op elsewhere."""
    if not hasattr(signal, "setitimer"):  # pragma: no cover - Windows
        yield
        return

    def _alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def no_nan(obj, depth: int = 0) -> None:
    """Assert that ``obj`` (number, array, list/tuple/dict, or an object's attributes) holds no NaN."""
    if depth > 3:
        return
    if isinstance(obj, (float, np.floating)):
        assert not np.isnan(obj), "NaN in a result"
    elif isinstance(obj, np.ndarray) and obj.dtype.kind in "fc":
        assert not np.isnan(obj).any(), "NaN in a result"
    elif isinstance(obj, dict):
        for v in list(obj.values())[:50]:
            no_nan(v, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for o in obj[:50]:
            no_nan(o, depth + 1)
    elif hasattr(obj, "__dict__") and not inspect.isclass(obj) and not inspect.ismodule(obj):
        for v in list(vars(obj).values())[:50]:
            no_nan(v, depth + 1)


def call(fn, *args, seconds: float = 20.0, **kwargs):
    """``fn(*args, **kwargs)`` under a deadline; returns the result (checked NaN-free) or the ValueError /
    TypeError it raised (checked to carry a message). Bare internal exceptions and hangs fail."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with deadline(seconds):
                out = fn(*args, **kwargs)
        except Hang as exc:  # pragma: no cover - the failure hypothesis reports
            raise AssertionError(f"hang: {fn.__qualname__}{args}{kwargs}: {exc}") from exc
        except (ValueError, TypeError) as exc:
            assert str(exc), f"{type(exc).__name__} without a message"
            return exc
        except INTERNAL as exc:  # pragma: no cover - the failure hypothesis reports
            raise AssertionError(
                f"bare {type(exc).__name__} from {fn.__qualname__}{args}{kwargs}: {exc}"
            ) from exc
    no_nan(out)
    return out


def _stems(name: str) -> set[str]:
    """A parameter's names as a message may spell them: ``gamma_value`` -> {gamma_value, gamma}."""
    out = {name, name.rstrip("_")}
    for suffix in ("_value", "_"):
        if name.endswith(suffix):
            out.add(name[: -len(suffix)])
    return out


def names_a_parameter(exc: BaseException, names) -> bool:
    """True when the message names one of ``names`` (as a word) or says which argument is wrong."""
    msg = str(exc)
    words = set().union(*(_stems(n) for n in names)) if names else set()
    return any(re.search(rf"(?<![\w.]){re.escape(k)}\b", msg) for k in words) or "argument" in msg


def check_kwargs_call(fn, kwargs, names=None, seconds: float = 20.0):
    """``call(fn, **kwargs)``; a ValueError/TypeError must name one of ``names`` (default: the kwargs)."""
    out = call(fn, seconds=seconds, **kwargs)
    if isinstance(out, (ValueError, TypeError)) and kwargs:
        names = list(kwargs) if names is None else names
        assert names_a_parameter(out, names), f"{type(out).__name__} does not name a parameter: {out}"
    return out
