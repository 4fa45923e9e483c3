"""median, quantile, percentile, nanmedian, nanquantile, nanpercentile against NumPy: every
method, every real native dtype, q as Python number / list / NumPy scalar / float32 array,
axis None/int/negative/tuple, keepdims, out=, overwrite_input, weights, NaN and all-NaN
slices, empty and 0-d input, non-contiguous and negative-stride views. Values must be
identical (0 ULP), dtypes equal, the RuntimeWarnings NumPy gives equal, exceptions of
NumPy's type. npc's NumPy fallback is an error here."""
import numpy as np
import pytest

import npc

from _ufunc_helpers import NATIVE, assert_same, check_exceptions, run_both



REAL = [NATIVE[c] for c in "?bBhHiIlLefd"]
METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher", "midpoint", "nearest"]
QFUNCS = ["quantile", "percentile", "nanquantile", "nanpercentile"]


def data(dtype, shape, seed=0, nans=True):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.kind == "c":
        v = (rng.uniform(-50, 50, n) + 1j * rng.integers(-2, 3, n)).astype(dtype)
        if nans and n > 6:
            v[[3, 6]] = np.nan
        return v.reshape(shape)
    if dtype.kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        # Full-range values: NumPy's b - a wraps for small integer types.
        lo, hi = max(info.min, -10**6), min(info.max, 10**6)
        v = rng.integers(lo, hi, n, endpoint=True).astype(dtype)
        if n > 3:
            v[1], v[2] = info.min, info.max
    else:
        v = rng.uniform(-50, 50, n).astype(dtype)
        if nans and n > 6:
            v[[3, 6]] = np.nan
    return v.reshape(shape)


def qvalues(fn):
    s = 100 if "percentile" in fn else 1
    return [0.5 * s, 0.3 * s, 1 * s, 0 * s if s == 1 else 0, [0.0, 0.25 * s, 0.5 * s, 1.0 * s],
            np.float64(0.7 * s), np.array([0.1, 0.9], np.float32) * s, 1]


def _check(fn, x, y, q, what, **kw):
    e, g, we, wg = run_both(getattr(np, fn), getattr(npc, fn), [x, q], [y, q], kw)
    if check_exceptions(e, g, what):
        return
    assert_same(g, e, fn, 0, what)
    assert wg == we, f"{what}: npc warned {wg}, NumPy {we}"


@pytest.mark.parametrize("fn", QFUNCS)
@pytest.mark.parametrize("dtype", REAL, ids=str)
def test_methods_axes_q_kinds(fn, dtype):
    a = data(dtype, (3, 4, 5))
    b = npc.asarray(a)
    for method in METHODS:
        for q in qvalues(fn):
            for axis in (None, 1, -1, (0, 2)):
                _check(fn, a, b, q, f"{fn} {dtype} {method} q={q!r} axis={axis}", axis=axis, method=method)
        _check(fn, a, b, qvalues(fn)[4], f"{fn} {dtype} {method} keepdims", axis=(0, 2), method=method,
               keepdims=True)
        _check(fn, a, b, qvalues(fn)[0], f"{fn} {dtype} {method} keepdims None", axis=None, method=method,
               keepdims=True)


@pytest.mark.parametrize("fn", QFUNCS + ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", [np.dtype(t) for t in ("int8", "uint16", "int64", "float16", "float32",
                                                          "float64")], ids=str)
@pytest.mark.parametrize("view", ["0d", "one", "1d", "strided", "negstride", "transposed", "empty0", "empty1",
                                  "broadcast"])
def test_shape_kinds(fn, dtype, view):
    base = data(dtype, (6, 7), seed=3)
    a = {"0d": base[0, 0].reshape(()), "one": base[0, :1], "1d": base[1],
         "strided": base[::2, ::3], "negstride": base[::-1, ::-2], "transposed": base.T,
         "empty0": base[:0], "empty1": base[:, :0],
         "broadcast": np.broadcast_to(base[2], (4, 7))}[view]
    b = npc.asarray(a) if view != "broadcast" else npc.broadcast_to(npc.asarray(base[2]), (4, 7))
    axes = [None] + list(range(-a.ndim, a.ndim))
    qs = [None] if fn.endswith("median") else qvalues(fn)[:3] + [qvalues(fn)[4]]
    for axis in axes:
        for q in qs:
            for keepdims in (False, True):
                what = f"{fn} {dtype} {view} axis={axis} q={q!r} keepdims={keepdims}"
                if q is None:
                    e, g, we, wg = run_both(getattr(np, fn), getattr(npc, fn), [a], [b],
                                            dict(axis=axis, keepdims=keepdims))
                    if check_exceptions(e, g, what):
                        continue
                    assert_same(g, e, fn, 0, what)
                    assert wg == we, f"{what}: npc warned {wg}, NumPy {we}"
                else:
                    _check(fn, a, b, q, what, axis=axis, keepdims=keepdims)


MEDIAN_CASES = [(fn, d) for fn in ("median", "nanmedian") for d in REAL[1:]] + \
    [("median", np.dtype(t)) for t in ("complex64", "complex128")]


@pytest.mark.parametrize("fn,dtype", MEDIAN_CASES, ids=[f"{f}-{d}" for f, d in MEDIAN_CASES])
def test_median_axes(fn, dtype):
    for shape in ((4, 5, 6), (3, 601)):  # nanmedian takes another path for slices of 600+
        a = data(dtype, shape)
        if dtype.kind in "fc":
            a[1] = np.nan  # an all-NaN slice along the last axes
        b = npc.asarray(a)
        for axis in (None, 0, 1, -1, (0, 1), (0, -1)) if len(shape) == 3 else (None, 0, 1, (0, 1)):
            for keepdims in (False, True):
                what = f"{fn} {dtype} {shape} axis={axis} keepdims={keepdims}"
                e, g, we, wg = run_both(getattr(np, fn), getattr(npc, fn), [a], [b],
                                        dict(axis=axis, keepdims=keepdims))
                if check_exceptions(e, g, what):
                    continue
                assert_same(g, e, fn, 0, what)
                assert wg == we, f"{what}: npc warned {wg}, NumPy {we}"


@pytest.mark.parametrize("fn", QFUNCS)
@pytest.mark.parametrize("dtype", [np.dtype(t) for t in ("float16", "float32", "float64")], ids=str)
def test_all_nan_slices(fn, dtype):
    a = data(dtype, (4, 5), nans=False)
    a[0] = np.nan
    a[2, 1] = np.nan
    b = npc.asarray(a)
    for method in ("linear", "lower", "hazen", "midpoint", "inverted_cdf"):
        for q in qvalues(fn):
            for axis in (None, 0, 1):
                _check(fn, a, b, q, f"{fn} {dtype} all-NaN {method} q={q!r} axis={axis}", axis=axis,
                       method=method)
    full = np.full((3,), np.nan, dtype)
    _check(fn, full, npc.asarray(full), qvalues(fn)[0], f"{fn} all-NaN 1-d")


def test_special_values_and_wrapping():
    a = np.array([np.inf, np.inf, 1.0, -np.inf, 5.0])
    for fn in QFUNCS:
        for q in qvalues(fn):
            for m in METHODS:
                _check(fn, a, npc.asarray(a), q, f"{fn} inf {m} q={q!r}", method=m)
    i8 = np.array([-100, 100, 120, -128], np.int8)
    for fn in QFUNCS:
        _check(fn, i8, npc.asarray(i8), qvalues(fn)[0], f"{fn} int8 wrap")
        _check(fn, i8, npc.asarray(i8), qvalues(fn)[4], f"{fn} int8 wrap q-array")
    u = np.array([3, 200, 7], np.uint8)
    _check("quantile", u, npc.asarray(u), 0.6, "uint8 wrap")
    z = np.array([-0.0, 0.0, -0.0])
    for m in METHODS:
        _check("quantile", z, npc.asarray(z), 0.5, f"signed zero {m}", method=m)
    assert_same(npc.median(npc.asarray(z)), np.median(z), "median", 0, "median signed zeros")


@pytest.mark.parametrize("fn", QFUNCS)
def test_weights(fn):
    rng = np.random.default_rng(7)
    a = rng.uniform(-5, 5, (4, 6))
    a[1, 2] = np.nan
    w = rng.integers(0, 4, (4, 6)).astype(np.float64)
    w[:, 0] = 0  # leading zero weights
    b, wb = npc.asarray(a), npc.asarray(w)
    for q in qvalues(fn):
        for axis, ww, wwb in ((None, w, wb), (1, w, wb), (0, w, wb), (1, w[0] + 1, wb[0] + 1),
                              ((0, 1), w, wb)):
            what = f"{fn} weights q={q!r} axis={axis} w{ww.shape}"
            e, g, we, wg = run_both(lambda *x, **k: getattr(np, fn)(*x, weights=ww, **k),
                                    lambda *x, **k: getattr(npc, fn)(*x, weights=wwb, **k),
                                    [a, q], [b, q], dict(axis=axis, method="inverted_cdf"))
            if check_exceptions(e, g, what):
                continue
            assert_same(g, e, fn, 0, what)
    for bad_kw, exc in ((dict(method="linear", weights=w), ValueError),
                        (dict(method="inverted_cdf", weights=-w), ValueError),
                        (dict(method="inverted_cdf", weights=w[0]), TypeError),
                        (dict(method="inverted_cdf", weights=np.zeros_like(w)), ValueError)):
        kw = dict(bad_kw)
        kw_npc = dict(kw, weights=npc.asarray(kw["weights"]))
        with pytest.raises(exc), np.errstate(invalid="ignore"):
            getattr(np, fn)(a, qvalues(fn)[0], **kw)
        with pytest.raises(exc), np.errstate(invalid="ignore"):
            getattr(npc, fn)(b, qvalues(fn)[0], **kw_npc)


@pytest.mark.parametrize("fn", QFUNCS + ["median", "nanmedian"])
def test_out_and_overwrite_input(fn):
    a = data(np.dtype(np.float64), (3, 4, 5))
    b = npc.asarray(a)
    args = [] if fn.endswith("median") else [qvalues(fn)[4]]
    for axis, keepdims in ((1, False), ((0, 2), True), (None, False)):
        e = getattr(np, fn)(a, *args, axis=axis, keepdims=keepdims)
        out = npc.zeros(np.shape(e))
        with np.errstate(all="ignore"):
            r = getattr(npc, fn)(b, *args, axis=axis, keepdims=keepdims, out=out)
        assert r is out
        assert_same(out, np.asarray(e), fn, 0, f"{fn} out axis={axis}")
    if fn.endswith("median"):
        # NumPy's median writes out= through numpy.mean (an unsafe cast); NaN slices are
        # then copied in under same_kind (TypeError).
        for x in (a, np.nan_to_num(a)):
            try:
                e = getattr(np, fn)(x, axis=1, out=np.zeros((3, 5), dtype=np.int64))
            except TypeError:
                with pytest.raises(TypeError):
                    getattr(npc, fn)(npc.asarray(x), axis=1, out=npc.zeros((3, 5), dtype=np.int64))
            else:
                r = getattr(npc, fn)(npc.asarray(x), axis=1, out=npc.zeros((3, 5), dtype=np.int64))
                assert_same(r, e, fn, 0, f"{fn} int64 out")
    else:
        # quantile/percentile write out= through numpy.add (same_kind: TypeError); the nan
        # functions with out[...] = result (an unsafe cast).
        try:
            e = getattr(np, fn)(a, *args, axis=1, out=np.zeros((4, 3, 5), dtype=np.int64))
        except TypeError:
            with pytest.raises(TypeError):
                getattr(npc, fn)(b, *args, axis=1, out=npc.zeros((4, 3, 5), dtype=np.int64))
        else:
            r = getattr(npc, fn)(b, *args, axis=1, out=npc.zeros((4, 3, 5), dtype=np.int64))
            assert_same(r, e, fn, 0, f"{fn} int64 out")
    c = a.copy()
    d = npc.asarray(c.copy())
    e = getattr(np, fn)(c, *args, axis=None, overwrite_input=True)
    g = getattr(npc, fn)(d, *args, axis=None, overwrite_input=True)
    assert_same(g, e, fn, 0, f"{fn} overwrite_input")


@pytest.mark.parametrize("fn", QFUNCS)
def test_errors(fn):
    b = npc.asarray(np.arange(6.0))
    s = 100 if "percentile" in fn else 1
    for q, exc in ((1.5 * s, ValueError), (-0.1, ValueError), ([0.2, 2 * s], ValueError),
                   (np.full((2, 2, 2), 0.5), ValueError)):
        with pytest.raises(exc):
            getattr(np, fn)(np.arange(6.0), q)
        with pytest.raises(exc):
            getattr(npc, fn)(b, q)
    with pytest.raises(ValueError, match="is not a valid method"):
        getattr(npc, fn)(b, 0.5 * s, method="bogus")
    with pytest.raises(TypeError, match="real numbers"):
        getattr(npc, fn)(npc.asarray(np.ones(3, complex)), 0.5 * s)
    with pytest.raises(np.exceptions.AxisError):
        getattr(npc, fn)(b, 0.5 * s, axis=1)
    with pytest.raises(ValueError):
        getattr(npc, fn)(npc.asarray(np.ones((2, 3))), 0.5 * s, axis=(0, 0))
