"""Code generation of the fused backend (src/fusion, docs/fusion.md), checked against NumPy:

- reductions over short static axes are unrolled (Note [small reductions] in kir_passes.cpp):
  argmin/argmax keep NumPy's first-NaN / first-occurrence results without raising "invalid",
  and the loop-invariant casts of the k-means means are hoisted out of the main loop;
- reductions to a single value (max, min, prod, integer sums, any/all) are split over the
  threads (Note [parallel scalar reductions]) with NumPy's values and NaN propagation;
- cumsum/cumprod are generated scans (Note [scans in kernels]), bit-identical to NumPy,
  with their producer fused and no host call;
- float16 overflow/underflow in a kernel raise NumPy's warnings (npk::d2h).

Every result is compared with NumPy (values, dtype, shape); the fused backend's counters
show that generated kernels, not the eager backend or host calls, produced it.
"""
import os
import re
import sys
import warnings

import numpy as np
import pytest

import npc
from npc import _core

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import fusion_cases as C  # noqa: E402


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-codegen")
    npc.compiler.reset()
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.tobytes() == want.tobytes(), (got, want)


def fused(fn, *args):
    """fn compiled (fused backend) on args: (result, kernel runs, library calls, compiled fn)."""
    f = npc.compile(fn, backend="fused")
    s0 = npc._fusion.stats()
    out = f(*args)
    s1 = npc._fusion.stats()
    assert not f.last_breaks, f.last_breaks
    assert s1["fallbacks"] == s0["fallbacks"], "ran on the eager backend"
    return out, s1["kernel_runs"] - s0["kernel_runs"], s1["library_calls"] - s0["library_calls"], f


def source_of(fn, args, capfd):
    capfd.readouterr()
    old = _core._fusion_get_config()["output_code"]
    _core._fusion_set_config({"output_code": True})
    try:
        out = npc.compile(fn, backend="fused")(*args)
    finally:
        _core._fusion_set_config({"output_code": old})
    err = capfd.readouterr().err
    return out, err[err.find('extern "C" int '):]


def no_warnings_as_numpy(fn, *args):
    """fn compiled gives NumPy's result and, like NumPy, raises no floating-point error."""
    with np.errstate(all="raise"):
        want = fn(*args)
        got, runs, calls, _ = fused(fn, *args)
    assert runs > 0 and calls == 0
    return got, want


# ---------------------------------------------------------------- small reductions
def test_kmeans_unrolled_one_kernel_casts_hoisted(capfd):
    X, means = C.inputs(2, small=True)[0]
    got, src = source_of(C.kmeans_assign, (X, means), capfd)
    assert_same(got, C.kmeans_assign(X, means))
    assert src.count('extern "C" int ') == 1
    # both reductions (norm over 2 coordinates, argmin over 2 means) unrolled: no inner loop;
    # the one loop is written twice, for the calling thread and for the thread pool (Note
    # [threads of kernels] in src/fusion/emit_cpp.cpp)
    assert len(re.findall(r"for \(int64_t", src)) == 2, src
    # the int64 -> float64 casts of the means are computed once, before the parallel loop
    head = src[:src.index("npk::parallel_for(")]
    assert head.count("npk::cast<double, int64_t>") == 4, src
    assert "npk::lt_scalar" in src and "#pragma omp simd" not in src


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_argreduce_short_axis_nan_inf_ties(op, dtype):
    nan, inf = np.nan, np.inf
    rows = [[1, 2, 3], [3, 2, 1], [2, 1, 1], [1, 1, 2], [nan, 1, 2], [1, nan, 0], [1, 0, nan],
            [nan, nan, 1], [inf, inf, 1], [-inf, -inf, 5], [inf, nan, -inf], [-0.0, 0.0, -0.0],
            [0.0, -0.0, 0.0], [-inf, inf, nan], [5, 5, 5], [inf, inf, inf]]
    a = np.array(rows, dtype=dtype)
    for axis in (1, 0):
        x = a if axis == 1 else np.ascontiguousarray(a[:3].T)  # axis of extent 3
        fn = (lambda v, _a=axis: getattr(np, op)(v * 1, axis=_a))
        got, want = no_warnings_as_numpy(fn, x)
        assert_same(got, want)
    for ext in (1, 2, 8):
        x = np.resize(a.ravel(), (40, ext)).astype(dtype)
        got, want = no_warnings_as_numpy(lambda v: getattr(np, op)(v + 0, axis=1), x)
        assert_same(got, want)


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint16", "bool"])
def test_argreduce_short_axis_integers(dtype):
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 3, (50, 3)) > 0) if dtype == "bool" else rng.integers(0, 5, (50, 3)).astype(dtype)
    for op in ("argmin", "argmax"):
        for keepdims in (False, True):
            fn = (lambda v, _o=op, _k=keepdims: getattr(np, _o)(v, axis=1, keepdims=_k))
            got, want = no_warnings_as_numpy(fn, x)
            assert_same(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32", "uint8", "int64", "bool"])
def test_reductions_over_short_axes(dtype):
    rng = np.random.default_rng(7)
    if dtype == "bool":
        x = rng.random((30, 3, 4)) > 0.5
    elif np.dtype(dtype).kind == "f":
        x = (rng.standard_normal((30, 3, 4)) * 3).astype(dtype)
        x[2, 1, 3] = np.nan
        x[5, 0, 0] = np.inf
    else:
        x = rng.integers(0, 9, (30, 3, 4)).astype(dtype)
    fns = [lambda v: np.sum(v, axis=2), lambda v: np.sum(v, axis=(1, 2)), lambda v: np.max(v, axis=1),
           lambda v: np.min(v, axis=(1, 2)), lambda v: np.prod(v, axis=2), lambda v: np.any(v, axis=2),
           lambda v: np.all(v, axis=1), lambda v: np.max(v, axis=2, initial=4),
           lambda v: np.sum(v, axis=2, keepdims=True)]
    for fn in fns:
        with np.errstate(all="ignore"):
            want = fn(x)
            got, runs, calls, _ = fused(fn, x)
        assert runs > 0
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol={"float16": 1e-3, "float32": 1e-6}.get(dtype, 1e-14))
        else:
            assert_same(got, want)


def test_norm_of_short_axis_equals_numpy():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1000, 3))
    fn = lambda X: np.linalg.norm(X - X[0], axis=1)  # noqa: E731
    got, runs, _, _ = fused(fn, X)
    np.testing.assert_allclose(got, fn(X), rtol=1e-15)


# ---------------------------------------------------------------- reductions to one value
SPLIT = [
    ("max", lambda v: np.max(v * 2)), ("min", lambda v: np.min(v - 1)),
    ("max_initial", lambda v: np.max(v, initial=10.0)), ("amax_2d", lambda v: np.max(v.reshape(300, -1) + 0)),
]


@pytest.mark.parametrize("name,fn", SPLIT, ids=[n for n, _ in SPLIT])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_reductions_to_one_value_are_split(name, fn, dtype, capfd):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(300_000).astype(dtype)
    got, src = source_of(fn, (a,), capfd)
    assert "npk_parts_" in src, "not split over the threads"
    want = fn(a)
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_same(got, want)
    f = npc.compile(fn, backend="fused")
    first = np.asarray(f(a)).tobytes()
    for _ in range(3):
        assert np.asarray(f(a)).tobytes() == first  # deterministic for a thread count


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_float_products_to_one_value_run_in_order(dtype, capfd):
    # Note [parallel scalar reductions]: NumPy's running product, bit for bit (partial
    # products round, overflow and underflow elsewhere).
    fn = lambda v: np.prod(1 + v * 1e-6)  # noqa: E731
    a = np.random.default_rng(2).standard_normal(300_000).astype(dtype)
    got, src = source_of(fn, (a,), capfd)
    assert "npk_parts_" not in src
    assert np.asarray(got).tobytes() == np.asarray(fn(a)).tobytes()


@pytest.mark.parametrize("where", [0, 150_000, 299_999])
def test_split_max_min_propagate_nan_without_warning(where):
    a = np.random.default_rng(4).standard_normal(300_000)
    a[where] = np.nan
    for fn in (lambda v: np.max(v * 2), lambda v: np.min(v + 1), lambda v: np.argmax(v) * 0 + np.max(v)):
        got, want = no_warnings_as_numpy(fn, a)
        assert_same(got, want)
        assert np.isnan(got)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint64", "int8", "uint8"])
def test_integer_reductions_to_one_value_are_split_and_wrap(dtype, capfd):
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    a = rng.integers(info.min // 2 if info.min else 0, info.max // 2, 200_000, dtype=dtype, endpoint=True)
    for fn in (lambda v: np.sum(v * 3), lambda v: np.prod(v | 1), lambda v: np.max(v),
               lambda v: np.min(v + 1), lambda v: np.sum(v, initial=7), lambda v: np.sum(v, dtype=v.dtype)):
        got, src = source_of(fn, (a,), capfd)
        assert "npk_parts_" in src
        assert_same(got, fn(a))  # wraparound as NumPy's (any order gives the same bits)


def test_any_all_to_one_value_are_split(capfd):
    a = np.zeros(500_000)
    a[-1] = 1.0
    for fn in (lambda v: np.any(v > 0.5), lambda v: np.all(v < 0.5), lambda v: np.sum(v > -1)):
        got, src = source_of(fn, (a,), capfd)
        assert "npk_parts_" in src
        assert_same(got, fn(a))


def test_short_reductions_to_one_value_stay_on_one_thread(capfd):
    a = np.arange(1000.0)
    got, src = source_of(lambda v: np.max(v * 3), (a,), capfd)
    assert "npk_parts_" not in src
    assert_same(got, np.max(a * 3))


# ---------------------------------------------------------------- scans
SCAN_DTYPES = ["bool", "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64",
               "complex64", "complex128"]


def _scan_example(dtype, shape=(7, 5, 6)):
    rng = np.random.default_rng(9)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.4
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        x = (rng.standard_normal(shape) * 4).astype(dt)
        x[1, 2, 3] = np.nan
        x[0, 0, 0] = -0.0
        return x
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)  # sums and products wrap


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", SCAN_DTYPES)
def test_scan_is_a_generated_kernel_bit_identical(name, dtype):
    x = _scan_example(dtype)
    npf = getattr(np, name)
    for axis in (0, 1, 2, -1, None):
        for view in (x, x[:, ::-1, ::2]):
            fn = (lambda a, _ax=axis: npf(a, axis=_ax))
            with np.errstate(all="ignore"):
                want = npf(view, axis=axis)
                got, runs, calls, _ = fused(fn, view)
            bits_equal(got, want)
            assert runs >= 1 and calls == 0, "the scan ran as a host call"


def test_scan_with_producer_and_consumer_is_two_kernels_without_temporaries():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((512, 1000))
    fn = lambda x: np.cumsum(x * 2 - 1, axis=1) / 7.0  # noqa: E731
    f = npc.compile(fn, backend="fused")
    f(x)
    s0 = npc._fusion.stats()
    npc.reset_peak_memory_stats()
    base = npc.memory_stats()["current_bytes"]
    got = f(x)
    peak = npc.memory_stats()["peak_bytes"] - base
    s1 = npc._fusion.stats()
    bits_equal(got, fn(x))
    assert (s1["kernel_runs"] - s0["kernel_runs"], s1["library_calls"] - s0["library_calls"]) == (2, 0)
    # the scan's buffer and the result; `x * 2 - 1` is computed inside the scan loop
    assert peak <= 2 * x.nbytes + 64 * 1024, peak


def test_scan_float16_rounds_every_step_and_cumsum_of_empty_and_0d():
    x = np.full(3000, 0.1, np.float16)
    got, _, calls, _ = fused(lambda a: np.cumsum(a), x)
    bits_equal(got, np.cumsum(x))  # stops growing where NumPy's float16 sum does
    for a in (np.zeros((0, 4)), np.zeros((4, 0)), np.array(2.5)):
        for fn in (lambda v: np.cumsum(v * 2, axis=0 if v.ndim else None), lambda v: np.cumprod(v + 1)):
            got, _, _, _ = fused(fn, a)
            bits_equal(got, fn(a))


def test_scan_overflow_warns_as_numpy():
    x = np.full(10, 1e300)
    fn = lambda a: np.cumprod(a * 1.0)  # noqa: E731
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = fn(x)
    f = npc.compile(fn, backend="fused")
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = f(x)
    bits_equal(got, want)
    assert [w.category for w in got_w] == [w.category for w in want_w] == [RuntimeWarning]
    assert "overflow" in str(got_w[0].message)


# ---------------------------------------------------------------- float16 fp errors
def _warns_as_numpy(fn, *args, **errstate):
    with warnings.catch_warnings(record=True) as want_w, np.errstate(**errstate):
        warnings.simplefilter("always")
        want = fn(*args)
    f = npc.compile(fn, backend="fused")
    with warnings.catch_warnings(record=True) as got_w, np.errstate(**errstate):
        warnings.simplefilter("always")
        got = f(*args)
    assert_same(got, want)
    assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
    return [str(w.message) for w in got_w]


@pytest.mark.parametrize("src", ["float16", "float32", "float64"])
@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_float_to_int_casts_warn_as_numpy(src, dst):
    # Note [cast flags] in include/npc/scalar_rules.hpp: NaN and values out of the conversion's
    # range give x86's value and "invalid value encountered in cast"; values in range nothing.
    inside = np.array([0.0, -0.0, 1.5, -1.5, 200.0, -129.0, 6e4, 1e4], src)
    assert _warns_as_numpy(lambda v: (v * 1).astype(dst) + 1, inside) == []
    for bad in (np.inf, -np.inf, np.nan, 1e20, -1e20, 2.0**63, 2.0**64, 2.0**32, -2.0**31 - 4096):
        x = np.array([1.0, bad, 3.0]).astype(src)
        got = _warns_as_numpy(lambda v: (v * 1).astype(dst) + 1, x)
        assert got in ([], ["invalid value encountered in cast"])  # (as NumPy: in range, or not)


def test_float16_overflow_and_underflow_warn_as_numpy():
    x = np.array([100.0, 1.0, -300.0], np.float16)
    assert _warns_as_numpy(lambda v: v * np.float16(1000), x) == ["overflow encountered in multiply"]
    assert _warns_as_numpy(lambda v: v * v + 1, x) == ["overflow encountered in multiply"]  # 300**2 > 65504
    big = np.array([1e5, 1.0, 7e4])
    assert _warns_as_numpy(lambda v: (v * 1).astype(np.float16) + 1, big) == ["overflow encountered in cast"]
    tiny = np.array([1e-3, 2.0], np.float16)
    assert _warns_as_numpy(lambda v: v * np.float16(1e-5), tiny, under="warn") == [
        "underflow encountered in multiply"]
    exact = np.array([6.0e-8, 2.0], np.float16)  # subnormal, exactly representable: no underflow
    assert _warns_as_numpy(lambda v: v * np.float16(1), exact, under="warn") == []
