"""Graphs whose every step reads the step before at several indices (Floyd-Warshall, stencil
time loops without writes, unrolled by tracing) are lowered in a bounded number of passes
(Note [materialisations found in one pass] in src/fusion/lower_expr.cpp), with NumPy's
results, on both the tracing call and replays."""
import numpy as np
import pytest

import npc
from _compile_diff import check


def _floyd(d):
    d = d.copy()
    for k in range(d.shape[0]):
        d = np.minimum(d, d[:, k, None] + d[None, k, :])
    return d


def _shifted_steps(u, steps):
    # Each step reads the previous one at three offsets (no writes: nothing else materialises).
    for _ in range(steps):
        u = np.concatenate([u[:1], 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:], u[-1:]])
    return u


def _mixed(a, b):
    # A value read at two indices inside another value that is itself read at two indices,
    # next to values read once.
    c = np.sin(a) * 2.0
    e = c[1:] + c[:-1]
    f = e[1:] * e[:-1] + b[2:]
    return f.sum(), f * c[2:], np.exp(b).cumsum()


def _passes(f, *args):
    npc._fusion.reset_stats()
    out = npc.compile(f, backend="fused")(*args)
    return out, npc._fusion.stats()


@pytest.mark.parametrize("n", [12, 60])
def test_floyd_warshall_lowers_in_two_passes(n):
    rng = np.random.default_rng(0)
    d = rng.integers(1, 100, (n, n)).astype(np.int64)
    got, st = _passes(_floyd, d)
    np.testing.assert_array_equal(np.asarray(got), _floyd(d))
    # One graph: a first pass finds every step's value read at several indices, a second lowers.
    assert st["graphs"] == 1 and st["lowering_passes"] <= 2, st


def test_stencil_steps_without_writes_lower_in_few_passes():
    u = np.linspace(0.0, 1.0, 50)
    got, st = _passes(_shifted_steps, u, 30)
    np.testing.assert_allclose(np.asarray(got), _shifted_steps(u, 30), rtol=0, atol=0)
    assert st["lowering_passes"] <= 2 * st["graphs"] + 1, st


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_floyd_against_numpy_both_backends(dtype):
    rng = np.random.default_rng(1)
    d = (rng.random((9, 9)) * 10).astype(dtype)
    for backend in ("fused", "eager"):
        check(_floyd, (d,), (d,), (d[::-1].copy(),), backend=backend)


def test_nested_multi_index_reads_against_numpy():
    rng = np.random.default_rng(2)
    a, b = rng.random(40), rng.random(40)
    for backend in ("fused", "eager"):
        check(_mixed, (a, b), (a, b), (b, a), backend=backend)
