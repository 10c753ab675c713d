"""``FederatedDataset``: train/test arrays plus a partition of the training set over M workers."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_array, check_array, check_int, check_real, check_seed
from .partitions import dirichlet_partition, iid_partition, label_partition

__all__ = [
    "FederatedDataset",
    "federate",
    "load_digits_federated",
    "load_mnist_federated",
    "load_cifar10_federated",
    "load_shakespeare_federated",
    "stratified_split",
]


@dataclass(frozen=True)
class FederatedDataset:
    """``X_train`` (N, ...) float, ``y_train`` (N,) int, ``X_test``, ``y_test``; ``parts``: M disjoint index
    arrays into the training set; ``num_classes``; ``name``; ``partition``: how ``parts`` was made."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    parts: tuple
    num_classes: int
    name: str = ""
    partition: str = ""

    @property
    def num_workers(self) -> int:
        """M, the number of workers (partitions)."""
        return len(self.parts)

    @property
    def sizes(self) -> np.ndarray:
        """The number of training samples of each worker (M,)."""
        return np.array([len(p) for p in self.parts])

    def worker(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(X_i, y_i) of worker i."""
        p = self.parts[i]
        return self.X_train[p], self.y_train[p]

    def flat(self) -> FederatedDataset:
        """Images flattened to vectors (for logistic regression)."""
        return FederatedDataset(
            self.X_train.reshape(len(self.X_train), -1),
            self.y_train,
            self.X_test.reshape(len(self.X_test), -1),
            self.y_test,
            self.parts,
            self.num_classes,
            self.name,
            self.partition,
        )

    def __repr__(self):
        return (
            f"FederatedDataset({self.name!r}, train={self.X_train.shape}, test={self.X_test.shape}, "
            f"workers={self.num_workers}, sizes={self.sizes.min()}..{self.sizes.max()}, "
            f"partition={self.partition!r})"
        )


def stratified_split(y: ArrayLike, test_fraction: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(train_idx, test_idx): a per-class random split with ⌊test_fraction·N_c⌉ test samples per class."""
    y = _label_array("y", y)
    f = check_real("test_fraction", test_fraction, low=0.0, high=1.0, high_open=True)
    rng = np.random.default_rng(np.random.SeedSequence([check_seed(seed), 0x5E1]))
    tr, te = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = int(round(f * len(idx)))
        te.append(idx[:k])
        tr.append(idx[k:])
    return np.sort(np.concatenate(tr)), np.sort(np.concatenate(te))


def federate(
    X_train: ArrayLike,
    y_train: ArrayLike,
    X_test: ArrayLike,
    y_test: ArrayLike,
    *,
    num_workers: int = 10,
    partition: str = "label",
    classes_per_worker: int = 1,
    alpha: float = 0.5,
    samples_per_worker: int | None = None,
    num_classes: int | None = None,
    seed: int = 0,
    name: str = "",
) -> FederatedDataset:
    """Partition a training set: ``partition`` = "label" (p = ``classes_per_worker`` classes per worker, equal
    sizes), "dirichlet" (Dirichlet(``alpha``) label skew) or "iid"."""
    y_train, y_test = _label_array("y_train", y_train), _label_array("y_test", y_test, empty=True)
    X_train, X_test = check_array("X_train", X_train, dtype=None), check_array("X_test", X_test, dtype=None)
    for name, X, y in (("X_train", X_train, y_train), ("X_test", X_test, y_test)):
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name} must hold numbers, got dtype {X.dtype}")
        if X.ndim < 1 or X.shape[0] != len(y):
            raise ValueError(f"{name} has shape {X.shape}: expected one row per label ({len(y)})")
    if not isinstance(partition, str):
        raise ValueError(f"partition={partition!r} must be 'label', 'dirichlet' or 'iid'")
    M = check_int("num_workers", num_workers, low=1)
    if partition == "label":
        parts = label_partition(
            y_train, M, classes_per_worker, samples_per_worker=samples_per_worker, seed=seed
        )
        desc = f"label(p={classes_per_worker})"
    elif partition == "dirichlet":
        parts = dirichlet_partition(y_train, M, alpha, seed=seed)
        desc = f"dirichlet(alpha={alpha})"
    elif partition == "iid":
        parts = iid_partition(len(y_train), M, samples_per_worker=samples_per_worker, seed=seed)
        desc = "iid"
    else:
        raise ValueError(f"partition={partition!r} must be 'label', 'dirichlet' or 'iid'")
    top = int(max(y_train.max(), y_test.max() if y_test.size else 0))
    C = top + 1 if num_classes is None else check_int("num_classes", num_classes, low=top + 1)
    return FederatedDataset(X_train, y_train, X_test, y_test, tuple(parts), C, str(name), desc)


def _label_array(name: str, y, empty: bool = False) -> np.ndarray:
    """A 1-D int64 array of labels >= 0 (non-empty unless ``empty``), or a ValueError naming ``name``."""
    a = as_array(name, y, dtype=None)
    if (
        a.ndim != 1
        or (a.size == 0 and not empty)
        or (a.size and (not np.issubdtype(a.dtype, np.integer) or a.min() < 0))
    ):
        raise ValueError(
            f"{name} must be a {'' if empty else 'non-empty '}1-D array of non-negative integer "
            f"labels, got shape {a.shape} dtype {a.dtype}"
        )
    return a.astype(np.int64)


def load_digits_federated(
    *,
    num_workers: int = 10,
    classes_per_worker: int = 1,
    partition: str = "label",
    alpha: float = 0.5,
    test_fraction: float = 0.25,
    samples_per_worker: int | None = None,
    images: bool = False,
    seed: int = 0,
) -> FederatedDataset:
    """scikit-learn's 8×8 handwritten digits (1797 samples, 10 classes; shipped with scikit-learn, no
    download),
    pixels scaled to [0, 1], a stratified train/test split, and a non-i.i.d. partition of the training set.
    ``images=True`` keeps (N, 1, 8, 8) arrays (for the CNN); otherwise (N, 64)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover
        raise ImportError("load_digits_federated needs scikit-learn (pip install afltheory[data])") from exc
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    if images:
        X = X.reshape(-1, 1, 8, 8)
    tr, te = stratified_split(y, test_fraction, seed=seed)
    return federate(
        X[tr],
        y[tr],
        X[te],
        y[te],
        num_workers=num_workers,
        partition=partition,
        classes_per_worker=classes_per_worker,
        alpha=alpha,
        samples_per_worker=samples_per_worker,
        num_classes=10,
        seed=seed,
        name="digits",
    )


def load_mnist_federated(directory: str | os.PathLike, **kw: Any) -> FederatedDataset:
    """MNIST IDX files from ``directory``, pixels scaled to [0, 1], images (N, 1, 28, 28); kw as
    ``federate``."""
    from .loaders import load_mnist

    Xtr, ytr, Xte, yte = load_mnist(directory)
    return federate(Xtr[:, None] / 255.0, ytr, Xte[:, None] / 255.0, yte, num_classes=10, name="mnist", **kw)


def load_cifar10_federated(directory: str | os.PathLike, **kw: Any) -> FederatedDataset:
    """CIFAR-10 python pickles from ``directory``, pixels scaled to [0, 1], (N, 3, 32, 32); kw as
    ``federate``."""
    from .loaders import load_cifar10

    Xtr, ytr, Xte, yte = load_cifar10(directory)
    return federate(Xtr / 255.0, ytr, Xte / 255.0, yte, num_classes=10, name="cifar10", **kw)


def load_shakespeare_federated(
    directory: str | os.PathLike, *, max_workers: int | None = None, seq_len: int = 80
) -> FederatedDataset:
    """LEAF Shakespeare: the natural partition (one worker per user). Test set: all users' test samples."""
    from .loaders import LEAF_LETTERS, load_shakespeare

    users, train, test = load_shakespeare(directory, seq_len=seq_len)
    if max_workers is not None:
        users = users[: check_int("max_workers", max_workers, low=1)]
    Xs = [train[u][0] for u in users]
    sizes = np.cumsum([0] + [len(x) for x in Xs])
    parts = tuple(np.arange(sizes[k], sizes[k + 1]) for k in range(len(users)))
    return FederatedDataset(
        np.concatenate(Xs),
        np.concatenate([train[u][1] for u in users]),
        np.concatenate([test[u][0] for u in users]),
        np.concatenate([test[u][1] for u in users]),
        parts,
        len(LEAF_LETTERS),
        "shakespeare",
        "leaf-users",
    )
