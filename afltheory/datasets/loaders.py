"""Readers for the paper's datasets from files the user already has (nothing is downloaded).

* MNIST IDX (LeCun's format; optionally gzipped): ``read_idx(path)``, ``load_mnist(directory)``.
* CIFAR-10 python pickles (``data_batch_1..5``, ``test_batch``): ``load_cifar10(directory)``; unpickled with a
  restricted unpickler that only accepts numpy arrays, lists, dicts, bytes, str and numbers.
* LEAF Shakespeare JSON (``train/*.json``, ``test/*.json``): ``load_shakespeare(directory)``; workers are the
  LEAF users, each sample an 80-character context and the next character.

Every reader validates the format and raises ``ValueError`` naming the file and what is wrong (bad magic
number, truncated data, trailing bytes, wrong shape, labels out of range, missing keys, …).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import struct
from pathlib import Path

import numpy as np

from .._validation import as_array

__all__ = ["LEAF_LETTERS", "load_cifar10", "load_mnist", "load_shakespeare", "read_idx", "write_idx"]

#: Largest dataset file accepted, compressed and decompressed (bytes): MNIST's largest IDX file is 47 MB and a
#: CIFAR-10 batch 31 MB. A crafted file declaring more is refused before anything that size is allocated.
MAX_FILE_BYTES = 512 * 1024**2

_IDX_DTYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise ValueError(f"{path}: file not found")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{path}: {size} bytes, above the limit of {MAX_FILE_BYTES} bytes "
            f"(afltheory.datasets.loaders.MAX_FILE_BYTES)"
        )
    if path.suffix != ".gz":
        return path.read_bytes()
    try:  # stream: stop as soon as the decompressed size passes the limit (a gzip bomb never fills memory)
        with gzip.open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ValueError(f"{path}: not a valid gzip file ({exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(
            f"{path}: decompresses to more than {MAX_FILE_BYTES} bytes, the limit "
            f"(afltheory.datasets.loaders.MAX_FILE_BYTES)"
        )
    return raw


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read one IDX file (magic 0x0000 TT NN: type TT, NN dimensions, big-endian uint32 sizes, then data)."""
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4:
        raise ValueError(f"{path}: truncated IDX header ({len(raw)} bytes, need at least 4)")
    z0, z1, code, ndim = raw[0], raw[1], raw[2], raw[3]
    if z0 != 0 or z1 != 0 or code not in _IDX_DTYPES or ndim == 0:
        raise ValueError(
            f"{path}: bad IDX magic number 0x{raw[:4].hex()} (expected 0x0000TTNN "
            f"with type TT in {[hex(k) for k in _IDX_DTYPES]} and NN >= 1 dimensions)"
        )
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise ValueError(
            f"{path}: truncated IDX header (have {len(raw)} bytes, the {ndim} dimension sizes need {head})"
        )
    dims = struct.unpack(f">{ndim}I", raw[4:head])
    dt = _IDX_DTYPES[code]
    need = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
    have = len(raw) - head
    if have < need:
        raise ValueError(
            f"{path}: truncated IDX data: header says shape {dims} ({need} bytes), file has {have}"
        )
    if have > need:
        raise ValueError(
            f"{path}: {have - need} unexpected trailing bytes after the IDX data of shape {dims}"
        )
    return (
        np.frombuffer(raw, dtype=dt, count=need // dt.itemsize, offset=head)
        .reshape(dims)
        .astype(dt.newbyteorder("="))
    )


def write_idx(path: str | os.PathLike, array: np.ndarray) -> None:
    """Write ``array`` (uint8 by default) in IDX format (used by tests to make files in the real format)."""
    a = as_array("array", array, dtype=None)
    if not 1 <= a.ndim <= 255 or any(n >= 2**32 for n in a.shape):
        raise ValueError(f"array has shape {a.shape}; IDX holds 1 to 255 dimensions, each < 2**32")
    codes = {v.newbyteorder("=").str: k for k, v in _IDX_DTYPES.items()}
    code = codes.get(a.dtype.newbyteorder("=").str)
    if code is None:
        raise ValueError(f"array dtype {a.dtype} has no IDX type code")
    data = struct.pack(">BBBB", 0, 0, code, a.ndim) + struct.pack(f">{a.ndim}I", *a.shape)
    data += a.astype(_IDX_DTYPES[code]).tobytes()
    path = Path(path)
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)


def _find(directory: Path, names: tuple[str, ...]) -> Path:
    for n in names:
        for cand in (directory / n, directory / (n + ".gz")):
            if cand.is_file():
                return cand
    raise ValueError(f"{directory}: none of {list(names)} (or .gz) found")


def load_mnist(directory: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MNIST from IDX files in ``directory``: returns (X_train (60000, 28, 28) uint8, y_train, X_test,
    y_test).

    Accepts ``train-images-idx3-ubyte`` or ``train-images.idx3-ubyte`` spellings, optionally ``.gz``."""
    d = Path(directory)
    out = []
    for split, alt in (("train", "train"), ("t10k", "t10k")):
        ip = _find(d, (f"{split}-images-idx3-ubyte", f"{alt}-images.idx3-ubyte"))
        lp = _find(d, (f"{split}-labels-idx1-ubyte", f"{alt}-labels.idx1-ubyte"))
        X, y = read_idx(ip), read_idx(lp)
        if X.ndim != 3 or X.dtype != np.uint8:
            raise ValueError(
                f"{ip}: expected a 3-D uint8 image array (magic "
                f"0x00000803), got shape {X.shape} dtype {X.dtype}"
            )
        if y.ndim != 1 or y.dtype != np.uint8:
            raise ValueError(
                f"{lp}: expected a 1-D uint8 label array (magic 0x00000801), got shape {y.shape}"
            )
        if len(X) != len(y):
            raise ValueError(f"{lp}: {len(y)} labels but {ip.name} has {len(X)} images")
        if y.size and y.max() > 9:
            raise ValueError(f"{lp}: labels must lie in 0..9, found {int(y.max())}")
        out += [X, y.astype(np.int64)]
    return tuple(out)


# ------------------------------------------------------------------------------------------------ CIFAR-10
class _SafeUnpickler(pickle.Unpickler):
    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("builtins", "bytearray"),
        ("_codecs", "encode"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
    }

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            obj = super().find_class(module, name)
            if name == "bytearray":
                return _bounded_bytearray
            if name == "_reconstruct":
                return _bounded(obj)
            return obj
        raise pickle.UnpicklingError(
            f"refusing to load {module}.{name} (only numpy arrays and builtins allowed)"
        )


def _bounded_bytearray(*args):
    """bytearray(...) for the unpickler, refusing a size beyond MAX_FILE_BYTES (``bytearray(2.5e9)`` in a
    67-byte pickle would otherwise allocate 2.5 GB)."""
    if args and isinstance(args[0], int) and not isinstance(args[0], bool) and args[0] > MAX_FILE_BYTES:
        raise pickle.UnpicklingError(
            f"bytearray of {args[0]} bytes exceeds the limit of {MAX_FILE_BYTES} (MAX_FILE_BYTES)"
        )
    return bytearray(*args)


def _bounded(reconstruct):
    """numpy's ``_reconstruct(subtype, shape, dtype)`` for the unpickler, refusing arrays beyond the limit."""

    def call(subtype, shape, dtype, *rest):
        try:
            n = int(np.prod(np.asarray(shape, dtype=object))) * np.dtype(dtype).itemsize
        except (TypeError, ValueError) as exc:
            raise pickle.UnpicklingError(f"bad array shape {shape!r}: {exc}") from None
        if n > MAX_FILE_BYTES:
            raise pickle.UnpicklingError(
                f"array of {n} bytes exceeds the limit of {MAX_FILE_BYTES} (MAX_FILE_BYTES)"
            )
        return reconstruct(subtype, shape, dtype, *rest)

    return call


def _unpickle(path: Path) -> dict:
    raw = _read_bytes(path)
    try:
        obj = _SafeUnpickler(io.BytesIO(raw), encoding="bytes").load()
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        struct.error,
        OverflowError,
        MemoryError,
    ) as exc:
        raise ValueError(
            f"{path}: not a valid CIFAR-10 python pickle (truncated or malformed: {exc})"
        ) from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: expected a pickled dict, got {type(obj).__name__}")
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in obj.items()}


def _cifar_batch(path: Path):
    b = _unpickle(path)
    for key in ("data", "labels"):
        if key not in b:
            raise ValueError(f"{path}: missing key {key!r} (has {sorted(map(str, b))})")
    data = np.asarray(b["data"])
    labels = np.asarray(b["labels"])
    if data.ndim != 2 or data.shape[1] != 3072 or data.dtype != np.uint8:
        raise ValueError(
            f"{path}: 'data' must be a (N, 3072) uint8 array, got shape {data.shape} dtype {data.dtype}"
        )
    if labels.ndim != 1 or len(labels) != len(data):
        raise ValueError(
            f"{path}: 'labels' must have one entry per image ({len(data)}), got shape {labels.shape}"
        )
    bad_range = labels.size and (labels.min() < 0 or labels.max() > 9)
    if not np.issubdtype(labels.dtype, np.integer) or bad_range:
        raise ValueError(f"{path}: 'labels' must be integers in 0..9")
    return data.reshape(-1, 3, 32, 32), labels.astype(np.int64)


def load_cifar10(directory: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """CIFAR-10 from ``data_batch_1..5`` and ``test_batch`` in ``directory`` (or its ``cifar-10-batches-py``):
    returns (X_train (N, 3, 32, 32) uint8, y_train, X_test, y_test)."""
    d = Path(directory)
    if (d / "cifar-10-batches-py").is_dir():
        d = d / "cifar-10-batches-py"
    train = [_cifar_batch(_find(d, (f"data_batch_{k}",))) for k in range(1, 6)]
    Xte, yte = _cifar_batch(_find(d, ("test_batch",)))
    return (np.concatenate([t[0] for t in train]), np.concatenate([t[1] for t in train]), Xte, yte)


# ------------------------------------------------------------------------------------------------ Shakespeare
#: LEAF's character vocabulary (80 symbols; ``leaf/models/utils/language_utils.py``).
LEAF_LETTERS = "\n !\"&'(),-.0123456789:;>?ABCDEFGHIJKLMNOPQRSTUVWXYZ[]abcdefghijklmnopqrstuvwxyz}"
_CHAR_INDEX = {c: i for i, c in enumerate(LEAF_LETTERS)}


def _leaf_file(path: Path, seq_len: int):
    try:
        obj = json.loads(_read_bytes(path).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not valid LEAF JSON (truncated or malformed: {exc})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: expected a JSON object with keys users, num_samples, user_data")
    for key in ("users", "user_data"):
        if key not in obj:
            raise ValueError(f"{path}: missing key {key!r}")
    users, ud = obj["users"], obj["user_data"]
    ns = obj.get("num_samples")
    if not isinstance(users, list) or not isinstance(ud, dict):
        raise ValueError(f"{path}: 'users' must be a list and 'user_data' an object")
    if ns is not None and (not isinstance(ns, list) or len(ns) != len(users)):
        raise ValueError(f"{path}: 'num_samples' must be a list with one entry per user ({len(users)})")
    out = {}
    for k, u in enumerate(users):
        if u not in ud:
            raise ValueError(f"{path}: user {u!r} listed in 'users' has no entry in 'user_data'")
        rec = ud[u]
        if not isinstance(rec, dict) or "x" not in rec or "y" not in rec:
            raise ValueError(f"{path}: user_data[{u!r}] must have 'x' and 'y' lists")
        xs, ys = rec["x"], rec["y"]
        if not isinstance(xs, list) or not isinstance(ys, list) or len(xs) != len(ys):
            raise ValueError(f"{path}: user {u!r}: 'x' and 'y' must be lists of equal length")
        if ns is not None and ns[k] != len(xs):
            raise ValueError(f"{path}: user {u!r}: num_samples says {ns[k]}, user_data has {len(xs)}")
        X = np.empty((len(xs), seq_len), dtype=np.int64)
        Y = np.empty(len(ys), dtype=np.int64)
        for s, (x, y) in enumerate(zip(xs, ys, strict=False)):
            if not isinstance(x, str) or len(x) != seq_len:
                raise ValueError(
                    f"{path}: user {u!r} sample {s}: 'x' must be a {seq_len}-character string, "
                    f"got {type(x).__name__} of length {len(x) if hasattr(x, '__len__') else '?'}"
                )
            if not isinstance(y, str) or len(y) != 1:
                raise ValueError(f"{path}: user {u!r} sample {s}: 'y' must be a single character, got {y!r}")
            try:
                X[s] = [_CHAR_INDEX[c] for c in x]
                Y[s] = _CHAR_INDEX[y]
            except KeyError as exc:
                raise ValueError(
                    f"{path}: user {u!r} sample {s}: character {exc.args[0]!r} is not in LEAF's "
                    f"80-letter vocabulary"
                ) from None
        out[u] = (X, Y)
    return out


def load_shakespeare(directory: str | os.PathLike, *, seq_len: int = 80) -> tuple[list[str], dict, dict]:
    """LEAF Shakespeare from ``directory/train/*.json`` and ``directory/test/*.json`` (or
    ``directory/data/...``).

    Returns (users, train, test): ``users`` the sorted user ids present in train; ``train[u]``/``test[u]`` =
    (X (n, seq_len) int64 character indices, y (n,) next-character index) — missing test users map to empty
    arrays."""
    d = Path(directory)
    if not (d / "train").is_dir() and (d / "data" / "train").is_dir():
        d = d / "data"
    splits = {}
    for split in ("train", "test"):
        files = sorted((d / split).glob("*.json")) if (d / split).is_dir() else []
        if not files:
            raise ValueError(f"{d / split}: no LEAF *.json files found")
        merged = {}
        for f in files:
            for u, xy in _leaf_file(f, seq_len).items():
                if u in merged:
                    merged[u] = (np.concatenate([merged[u][0], xy[0]]), np.concatenate([merged[u][1], xy[1]]))
                else:
                    merged[u] = xy
        splits[split] = merged
    users = sorted(splits["train"])
    empty = (np.empty((0, seq_len), dtype=np.int64), np.empty(0, dtype=np.int64))
    test = {u: splits["test"].get(u, empty) for u in users}
    return users, splits["train"], test
