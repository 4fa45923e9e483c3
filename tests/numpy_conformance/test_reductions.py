"""Reductions and statistics against NumPy: every native dtype, every axis combination of a
3-d array (with keepdims), empty arrays, NaN handling, result dtypes, errors and warnings.
npc's NumPy fallback is an error here, so nothing passes through NumPy."""
import itertools
import warnings

import numpy as np
import pytest

import npc

from _ufunc_helpers import (NATIVE, REDUCTIONS as TABLE_REDUCTIONS, UFUNC_ROWS, assert_same, binary,
                            check_exceptions, kinds, representatives, run_both, ufuncs, ulp_bound)



DTYPES = [NATIVE[c] for c in "?bBhHiIlLefdFD"]
AXES = [None, 0, 1, 2, -1, (0, 1), (0, 2), (1, 2), (0, 1, 2), ()]


def data(dtype, shape=(2, 3, 4), seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif dtype.kind in "iu":
        v = rng.integers(0 if dtype.kind == "u" else -5, 6, n).astype(dtype)
    elif dtype.kind == "f":
        v = rng.uniform(-3, 3, n).astype(dtype)
    else:
        v = (rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)).astype(dtype)
    return v.reshape(shape)


# (name, kwargs, dtype kinds it applies to)
REDUCTIONS = [
    ("sum", {}, "?biufc"), ("prod", {}, "?biufc"), ("max", {}, "?biufc"), ("min", {}, "?biufc"),
    ("any", {}, "?biufc"), ("all", {}, "?biufc"), ("mean", {}, "?biufc"), ("var", {}, "?biufc"),
    ("std", {}, "?biufc"), ("var", {"ddof": 1}, "fc"), ("ptp", {}, "biuf"),
    ("nansum", {}, "biufc"), ("nanprod", {}, "fc"), ("nanmax", {}, "if"), ("nanmin", {}, "if"),
    ("nanmean", {}, "fc"), ("nanvar", {}, "f"), ("nanstd", {}, "f"), ("count_nonzero", {}, "?biufc"),
]


def _kinds_match(dtype, kinds):
    return ("?" if dtype.kind == "b" else dtype.kind) in kinds


VIEWS = ("c", "transposed", "negstride")
RED_CASES = [pytest.param(n, kw, d, v, id=f"{n}{'-' + str(kw) if kw else ''}-{d}-{v}")
             for n, kw, kinds in REDUCTIONS for d in DTYPES if _kinds_match(d, kinds) for v in VIEWS]


def _view(a, b, v):
    if v == "c":
        return a, b
    if v == "transposed":
        return a.transpose(2, 0, 1), b.transpose(2, 0, 1)
    return a[::-1, :, ::-1], npc.asarray(a[::-1, :, ::-1])


@pytest.mark.parametrize("name,kw,dtype,view", RED_CASES)
def test_reduction_all_axes(name, kw, dtype, view):
    a = data(dtype)
    if name.startswith("nan") and dtype.kind in "fc":
        a = a.copy()
        a.flat[[1, 5, 7]] = np.nan
    b = npc.asarray(a)
    for vname, x, y in [(view,) + _view(a, b, view)]:
        for axis in AXES:
            if name == "count_nonzero" and axis == ():
                continue
            for keepdims in (False, True):
                what = f"{name} {dtype} {vname} axis={axis} keepdims={keepdims}"
                with np.errstate(all="ignore"):
                    e, g, _, _ = run_both(getattr(np, name), getattr(npc, name), [x], [y],
                                          dict(kw, axis=axis, keepdims=keepdims))
                if check_exceptions(e, g, what):
                    continue
                assert_same(g, e, name, ulp_bound(name, np.asarray(e).dtype), what)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_methods_match_functions(dtype):
    a = data(dtype)
    b = npc.asarray(a)
    with np.errstate(all="ignore"):
        for m in TABLE_REDUCTIONS + ["mean", "var", "std", "argmax", "argmin", "cumsum", "cumprod"]:
            for axis in (None, 1):
                e, g, _, _ = run_both(getattr(np.ndarray, m), getattr(npc.ndarray, m), [a], [b], {"axis": axis})
                if check_exceptions(e, g, f"{m} {dtype}"):
                    continue
                assert_same(g, e, m, ulp_bound(m, np.asarray(e).dtype), f"ndarray.{m} {dtype} axis={axis}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_arg_and_scan(dtype):
    a = data(dtype)
    b = npc.asarray(a)
    for name in ("argmax", "argmin", "cumsum", "cumprod", "nancumsum", "nancumprod", "nanargmax", "nanargmin"):
        for axis in (None, 0, 1, 2, -1):
            kwargs = {"axis": axis}
            with np.errstate(all="ignore"):
                e, g, _, _ = run_both(getattr(np, name), getattr(npc, name), [a], [b], kwargs)
            if check_exceptions(e, g, f"{name} {dtype} axis={axis}"):
                continue
            assert_same(g, e, name, 0, f"{name} {dtype} axis={axis}")


def test_result_dtypes():
    for dt in DTYPES:
        a = np.ones(3, dt)
        for name in ("sum", "prod", "cumsum", "cumprod", "mean", "var", "std"):
            e = getattr(np, name)(a)
            g = getattr(npc, name)(npc.asarray(a))
            assert np.asarray(g).dtype == np.asarray(e).dtype, (name, dt)


@pytest.mark.parametrize("name", TABLE_REDUCTIONS + ["mean", "argmax", "argmin", "var", "std", "ptp"])
def test_empty_arrays(name):
    for shape in ((0,), (0, 3), (3, 0), (2, 0, 4)):
        a = np.zeros(shape, np.float64)
        b = npc.asarray(a)
        for axis in [None] + list(range(len(shape))):
            e, g, we, wg = run_both(getattr(np, name), getattr(npc, name), [a], [b], {"axis": axis})
            what = f"{name} {shape} axis={axis}"
            if check_exceptions(e, g, what):
                assert str(g) == str(e), what
                continue
            assert_same(g, e, name, 0, what)
            assert wg == we, f"{what}: npc warned {wg}, NumPy {we}"


def test_nan_propagation_and_first_occurrence():
    a = np.array([1.0, np.nan, 3.0, np.nan, 3.0])
    b = npc.asarray(a)
    for name in ("max", "min", "argmax", "argmin", "sum", "nanmax", "nanmin", "nanargmax", "nanargmin",
                 "nansum", "nanmean"):
        assert_same(getattr(npc, name)(b), getattr(np, name)(a), name, 0, name)
    c = np.array([3, 1, 3, 1])
    assert npc.argmax(npc.asarray(c)) == 0 and npc.argmin(npc.asarray(c)) == 1


def test_reduce_keywords_initial_where_out_dtype():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    b = npc.asarray(a)
    mask = np.array([True, False, True, True])
    assert_same(npc.sum(b, axis=1, where=npc.asarray(mask)), np.sum(a, axis=1, where=mask), "sum", 0, "where")
    assert_same(npc.max(b, axis=0, initial=100.0), np.max(a, axis=0, initial=100.0), "max", 0, "initial")
    assert_same(npc.sum(b, dtype=np.float32), np.sum(a, dtype=np.float32), "sum", 0, "dtype")
    out = npc.zeros(4)
    r = npc.sum(b, axis=0, out=out)
    assert r is out
    assert_same(out, np.sum(a, axis=0), "sum", 0, "out")
    assert_same(npc.add.reduce(b, axis=None), np.add.reduce(a, axis=None), "add", 0, "ufunc.reduce")
    assert_same(npc.multiply.reduce(b, axis=(0, 1)), np.multiply.reduce(a, axis=(0, 1)), "multiply", 0, "tuple")
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        npc.sum(b, axis=(0, 0))
    with pytest.raises(np.exceptions.AxisError):
        npc.sum(b, axis=2)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum which has no identity"):
        npc.max(npc.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        npc.max(b, where=npc.asarray(mask))


@pytest.mark.parametrize("uf", ufuncs(binary))
def test_ufunc_methods(request, uf):
    # float64 where the ufunc has float loops, else int64.
    dt = np.float64 if "f" in kinds(next(r for r in UFUNC_ROWS if r.name == uf)) else np.int64
    a = np.arange(1, 13, dtype=dt).reshape(3, 4)
    b = npc.asarray(a)
    np_f, npc_f = getattr(np, uf), getattr(npc, uf)
    if _numpy_reduce_is_not_a_fold(np_f, a):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "NumPy 2.5's SIMD float64 power/arctan2 loops ignore the running value in a contiguous "
            "reduce (power.reduce([4., 5., 6.]) gives 4**6); npc folds left as the ufunc defines")))
    comparison = next(r for r in UFUNC_ROWS if r.name == uf).resolver == "Comparison"

    def no_loop(e, g):
        # A comparison's reduce/accumulate of a non-bool array has no loop. NumPy raises a
        # plain TypeError, or its UFuncTypeError once its dispatch cache holds an earlier
        # failed lookup (the type depends on what ran before in the process); npc raises
        # NumPy's fresh-process TypeError with the same message.
        if not (comparison and type(g) is TypeError and isinstance(e, TypeError)):
            return False
        assert str(g) == "No loop matching the specified signature and casting was found for ufunc " + uf
        return True

    for axis in (0, 1):
        e, g, _, _ = run_both(np_f.reduce, npc_f.reduce, [a], [b], {"axis": axis})
        if not no_loop(e, g) and not check_exceptions(e, g, f"{uf}.reduce"):
            assert_same(g, e, uf, ulp_bound(uf, e.dtype), f"{uf}.reduce axis={axis}")
        e, g, _, _ = run_both(np_f.accumulate, npc_f.accumulate, [a], [b], {"axis": axis})
        if not no_loop(e, g) and not check_exceptions(e, g, f"{uf}.accumulate"):
            assert_same(g, e, uf, ulp_bound(uf, e.dtype), f"{uf}.accumulate axis={axis}")
    x, y = np.arange(1, 4, dtype=dt), np.arange(1, 5, dtype=dt)
    e, g, _, _ = run_both(np_f.outer, npc_f.outer, [x, y], [npc.asarray(x), npc.asarray(y)])
    if not check_exceptions(e, g, f"{uf}.outer"):
        assert_same(g, e, uf, ulp_bound(uf, e.dtype), f"{uf}.outer")


def _numpy_reduce_is_not_a_fold(np_f, a):
    """NumPy's reduce of the rows of `a` is not the left fold of its own ufunc."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            r = np_f.reduce(a, axis=1)
        except TypeError:
            return False
        acc = a[:, 0].astype(r.dtype)
        for i in range(1, a.shape[1]):
            acc = np_f(acc, a[:, i]).astype(r.dtype)
    return r.tobytes() != acc.tobytes()


@pytest.mark.parametrize("uf", ufuncs(lambda r: "f" in r.at))
def test_ufunc_at(uf):
    a = np.arange(6, dtype=np.float64)
    b = npc.asarray(a.copy())
    idx = [0, 1, 1, 4]
    getattr(np, uf).at(a, idx, 3.0)
    getattr(npc, uf).at(b, idx, 3.0)
    assert_same(b, a, uf, 0, f"{uf}.at")


def test_statistics_composites():
    a = np.arange(24, dtype=np.float64).reshape(4, 6) / 7
    b = npc.asarray(a)
    w = np.arange(1, 7, dtype=np.float64)
    assert_same(npc.average(b, axis=1, weights=npc.asarray(w)), np.average(a, axis=1, weights=w), "avg", 0, "avg")
    assert_same(npc.average(b), np.average(a), "avg", 0, "avg none")
    i = np.arange(24).reshape(4, 6)
    assert_same(npc.average(npc.asarray(i), axis=0), np.average(i, axis=0), "avg", 0, "avg int")
    assert npc.count_nonzero(npc.asarray(i)) == np.count_nonzero(i)
    assert_same(npc.count_nonzero(npc.asarray(i), axis=1), np.count_nonzero(i, axis=1), "cnz", 0, "cnz")


def test_mean_warnings_and_float16():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = npc.mean(npc.zeros(0))
    assert np.isnan(r) and any("Mean of empty slice" in str(x.message) for x in w)
    h = np.linspace(0, 100, 1000).astype(np.float16)
    assert_same(npc.mean(npc.asarray(h)), np.mean(h), "mean", 0, "float16 mean")
    assert_same(npc.sum(npc.asarray(h)), np.sum(h), "sum", 0, "float16 sum")


def test_pairwise_sum_bits():
    """Float sums use NumPy's pairwise summation: identical bits on a long contiguous array."""
    rng = np.random.default_rng(5)
    for dt in (np.float32, np.float64):
        a = rng.standard_normal(100002).astype(dt)
        old = npc.get_num_threads()
        npc.set_num_threads(1)
        try:
            assert npc.sum(npc.asarray(a)) == np.sum(a)
            assert npc.sum(npc.asarray(a.reshape(7, -1)[:, :1000]), axis=1).tolist() == \
                np.sum(a.reshape(7, -1)[:, :1000], axis=1).tolist()
        finally:
            npc.set_num_threads(old)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind != "c"], ids=str)
def test_median(dtype):
    a = data(dtype, (4, 5, 6))
    if dtype.kind == "f":
        a = a.copy()
        a[0, 1, 2] = np.nan
    b = npc.asarray(a)
    for axis in (None, 0, 1, 2, -1):
        for keepdims in (False, True):
            e, g, _, _ = run_both(np.median, npc.median, [a], [b], {"axis": axis, "keepdims": keepdims})
            if check_exceptions(e, g, f"median {dtype} {axis}"):
                continue
            assert_same(g, e, "median", 0, f"median {dtype} axis={axis} keepdims={keepdims}")


@pytest.mark.parametrize("fn", ["quantile", "percentile"])
@pytest.mark.parametrize("dtype", [np.dtype(t) for t in ("int16", "uint8", "float16", "float32", "float64")],
                         ids=str)
def test_quantile_percentile_linear(fn, dtype):
    a = data(dtype, (4, 5, 6))
    if dtype.kind == "f":
        a = a.copy()
        a[0, 1, 2] = np.nan
    b = npc.asarray(a)
    scale = 1 if fn == "quantile" else 100
    for q in (0.5, 0.25, 0.0, 1.0, [0.1, 0.9]):
        qq = [v * scale for v in q] if isinstance(q, list) else q * scale
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                what = f"{fn} {dtype} q={q} axis={axis} keepdims={keepdims}"
                e, g, _, _ = run_both(getattr(np, fn), getattr(npc, fn), [a, qq], [b, qq],
                                      {"axis": axis, "keepdims": keepdims})
                if check_exceptions(e, g, what):
                    continue
                assert_same(g, e, fn, 0, what)
    with pytest.raises(ValueError):
        getattr(npc, fn)(b, 2 * scale)


# The ufuncs with NumPy's indexed loops (the op table's `at` column), and one of each other
# class of single-output ufuncs (arity, type resolver, floating-point error class).
@pytest.mark.parametrize("uf", ufuncs(lambda r: r.at) + representatives(lambda r: not r.at and r.nout == 1))
@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "float32", "float64", "complex64", "bool"])
@pytest.mark.parametrize("val", [1.5, 2, -3, 2.5 + 1j, "f64_array", "f32_scalar", "i16_array"])
def test_ufunc_at_casts_unsafely_like_numpy(uf, dtype, val):
    """ufunc.at resolves the loop from both operands and casts each result back into `a`
    unsafely (np.add.at(arange(5), [0, 1], 1.5) truncates); repeated indices accumulate, each
    step cast back; Python scalars are converted to arrays first (not weak)."""
    import warnings
    idx = [0, 1, 1, 4, -1]
    a = (np.arange(6) % 3).astype(dtype) if dtype == "bool" else np.arange(6).astype(dtype)
    b = npc.asarray(a.copy())
    v = {"f64_array": np.array([1.5, -2.25, 3.0, 0.5, 7.75]), "f32_scalar": np.float32(1.5),
         "i16_array": np.array([3, -1, 2, 5, 1], np.int16)}.get(val, val) if isinstance(val, str) else val
    f_np, f_npc = getattr(np, uf), getattr(npc, uf)
    args_np = (a, idx) if f_np.nin == 1 else (a, idx, v)
    args_npc = (b, idx) if f_np.nin == 1 else (b, idx, npc.asarray(v) if isinstance(v, np.ndarray) else v)
    with warnings.catch_warnings(record=True) as w_np:
        warnings.simplefilter("always")
        try:
            f_np.at(*args_np)
        except Exception as e_np:
            with pytest.raises(type(e_np)):
                f_npc.at(*args_npc)
            return
    with warnings.catch_warnings(record=True) as w_npc:
        warnings.simplefilter("always")
        f_npc.at(*args_npc)
    # The ComplexWarning of the complex -> real cast back (FP warnings aside: npc's ufunc.at
    # reports its loop's flags as the ufunc does, not its casts').
    assert [str(x.message) for x in w_npc if x.category is np.exceptions.ComplexWarning] == \
        [str(x.message) for x in w_np if x.category is np.exceptions.ComplexWarning]
    assert_same(b, a, uf, ulp_bound(uf, b.dtype), f"{uf}.at {dtype} {val!r}")
