"""Partitions (exact classes/sizes, disjointness) and file loaders (valid files load; broken ones are rejected
with a ValueError naming the file)."""

import gzip
import json
import pickle

import numpy as np
import pytest

from afltheory.datasets import (
    dirichlet_partition,
    label_partition,
    load_cifar10,
    load_digits_federated,
    load_mnist,
    load_shakespeare,
    load_shakespeare_federated,
    partition_classes,
    read_idx,
    write_idx,
)


def _labels(seed=0, C=10, per=(30, 45)):
    rng = np.random.default_rng(seed)
    return np.concatenate([np.full(rng.integers(*per), c) for c in range(C)])


@pytest.mark.parametrize("M,p", [(10, 1), (10, 2), (10, 5), (10, 10), (7, 3), (20, 2)])
def test_label_partition_exact_classes_sizes_disjoint(M, p):
    y = _labels()
    parts = label_partition(y, M, p, seed=1)
    assert len(parts) == M
    sizes = {len(q) for q in parts}
    assert len(sizes) == 1 and sizes.pop() % p == 0
    for q, cls in zip(parts, partition_classes(y, parts), strict=False):
        assert len(cls) == p
        counts = np.bincount(y[q], minlength=10)[cls]
        assert np.all(counts == counts[0])  # equal share per class
    allidx = np.concatenate(parts)
    assert len(np.unique(allidx)) == len(allidx)  # no sample in two workers


def test_label_partition_requested_size_and_errors():
    y = _labels()
    parts = label_partition(y, 10, 2, samples_per_worker=20, seed=0)
    assert all(len(q) == 20 for q in parts)
    with pytest.raises(ValueError, match="multiple of classes_per_worker"):
        label_partition(y, 10, 2, samples_per_worker=21)
    with pytest.raises(ValueError, match="too large"):
        label_partition(y, 10, 2, samples_per_worker=10_000)
    with pytest.raises(ValueError, match="classes_per_worker"):
        label_partition(y, 10, 11)


def test_dirichlet_partition_covers_every_sample_once():
    y = _labels()
    parts = dirichlet_partition(y, 8, 0.3, min_size=5, seed=2)
    allidx = np.sort(np.concatenate(parts))
    np.testing.assert_array_equal(allidx, np.arange(len(y)))
    assert min(len(q) for q in parts) >= 5
    # small alpha is skewed: most workers are dominated by few classes
    dom = [np.bincount(y[q], minlength=10).max() / len(q) for q in parts]
    assert np.median(dom) > 0.25  # an i.i.d. split gives about 0.1-0.15


def test_digits_federated_default():
    ds = load_digits_federated(classes_per_worker=1)
    assert ds.num_workers == 10 and ds.X_train.shape[1] == 64 and ds.num_classes == 10
    assert all(len(c) == 1 for c in partition_classes(ds.y_train, ds.parts))
    assert len(set(ds.sizes.tolist())) == 1
    assert 0 <= ds.X_train.min() and ds.X_train.max() <= 1


# ------------------------------------------------------------------------------------------------ MNIST IDX
def _mnist_dir(tmp_path, n=12, gz=False):
    rng = np.random.default_rng(0)
    ext = ".gz" if gz else ""
    for split in ("train", "t10k"):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        write_idx(tmp_path / f"{split}-images-idx3-ubyte{ext}", images)
        write_idx(tmp_path / f"{split}-labels-idx1-ubyte{ext}", rng.integers(0, 10, n, dtype=np.uint8))
    return tmp_path


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_valid(tmp_path, gz):
    Xtr, ytr, Xte, yte = load_mnist(_mnist_dir(tmp_path, gz=gz))
    assert Xtr.shape == (12, 28, 28) and Xtr.dtype == np.uint8 and ytr.shape == (12,) and Xte.shape[0] == 12


@pytest.mark.parametrize(
    "damage,msg",
    [
        (lambda b: b[:-5], "truncated IDX data"),
        (lambda b: b[:6], "truncated IDX header"),
        (lambda b: b + b"xx", "trailing bytes"),
        (lambda b: b"\x01\x02" + b[2:], "bad IDX magic"),
    ],
)
def test_mnist_rejects_broken_images(tmp_path, damage, msg):
    d = _mnist_dir(tmp_path)
    f = d / "train-images-idx3-ubyte"
    f.write_bytes(damage(f.read_bytes()))
    with pytest.raises(ValueError, match=msg) as exc:
        load_mnist(d)
    assert "train-images-idx3-ubyte" in str(exc.value)


def test_mnist_rejects_label_problems(tmp_path):
    d = _mnist_dir(tmp_path)
    write_idx(d / "train-labels-idx1-ubyte", np.full(11, 3, dtype=np.uint8))
    with pytest.raises(ValueError, match="11 labels but"):
        load_mnist(d)
    write_idx(d / "train-labels-idx1-ubyte", np.full(12, 12, dtype=np.uint8))
    with pytest.raises(ValueError, match="0..9"):
        load_mnist(d)
    (d / "t10k-images-idx3-ubyte").write_bytes(gzip.compress(b"junk"))  # wrong name for gzip: not .gz
    with pytest.raises(ValueError, match="t10k-images"):
        read_idx(d / "t10k-images-idx3-ubyte")


def test_mnist_bad_gzip_and_missing(tmp_path):
    (tmp_path / "x.gz").write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="x.gz.*gzip"):
        read_idx(tmp_path / "x.gz")
    with pytest.raises(ValueError, match="found"):
        load_mnist(tmp_path)


# ------------------------------------------------------------------------------------------------ CIFAR-10
def _cifar_dir(tmp_path, n=4):
    rng = np.random.default_rng(0)
    d = tmp_path / "cifar-10-batches-py"
    d.mkdir()
    for name in [f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]:
        obj = {
            b"batch_label": name.encode(),
            b"labels": rng.integers(0, 10, n).tolist(),
            b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
            b"filenames": [b"a.png"] * n,
        }
        (d / name).write_bytes(pickle.dumps(obj, protocol=2))
    return d


def test_cifar_valid(tmp_path):
    _cifar_dir(tmp_path)
    Xtr, ytr, Xte, yte = load_cifar10(tmp_path)
    assert Xtr.shape == (20, 3, 32, 32) and ytr.shape == (20,) and Xte.shape == (4, 3, 32, 32)


def test_cifar_rejects_truncated_and_malformed(tmp_path):
    d = _cifar_dir(tmp_path)
    f = d / "data_batch_3"
    good = f.read_bytes()
    f.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match="data_batch_3.*truncated or malformed"):
        load_cifar10(d)
    f.write_bytes(pickle.dumps({b"data": np.zeros((4, 100), np.uint8), b"labels": [0] * 4}))
    with pytest.raises(ValueError, match=r"data_batch_3.*\(N, 3072\)"):
        load_cifar10(d)
    f.write_bytes(pickle.dumps({b"data": np.zeros((4, 3072), np.uint8)}))
    with pytest.raises(ValueError, match="data_batch_3.*missing key 'labels'"):
        load_cifar10(d)
    f.write_bytes(pickle.dumps({b"data": np.zeros((4, 3072), np.uint8), b"labels": [0, 1, 2]}))
    with pytest.raises(ValueError, match="data_batch_3.*one entry per image"):
        load_cifar10(d)


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_cifar_refuses_arbitrary_objects(tmp_path):
    d = _cifar_dir(tmp_path)
    (d / "test_batch").write_bytes(pickle.dumps({b"data": _Evil(), b"labels": []}))
    with pytest.raises(ValueError, match="test_batch.*refusing to load builtins.print"):
        load_cifar10(d)


# ------------------------------------------------------------------------------------------------ Shakespeare
def _leaf(users, n=3, seq=80):
    rng = np.random.default_rng(0)
    letters = "abcdefgh ,.ABC"
    ud = {
        u: {
            "x": ["".join(rng.choice(list(letters), seq)) for _ in range(n)],
            "y": [str(rng.choice(list(letters))) for _ in range(n)],
        }
        for u in users
    }
    return {"users": users, "num_samples": [n] * len(users), "user_data": ud}


def _shakes_dir(tmp_path):
    for split, users in (("train", ["u1", "u2", "u3"]), ("test", ["u1", "u2"])):
        (tmp_path / split).mkdir()
        (tmp_path / split / "all_data_niid.json").write_text(json.dumps(_leaf(users)))
    return tmp_path


def test_shakespeare_valid(tmp_path):
    users, train, test = load_shakespeare(_shakes_dir(tmp_path))
    assert users == ["u1", "u2", "u3"] and train["u1"][0].shape == (3, 80) and test["u3"][0].shape == (0, 80)
    ds = load_shakespeare_federated(tmp_path)
    assert ds.num_workers == 3 and ds.num_classes == 80 and ds.X_test.shape == (6, 80)


@pytest.mark.parametrize(
    "mutate,msg",
    [
        (lambda t: t[: len(t) // 2], "truncated or malformed"),
        (lambda t: t.replace('"user_data"', '"userdata"'), "missing key 'user_data'"),
        (lambda t: t.replace('"num_samples": [3, 3, 3]', '"num_samples": [3, 4, 3]'), "num_samples says 4"),
    ],
)
def test_shakespeare_rejects_broken_json(tmp_path, mutate, msg):
    d = _shakes_dir(tmp_path)
    f = d / "train" / "all_data_niid.json"
    f.write_text(mutate(f.read_text()))
    with pytest.raises(ValueError, match=msg) as exc:
        load_shakespeare(d)
    assert "all_data_niid.json" in str(exc.value)


def test_shakespeare_rejects_bad_samples(tmp_path):
    d = _shakes_dir(tmp_path)
    f = d / "train" / "all_data_niid.json"
    obj = json.loads(f.read_text())
    obj["user_data"]["u2"]["x"][1] = "too short"
    f.write_text(json.dumps(obj))
    with pytest.raises(ValueError, match="u2.*sample 1.*80-character"):
        load_shakespeare(d)
    obj["user_data"]["u2"]["x"][1] = "\u00e9" * 80
    f.write_text(json.dumps(obj))
    with pytest.raises(ValueError, match="not in LEAF"):
        load_shakespeare(d)
