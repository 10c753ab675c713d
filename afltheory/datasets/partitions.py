"""Non-i.i.d. partitions of a labelled dataset over M workers [Yang et al. 2022, App. E].

* ``label_partition``: the paper's split — each worker holds exactly p label classes and the same number of
  samples (equal share per class); classes are assigned round-robin over a random class permutation, so
  each class is held by about M·p/C workers.
* ``dirichlet_partition``: label skew with class proportions over workers drawn from Dirichlet(α·1_M)
  (Hsu et al. 2019); α → ∞ is i.i.d., α → 0 is one class per worker.
* ``iid_partition``: a uniform random split into equal sizes.

Every partition is a list of M disjoint, sorted int64 index arrays into the dataset.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_array, check_int, check_positive, check_seed

__all__ = ["dirichlet_partition", "iid_partition", "label_partition", "partition_classes"]


def _labels(y):
    y = as_array("y", y, dtype=None)
    if y.ndim != 1 or y.size == 0 or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise ValueError(
            f"y (labels) must be a non-empty 1-D array of non-negative integers, got shape "
            f"{y.shape} dtype {y.dtype}"
        )
    return y.astype(np.int64)


#: Most redraws ``dirichlet_partition`` makes before giving up (each costs O(N + C·M)).
MAX_TRIES = 10_000


def label_partition(
    y: ArrayLike,
    num_workers: int,
    classes_per_worker: int,
    *,
    samples_per_worker: int | None = None,
    seed: int = 0,
) -> list[np.ndarray]:
    """The paper's label split: worker w holds classes perm[(w·p + k) mod C], k < p, with
    ``samples_per_worker`` samples, an equal s = samples_per_worker / p from each of its classes (without
    overlap between workers).

    Default ``samples_per_worker``: the largest equal size the data allow, p · min_c ⌊N_c / k_c⌋ where k_c is
    the number of workers holding class c. Raises ValueError if the request cannot be met exactly.
    """
    y = _labels(y)
    M = check_int("num_workers", num_workers, low=1, high=len(y))  # every worker holds >= 1 sample
    classes = np.unique(y)
    C = len(classes)
    p = check_int("classes_per_worker", classes_per_worker, low=1, high=C)
    rng = np.random.default_rng(np.random.SeedSequence([check_seed(seed), 0xDA7A]))
    perm = rng.permutation(classes)
    assign = [perm[(w * p + np.arange(p)) % C] for w in range(M)]
    holders = {int(c): [w for w in range(M) if c in assign[w]] for c in classes}
    counts = {int(c): int((y == c).sum()) for c in classes}
    used = [c for c in holders if holders[c]]
    s_max = min(counts[c] // len(holders[c]) for c in used)
    if samples_per_worker is None:
        s = s_max
    else:
        spw = check_int("samples_per_worker", samples_per_worker, low=p)
        if spw % p:
            raise ValueError(
                f"samples_per_worker={spw} must be a multiple of classes_per_worker={p} "
                f"(an equal share per class)"
            )
        s = spw // p
        if s > s_max:
            raise ValueError(
                f"samples_per_worker={spw} is too large: with M={M}, p={p} the data allow at most "
                f"{p * s_max} (the scarcest class has {min(counts[c] for c in used)} samples)"
            )
    if s < 1:
        raise ValueError(
            f"not enough samples for num_workers={M} workers with classes_per_worker={p} "
            f"classes each (the scarcest class held has {min(counts[c] for c in used)} samples)"
        )
    parts: list[list[np.ndarray]] = [[] for _ in range(M)]
    for c in used:
        idx = rng.permutation(np.flatnonzero(y == c))
        for k, w in enumerate(holders[c]):
            parts[w].append(idx[k * s : (k + 1) * s])
    return [np.sort(np.concatenate(ps)).astype(np.int64) for ps in parts]


def dirichlet_partition(
    y: ArrayLike, num_workers: int, alpha: float, *, min_size: int = 1, seed: int = 0, max_tries: int = 100
) -> list[np.ndarray]:
    """Dirichlet(α) label skew: for every class c, proportions q_c ~ Dir(α 1_M) split its (shuffled) samples
    over workers. Redrawn until every worker has at least ``min_size`` samples (ValueError after
    ``max_tries``). Every sample goes to exactly one worker."""
    y = _labels(y)
    M = check_int("num_workers", num_workers, low=1, high=len(y))
    alpha = check_positive("alpha", alpha)
    min_size = check_int("min_size", min_size, low=0)
    if min_size * M > len(y):
        raise ValueError(f"min_size={min_size} × num_workers={M} exceeds the {len(y)} samples")
    rng = np.random.default_rng(np.random.SeedSequence([check_seed(seed), 0xD1]))
    for _ in range(check_int("max_tries", max_tries, low=1, high=MAX_TRIES)):
        parts: list[list[np.ndarray]] = [[] for _ in range(M)]
        for c in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == c))
            q = rng.dirichlet(np.full(M, alpha))
            cuts = np.round(np.cumsum(q)[:-1] * len(idx)).astype(int)
            for w, chunk in enumerate(np.split(idx, cuts)):
                parts[w].append(chunk)
        out = [np.sort(np.concatenate(ps)).astype(np.int64) for ps in parts]
        if min(len(p) for p in out) >= min_size:
            return out
    raise ValueError(
        f"dirichlet_partition: no draw in {max_tries} tries gave every worker >= min_size={min_size} "
        f"samples (alpha={alpha}, num_workers={M}); lower min_size or raise alpha"
    )


def iid_partition(
    n: int, num_workers: int, *, samples_per_worker: int | None = None, seed: int = 0
) -> list[np.ndarray]:
    """A uniform random split of range(n) into M equal parts (the remainder is dropped)."""
    n = check_int("n", n, low=1)
    M = check_int("num_workers", num_workers, low=1, high=n)
    s = (
        n // M
        if samples_per_worker is None
        else check_int("samples_per_worker", samples_per_worker, low=1, high=n // M)
    )
    perm = np.random.default_rng(np.random.SeedSequence([check_seed(seed), 0x11D])).permutation(n)
    return [np.sort(perm[w * s : (w + 1) * s]).astype(np.int64) for w in range(M)]


def partition_classes(y: ArrayLike, parts: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The sorted distinct labels each worker holds (``parts``: index arrays into ``y``)."""
    y = as_array("y", y, dtype=None)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of labels, got shape {y.shape}")
    if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
        raise ValueError(f"parts={parts!r} must be a list of index arrays (one per worker)")
    out = []
    for j, p in enumerate(parts):
        idx = as_array(f"parts[{j}]", p, dtype=None)
        if idx.size and (
            not np.issubdtype(idx.dtype, np.integer) or idx.min() < -len(y) or idx.max() >= len(y)
        ):
            raise ValueError(f"parts[{j}] must hold integer indices into y (length {len(y)})")
        out.append(np.unique(y[idx.astype(np.int64)]))
    return out
