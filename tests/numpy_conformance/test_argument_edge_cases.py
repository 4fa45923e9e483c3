"""Regressions found by probing new features as a NumPy user would: each test runs the same
expression with NumPy and npc and compares values, dtypes, exception types and messages."""
import warnings

import numpy as np
import pytest

import npc
from _diff import assert_same_outcome
from _ufunc_helpers import UFUNC_ROWS, binary, kinds, ufuncs


def outcome(fn, lib):
    """(kind, payload, warnings) of fn(lib): the result as NumPy data or the exception."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(lib)
        except Exception as e:  # noqa: BLE001 -- the exception is what is compared
            res = ("raise", type(e).__name__, str(e))
        else:
            res = ("value", describe(r))
    return res, [(x.category, str(x.message)) for x in w]


def describe(r):
    if isinstance(r, tuple):
        return tuple(describe(x) for x in r)
    a = np.asarray(r)
    return (not isinstance(r, (np.ndarray, npc.ndarray)), a.dtype, a.shape, repr(a.tolist()))  # repr: NaN == NaN


def check(fn):
    exp = outcome(fn, np)
    assert_same_outcome(outcome(fn, npc), exp)


# Python ints beyond int64 (and beyond uint64) as weak scalars of ufuncs and operators.
HUGE = [
    lambda m: m.array([1, 2]) < 2 ** 70,
    lambda m: m.array([1, 2]) > -2 ** 70,
    lambda m: m.array([1, 2]) != -2 ** 70,
    lambda m: m.equal(m.array([1, 2]), 2 ** 70),
    lambda m: m.array([1], m.int8) < 2 ** 70,
    lambda m: m.array([1], m.uint8) > -2 ** 70,
    lambda m: m.array([1], m.uint64) < 2 ** 64,
    lambda m: m.array(5) < 2 ** 70,
    lambda m: m.array([1.0]) + 2 ** 70,
    lambda m: m.array([1.0]) * 2 ** 64,
    lambda m: m.array(5.0) + 2 ** 70,
    lambda m: m.array([1.5], m.float32) + 2 ** 70,
    lambda m: m.array([1.5], m.float16) + 2 ** 70,
    lambda m: m.array([1j]) + 2 ** 70,
    lambda m: 2 ** 70 - m.array([1.0]),
    lambda m: m.add(m.array([1.0]), 2 ** 70),
    lambda m: m.maximum(m.array([1.0]), 2 ** 70),
    lambda m: m.array([1.0]) ** 2 ** 70,
    lambda m: m.array([1.0]) + 10 ** 400,
    lambda m: m.array([1]) + 10 ** 400,
    lambda m: m.array([1], m.int64) + 2 ** 70,
    lambda m: m.array([1], m.uint64) + 2 ** 64,
    lambda m: m.array([True]) + 2 ** 70,
    lambda m: m.array([1], m.int16) & 2 ** 70,
    lambda m: m.array([1], m.int64) << 2 ** 70,
    # Between int64 and uint64: signed loops take the int as a C long first.
    lambda m: m.array([1], m.int64) * 2 ** 63,
    lambda m: m.array([1], m.int32) + 2 ** 63,
    lambda m: m.array([1], m.int8) + 2 ** 63,
    lambda m: m.array([True]) + 2 ** 63,
    lambda m: m.array([1], m.int64) + (-2 ** 63 - 1),
    lambda m: m.array([1], m.uint32) + 2 ** 63,
    lambda m: m.array([1], m.uint64) + 2 ** 63,
    lambda m: m.where(True, m.array([1], m.int32), 2 ** 63),
    lambda m: m.where(True, m.array([1], m.int32), 2 ** 40),
]


@pytest.mark.parametrize("fn", HUGE, ids=range(len(HUGE)))
def test_huge_python_ints(fn):
    check(fn)


def test_huge_python_int_inplace():
    for lib in (np, npc):
        a = lib.array([1.0, 2.0])
        a += 2 ** 70
        assert np.asarray(a).tolist() == [1.0 + 2.0 ** 70, 2.0 + 2.0 ** 70]
    a = npc.array([1.0, 2.0])
    b = a
    a += 2 ** 70
    assert a is b and isinstance(a, npc.ndarray)


# Bool views of bytes other than 0/1 in set routines: groups are truth values.
def _bool_view(lib, raw=(2, 0, 1, 2, 1, 4), step=1):
    return lib.array(list(raw), lib.uint8)[::step].view(bool)


BOOL_SETS = [
    lambda m: m.unique(_bool_view(m)),
    lambda m: m.unique(_bool_view(m), return_index=True, return_inverse=True, return_counts=True),
    lambda m: m.unique(_bool_view(m, step=-1), return_index=True, return_counts=True),
    lambda m: m.unique(_bool_view(m)).view(m.uint8),
    lambda m: m.unique_values(_bool_view(m)),
    lambda m: m.unique_counts(_bool_view(m)),
    lambda m: m.unique_inverse(_bool_view(m)),
    lambda m: m.isin(_bool_view(m), [True]),
    lambda m: m.isin(_bool_view(m), [True], invert=True),
    lambda m: m.isin(m.array([True, False]), _bool_view(m, (2, 4))),
    lambda m: m.isin(_bool_view(m), _bool_view(m, (2,))),
    lambda m: m.isin(_bool_view(m), [1, 7]),
    # Sorting by raw bytes (was a crash: the comparison sort met an inconsistent order).
    lambda m: m.argsort(_bool_view(m, (2, 0, 1, 2, 1, 4)[::-1])),
    lambda m: m.argsort(_bool_view(m, (2, 0, 1, 2, 1, 4)[::-1]), kind="stable"),
    lambda m: m.argsort(_bool_view(m, step=-1), kind="stable"),
    lambda m: m.argsort(_bool_view(m, (2, 0, 1, 2, 1, 4) * 60), kind="stable"),
    lambda m: m.sort(_bool_view(m, step=-1)).view(m.uint8),
    lambda m: m.lexsort((_bool_view(m), m.zeros(6, m.int8))),
    lambda m: m.unique(_bool_view(m, (2, 0, 1, 2, 1, 4) * 60), return_index=True, return_counts=True),
]


@pytest.mark.parametrize("fn", BOOL_SETS, ids=range(len(BOOL_SETS)))
def test_bool_bytes_set_routines(fn):
    check(fn)


# dtype= fixing a loop of another kind than a weak Python scalar: NumPy casts the scalar's
# default dtype under the casting rule.
DTYPE_WEAK = [
    lambda m: m.add(m.arange(4), 1.5, dtype=m.int8),
    lambda m: m.add(m.arange(4), 1.5, dtype=m.int8, casting="unsafe"),
    lambda m: m.add(m.arange(4), 1.5, dtype=m.uint16),
    lambda m: m.multiply(m.arange(4.0), 2j, dtype=m.float64),
    lambda m: m.add(m.arange(4), 1, dtype=m.int8),
    lambda m: m.add(m.arange(4), 1, dtype=m.float32),
    lambda m: m.add(m.arange(4), 1.5, dtype=m.float32),
    lambda m: m.add(m.array([True, False]), 1, dtype=bool),
    lambda m: m.add(m.array([True, False]), True, dtype=bool),
    lambda m: m.add(m.arange(4.0), 1.5, dtype=m.complex64),
    lambda m: m.subtract(2.5, m.arange(3), dtype=m.int64),
]


@pytest.mark.parametrize("fn", DTYPE_WEAK, ids=range(len(DTYPE_WEAK)))
def test_dtype_keyword_with_weak_scalars(fn):
    check(fn)


def test_dtype_keyword_complex_to_real_warns():
    check(lambda m: m.multiply(m.arange(4.0), 2j, dtype=m.float32, casting="unsafe"))


# ComplexWarning once per operand whose cast drops an imaginary part (inputs cast to a real
# or integer loop, a complex result cast into a real or integer out=; none to bool).
def _c(m):
    return m.arange(4.0) + 1j


COMPLEX_CASTS = [
    lambda m: m.multiply(_c(m), 2, dtype=m.float64, casting="unsafe"),
    lambda m: m.add(_c(m), _c(m), dtype=m.int32, casting="unsafe"),
    lambda m: m.add(_c(m), 1j, dtype=m.float64, casting="unsafe"),
    lambda m: m.add(_c(m), 1, dtype=bool, casting="unsafe"),
    lambda m: m.negative(_c(m), dtype=m.float32, casting="unsafe"),
    lambda m: m.add(_c(m), 1, out=m.zeros(4), casting="unsafe"),
    lambda m: m.add(_c(m), 1, out=m.zeros(4, m.int64), casting="unsafe"),
    lambda m: m.add(_c(m), 1, out=m.zeros(4, bool), casting="unsafe"),
    lambda m: m.add(_c(m), 1, dtype=m.float64, casting="unsafe", out=m.zeros(4, m.complex128)),
    lambda m: m.add(m.array(1 + 1j), 1, dtype=m.float64, casting="unsafe"),
    lambda m: m.add(m.zeros(0, complex), 1, dtype=m.float64, casting="unsafe"),
    lambda m: m.add(_c(m), 1.5, dtype=m.float64, casting="unsafe", where=m.array([True, False, True, False]),
                    out=m.zeros(4)),
    lambda m: m.add(_c(m), 1, dtype=m.float64),  # same_kind: the casting error, no warning
    lambda m: m.add(_c(m), 1, out=m.zeros(4)),
    lambda m: m.divmod(m.arange(4.0), 2 + 0j, dtype=m.float64, casting="unsafe"),
]


@pytest.mark.parametrize("fn", COMPLEX_CASTS, ids=range(len(COMPLEX_CASTS)))
def test_complex_cast_warnings(fn):
    check(fn)


# where= of a ufunc call: arrays must cast to bool safely; a where without out warns.
WHERE = [
    lambda m: m.add(m.arange(2.0), 1, where=m.array([1, 0]), out=m.zeros(2)),
    lambda m: m.add(m.arange(2.0), 1, where=m.array([1.0, 0.0]), out=m.zeros(2)),
    lambda m: m.add(m.arange(2.0), 1, where=m.array([1, 0], m.uint8), out=m.zeros(2)),
    lambda m: m.add(m.arange(2.0), 1, where=[1, 0], out=m.zeros(2)),
    lambda m: m.add(m.arange(2.0), 1, where=1, out=m.zeros(2)),
    lambda m: m.add(m.arange(2.0), 1, where=m.array(True), out=m.zeros(2)),
    lambda m: m.add(m.arange(2.0), 1, where=m.array([True, False]))[0],
    lambda m: m.add(m.arange(2.0), 1, where=m.True_)[0],
    lambda m: m.add(m.arange(2.0), 1, where=m.array([True, True]), out=None),
    lambda m: m.sqrt(m.array([4.0, -1.0]), where=m.array([True, False]), out=m.zeros(2)),
]


@pytest.mark.parametrize("fn", WHERE, ids=range(len(WHERE)))
def test_where_keyword(fn):
    check(fn)


@pytest.mark.parametrize("casting", ["bogus", 3, None])
def test_bad_casting_keyword(casting):
    check(lambda m: m.add(m.arange(3.0), 1, casting=casting))


class _Int(int):
    pass


class _Float(float):
    pass


# Python int subclasses are strong (an int64 array), as in NumPy: only exact ints are weak.
SUBCLASS = [
    lambda m: m.arange(3, dtype=m.int8) + _Int(5),
    lambda m: m.arange(3, dtype=m.int8) + _Int(500),
    lambda m: m.add(m.arange(3, dtype=m.int8), _Int(5)),
    lambda m: _Int(5) * m.arange(3, dtype=m.uint16),
    lambda m: m.arange(3, dtype=m.int8)[::2] - _Int(5),
    lambda m: m.arange(3, dtype=m.float32) + _Float(1.5),
    # An int subclass too large for int64 is an object-dtype operand: NumPy's object loop.
    pytest.param(lambda m: m.arange(3, dtype=m.int8) < _Int(2 ** 70), marks=pytest.mark.allow_fallback),
]


@pytest.mark.parametrize("fn", SUBCLASS, ids=range(len(SUBCLASS)))
def test_python_scalar_subclasses(fn):
    check(fn)


# A weak float cast into a narrower loop dtype warns 'overflow encountered in cast' on the
# call that casts it (it used to stay pending and surface at a later, unrelated call).
def _then_sin(expr):
    def fn(m):
        r = expr(m)
        m.sin(m.arange(3.0))  # must not warn
        return r
    return fn


CAST_WARN = [
    _then_sin(lambda m: m.arange(3, dtype=m.float32) + 1e300),
    _then_sin(lambda m: 1e300 * m.arange(3, dtype=m.float32)),
    _then_sin(lambda m: m.add(m.arange(3, dtype=m.float32), 1e300)),
    _then_sin(lambda m: m.add(m.arange(3, dtype=m.float32), 1e300, out=m.empty(3, m.float32))),
    _then_sin(lambda m: m.add(m.arange(3, dtype=m.float32), 1e300, out=m.empty(3))),
    _then_sin(lambda m: m.add(m.arange(3, dtype=m.float32)[::2], 1e300)),
    _then_sin(lambda m: m.arange(3, dtype=m.float16) + 70000.0),
    _then_sin(lambda m: m.arange(3, dtype=m.complex64) + 1e300j),
    _then_sin(lambda m: m.array(1.0, m.float32) + 1e300),
]


@pytest.mark.parametrize("fn", CAST_WARN, ids=range(len(CAST_WARN)))
def test_weak_scalar_cast_overflow_warns_once(fn):
    check(fn)


def test_weak_scalar_cast_overflow_raises_under_errstate():
    for lib in (np, npc):
        x = lib.arange(3, dtype=lib.float32)
        with lib.errstate(over="raise"):
            with pytest.raises(FloatingPointError, match="overflow encountered in cast"):
                x + 1e300
        with lib.errstate(over="raise"):
            lib.sin(x)  # nothing left pending


def _q2(m):
    return m.array([[1, 2, 3.0], [4, 5, 6]])


# out= of median (NumPy: through numpy.mean, unsafe casting) and quantiles (ufuncs: same_kind,
# broadcast into out).
QUANTILE_OUT = [
    lambda m: m.median(_q2(m), axis=1, out=m.zeros(2, m.int64)),
    lambda m: m.median(_q2(m), axis=1, out=m.zeros(2, m.float32)),
    lambda m: m.median(_q2(m), axis=1, out=m.zeros(2, bool)),
    lambda m: m.median(_q2(m).astype(m.int64), axis=1, out=m.zeros(2, m.int8)),
    lambda m: m.nanmedian(_q2(m), axis=1, out=m.zeros(2, m.int64)),
    lambda m: m.quantile(_q2(m), 0.5, axis=1, out=m.zeros((3, 2))),
    lambda m: m.quantile(_q2(m), 0.5, out=m.zeros(2)),
    lambda m: m.quantile(m.array([1, 2, 3.0]), [0.5], out=m.zeros(2)),
    lambda m: m.nanquantile(_q2(m), 0.5, out=m.zeros(2)),
    lambda m: m.percentile(_q2(m), 50, out=m.zeros(2)),
    lambda m: m.quantile(_q2(m), 0.5, axis=1, out=m.zeros(2, m.int64)),
    lambda m: m.quantile(_q2(m), 0.5, axis=1, out=m.zeros(2, m.float32)),
]


@pytest.mark.parametrize("fn", QUANTILE_OUT, ids=range(len(QUANTILE_OUT)))
def test_quantile_out(fn):
    check(fn)


def test_quantile_discrete_method_int_out():
    check(lambda m: m.quantile(_q2(m), 0.5, axis=1, method="lower", out=m.zeros(2, m.int64)))


# Methods that pick elements write out= through numpy.take (exact shape, unsafe cast back
# with a DeprecationWarning across kinds, ComplexWarning from a complex out buffered as real),
# then copy NaN lanes with numpy.copyto (same_kind).
_NAN_ROWS = [[1.0, float("nan"), 3.0], [4.0, 5.0, 6.0]]
QUANTILE_TAKE_OUT = [
    lambda m, meth=meth, od=od, q=q: m.quantile(_q2(m), q, axis=1, method=meth, out=m.zeros(2, od))
    for meth in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation", "linear")
    for od in ("int64", "uint8", "bool", "float32", "complex128") for q in (0.5, 1)
] + [
    lambda m, kd=kd, os=os, q=q: m.quantile(_q2(m), q, axis=1, method="lower", out=m.zeros(os, m.int64),
                                            keepdims=kd)
    for kd in (False, True) for os in ((3, 2), (1,), (2, 1), (2, 2)) for q in (0.5, [0.5, 0.2])
] + [
    lambda m: m.quantile(_q2(m), 0.5, axis=None, method="higher", out=m.zeros((1, 1), m.int8), keepdims=True),
    lambda m: m.quantile(_q2(m) * -1e30, 0.5, axis=1, method="lower", out=m.zeros(2, m.int64)),
    lambda m: m.quantile(_q2(m) + m.nan, 0.5, axis=1, method="lower", out=m.zeros(2, m.int64)),
    lambda m: m.quantile(m.array(_NAN_ROWS), 0.5, axis=1, method="lower", out=m.zeros(2, m.int64)),
    lambda m: m.quantile(m.array(_NAN_ROWS), 0.5, axis=1, method="lower", out=m.zeros(2, m.float32)),
    lambda m: m.quantile(m.arange(6).reshape(2, 3), 0.5, axis=1, method="lower", out=m.zeros(2, m.float16)),
    lambda m: m.percentile(m.arange(6).reshape(2, 3), 50, axis=1, method="higher", out=m.zeros(2, bool)),
]


@pytest.mark.parametrize("fn", QUANTILE_TAKE_OUT, ids=range(len(QUANTILE_TAKE_OUT)))
def test_quantile_take_out(fn):
    check(fn)


def test_median_out_shape_message():
    check(lambda m: m.median(_q2(m), axis=1, out=m.zeros((3, 2))))


# numpy.median writes out= with numpy.mean over the middle values (after _ureduce's keepdims
# indexing of out and merging of several reduced axes): that reduction's messages.
MEDIAN_OUT = [
    lambda m, shp=shp, ax=ax, os=os, kd=kd: m.median(m.arange(float(np.prod(shp))).reshape(shp), axis=ax,
                                                     out=m.zeros(os), keepdims=kd)
    for shp, ax, os, kd in [((2, 3), 1, (3,), False), ((2, 3), 1, (2, 1), False), ((2, 3), None, (2,), False),
                            ((2, 3), 1, (2,), True), ((2, 3), 0, (2,), False), ((1, 7), 1, (3, 2), False),
                            ((2, 4), (0, 1), (3, 2), False), ((2, 3, 4), (0, 2), (5,), False),
                            ((2, 3, 4), (0, 2), (2, 3, 1), True), ((2, 3, 4), (0, 2), (3,), False),
                            ((2, 0), 1, (3,), False), ((2, 3), 1, (1,), False), ((2, 3), None, (2, 2), True),
                            ((2, 3), 1, (2, 5), True)]
]


@pytest.mark.parametrize("fn", MEDIAN_OUT, ids=range(len(MEDIAN_OUT)))
def test_median_out_shapes(fn):
    check(fn)


def test_median_int_out_with_nan():
    check(lambda m: m.median(m.array([[1, m.nan, 3.0], [4, 5, 6]]), axis=1, out=m.zeros(2, m.int64)))
    check(lambda m: m.nanmedian(m.array([[1, m.nan, 3.0], [4, 5, 6]]), axis=1, out=m.zeros(2, m.int64)))


def test_index_beyond_int64():
    check(lambda m: m.arange(6)[2 ** 70])


# Python ints beyond int64 as indices: OverflowError for [2**63, 2**64), IndexError beyond.
BIG_INDICES = [2 ** 63, 2 ** 63 + 1, 2 ** 64 - 1, 2 ** 64, 2 ** 64 + 1, 2 ** 100, -2 ** 63 - 1, -2 ** 64, -2 ** 70]


@pytest.mark.parametrize("v", BIG_INDICES)
@pytest.mark.parametrize("form", ["bare", "tuple", "second", "uint64"])
def test_big_int_indices(v, form):
    def fn(m):
        a = m.arange(6)
        if form == "bare":
            return a[v]
        if form == "tuple":
            return a[v,]
        if form == "second":
            return a.reshape(2, 3)[0, v]
        return a[np.uint64(v % 2 ** 64)]
    check(fn)


def _read_only(m):
    a = m.arange(6.0)
    a.flags.writeable = False
    return a


# ufunc.at's own messages: values that do not broadcast to a[indices], a read-only target
# (checked before the indices and the values), out-of-bounds indices (before the values).
UFUNC_AT_ERRORS = [
    lambda m: m.add.at(m.arange(6.0), [0, 1], [1, 2, 3]),
    lambda m: m.add.at(m.arange(6.0).reshape(2, 3), (0,), [1, 2]),
    lambda m: m.add.at(m.arange(6.0).reshape(2, 3), (slice(None), [0, 1]), [[1], [2], [3]]),
    lambda m: m.multiply.at(m.arange(6.0), [0, 1], m.ones((2, 2))),
    lambda m: m.add.at(_read_only(m), [0], 1),
    lambda m: m.add.at(_read_only(m), [0, 1], [1, 2, 3]),
    lambda m: m.add.at(_read_only(m), [10], 1),
    lambda m: m.negative.at(_read_only(m), [0]),
    lambda m: m.add.at(m.arange(6.0), [10], [1, 2, 3]),
    lambda m: m.add.at(m.arange(6.0), [0], [[1], [1, 2]]),
]


@pytest.mark.parametrize("fn", UFUNC_AT_ERRORS, ids=range(len(UFUNC_AT_ERRORS)))
def test_ufunc_at_errors(fn):
    check(fn)


# numpy.round: complex numbers part by part in their float dtype (PyArray_Round), and
# NumPy's power of ten (repeated multiplication beyond 1e8: inf rather than OverflowError).
def _round_values(m, dt):
    rng = np.random.default_rng(7)
    v = rng.standard_normal(64) * 10.0 ** rng.integers(-8, 8, 64)
    if np.dtype(dt).kind == "c":
        v = v + 1j * rng.standard_normal(64) * 123.456
    with np.errstate(over="ignore"):
        return m.asarray(v.astype(dt))


@pytest.mark.parametrize("dt", ["complex64", "complex128", "float16", "float32", "float64"])
@pytest.mark.parametrize("decimals", [-3, -1, 0, 1, 2, 3, 5, 8, 9, 17, 23, 24, 30, 400, -400])
def test_round_matches_numpy(dt, decimals):
    check(lambda m: m.round(_round_values(m, dt), decimals))
    check(lambda m: m.round(_round_values(m, dt)[5], decimals))  # NumPy scalar in, scalar out


@pytest.mark.parametrize("dt", ["complex64", "complex128", "float32"])
def test_round_out_matches_numpy(dt):
    def fn(m):
        o = m.zeros(64, dt)
        r = m.round(_round_values(m, dt), 2, out=o)
        return r is o, o
    check(fn)


# A reduction's out= of the wrong shape: NumPy's own messages (wrong number of dimensions,
# remapped-shape broadcast errors, size-1 axes that would need a reduction, keepdims axes
# that must have length 1), for ufunc.reduce, the functions and the methods.
REDUCE_OUT_SHAPES = [((2, 3), 0, (2,), False), ((2, 3), 1, (3,), False), ((2, 3), 1, (1,), False),
                     ((2, 3, 4), 1, (2, 5), False), ((2, 3, 4), 0, (3, 5), False), ((2, 3, 4), 2, (2, 5), False),
                     ((2, 3, 4), (0, 2), (5,), False), ((2, 3, 4), (0, 1), (5,), False), ((2, 3), 0, (1, 2), True),
                     ((2, 3), 0, (2, 3), True), ((2, 3, 4), 1, (2, 1, 5), True), ((2, 3), 0, (3, 2), False),
                     ((4,), 0, (2,), False), ((2, 3, 4), 2, (2, 1), False), ((2, 3, 4), 1, (1, 1), False),
                     ((2, 3, 4), (0, 2), (2, 1, 1), True), ((2, 3, 4), (0, 2), (1, 1, 4), True),
                     ((2, 3, 4), 1, (2, 1, 1, 4), True), ((2, 3, 4), None, (2,), False)]
REDUCE_OUT = [
    lambda m, shp=shp, ax=ax, os=os, kd=kd, f=f: f(m, m.ones(shp), ax, m.zeros(os), kd)
    for shp, ax, os, kd in REDUCE_OUT_SHAPES
    for f in (lambda m, a, ax, o, kd: m.add.reduce(a, axis=ax, out=o, keepdims=kd),
              lambda m, a, ax, o, kd: m.maximum.reduce(a, axis=ax, out=o, keepdims=kd),
              lambda m, a, ax, o, kd: m.mean(a, axis=ax, out=o, keepdims=kd),
              lambda m, a, ax, o, kd: a.prod(axis=ax, out=o, keepdims=kd))
]


@pytest.mark.parametrize("fn", REDUCE_OUT, ids=range(len(REDUCE_OUT)))
def test_reduce_out_shape_messages(fn):
    check(fn)


# Note [reorderable reductions]: several axes only for ufuncs whose reduce ignores order.
def _reduce_dtype(name):
    """bool for comparisons and logical ops, float64 where the ufunc has float loops, else int64."""
    row = next(r for r in UFUNC_ROWS if r.name == name)
    if row.resolver in ("Comparison", "Logical"):
        return "bool"
    return "float64" if "f" in kinds(row) else "int64"


def _numpy_reduce_is_not_a_fold(name, x):
    """NumPy's reduce of the rows of x differs from the left fold of its own ufunc (its SIMD
    float64 power/arctan2 loops ignore the running value in a contiguous reduce)."""
    u = getattr(np, name)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            r = u.reduce(x, axis=1)
        except TypeError:
            return False
        acc = x[:, 0].astype(r.dtype)
        for i in range(1, x.shape[1]):
            acc = u(acc, x[:, i]).astype(r.dtype)
    return r.tobytes() != acc.tobytes()


@pytest.mark.parametrize("name", ufuncs(binary))
@pytest.mark.parametrize("axis", [None, (0, 1), (1,), (0, -1)])
def test_reduce_not_reorderable(name, axis, request):
    dt = _reduce_dtype(name)
    if axis == (1,) and _numpy_reduce_is_not_a_fold(name, np.arange(1, 7).reshape(2, 3).astype(dt)):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "NumPy 2.5's SIMD float64 power/arctan2 loops ignore the running value in a contiguous "
            "reduce (power.reduce([4., 5., 6.]) gives 4**6); npc folds left as the ufunc defines")))
    check(lambda m: getattr(m, name).reduce(m.arange(1, 7).reshape(2, 3).astype(dt), axis=axis))


# Integer power inside reduce/accumulate: a negative exponent raises as the ufunc call does.
@pytest.mark.parametrize("dt", ["int8", "int64", "uint8"])
@pytest.mark.parametrize("fn", [
    lambda m, d: m.power.accumulate(m.array([2, -1, 3]).astype(d)),
    lambda m, d: m.power.accumulate(m.array([-2, 1, 3]).astype(d)),
    lambda m, d: m.power.reduce(m.array([[2, 1], [-1, 3]]).astype(d), axis=0),
    lambda m, d: m.power.reduce(m.array([[2, 1], [-1, 3]]).astype(d), axis=1),
    lambda m, d: m.power.reduce(m.array([-2, 1, 3]).astype(d), initial=2),
    lambda m, d: m.power.reduce(m.array([-2, 1, 3]).astype(d)),
])
def test_int_power_reduce_negative_exponent(fn, dt):
    check(lambda m: fn(m, dt))
