"""Argument checks shared by the library: every failure names the parameter, its value and the allowed
range."""

from __future__ import annotations

import math
import numbers

import numpy as np


def check_real(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as float, or raise ValueError naming ``name`` and the allowed interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={value!r} must be a real number")
    v = float(value)
    lo = "(" if low_open or low is None else "["  # an unbounded end is open: ±inf is never allowed (finite)
    hi = ")" if high_open or high is None else "]"
    rng = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    if not math.isfinite(v):
        raise ValueError(f"{name}={value!r} must be finite; allowed range {rng}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name}={value!r} is outside the allowed range {rng}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name}={value!r} is outside the allowed range {rng}")
    return v


#: Largest allocation (bytes) a constructor or entry point may make because of its arguments. Arguments that
#: would need more are refused up front with a ValueError naming them (crafted specs/files must not exhaust
#: memory while being validated).
MAX_ALLOC_BYTES = 4 * 1024**3


def check_alloc(what: str, nbytes: float, limit: float | None = None) -> None:
    """Raise ValueError if ``nbytes`` (an estimate of what the arguments ``what`` would allocate) exceeds the
    limit (default ``MAX_ALLOC_BYTES``)."""
    limit = MAX_ALLOC_BYTES if limit is None else limit
    if nbytes > limit:
        raise ValueError(
            f"{what} would allocate ~{nbytes / 1024**3:.3g} GiB, above the limit of "
            f"{limit / 1024**3:.3g} GiB (afltheory._validation.MAX_ALLOC_BYTES)"
        )


def check_positive(name: str, value) -> float:
    return check_real(name, value, low=0.0, low_open=True)


def check_nonnegative(name: str, value) -> float:
    return check_real(name, value, low=0.0)


def check_int(name: str, value, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as int (numpy integers accepted), or raise ValueError naming the range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}={value!r} must be an integer")
    v = int(value)
    rng = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name}={v} is outside the allowed range {rng}")
    return v


def as_array(name: str, value, dtype=float) -> np.ndarray:
    """``np.asarray(value, dtype)``, or a ValueError naming ``name`` (text, None, ragged lists, objects);
    no range checks."""
    if value is None or isinstance(value, (str, bytes)):
        raise ValueError(f"{name}={_short_repr(value)} must be an array of numbers")
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None
    return arr


def check_array(
    name: str,
    value,
    *,
    ndim: int | None = None,
    shape: tuple | None = None,
    dtype=float,
    allow_inf: bool = False,
) -> np.ndarray:
    """Return a finite numpy array (``allow_inf``: ±inf allowed, NaN never); ``shape`` entries of None match
    any length."""
    arr = as_array(name, value, dtype)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(
            s is not None and s != a for s, a in zip(shape, arr.shape, strict=False)
        ):
            want = tuple("any" if s is None else s for s in shape)
            raise ValueError(f"{name} has shape {arr.shape}, expected {want}")
    if np.issubdtype(arr.dtype, np.floating):
        if allow_inf and np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN")
        if not allow_inf and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains non-finite values (nan or inf)")
    return arr


class ComponentTypeError(TypeError, ValueError):
    """A component argument (a worker rule, a compute-time model, a schedule, …) of the wrong type. A
    TypeError; also a ValueError, so callers that catch the library's bad-input ValueError keep
    catching it."""


def _short_repr(value, limit: int = 60) -> str:
    try:
        r = " ".join(repr(value).split())
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        r = f"<{type(value).__name__} object>"
    return r if len(r) <= limit else r[: limit - 3] + "..."


def check_component(name: str, value, allowed, what: str, *, optional: bool = False):
    """Return ``value`` if it is an instance of ``allowed`` (a class or tuple of classes; None too when
    ``optional``), else raise ComponentTypeError naming ``name``, the received type and ``what`` is allowed.
    Components are checked at construction, so a wrong one never surfaces later as an AttributeError."""
    if (optional and value is None) or isinstance(value, allowed):
        return value
    allowed_text = what + (" or None" if optional else "")
    raise ComponentTypeError(
        f"{name}={_short_repr(value)} (type {type(value).__name__}) must be {allowed_text}"
    )


#: Seeds are non-negative integers below 2**64 (a Philox key word; SeedSequence entropy).
MAX_SEED = 2**64 - 1


def check_seed(value, name: str = "seed") -> int:
    """A seed: an integer in [0, 2**64 − 1], or a ValueError naming ``name`` and that range."""
    return check_int(name, value, low=0, high=MAX_SEED)
