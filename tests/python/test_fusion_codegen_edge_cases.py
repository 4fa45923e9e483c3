"""The fused backend's new code generation (issue 8, docs/fusion.md) probed against NumPy.

Short unrolled reductions, reductions split over threads, generated scans, float16 errors in
kernels, in-place softmax and the quiet compare of argmin/argmax: each test is a difference
found by running small programs through ``npc.compile(..., backend="fused")`` (codegen errors
raised) and plain NumPy; the ones not fixed yet are strict xfails naming the difference.
"""
import warnings

import numpy as np
import pytest

import npc


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    npc.compiler.reset()
    with npc.config.patch(codegen_errors="raise", cache_dir=str(tmp_path_factory.getbasetemp() / "npc-cache-b3")):
        yield


def _run(fn, args, errstate):
    with warnings.catch_warnings(record=True) as w, np.errstate(**errstate):
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [str(m.message) for m in w]


def check(fn, *args, errstate=None, **kw):
    """fn compiled on the fused backend: NumPy's values (bit for bit), dtype, shape, warnings."""
    errstate = errstate or {}
    want, want_w = _run(fn, [np.copy(a) if isinstance(a, np.ndarray) else a for a in args], errstate)
    f = npc.compile(fn, backend="fused")
    got, got_w = _run(f, [np.copy(a) if isinstance(a, np.ndarray) else a for a in args], errstate)
    gots = got if isinstance(got, tuple) else (got,)
    wants = want if isinstance(want, tuple) else (want,)
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        assert g.tobytes() == w.tobytes(), (g, w)
    assert got_w == want_w
    return got_w


# ---------------------------------------------------------------- float16 errors in kernels
def test_float16_cast_underflow_is_named_cast():
    x = np.array([1.0, 0.0, 5e-4])
    assert check(lambda v: (v * 1e-9).astype(np.float16), x, errstate=dict(under="warn")) == [
        "underflow encountered in cast"]


@pytest.mark.parametrize("dst", [np.float16, np.float32])
@pytest.mark.parametrize("src", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e-9, 1e-40, 1.0])
def test_cast_underflow_named_after_the_op_that_raised(src, dst, scale):
    # The eager replay (Note [fp error attribution]) names a cast's underflow "cast", and a
    # multiply's own "multiply", as NumPy does.
    if np.dtype(src).itemsize <= np.dtype(dst).itemsize:
        pytest.skip("not a narrowing cast")
    x = np.array([1.0, 0.0, 5e-4, -3e-5], src)
    check(lambda v: (v * src(scale)).astype(dst), x, errstate=dict(under="warn"))
    check(lambda v: (v.astype(dst) * dst(scale)), x, errstate=dict(under="warn"))


def test_repeated_expression_warns_per_evaluation():
    h = np.array([100.0, 1.0, -300.0, 60000], np.float16)
    check(lambda v: (v * v) - (v * v), h)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_merged_repeats_warn_per_evaluation(dtype, backend):
    # Note [merged evaluations]: a computation the program repeats is one node; NumPy warns
    # for each evaluation (three divides by zero, two overflowing exps, ...).
    big = {np.float16: 20.0, np.float32: 200.0, np.float64: 2000.0}[dtype]
    x = np.array([1.0, 0.0, big, -1.0], dtype)
    fns = [lambda v: (1 / v) + (1 / v) * (1 / v),
           lambda v: np.exp(v) - np.exp(v),
           lambda v: (np.log(v), np.log(v) + np.sqrt(v), np.sqrt(v)),
           lambda v: np.sum(np.exp(v)) + np.sum(np.exp(v)),
           lambda v: (v * v).astype(np.float16) - (v * v).astype(np.float16)]
    for fn in fns:
        want = _run(fn, [x.copy()], {})
        f = npc.compile(fn, backend=backend)
        got = _run(f, [x.copy()], {})
        gots, wants = (got[0] if isinstance(got[0], tuple) else (got[0],)), \
            (want[0] if isinstance(want[0], tuple) else (want[0],))
        for g, w in zip(gots, wants):
            # NaN signs compared as NaN: NumPy's sign of log(-1) here depends on its SIMD path
            # (tests/python/test_nan_sign_domain.py checks the signs NumPy fixes).
            g, w = np.asarray(g), np.asarray(w)
            assert np.array_equal(np.isnan(g), np.isnan(w))
            assert g[~np.isnan(g)].tobytes() == w[~np.isnan(w)].tobytes()
        assert got[1] == want[1]


# ---------------------------------------------------------------- short unrolled reductions
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_short_last_axis_float_sum_is_numpy_order(dtype, n):
    # NumPy: identity + pairwise_sum(all n) = 0.0 + (((-0.0 + v0) + v1) + ...); was v0 + (v1 + ...)
    # (1 ulp off for n >= 3 on most rows) and -0.0 for rows of -0.0 (NumPy: 0.0).
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((33, n)) * 100).astype(dtype)
    x[0] = -0.0
    check(lambda v: (np.sum(v * 1, axis=1), np.sum(v + 0, axis=-1, keepdims=True), np.mean(v * 1, axis=1),
                     np.sum(v[::-1] * 1, axis=1, initial=0.5)), x)


# ---------------------------------------------------------------- scans
@pytest.mark.parametrize("fn,x", [
    (lambda a: np.cumsum(a), np.full(5, 60000, np.float16)),
    (lambda a: np.cumprod(a * 1), np.full(5, 1e30, np.float32)),
    (lambda a: np.add.accumulate(a * 1), np.full(4, 1e308)),
])
def test_scan_overflow_is_named_accumulate(fn, x):
    # was "overflow encountered in cumsum" / "... in cumprod"
    assert check(fn, x) == ["overflow encountered in accumulate"]


def test_scan_complex_to_real_dtype_warns():
    x = np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        want = np.cumsum(x, dtype=np.float32)
    with pytest.warns(np.exceptions.ComplexWarning):
        got = npc.compile(lambda v: np.cumsum(v, dtype=np.float32), backend="fused")(x)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- complex products
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_product_is_numpys_fma_product(dtype):
    # was a.re*b.re - a.im*b.im as GCC vectorized it: last-bit differences in ~1/3 of the
    # products; NumPy's SIMD loop (and npc's eager one) use fma(ar, br, -(ai*bi)), fma(ar, bi, ai*br)
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((4, 300)) + 1j * rng.standard_normal((4, 300))).astype(dtype)
    check(lambda v: (v[0] * v[1], v * v[::-1] + 1, np.square(v), v[:, :, None] * v[:, None, :7],
                     np.prod(v, axis=0)), z)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_product_strided_and_short_prod(dtype):
    # was last-bit differences: np.prod over a short (unrolled) complex axis multiplied with
    # NumPy's SIMD formula where its reduce loop runs the scalar one (Note [complex products
    # in reductions])
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((4, 300)) + 1j * rng.standard_normal((4, 300))).astype(dtype)
    check(lambda v: (v[0, ::-3] * v[1, ::3], np.prod(v[:, :5], axis=1)), z)


def test_complex_cumprod_every_axis():
    # was last-bit differences along axis 0 (NumPy's accumulate multiplies whole rows with its
    # SIMD fma product there, its scalar product along the last axis)
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((6, 3, 40)) + 1j * rng.standard_normal((6, 3, 40))).astype(np.complex64)
    check(lambda v: (np.cumprod(v, axis=0), np.cumprod(v, axis=1), np.cumprod(v, axis=2), np.cumprod(v)), z)


def test_cumsum_out_selects_the_loop():
    def f(v):
        o = np.empty(v.shape, np.float64)
        np.cumsum(v, out=o)
        return o

    check(f, np.array([2**63 + 5, 2**63 + 7, 2**62, 3], np.uint64))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_outer_axis_sum_within_tolerance(dtype):
    x = np.random.default_rng(0).random((1000, 10)).astype(dtype)
    got = np.asarray(npc.compile(lambda v: np.sum(v * 1, axis=0), backend="fused")(x))
    want = np.sum(x * 1, axis=0)
    assert got.dtype == want.dtype
    np.testing.assert_array_max_ulp(got, want, maxulp=4)
    # Note [outer-axis sums]: up to 8192 rows the fused kernel adds rows in NumPy's order.
    np.testing.assert_array_equal(got, want)
