"""npc.compile in front of the fused backend, end to end: argmin/argmax, 3-argument where
and integer-array gathers recorded as graph nodes, statistics, codegen_errors, one lowering
per graph, host calls as fusion barriers, and np.linalg.norm traced.

Every result is compared with NumPy (values, dtype, shape); npc.compiler.stats() shows that
generated kernels (not the eager backend) produced it.
"""
import sys
import os

import numpy as np
import pytest

import npc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import fusion_cases as C  # noqa: E402


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-fused")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def same(got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def run_fused(fn, *args, kernels=True):
    """fn compiled with the fused backend on args: (result, stats delta, compiled fn)."""
    f = npc.compile(fn, backend="fused")
    npc.compiler.reset()
    out = f(*args)
    s = npc.compiler.stats()
    assert not f.last_breaks, f.last_breaks
    assert s["graph_breaks"] == 0
    if kernels:
        assert s["kernels_run"] > 0, "no generated kernel ran"
    return out, s, f


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True).astype(dt)
    a = (rng.standard_normal(shape) * 10).astype(dt)
    if dt.kind == "f" and a.size > 3:
        a.flat[3] = np.nan
    return a


# ---------------------------------------------------------------- argmin / argmax
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16", "uint8", "bool"])
@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_argreduce_traced(op, dtype):
    a = values(dtype, (5, 7, 3), seed=1)
    for axis in (0, 1, 2, -1, None):
        for keepdims in (False, True):
            def f(x):
                return getattr(np, op)(x * 1, axis=axis, keepdims=keepdims)
            got, s, _ = run_fused(f, a)
            same(got, f(a))


def test_argreduce_views_and_method():
    a = values("float64", (6, 8), seed=2)

    def f(x):
        return x[::-1, 1::2].argmax(axis=0), np.argmin(x.T, axis=1), np.argmin(x + 1.0)

    got, s, _ = run_fused(f, a)
    for g, w in zip(got, f(a)):
        same(g, w)


def test_argreduce_empty_axis_raises_as_numpy():
    a = np.zeros((0, 3))
    with pytest.raises(ValueError, match="empty sequence"):
        npc.compile(lambda x: np.argmin(x * 2, axis=0), backend="fused")(a)


# ---------------------------------------------------------------- where
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "int8"])
def test_where_traced(dtype):
    a = values(dtype, (4, 6), seed=3)
    b = values(dtype, (6,), seed=4)

    def f(x, y):
        return (np.where(x > y, x, y), np.where(x > 0, x, 2), np.where(x < y, 1.5, x),
                np.where(x != 0, x * 2, y[::-1]), np.where(True, x, y))

    got, s, _ = run_fused(f, a, b)
    for g, w in zip(got, f(a, b)):
        same(g, w)


def test_where_mixed_dtypes_nep50():
    a = np.arange(10, dtype=np.int8)
    b = np.linspace(-1, 1, 10, dtype=np.float32)

    def f(x, y):
        return np.where(y > 0, x, y), np.where(x > 4, x, np.int16(300)), np.where(x > 4, 0.5, 7)

    got, s, _ = run_fused(f, a, b)
    for g, w in zip(got, f(a, b)):
        same(g, w)


# ---------------------------------------------------------------- gathers
def test_gather_with_constant_index():
    a = np.arange(24.0).reshape(4, 6)
    idx = np.array([[3, -1], [0, 5]])
    rows = np.array([2, 0, -1, 1], dtype=np.int32)

    def f(x):
        y = x * x
        return y[:, idx], y[rows], np.take(y, idx, axis=1), y[rows, ...] + 1

    got, s, _ = run_fused(f, a)
    for g, w in zip(got, f(a)):
        same(g, w)


def test_gather_constant_index_out_of_bounds():
    a = np.arange(6.0)
    with pytest.raises(IndexError, match="out of bounds"):
        npc.compile(lambda x: (x * 2)[np.array([0, 6])], backend="fused")(a)


def test_gather_with_traced_index_checks_bounds_each_call(capfd):
    a = np.arange(12.0).reshape(3, 4)

    def f(x, i):
        return (x + 1)[i] * 2

    g = npc.compile(f, backend="fused")
    i = np.array([2, -3, 1])
    same(g(a, i), f(a, i))
    with pytest.raises(IndexError, match="out of bounds"):
        g(a, np.array([0, 3, 1]))
    assert "code generation failed" not in capfd.readouterr().err


def test_new_node_kinds_infer_eager_dtype_and_shape():
    """The traced arrays' dtype and shape (the IR's inference) equal eager NumPy's."""
    a = values("int16", (3, 5, 4), seed=5)
    b = values("float32", (5, 4), seed=6)
    idx = np.array([[1, 0], [2, -1]])
    seen = {}

    def f(x, y):
        r = {"argmin": np.argmin(x, axis=1), "argmax_keep": np.argmax(y, axis=0, keepdims=True),
             "argmin_flat": np.argmin(x), "where": np.where(x > 0, x, y), "where_weak": np.where(y > 0, y, 1),
             "gather": x[idx], "gather_axis1": x[:, idx]}
        for k, v in r.items():
            seen.setdefault(k, (v.dtype, v.shape))
        return tuple(r.values())

    got, s, _ = run_fused(f, a, b)
    want = f(a, b)  # eager run: overwrites nothing (setdefault), records NumPy's for comparison
    for (k, (dt, sh)), g, w in zip(list(seen.items()), got, want):
        assert np.dtype(dt) == w.dtype and tuple(sh) == w.shape, k
        same(g, w)


# ---------------------------------------------------------------- the demo's k-means case
def test_kmeans_assignment_one_kernel():
    X, means = C.inputs(2, small=True)[0]
    f0 = npc._fusion.stats()
    got, s, f = run_fused(C.kmeans_assign, X, means)
    f1 = npc._fusion.stats()
    same(got, C.kmeans_assign(X, means))
    assert f1["graphs"] - f0["graphs"] == 1
    assert f1["kernels"] - f0["kernels"] == 1
    assert "argmin" in f.last_graphs[0] and "sqrt" in f.last_graphs[0]
    got2 = f(X, means)
    same(got2, C.kmeans_assign(X, means))
    assert npc.compiler.stats()["kernels_run"] == 2


# ---------------------------------------------------------------- statistics
def test_stats_are_the_fused_backends_counters():
    a = np.linspace(0.0, 1.0, 101)
    f = npc.compile(lambda x: x * 2 - x * x, backend="fused")
    npc.compiler.reset()
    b0 = npc._fusion.stats()
    for _ in range(3):
        same(f(a), a * 2 - a * a)
    b1 = npc._fusion.stats()
    s = npc.compiler.stats()
    assert s["kernels_compiled"] == b1["kernels"] - b0["kernels"] == 1
    assert s["kernels_run"] == b1["kernel_runs"] - b0["kernel_runs"] == 3
    npc._fusion.reset_stats() if hasattr(npc._fusion, "reset_stats") else npc._core._fusion_reset_stats()
    same(f(a), a * 2 - a * a)
    s = npc.compiler.stats()
    assert s["kernels_run"] == npc._fusion.stats()["kernel_runs"] == 1


def test_each_graph_is_lowered_once():
    a = np.linspace(0.0, 1.0, 33)
    f = npc.compile(lambda x: x / 3 + x * x, backend="fused")
    s0 = npc._fusion.stats()
    same(f(a), a / 3 + a * a)
    s1 = npc._fusion.stats()
    assert s1["graphs"] - s0["graphs"] == 1
    assert s1["kernel_runs"] - s0["kernel_runs"] == 1
    same(f(a), a / 3 + a * a)
    s2 = npc._fusion.stats()
    assert s2["graphs"] == s1["graphs"] and s2["kernel_runs"] - s1["kernel_runs"] == 1


# ---------------------------------------------------------------- codegen_errors
def _write_through_reshape(x):
    # A write whose region is a reshape that is not an index map: not lowered (yet).
    y = x * 2
    y.reshape(-1)[::2] = 0
    return y


def test_codegen_errors_raise_reaches_the_caller():
    a = np.arange(6.0).reshape(2, 3)
    f = npc.compile(_write_through_reshape, backend="fused")
    with pytest.raises(npc.CodegenError, match="write through a reshape"):
        f(a)


def test_codegen_errors_warn_runs_eagerly(capfd):
    a = np.arange(6.0).reshape(2, 3)
    with npc.config.patch(codegen_errors="warn"):
        f = npc.compile(_write_through_reshape, backend="fused")
        same(f(a), _write_through_reshape(a))
        same(f(a), _write_through_reshape(a))
    err = capfd.readouterr().err
    assert err.count("fused code generation failed") == 1


def test_missing_compiler_raise_and_warn(tmp_path):
    a = np.arange(5.0)
    with npc.config.patch(cxx="/nonexistent/c++", cache_dir=str(tmp_path)):
        with pytest.raises(npc.CodegenError):
            npc.compile(lambda x: x * 3 + 2, backend="fused")(a)
    with npc.config.patch(cxx="/nonexistent/c++", codegen_errors="warn", cache_dir=str(tmp_path)):
        same(npc.compile(lambda x: x * 3 + 2, backend="fused")(a), a * 3 + 2)


# ---------------------------------------------------------------- host calls
def test_host_calls_run_eagerly_without_codegen_errors(capfd):
    a = np.arange(4.0)

    def f(x):
        return x * 2 + np.random.default_rng(5).normal(size=4)

    g = npc.compile(f, backend="fused")
    for _ in range(3):
        same(g(a), f(a))
    assert "code generation failed" not in capfd.readouterr().err


# ---------------------------------------------------------------- linalg.norm
def test_linalg_norm_is_traced_into_one_kernel():
    x = values("float64", (4, 50, 3), seed=8)
    x[np.isnan(x)] = 1.0
    assert not hasattr(npc, "_linalg_native")

    def f(v):
        return (np.linalg.norm(v, axis=2), np.linalg.norm(v, axis=-1, keepdims=True),
                np.linalg.norm(v, ord=1, axis=0), np.linalg.norm(v, ord=np.inf, axis=1))

    f0 = npc._fusion.stats()
    got, s, g = run_fused(f, x)
    assert npc._fusion.stats()["graphs"] - f0["graphs"] == 1
    for a, w in zip(got, f(x)):
        np.testing.assert_allclose(a, w, rtol=1e-15, atol=0)
        assert np.asarray(a).dtype == w.dtype and np.asarray(a).shape == w.shape
