"""Reductions over outer axes in fused kernels: lane blocks (Note [lane blocks] in
src/fusion/kir_passes.cpp) keep NumPy's bits while the kernel walks rows instead of columns.

Every case is compared with NumPy bit for bit (values, dtype, shape) and, where NumPy
raises floating-point errors, with the same warnings; the kernel text is checked for the
block loop so that a silent fall-back to the column walk is seen.
"""
import os
import warnings

import numpy as np
import pytest

import npc

from _fused_source import compiled_source_and_result


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-lanes")
    npc.compiler.reset()
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.tobytes() == want.tobytes(), (got, want)


def normalise(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def column_stats(x):
    return x.sum(axis=0), x.max(axis=0), x.min(axis=0), x.var(axis=0, ddof=1)


def mean_keepdims(x):
    return (x - x.mean(axis=0, keepdims=True)) / x.max(axis=0)


def prod_rows(x):
    return np.prod(x, axis=0)


def outer_two_axes(x):
    return x.sum(axis=(0, 1)) * 2


CASES = [
    ("normalise", normalise, (3000, 256)),
    ("normalise-odd-columns", normalise, (1000, 200)),
    ("column-stats", column_stats, (700, 130)),
    ("mean-keepdims", mean_keepdims, (500, 257)),
    ("prod", prod_rows, (40, 300)),
    ("two-outer-axes", outer_two_axes, (20, 30, 300)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,fn,shape", CASES, ids=[c[0] for c in CASES])
def test_outer_axis_reductions_bit_identical_in_lane_blocks(name, fn, shape, dtype, capfd):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    if name == "prod":
        x = (1 + rng.random(shape) / 8).astype(dtype)
    want = fn(x)
    got, src = compiled_source_and_result(fn, (x,), capfd)
    assert "npk_lb" in src, "the outer-axis reduction was not lane-blocked"
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        bits_equal(g, w)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_integer_column_sums_wrap_as_numpy(dtype, capfd):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 200, (300, 190)).astype(dtype)
    fn = lambda a: (a.sum(axis=0), a.max(axis=0), (a * 3).sum(axis=0, dtype=a.dtype))  # noqa: E731
    got, src = compiled_source_and_result(fn, (x,), capfd)
    assert "npk_lb" in src
    for g, w in zip(got, fn(x)):
        bits_equal(g, w)


def lane_blocked_as_numpy(fn, x, capfd):
    """fn(x) compiled is lane-blocked and gives NumPy's bits and warnings (category, text)."""
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = fn(x)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got, src = compiled_source_and_result(fn, (x,), capfd)
    assert "npk_lb" in src
    for g, w in zip(got, want):
        bits_equal(g, w)
    assert [(w.category, str(w.message)) for w in got_w] == [(w.category, str(w.message)) for w in want_w]


def test_nan_inf_and_signed_zero_columns(capfd):
    x = np.random.default_rng(1).standard_normal((600, 192))
    x[5, 3] = np.nan
    x[:, 7] = -0.0
    x[10, 9] = np.inf
    x[11, 9] = -np.inf
    x[100, 150] = np.inf
    lane_blocked_as_numpy(lambda a: (a.sum(axis=0), a.max(axis=0), a.min(axis=0), a.mean(axis=0)), x, capfd)


def test_overflow_in_a_column_warns_as_numpy(capfd):
    x = np.full((400, 130), 1e308)
    x[:, 5] = 1.0
    lane_blocked_as_numpy(lambda a: (a.sum(axis=0), a.min(axis=0)), x, capfd)


def test_dynamic_sizes_reuse_the_lane_kernel():
    f = npc.compile(normalise, backend="fused")
    rng = np.random.default_rng(5)
    for rows, cols in [(300, 256), (301, 256), (257, 199), (2000, 131)]:
        x = rng.standard_normal((rows, cols))
        bits_equal(f(x), normalise(x))


@pytest.mark.parametrize("shape", [(500, 100), (5, 1000)])
def test_contiguous_or_narrow_reductions_keep_their_loops(shape, capfd):
    # A reduction over the last axis streams already; fewer than two blocks of outputs
    # would leave a thread idle: neither is lane-blocked, and both stay NumPy's bits.
    # (Integers: a float sum over the last axis adds in SIMD lanes, not in NumPy's order.)
    x = np.random.default_rng(2).integers(-1000, 1000, shape)
    fn = (lambda a: a - a.sum(axis=1, keepdims=True)) if shape[1] == 1000 else (lambda a: a.sum(axis=0) + a.max(axis=0))
    got, src = compiled_source_and_result(fn, (x,), capfd)
    assert "npk_lb" not in src
    bits_equal(got, fn(x))


def test_noncontiguous_input_columns(capfd):
    x = np.random.default_rng(4).standard_normal((400, 600))[:, ::2]
    fn = lambda a: a.sum(axis=0) + a.max(axis=0)  # noqa: E731
    got, _ = compiled_source_and_result(fn, (x,), capfd)
    bits_equal(got, fn(x))
