"""Multinomial logistic regression on partitioned data (the paper's LR/MNIST model [Yang et al. 2022,
App. E]).

Worker i holds n_i samples (a_s ∈ R^d, y_s ∈ {0..C−1}). Parameters x ∈ R^{(d+1)·C} are the weight matrix
W ∈ R^{d×C} flattened row-major, followed by the bias b ∈ R^C (``unflatten`` / ``flatten``);
logits z = Wᵀa + b.

    f_i(x) = (1/n_i) Σ_{s∈D_i} CE(softmax(z_s), y_s) + (λ/2)‖x‖²,       f = (1/M) Σ_i f_i.

A stochastic gradient of f_i averages a minibatch of ``batch_size`` samples drawn uniformly *without
replacement* from D_i (``batch_size=None``: the full local gradient, σ_L = 0).

Certified constants (every one proved below from the data, never estimated):

* **L (upper).** With ã = (a, 1) the logits are z = (I_C ⊗ ã)ᵀx, so ∇²CE = (I_C ⊗ ã) H_z (I_C ⊗ ã)ᵀ with
  H_z = diag(p) − ppᵀ ≼ ½ I_C (Böhning 1992: diag(p) − ppᵀ ≼ ½(I − 11ᵀ/C)). Hence
  ∇²f_i ≼ ½ I_C ⊗ (Ã_iᵀÃ_i/n_i) + λI and L = max_i ½ λ_max(Ã_iᵀÃ_i/n_i) + λ.
* **μ (lower).** CE is convex (H_z ≽ 0), so ∇²f_i ≽ λI: μ = λ.
* **σ_L (upper).** A per-sample gradient is g_s = ã_s ⊗ (p_s − e_{y_s}) and ‖p − e_y‖² = (1 − p_y)² +
  Σ_{c≠y} p_c² ≤ 2(1 − p_y)² ≤ 2, so ‖g_s‖² ≤ 2‖ã_s‖². The regularizer is the same in every sample and
  cancels. The mean of B_i = min(B, n_i) samples drawn without replacement has
  E‖ξ‖² = (n_i − B_i)/(B_i(n_i − 1)) · (1/n_i) Σ_s ‖g_s − ḡ‖² ≤ (n_i − B_i)/(B_i(n_i − 1)) · 2 mean_s ‖ã_s‖²;
  σ_L² = max_i of the right side.
* **σ_G (upper).** ‖∇CE_i(x)‖ ≤ √2 s_i with s_i = mean_{s∈D_i} ‖ã_s‖; the regularizer cancels in
  ∇f_i − ∇f = (1 − 1/M)∇CE_i − (1/M) Σ_{j≠i} ∇CE_j, so σ_G = max_i √2 ((1 − 1/M) s_i + (1/M) Σ_{j≠i} s_j),
  valid at every x.
* **f* (lower).** CE ≥ 0 and the regularizer ≥ 0: f* ≥ 0. x* is not known (``x_star=None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_array, check_array, check_component, check_int, check_nonnegative
from .base import Constants, NoiseModel, Problem
from .noise import without_replacement_factor

if TYPE_CHECKING:
    from ..datasets import FederatedDataset

__all__ = ["LogisticRegression", "MinibatchNoise", "accuracy", "flatten", "unflatten"]


def unflatten(x: np.ndarray, num_features: int, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """x (..., (d+1)·C) -> (W (..., d, C), b (..., C)) as views."""
    x = np.asarray(x, dtype=float)
    d, C = num_features, num_classes
    if x.shape[-1] != (d + 1) * C:
        raise ValueError(
            f"x has last axis {x.shape[-1]}; expected (num_features+1)*num_classes={(d + 1) * C}"
        )
    return x[..., : d * C].reshape(*x.shape[:-1], d, C), x[..., d * C :]


def flatten(W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(W (..., d, C), b (..., C)) -> x (..., (d+1)·C), the layout of ``LogisticRegression``."""
    W = np.asarray(W, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.concatenate([W.reshape(*W.shape[:-2], -1), b], axis=-1)


def accuracy(x: np.ndarray, X: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Top-1 accuracy of the LR model(s) x (..., (d+1)·C) on data X (n, d), labels y (n,): shape (...)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    x = np.asarray(x, dtype=float)
    d = X.shape[1]
    C = x.shape[-1] // (d + 1)
    W, b = unflatten(x, d, C)
    z = X @ W + b[..., None, :]
    return (z.argmax(axis=-1) == y).mean(axis=-1)


def _ce_terms(W, b, X, y, C, *, value=True, grad=True, weights=None):
    """Cross-entropy of models W (P, d, C), b (P, C) on X (n, d) or (P, n, d), y (n,) or (P, n).

    Returns (mean CE (P,), grad W (P, d, C), grad b (P, C)); ``weights`` (n,) replaces the 1/n mean."""
    Pn, d, _ = W.shape
    # one product per model (stacked matmul; X (n, d) broadcasts): model p's bits never depend on the other
    # models in the call (one GEMM over all P models could round differently for different P)
    z = X @ W
    z = z + b[:, None, :]
    zmax = z.max(axis=-1, keepdims=True)
    z -= zmax
    ez = np.exp(z)
    se = ez.sum(axis=-1, keepdims=True)
    n = z.shape[1]
    w = np.full(n, 1.0 / n) if weights is None else weights
    v = gW = gb = None
    if value:
        zy = np.take_along_axis(z, np.broadcast_to(y, z.shape[:2])[..., None], axis=-1)[..., 0]
        v = ((np.log(se[..., 0]) - zy) * w).sum(axis=-1)
    if grad:
        P = ez / se
        yy = np.broadcast_to(y, z.shape[:2])
        np.put_along_axis(P, yy[..., None], np.take_along_axis(P, yy[..., None], axis=-1) - 1.0, axis=-1)
        P *= w[:, None] if w.ndim == 1 else w[..., None]
        gW = np.swapaxes(X, -1, -2) @ P
        gb = P.sum(axis=1)
    return v, gW, gb


class MinibatchNoise(NoiseModel):
    """Placeholder noise model carrying the certified σ_L of x-dependent minibatch sampling (``upper``).

    The noise depends on x, so it cannot be drawn additively; ``LogisticRegression.stochastic_grad`` draws the
    minibatches itself (the engine calls it when a problem overrides ``stochastic_grad``)."""

    gaussian = False
    sigma_L_kind = "upper"

    def __init__(self, sigma_L: float):
        self.sigma_L = float(sigma_L)

    def sample(self, rng: np.random.Generator, workers: np.ndarray, dim: int) -> np.ndarray:
        """Minibatch noise: the minibatch gradient minus the full local gradient, drawn without
        replacement."""
        raise NotImplementedError("minibatch noise depends on x; use problem.stochastic_grad(x, i, rng)")

    def __repr__(self):
        return f"MinibatchNoise(sigma_L<={self.sigma_L:.4g})"


class LogisticRegression(Problem):
    """Multinomial logistic regression, f_i = mean cross-entropy on worker i's data (+ (λ/2)‖x‖²).

    ``features``: sequence of M arrays (n_i, d); ``labels``: sequence of M int arrays (n_i,) in [0, C).
    ``batch_size``: minibatch size B (without replacement; B_i = min(B, n_i)) or None for full gradients.
    ``l2``: λ ≥ 0. See the module docstring for the certified constants and their proofs.
    """

    additive_noise = False  # minibatch noise depends on x: the problem draws it (stochastic_grad)

    def __init__(
        self,
        features: Sequence,
        labels: Sequence,
        num_classes: int | None = None,
        *,
        batch_size: int | None = None,
        l2: float = 0.0,
    ):
        for name, v in (("features", features), ("labels", labels)):
            if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
                raise ValueError(f"{name}={v!r} must be a sequence with one array per worker")
        if len(features) != len(labels) or len(features) == 0:
            raise ValueError(
                f"features and labels must be non-empty sequences of equal length "
                f"(got {len(features)} and {len(labels)})"
            )
        self.l2 = check_nonnegative("l2", l2)
        Xs, ys = [], []
        for i, (Xi, yi) in enumerate(zip(features, labels, strict=False)):
            Xi = check_array(f"features[{i}]", Xi, ndim=2)
            yi = as_array(f"labels[{i}]", yi, dtype=None)
            if yi.ndim != 1 or len(yi) != len(Xi) or len(yi) == 0:
                raise ValueError(
                    f"labels[{i}] must be 1-D with len = features[{i}].shape[0] = {len(Xi)} >= 1; "
                    f"got shape {yi.shape}"
                )
            if not np.issubdtype(yi.dtype, np.integer):
                raise ValueError(f"labels[{i}] must be integers, got dtype {yi.dtype}")
            Xs.append(np.ascontiguousarray(Xi))
            ys.append(yi.astype(np.int64))
        d = Xs[0].shape[1]
        if any(X.shape[1] != d for X in Xs):
            raise ValueError(f"every worker's features must have the same number of columns (first has {d})")
        ymax = max(int(y.max()) for y in ys)
        C = ymax + 1 if num_classes is None else check_int("num_classes", num_classes, low=2)
        if min(int(y.min()) for y in ys) < 0 or ymax >= C:
            raise ValueError(f"labels must lie in [0, num_classes-1={C - 1}]")
        if C < 2:
            raise ValueError(f"num_classes={C} must be >= 2")
        self.X, self.y = Xs, ys
        self.num_workers = M = len(Xs)
        self.num_features, self.num_classes = d, C
        self.dim = (d + 1) * C
        self.sizes = np.array([len(y) for y in ys])
        self.batch_size = None if batch_size is None else check_int("batch_size", batch_size, low=1)
        # stacked data for the global objective: weights 1/(M n_i)
        self._X_all = np.concatenate(Xs)
        self._y_all = np.concatenate(ys)
        self._cache = None
        self._w_all = np.concatenate([np.full(n, 1.0 / (M * n)) for n in self.sizes])
        # -- certified constants
        Ls, var_b, s = [], [], []
        for Xi in Xs:
            n = len(Xi)
            Xa = np.hstack([Xi, np.ones((n, 1))])
            Ls.append(0.5 * np.linalg.eigvalsh(Xa.T @ Xa / n)[-1])
            sq = np.einsum("nd,nd->n", Xa, Xa)
            Bi = n if self.batch_size is None else min(self.batch_size, n)
            var_b.append(without_replacement_factor(n, Bi) * 2.0 * sq.mean())
            s.append(np.sqrt(sq).mean())
        self.L_per_worker = np.array(Ls) + self.l2
        s = np.array(s)
        self.sigma_L_per_worker = np.sqrt(np.array(var_b))
        sigma_G = float(np.max(np.sqrt(2.0) * ((1 - 1 / M) * s + (s.sum() - s) / M))) if M > 1 else 0.0
        self.noise = MinibatchNoise(float(self.sigma_L_per_worker.max()))
        self.constants = Constants(
            L=float(self.L_per_worker.max()),
            mu=self.l2,
            sigma_L=self.noise.sigma_L,
            sigma_G=sigma_G,
            f_star=0.0,
            x_star=None,
            certified={
                "L": "upper",
                "mu": "lower",
                "sigma_L": "upper",
                "sigma_G": "upper",
                "f_star": "lower",
                "x_star": "none",
            },
        )

    # ----------------------------------------------------------------------------- constructors
    @classmethod
    def from_partition(
        cls, X: ArrayLike, y: ArrayLike, parts: Sequence[ArrayLike], num_classes: int | None = None, **kw: Any
    ) -> LogisticRegression:
        """Worker i holds rows ``parts[i]`` of (X, y)."""
        X = check_array("X", X)
        y = as_array("y", y, dtype=None)
        if X.ndim < 1 or y.ndim != 1 or len(X) != len(y):
            raise ValueError(f"X {X.shape} and y {y.shape} must have one row per label")
        if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
            raise ValueError(f"parts={parts!r} must be a list of index arrays (one per worker)")
        idx, parts = [], list(parts)
        if not parts:
            raise ValueError("parts is empty: expected one index array per worker (at least one)")
        for j, p in enumerate(parts):
            q = as_array(f"parts[{j}]", p, dtype=None)
            if q.ndim != 1 or (
                q.size and (not np.issubdtype(q.dtype, np.integer) or q.min() < -len(y) or q.max() >= len(y))
            ):
                raise ValueError(
                    f"parts[{j}] must be a 1-D array of integer row indices into X (length {len(y)})"
                )
            idx.append(q.astype(np.int64))
        return cls([X[q] for q in idx], [y[q] for q in idx], num_classes, **kw)

    @classmethod
    def from_dataset(cls, data: FederatedDataset, **kw: Any) -> LogisticRegression:
        """From an ``afltheory.datasets.FederatedDataset`` (images are flattened to vectors)."""
        from ..datasets.federated import FederatedDataset

        check_component("data", data, FederatedDataset, "an afltheory.datasets FederatedDataset")
        X = np.asarray(data.X_train, dtype=float).reshape(len(data.X_train), -1)
        return cls.from_partition(X, data.y_train, data.parts, data.num_classes, **kw)

    def __repr__(self):
        return (
            f"LogisticRegression(num_workers={self.num_workers}, num_features={self.num_features}, "
            f"num_classes={self.num_classes}, sizes={self.sizes.min()}..{self.sizes.max()}, "
            f"batch_size={self.batch_size}, l2={self.l2})"
        )

    # ----------------------------------------------------------------------------- helpers
    def unflatten(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(W, b) of parameter vector(s) ``x``: W (..., num_features, num_classes), b (..., num_classes)."""
        return unflatten(x, self.num_features, self.num_classes)

    def accuracy(self, x: np.ndarray, X: ArrayLike, y: ArrayLike) -> np.ndarray:
        """Top-1 accuracy of x (..., dim) on (X, y): shape (...)."""
        return accuracy(x, np.asarray(X, dtype=float).reshape(len(X), -1), y)

    def default_x0(self, seed: int = 0) -> np.ndarray:
        """The zero model (the usual LR start; f(0) = log C)."""
        return np.zeros(self.dim)

    def _broadcast(self, x, i):
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,):
            raise ValueError(f"x has shape {x.shape}; its last axis must be dim={self.dim}")
        i = self._check_worker(i)
        shape = np.broadcast_shapes(x.shape[:-1], i.shape)
        xf = np.broadcast_to(x, (*shape, self.dim)).reshape(-1, self.dim)
        wf = np.broadcast_to(i, shape).reshape(-1)
        return shape, xf, wf

    def _reg_value(self, x):
        return 0.5 * self.l2 * np.einsum("...d,...d->...", x, x) if self.l2 else 0.0

    # ----------------------------------------------------------------------------- Problem API
    def local_value(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        shape, xf, wf = self._broadcast(x, i)
        out = np.empty(len(xf))
        W, b = self.unflatten(xf)
        for j in np.unique(wf):
            sel = wf == j
            out[sel] = _ce_terms(W[sel], b[sel], self.X[j], self.y[j], self.num_classes, grad=False)[0]
        return out.reshape(shape) + self._reg_value(np.broadcast_to(np.asarray(x, float), (*shape, self.dim)))

    def local_grad(self, x: np.ndarray, i: int | np.ndarray) -> np.ndarray:
        shape, xf, wf = self._broadcast(x, i)
        out = np.empty_like(xf)
        W, b = self.unflatten(xf)
        for j in np.unique(wf):
            sel = wf == j
            _, gW, gb = _ce_terms(W[sel], b[sel], self.X[j], self.y[j], self.num_classes, value=False)
            out[sel] = flatten(gW, gb)
        if self.l2:
            out += self.l2 * xf
        return out.reshape(*shape, self.dim)

    def _global(self, x):
        """(value, grad) of f at x (..., dim), memoized for the last x (the engine asks for both per
        round)."""
        x = np.asarray(x, dtype=float)
        c = self._cache
        if c is not None and c[0].shape == x.shape and np.array_equal(c[0], x):
            return c[1], c[2]
        xf = x.reshape(-1, self.dim)
        W, b = self.unflatten(xf)
        v, gW, gb = _ce_terms(W, b, self._X_all, self._y_all, self.num_classes, weights=self._w_all)
        g = flatten(gW, gb)
        if self.l2:
            g += self.l2 * xf
        v = v.reshape(x.shape[:-1]) + self._reg_value(x)
        g = g.reshape(x.shape)
        self._cache = (x.copy(), v, g)
        return v, g

    def value(self, x: np.ndarray) -> np.ndarray:
        v = self._global(x)[0]
        return v.copy() if isinstance(v, np.ndarray) else v

    def grad(self, x: np.ndarray) -> np.ndarray:
        return self._global(x)[1].copy()

    def stochastic_grad(self, x: np.ndarray, i: int | np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Gradient of f_i on a uniform minibatch of B_i = min(batch_size, n_i) samples without replacement,
        drawn independently for every entry of the broadcast (x, i): entry e takes the B_i smallest of the
        first n_i of its own row of max_i n_i uniform keys (rows in entry order)."""
        if self.batch_size is None:
            return self.local_grad(x, i)
        shape, xf, wf = self._broadcast(x, i)
        out = np.empty_like(xf)
        W, b = self.unflatten(xf)
        # one row of keys per entry, in entry order, of a fixed width: entry e's minibatch depends only on its
        # position in the stream, not on which workers the other entries belong to
        keys = rng.random((len(xf), int(self.sizes.max()))) if self.batch_size < self.sizes.max() else None
        for j in np.unique(wf):
            sel = np.flatnonzero(wf == j)
            n = self.sizes[j]
            B = min(self.batch_size, n)
            if B == n:
                _, gW, gb = _ce_terms(W[sel], b[sel], self.X[j], self.y[j], self.num_classes, value=False)
            else:
                idx = np.argpartition(keys[sel, :n], B - 1, axis=1)[:, :B]
                _, gW, gb = _ce_terms(
                    W[sel], b[sel], self.X[j][idx], self.y[j][idx], self.num_classes, value=False
                )
            out[sel] = flatten(gW, gb)
        if self.l2:
            out += self.l2 * xf
        return out.reshape(*shape, self.dim)

    def exact_minibatch_variance(self, x: np.ndarray, i: int) -> float:
        """E‖∇f_i(x, ξ) − ∇f_i(x)‖² at one point x (dim,), exactly (finite-population formula)."""
        x = np.asarray(x, dtype=float)
        W, b = self.unflatten(x[None])
        Xi, yi = self.X[i], self.y[i]
        n = len(yi)
        B = n if self.batch_size is None else min(self.batch_size, n)
        # per-sample gradients: treat each sample as a 1-sample dataset
        _, gW, gb = _ce_terms(
            np.broadcast_to(W, (n, *W.shape[1:])),
            np.broadcast_to(b, (n, b.shape[1])),
            Xi[:, None, :],
            yi[:, None],
            self.num_classes,
            value=False,
        )
        g = flatten(gW, gb)
        dev = g - g.mean(axis=0)
        return without_replacement_factor(n, B) * float(np.mean(np.sum(dev**2, axis=-1)))
