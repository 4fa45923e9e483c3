"""Defects found by probing ufuncs, reductions and statistics as a new NumPy user would,
over generated combinations (every native dtype, special values, layouts, keywords,
error-state modes): each test runs the input that broke through npc and NumPy and compares
results (dtype, shape, bytes), exception types and messages, and warnings."""
import itertools
import warnings

import numpy as np
import pytest

import npc
from _diff import assert_same_outcome
from _ufunc_helpers import NATIVE as _CHAR_DTYPE, binary, representatives, ufuncs, ulp_bound, unary

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
NATIVE = ["bool"] + INTS + FLOATS + ["complex64", "complex128"]


def _one(r):
    if isinstance(r, tuple):
        return ("tuple", tuple(_one(x) for x in r))
    typ = "array" if isinstance(r, (np.ndarray, npc.ndarray)) else type(r).__name__
    a = np.asarray(r)
    return (typ, a.dtype.str, a.shape, np.ascontiguousarray(a).tobytes())


def _outcome(lib, fn):
    """(result or exception, warnings) of fn(lib): each result's type, dtype, shape and
    bytes, or the exception's type and message; the warnings as (category, message)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            res = ("ok", _one(fn(lib)))
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            res = ("exc", type(e).__name__, str(e))
    return res, [(x.category.__name__, str(x.message)) for x in w]


def assert_same(fn):
    with np.errstate(all="warn"):
        assert_same_outcome(_outcome(npc, fn), _outcome(np, fn))


# ---------------------------------------------------------------- average
# numpy.average: the count of an unweighted average is a.size / avg.size (ZeroDivisionError
# when the average is empty); weights may have the shape of a along a tuple of axes.
@pytest.mark.parametrize("dt", ["int8", "float32", "complex64", "bool"])
@pytest.mark.parametrize("axis", [0, 2, (0, 2), (2, 0), -1])
@pytest.mark.parametrize("returned", [False, True])
def test_average_of_empty_result(dt, axis, returned):
    x = np.zeros((2, 0, 3), dt)
    assert_same(lambda lib: lib.average(lib.asarray(x), axis=axis, returned=returned))


@pytest.mark.parametrize("axis", [(0, 2), (2, 0), 1, -1, (1,)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_average_weights_along_axis_tuple(axis, keepdims):
    x = np.arange(24.0).reshape(2, 3, 4)
    axt = np.lib.array_utils.normalize_axis_tuple(axis, 3)
    w = np.arange(1.0, 1 + np.prod([x.shape[a] for a in axt])).reshape([x.shape[a] for a in axt])
    assert_same(lambda lib: lib.average(lib.asarray(x), axis=axis, weights=lib.asarray(w), returned=True,
                                        keepdims=keepdims))
    assert_same(lambda lib: lib.average(lib.asarray(x), axis=axis, weights=lib.asarray(w[..., None])))


# ---------------------------------------------------------------- error state
class _Log:
    def __init__(self):
        self.lines = []

    def write(self, m):
        self.lines.append(m)


def _under_mode(lib, mode, callback, fn):
    old = np.seterrcall(callback)
    try:
        with np.errstate(all=mode):
            return fn(lib)
    finally:
        np.seterrcall(old)


def test_errcall_gets_every_raised_flag():
    # NumPy calls the errcall function with the kind and the whole status word (9 for a
    # divide-by-zero and an invalid value in one call), once per kind in 'call' mode.
    fn = lambda lib: lib.divide(lib.asarray([1.0, 0.0, -1.0]), 0.0)  # noqa: E731
    got, exp = [], []
    _under_mode(npc, "call", lambda *a: got.append(a), fn)
    _under_mode(np, "call", lambda *a: exp.append(a), fn)
    assert got == exp


@pytest.mark.parametrize("mode", ["call", "log"])
def test_errstate_without_callback(mode):
    assert_same(lambda lib: _under_mode(lib, mode, None, lambda l: l.log(l.asarray([0.0, -1.0]))))


def test_errstate_log_writes_like_numpy():
    got, exp = _Log(), _Log()
    fn = lambda lib: lib.sqrt(lib.asarray([-1.0, 4.0])) / lib.asarray(0.0)  # noqa: E731
    _under_mode(npc, "log", got, fn)
    _under_mode(np, "log", exp, fn)
    assert got.lines == exp.lines


# ---------------------------------------------------------------- loop search
# NumPy's legacy type resolver takes the first loop each input casts to safely: a
# float-only binary ufunc of int8 and uint8 runs in float16 (not in float32 as int16 would),
# of int16 and uint16 in float32.
FLOAT_ONLY_BINARY = ufuncs(binary, lambda r: all(_CHAR_DTYPE[c].kind == "f"
                                                 for sig in r.loops.split() for c in sig.split("->")[0]))


@pytest.mark.parametrize("name", FLOAT_ONLY_BINARY)
@pytest.mark.parametrize("pair", [("int8", "uint8"), ("uint8", "int8"), ("int16", "uint16"), ("uint16", "int16"),
                                  ("int8", "uint16"), ("bool", "int8"), ("int32", "uint32"), ("uint8", "int16")])
def test_float_only_binary_ufunc_of_mixed_ints(name, pair):
    a = np.array([0, 1, 7, 100, 3], pair[0])
    b = np.array([1, 0, 3, 2, 100], pair[1])
    for fn in (lambda lib: getattr(lib, name)(lib.asarray(a), lib.asarray(b)),
               lambda lib: getattr(lib, name)(lib.asarray(a)[:1][0], lib.asarray(b))):
        if not ulp_bound(name, np.dtype(np.float16)):
            assert_same(fn)
        else:
            # Transcendental: the loop's dtype exactly, values within the file's 8 ULP.
            assert_same(lambda lib: fn(lib).dtype)
            np.testing.assert_array_max_ulp(np.asarray(fn(npc)), fn(np), maxulp=8)


# ---------------------------------------------------------------- complex order
# NumPy's complex comparisons decide on the real parts only when neither imaginary part
# is NaN: (-1+nanj) < 0j and 1 > (-1+nanj) are False.
# The ordering comparisons (those whose answer depends on the operands' order).
@pytest.mark.parametrize("name", ufuncs(lambda r: r.resolver == "Comparison" and
                                        getattr(np, r.name)(0, 1) != getattr(np, r.name)(1, 0)))
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_comparisons_with_nan_imaginary(name, dt):
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0]
    cs = [complex(a, b) for a in v for b in v]
    a = np.array([x for x, _ in itertools.product(cs, cs)], dt)
    b = np.array([y for _, y in itertools.product(cs, cs)], dt)
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(a), lib.asarray(b)))
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(a), 0.5))
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(np.int8([1, -1, 0])), lib.asarray(np.array([-1 + np.nan * 1j] * 3, dt))))


# ---------------------------------------------------------------- complex integer powers
# npy_cpow multiplies with npy_math's scalar product (no fused multiply-add): every bit of
# z ** n for small integer n, and nan+infj (not -inf+infj) for (max+infj) ** 2.
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [2, 3, 4, 7, 10, -1, -2, -3, 99, 2.0])
def test_complex_integer_power_bits(dt, n):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(300) + 1j * rng.standard_normal(300)).astype(dt)
    z[:2] = [complex(np.finfo(dt).max, np.inf), complex(1e30, 1e30)]
    assert_same(lambda lib: lib.power(lib.asarray(z), n))
    assert_same(lambda lib: lib.float_power(lib.asarray(z), n) if dt == "complex128" else lib.asarray(0))


# ---------------------------------------------------------------- nanvar / nanstd
# NumPy's nanvar writes the deviations into a copy of `a` (its dtype and layout: float16
# data keeps float16 deviations under dtype=float64, a complex mean into real data warns),
# squares complex deviations as x * conj(x), and sums in `dtype`.
@pytest.mark.parametrize("func", ["nanvar", "nanstd"])
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("dtype", [None, "float32", "float64", "complex128"])
@pytest.mark.parametrize("layout", ["c", "f"])
def test_nanvar_follows_numpys_steps(func, dt, dtype, layout):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 4, 5)) * 10).astype(dt)
    if np.dtype(dt).kind == "c":
        x = x + 1j * (rng.standard_normal((3, 4, 5)) * 10).astype(dt)
    x.flat[::7] = np.nan
    if layout == "f":
        x = np.asfortranarray(x)
    for axis in (None, 0, (0, 2), -1):
        for ddof in (0, 1.5):
            assert_same(lambda lib: getattr(lib, func)(lib.asarray(x), axis=axis, dtype=dtype, ddof=ddof))
    assert_same(lambda lib: (lambda o: (getattr(lib, func)(lib.asarray(x), out=o), o)[1])(lib.zeros((), "float64")))


# ---------------------------------------------------------------- aliases' names
# numpy.degrees and numpy.radians run rad2deg's and deg2rad's loops but name themselves in
# their errors and warnings.
@pytest.mark.parametrize("name", ["degrees", "radians"])
@pytest.mark.parametrize("case", [
    lambda lib, f: f(lib.asarray([True]), dtype="int64"),
    lambda lib, f: f(lib.asarray([1j])),
    lambda lib, f: f(lib.asarray([1, 2]), out=lib.zeros(2, "int64")),
    lambda lib, f: f(lib.asarray([True]), out=lib.zeros(1), casting="no"),
    lambda lib, f: f(lib.asarray(np.float16([60000, 1e-7]))),
    lambda lib, f: f(lib.asarray(np.float32([3e38, 1e-44]))),
], ids=["dtype", "complex", "out", "casting", "f16", "f32"])
def test_degrees_radians_name_themselves(name, case):
    assert_same(lambda lib: case(lib, getattr(lib, name)))
    with np.errstate(all="raise"):
        assert_same(lambda lib: case(lib, getattr(lib, name)))


# ---------------------------------------------------------------- dtype= without a loop
# positive, sign and absolute (of real input) resolve through NumPy's uniform type
# resolvers: a dtype= without a loop raises _UFuncNoLoopError naming the requested output.
@pytest.mark.parametrize("name", ufuncs(unary, lambda r: r.resolver in ("Uniform", "Absolute")) +
                         representatives(unary, lambda r: r.resolver not in ("Uniform", "Absolute")))
@pytest.mark.parametrize("dt", NATIVE)
@pytest.mark.parametrize("dtype", ["bool", "complex64", "float16", "int8"])
def test_unary_dtype_keyword_without_loop(name, dt, dtype):
    x = np.ones(3, dt)
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(x), dtype=dtype))


# ---------------------------------------------------------------- broadcast errors
# NumPy's iterator broadcasts inputs, out= arrays and the where= mask together; its
# messages list every operand and print shapes without spaces ("(5,1)").
@pytest.mark.parametrize("case", [
    lambda lib: lib.add(lib.ones((2, 3)), lib.ones((4, 3))),
    lambda lib: lib.ones((2, 3)) + lib.ones((4, 3)),
    lambda lib: lib.sqrt(lib.arange(5.0), where=lib.ones(4, bool)),
    lambda lib: lib.sqrt(lib.arange(5.0), out=lib.zeros(5), where=lib.ones(4, bool)),
    lambda lib: lib.add(lib.arange(5.0), 1.0, out=lib.zeros(5), where=lib.ones(4, bool)),
    lambda lib: lib.add(lib.arange(5.0), lib.arange(5.0)[:, None], out=lib.zeros(5), where=lib.ones(4, bool)),
    lambda lib: lib.add(lib.arange(5.0), lib.arange(5.0)[:, None], out=lib.zeros(5)),
    lambda lib: lib.sqrt(lib.arange(5.0), out=lib.zeros(5), where=lib.ones((2, 5), bool)),
    lambda lib: lib.divmod(lib.arange(5.0), 2.0, out=(lib.zeros(5), None), where=lib.ones(4, bool)),
    lambda lib: lib.where(lib.ones((2, 3), bool), lib.ones((4, 3)), 1),
    lambda lib: lib.sqrt(lib.arange(5.0), out=lib.zeros((2, 1, 5))),
])
def test_broadcast_error_messages(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # where= without out=
        assert_same(case)


# ---------------------------------------------------------------- quantiles
QUANTILE_METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest"]


# Empty lanes: NumPy's IndexError comes from where its algorithm first indexes (arr[-1] for
# float data and weights, numpy.take for integer positions, else the partition).
@pytest.mark.parametrize("method", QUANTILE_METHODS)
@pytest.mark.parametrize("dt", ["bool", "int16", "uint8", "float32"])
@pytest.mark.parametrize("q", [0.5, 1, True, [0.1, 0.9], 0])
def test_quantile_of_empty_lanes(method, dt, q):
    for shape, axis in (((0,), None), ((2, 0, 3), 1)):
        x = np.zeros(shape, dt)
        assert_same(lambda lib: lib.quantile(lib.asarray(x), q, axis=axis, method=method))
        assert_same(lambda lib: lib.percentile(lib.asarray(x), np.multiply(q, 100), axis=axis, method=method))
    if method == "inverted_cdf":
        assert_same(lambda lib: lib.quantile(lib.asarray(np.zeros(0, dt)), q, method=method,
                                             weights=lib.asarray(np.zeros(0))))


# A NaN lane with a 0-d q returns the lane's NaN in a's dtype, with keepdims too; an all-NaN
# 1-d lane of the weighted nanquantile is NaN as a NumPy scalar.
@pytest.mark.parametrize("method", ["linear", "hazen", "averaged_inverted_cdf", "lower"])
@pytest.mark.parametrize("q", [0.5, np.float32(0.4)])
@pytest.mark.parametrize("x", [np.float16(np.nan), np.array([np.nan, 1], np.float16), np.array([2, np.nan], np.float32)],
                         ids=["0d", "f16", "f32"])
def test_quantile_nan_lane_keeps_dtype_with_keepdims(method, q, x):
    for kd in (False, True):
        assert_same(lambda lib: lib.quantile(lib.asarray(x), q, keepdims=kd, method=method))


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("func", ["nanquantile", "nanpercentile"])
def test_weighted_nanquantile_all_nan_is_scalar(dt, func):
    x = np.array([np.nan, np.nan], dt)
    assert_same(lambda lib: getattr(lib, func)(lib.asarray(x), 50 if "per" in func else 0.5, method="inverted_cdf",
                                               weights=lib.asarray(np.ones(2))))
    assert_same(lambda lib: getattr(lib, func)(lib.asarray(x), 50 if "per" in func else 0.5, axis=0,
                                               method="inverted_cdf", weights=lib.asarray(np.ones(2)), keepdims=True))


# ---------------------------------------------------------------- input casts' warnings
# Note [per-operand input casts] (python/npc/csrc/bind_ops.cpp): NumPy casts 0-d inputs, and
# all inputs of 1-d calls within its buffer, one by one ("... encountered in cast" per input,
# ComplexWarning before each); elsewhere the casts' flags join the ufunc's own report.
_BIG = 1e300


@pytest.mark.parametrize("case", [
    lambda lib: lib.add(lib.asarray(np.full(5, _BIG)), lib.asarray(np.full(5, _BIG)), dtype="float32"),
    lambda lib: lib.divmod(lib.asarray(np.full(5, _BIG)), lib.asarray(np.full(5, _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full((3, 5), _BIG)), lib.asarray(np.full(5, _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full((3, 5), _BIG)), lib.asarray(np.full((3, 5), _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full((3, 10), _BIG))[:, ::2], lib.asarray(np.full((3, 5), _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full(10, _BIG))[::2], lib.asarray(np.full(5, _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.array(_BIG)), lib.asarray(np.full(5, _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full((3, 5), _BIG)), lib.asarray(np.array(_BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full(5, _BIG)), lib.asarray(np.full(5, _BIG)), dtype="float32",
                        out=lib.zeros(5, "float32"), where=lib.ones(5, bool)),
    lambda lib: lib.add(lib.asarray(np.full(8192, _BIG)), lib.asarray(np.full(8192, _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full(8193, _BIG)), lib.asarray(np.full(8193, _BIG)), dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.full(5, _BIG)), lib.asarray(np.full(5, 1.0)), dtype="float32",
                        out=lib.zeros(5, "float16"), casting="unsafe"),
    lambda lib: lib.add(lib.asarray(np.full(5, _BIG + 1j)), lib.asarray(np.full(5, -_BIG + 1j)), dtype="float32",
                        casting="unsafe"),
    lambda lib: lib.add(lib.asarray(np.full((2, 5), _BIG + 1j)), lib.asarray(np.full(5, _BIG + 1j)), dtype="float32",
                        casting="unsafe"),
    lambda lib: lib.add(lib.asarray(np.full(5, np.nan)), lib.asarray(np.full(5, np.nan)), dtype="int64", casting="unsafe"),
    lambda lib: lib.add(lib.asarray(np.full(8193, _BIG)), 1e300, dtype="float32"),
    lambda lib: lib.sqrt(lib.asarray(np.full((2, 5), _BIG)), dtype="float32"),
    lambda lib: lib.sqrt(lib.asarray(np.full(5, _BIG)), dtype="float32"),
    lambda lib: lib.ldexp(2**31, lib.asarray(np.int8([1, 2, -3]).reshape(1, 3))),
    lambda lib: (lambda r: (r, r.strides))(lib.negative(lib.asarray(np.arange(12.0).reshape(4, 3))[::-2].T,
                                                       dtype="float32", order="A")),
    lambda lib: (lambda r: (r, r.strides))(lib.sqrt(lib.asarray(np.arange(12).reshape(4, 3))[::-2].T, order="K")),
    lambda lib: lib.power(lib.asarray(np.int32([2, 3])), lib.asarray(np.int32([-1, 2])), out=lib.zeros(2, "bool")),
    lambda lib: lib.power(lib.asarray(np.float64([np.nan, 2])), lib.asarray(np.int32([-1, 2])), dtype="int64",
                          casting="unsafe"),
], ids=lambda f: None)
def test_input_cast_warnings_like_numpy(case):
    assert_same(case)


# dtype= without a loop: gcd/lcm raise _UFuncNoLoopError with the requested output; a weak
# Python complex beside a float32 loop is complex64 in the casting error; ldexp of a bool
# array and a Python int beyond int32 runs the int64 slot.
@pytest.mark.parametrize("case", [
    lambda lib: lib.gcd(lib.asarray(np.int8([4, 6])), lib.asarray(np.uint8([2, 3])), dtype="float64"),
    lambda lib: lib.lcm(lib.asarray([True, False]), lib.asarray([True, True]), dtype="int8"),
    lambda lib: lib.add(lib.asarray(np.ones(2, "float16")), 1j, dtype="float16"),
    lambda lib: lib.add(lib.asarray(np.ones(2, "float32")), 1j, dtype="float32"),
    lambda lib: lib.add(lib.asarray(np.ones(2, "int8")), 1j, dtype="int8"),
    lambda lib: lib.add(lib.asarray(np.ones(2, "int8")), 2.5, dtype="int8"),
    lambda lib: lib.ldexp(lib.asarray([True, False]), 2**40, dtype="float32"),
    lambda lib: lib.ldexp(lib.asarray(np.float32([1.5])), 2**40, dtype="float32"),
    lambda lib: lib.less(lib.asarray([True, False]), 2**63),
])
def test_dtype_keyword_loop_errors(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(case)


# numpy.round of bool data with decimals != 0 writes into an array like the input: the
# float64 product does not cast into bool (UFuncTypeError), unless out= is given.
@pytest.mark.parametrize("decimals", [0, 1, -1, 2])
@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_round_bool_with_decimals(decimals, shape):
    x = np.ones(shape, bool)
    assert_same(lambda lib: lib.round(lib.asarray(x), decimals))
    assert_same(lambda lib: np.round(lib.asarray(x), decimals))
    assert_same(lambda lib: lib.round(lib.asarray(x), decimals, out=lib.zeros(shape)))


# ---------------------------------------------------------------- known differences
@pytest.mark.xfail(strict=True, reason="a 0-d input's reduction casts its one element outside the reduce loop in "
                                       "NumPy ('invalid value encountered in cast'); npc reports it as 'in reduce'")
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_zero_d_reduction_cast_warning_name(name):
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(np.array(np.nan)), dtype="int64"))


@pytest.mark.xfail(strict=True, reason="NaNs that npc's transcendental kernels return for invalid inputs are +nan; "
                                       "NumPy's (x86 invalid operations) are -nan (sign bit set)")
def test_nan_sign_of_invalid_arcsin():
    assert_same(lambda lib: lib.arcsin(lib.asarray([2.0, -3.0])))
