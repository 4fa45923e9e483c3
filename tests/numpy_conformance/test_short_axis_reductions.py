"""Reductions over a short last axis with many outputs (n-body's sum(d * d, axis=-1) over
(n, n, 3)): each output is one strided run, walked as an odometer over the kept axes (Note
[short inner reductions] in src/ops/reduce.cpp); NumPy's values, for any thread count."""
import numpy as np
import pytest

import npc
from dtypes import assert_same


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


VIEWS = {
    "C": lambda x: x,
    "F": lambda x: np.asfortranarray(x),
    "step": lambda x: x[::2, :, ::-1],
    "T": lambda x: x.transpose(1, 0, 2),
}


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64", "float16"])
@pytest.mark.parametrize("func", ["sum", "prod", "max", "min", "mean"])
def test_short_last_axis(func, dtype, view):
    base = data((70, 40, 3), dtype)
    if np.dtype(dtype).kind == "i":
        base = (base * 10).astype(dtype)
    x = VIEWS[view](base)
    X = VIEWS[view](npc.asarray(base))
    with np.errstate(all="ignore"):
        ref = getattr(x, func)(axis=-1)
        got = getattr(X, func)(axis=-1)
    assert_same(got, ref)


def test_initial_keepdims_and_threads():
    x = data((300, 50, 5), "float64", 1)
    X = npc.asarray(x)
    old = npc.get_num_threads()
    try:
        for t in (1, 2):
            npc.set_num_threads(t)
            assert_same(X.sum(axis=-1, initial=1.5), x.sum(axis=-1, initial=1.5))
            assert_same(X.max(axis=2, keepdims=True), x.max(axis=2, keepdims=True))
            assert_same(npc.add.reduce(X[:, ::3], axis=-1), np.add.reduce(x[:, ::3], axis=-1))
    finally:
        npc.set_num_threads(old)


def test_nbody_distance_sums():
    pos = data((150, 3), "float64", 2)
    d = pos[None, :, :] - pos[:, None, :]
    P = npc.asarray(pos)
    D = P[None, :, :] - P[:, None, :]
    assert_same(npc.sum(D * D, axis=-1) + 0.01, np.sum(d * d, axis=-1) + 0.01)
