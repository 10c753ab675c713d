"""Crafted inputs must fail early with a clear ValueError/SpecError naming the limit — never allocate what
they declare (issue 19: a 67-byte CIFAR pickle allocating 2.4 GB, a gzip bomb, an 8 MB schedule .npz reaching
9.7 GB, num_workers = 4e8, a 10^10-task spec, huge dims, deep nesting, family="Problem"). Deterministic."""

from __future__ import annotations

import gzip
import io
import pickle
import zipfile

import numpy as np
import pytest

from afltheory import anarchy as an
from afltheory.datasets import loaders
from afltheory.sweep.spec import SpecError, parse_spec


def test_a_tiny_pickle_asking_for_a_huge_bytearray_is_refused(tmp_path):
    # protocol-2 pickle calling builtins.bytearray(2_500_000_000) (LONG1 0x95_02_f9_00): ~35 bytes, 2.5 GB
    payload = b"\x80\x02cbuiltins\nbytearray\n" + b"\x8a\x05\x00\xf9\x02\x95\x00" + b"\x85R."
    (tmp_path / "data_batch_1").write_bytes(payload)
    with pytest.raises(ValueError, match="MAX_FILE_BYTES"):
        loaders._unpickle(tmp_path / "data_batch_1")


def test_a_pickled_array_declaring_a_huge_shape_is_refused(tmp_path):
    class Fake:  # pickles as numpy _reconstruct(ndarray, (10**10,), 'b') — never materialized here
        def __reduce__(self):
            core = getattr(np, "_core", None) or np.core
            return (core.multiarray._reconstruct, (np.ndarray, (10**10,), b"b"))

    (tmp_path / "b").write_bytes(pickle.dumps({"data": Fake()}, protocol=2))
    with pytest.raises(ValueError, match="MAX_FILE_BYTES"):
        loaders._unpickle(tmp_path / "b")


def test_a_gzip_bomb_stops_at_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(loaders, "MAX_FILE_BYTES", 1 << 20)  # 1 MiB limit; the file inflates to 8 MiB
    p = tmp_path / "train-images-idx3-ubyte.gz"
    p.write_bytes(gzip.compress(b"\x00\x00\x08\x03" + (2000).to_bytes(4, "big") * 3 + bytes(8 << 20)))
    with pytest.raises(ValueError, match="decompresses to more than"):
        loaders.read_idx(p)


def _npz(path, **arrays):
    with zipfile.ZipFile(path, "w") as zf:
        for name, a in arrays.items():
            buf = io.BytesIO()
            np.save(buf, a)
            zf.writestr(name + ".npy", buf.getvalue())


def test_a_schedule_file_is_checked_before_it_is_decompressed(tmp_path, monkeypatch):
    import afltheory._validation as v

    s = an.Behaviour(an.UniformArrivals(2)).sample(50, 2, 4, seed=0)
    s.save(tmp_path / "ok.npz")
    assert an.Schedule.load(tmp_path / "ok.npz") == s
    monkeypatch.setattr(v, "MAX_ALLOC_BYTES", 1000)  # the same file now declares more than the limit
    with pytest.raises(ValueError, match="MAX_ALLOC_BYTES"):
        an.Schedule.load(tmp_path / "ok.npz")


def test_a_schedule_file_with_a_huge_num_workers_is_refused(tmp_path):
    z = dict(
        workers=np.zeros((1, 2, 1), np.int64),
        delays=np.zeros((1, 2, 1), np.int64),
        local_steps=np.ones((1, 2, 1), np.int64),
        num_workers=np.int64(4 * 10**10),
        init_local_steps=np.ones((1, 1), np.int64),
    )
    _npz(tmp_path / "big.npz", **z)
    with pytest.raises(ValueError, match="num_workers=40000000000"):
        an.Schedule.load(tmp_path / "big.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a schedule"):
        an.Schedule.load(tmp_path / "junk.npz")


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(num_workers=2.7), "num_workers"),
        (dict(workers=[[0.5, 1.0]]), "workers must hold integers"),
        (dict(wall_clock=[[0.0, np.nan]]), "wall_clock"),
    ],
)
def test_schedule_refuses_silent_coercions(kw, match):
    args = dict(workers=[[0, 1]], delays=[[0, 0]], local_steps=[[1, 1]], num_workers=2)
    args.update(kw)
    if "wall_clock" in kw:
        args.update(workers=[[0]], delays=[[0]], local_steps=[[1]])
    with pytest.raises(ValueError, match=match):
        an.Schedule(**args)


SPEC = """
name = "x"
rounds = 5
[problem]
family = "HeterogeneousQuadratic"
dim = 3
num_workers = 4
L = 2.0
[behaviour.arrivals]
kind = "UniformArrivals"
m = 2
[algorithm]
name = "AFACD"
eta = 1.0
eta_L = 0.05
"""


@pytest.mark.parametrize(
    "edit, match",
    [
        (
            lambda s: (
                s
                + "[grid]\n"
                + "\n".join(f'"problem.p{i}" = [{",".join(map(str, range(10)))}]' for i in range(10))
            ),
            "limit is 1000000",
        ),
        (lambda s: s.replace("dim = 3", "dim = 1000000000"), "MAX_ALLOC_BYTES"),
        (lambda s: s + "[extra]\nx = " + "[" * 3000 + "]" * 3000 + "\n", "too deeply|levels deep"),
        (lambda s: s.replace('family = "HeterogeneousQuadratic"', 'family = "Problem"'), "abstract"),
    ],
)
def test_specs_that_could_never_finish_validating_fail_fast(edit, match):
    with pytest.raises(SpecError, match=match):
        parse_spec(edit(SPEC))


def test_integral_floats_and_ints_give_the_same_task():
    assert parse_spec(SPEC.replace("L = 2.0", "L = 2")).ids == parse_spec(SPEC).ids
    assert parse_spec(SPEC.replace("L = 2.0", "L = 2.5")).ids != parse_spec(SPEC).ids


def test_theory_conditions_at_huge_finite_values_give_a_verdict_not_an_overflow_error():
    """theorem2.conditions(L=1e160, ...) raised a bare OverflowError (Python float ** 2)."""
    from afltheory.theory import theorem2

    conds = theorem2.conditions(L=1e160, eta=1.0, eta_L=1e-100, K_max=3, tau=2)
    assert conds  # evaluated in IEEE arithmetic: a side may be inf (the condition fails), never NaN
    for c in conds:
        assert not (np.isnan(c.lhs) or np.isnan(c.rhs))
    with pytest.raises(ValueError, match="undefined"):  # 0·inf: no verdict exists in floating point
        theorem2.conditions(L=1e160, eta=1.0, eta_L=1e-170, K_max=3, tau=2)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(L=float("nan")), "L=nan"),
        (dict(L=-1.0), "L=-1.0"),
        (dict(sigma_L=-0.1), "sigma_L"),
        (dict(mu=5.0), "mu=5.0"),
        (dict(f_star=float("inf")), "f_star"),
    ],
)
def test_constants_validate_their_fields(kw, match):
    from afltheory.problems import Constants

    args = dict(L=2.0, mu=0.1, sigma_L=0.5, sigma_G=1.0, f_star=0.0, x_star=None)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        Constants(**args)
