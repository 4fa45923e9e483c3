"""Defects found by probing the reduction order, buffer exports, slice views and the new
messages against NumPy: each test compares npc with NumPy on the input that broke."""
import warnings

import numpy as np
import pytest

import npc
from _diff import assert_same_outcome
from _ufunc_helpers import UFUNC_ROWS, binary, kinds, representatives, ufuncs


def _outcome(lib, fn):
    """(kind, payload, warnings) of fn(lib): the result's dtype, shape and bytes, or the
    exception's type and message; the warnings as (category, message) pairs."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = np.asarray(fn(lib))
            res = ("ok", r.dtype.str, r.shape, np.ascontiguousarray(r).tobytes())
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            res = ("exc", type(e).__name__, str(e))
    return res, [(x.category.__name__, str(x.message)) for x in w]


def assert_same(fn):
    assert_same_outcome(_outcome(npc, fn), _outcome(np, fn))


# ---------------------------------------------------------------- reductions

@pytest.mark.parametrize("name", ["min", "max"])
@pytest.mark.parametrize("shape,axis", [((0, 0), 0), ((0, 0), 1), ((3, 0, 0), 1), ((1, 3, 0, 0), (2, 1)),
                                        ((0, 3, 0), (0, 1)), ((2, 0), 0)])
def test_no_identity_empty_axis_with_empty_result(name, shape, axis):
    # A reduced axis of length 0 raises even when the result is empty as well.
    x = np.zeros(shape, np.float32)
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(x), axis=axis))


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("step", [-1, -2])
def test_cumprod_two_elements_reversed_axis(dt, step):
    # NumPy's scalar complex product (negative stride) for the one step of a length-2 scan:
    # its loop reads the input backwards and writes the new output forwards (was the SIMD
    # product, as for operands that all step backwards: 1 ULP apart).
    rng = np.random.default_rng(3)
    for _ in range(50):
        x = (rng.standard_normal((4, 3)) * 3 + 1j * rng.standard_normal((4, 3))).astype(dt)
        assert_same(lambda lib: lib.cumprod(lib.asarray(x)[::step][:2], axis=0))
        assert_same(lambda lib: lib.cumprod(lib.asarray(x[:, 0])[::step][:2]))
        assert_same(lambda lib: lib.multiply.accumulate(lib.asarray(x).T[:, ::step][:, :2], axis=1))


_C = np.array([[1 + 2j, 3 - 1j], [1, 2]])
_COMPLEX_CASTS = {
    "sum dtype=f8": lambda l: l.sum(l.asarray(_C), dtype=np.float64),
    "sum dtype=u1": lambda l: l.sum(l.asarray(_C), dtype=np.uint8),
    "sum dtype=bool": lambda l: l.sum(l.asarray(_C), axis=0, dtype=bool),
    "prod dtype=f8": lambda l: l.prod(l.asarray(_C), dtype=np.float64),
    "add.reduce dtype=f8": lambda l: l.add.reduce(l.asarray(_C), axis=0, dtype=float),
    "mean dtype=f8": lambda l: l.mean(l.asarray(_C), axis=0, dtype=float),
    "var dtype=f8": lambda l: l.var(l.asarray(_C), axis=0, dtype=float),
    "std dtype=f4": lambda l: l.std(l.asarray(_C), dtype=np.float32),
    "nansum dtype=f8": lambda l: l.nansum(l.asarray(_C), axis=0, dtype=float),
    "cumsum dtype=f8": lambda l: l.cumsum(l.asarray(_C), dtype=float),
    "add.accumulate dtype=f8": lambda l: l.add.accumulate(l.asarray(_C), dtype=float),
    "cumsum out=f8": lambda l: l.cumsum(l.asarray(_C), axis=0, out=l.zeros((2, 2))),
    "sum out=f8": lambda l: l.sum(l.asarray(_C), axis=0, out=l.zeros(2)),
    "sum out=f8 0-d": lambda l: l.sum(l.asarray(_C), out=l.zeros(())),
    "sum out=i8": lambda l: l.sum(l.asarray(_C), axis=0, out=l.zeros(2, np.int64)),
    "sum out=bool": lambda l: l.sum(l.asarray(_C), axis=0, out=l.zeros(2, bool)),
    "max out=f8": lambda l: l.max(l.asarray(_C), axis=0, out=l.zeros(2)),
    "sum dtype=f8 out=c16": lambda l: l.sum(l.asarray(_C), axis=0, dtype=float, out=l.zeros(2, complex)),
    "mean out=f8": lambda l: l.mean(l.asarray(_C), axis=0, out=l.zeros(2)),
    "var out=f8": lambda l: l.var(l.asarray(_C), axis=0, out=l.zeros(2)),
    "mean int32 out=c16": lambda l: l.mean(l.asarray([[1, 2], [3, 4]], dtype=np.int32), axis=0,
                                           out=l.zeros(2, complex)),
    "sum uint8 dtype=u1 out=c16": lambda l: l.sum(l.asarray([[1, 2], [3, 4]], dtype=np.uint8), axis=0,
                                                  dtype=np.uint8, out=l.zeros(2, complex)),
    "sum int32 out=c16": lambda l: l.sum(l.asarray([[1, 2], [3, 4]], dtype=np.int32), axis=0,
                                         out=l.zeros(2, complex)),
}


@pytest.mark.parametrize("case", list(_COMPLEX_CASTS))
def test_reduction_complex_cast_warnings(case):
    # ComplexWarning once per cast that drops an imaginary part (input into dtype=, out=).
    assert_same(_COMPLEX_CASTS[case])


_INITIALS = {
    "prod uint8 initial=-1": lambda l: l.prod(l.asarray([1, 2, 3], dtype=np.uint8), initial=-1),
    "prod uint8 dtype=u1 initial=-1": lambda l: l.prod(l.asarray([1, 2, 3], dtype=np.uint8), initial=-1,
                                                       dtype=np.uint8),
    "sum int8 dtype=i1 initial=300": lambda l: l.sum(l.asarray([1, 2, 3], dtype=np.int8), initial=300,
                                                     dtype=np.int8),
    "sum int8 initial=300": lambda l: l.sum(l.asarray([1, 2, 3], dtype=np.int8), initial=300),
    "max uint8 initial=-1": lambda l: l.max(l.asarray([1, 2, 3], dtype=np.uint8), initial=-1),
    "max uint8 initial=256": lambda l: l.max(l.asarray([1, 2, 3], dtype=np.uint8), initial=256),
    "min int16 axis initial=2**15": lambda l: l.min(l.asarray([[1, 2]], dtype=np.int16), axis=0, initial=2**15),
    "sum int64 initial=2**70": lambda l: l.sum(l.asarray([1]), initial=2**70),
    "sum float32 initial=2**70": lambda l: l.sum(l.asarray([1.0], dtype=np.float32), initial=2**70),
    "max uint8 initial=2.5": lambda l: l.max(l.asarray([1, 2, 3], dtype=np.uint8), initial=2.5),
}


@pytest.mark.parametrize("case", list(_INITIALS))
def test_reduction_initial_out_of_range(case):
    assert_same(_INITIALS[case])


_X = np.arange(98, dtype=np.float64).reshape(7, 7, 2)
_WHERE_VAR = {
    "var where (2,) axis (0,1)": lambda l: l.var(l.asarray(_X), axis=(0, 1), where=l.asarray([True, True])),
    "var where (1,2) axis 0": lambda l: l.var(l.asarray(_X), axis=0, where=l.asarray([[True, False]])),
    "std where (7,1,2) axis 1": lambda l: l.std(l.asarray(_X), axis=1, where=l.asarray(np.ones((7, 1, 2), bool))),
    "std float16 where (2,)": lambda l: l.std(l.asarray(_X.astype(np.float16)), axis=(0, 1),
                                              where=l.asarray([True, False])),
    "var where (2,) keepdims": lambda l: l.var(l.asarray(_X), axis=(0, 1), keepdims=True,
                                               where=l.asarray([True, True])),
    "var where out": lambda l: l.var(l.asarray(_X), axis=1, where=l.asarray(np.ones((7, 1, 2), bool)),
                                     out=l.zeros((7, 2))),
}


@pytest.mark.parametrize("case", list(_WHERE_VAR))
def test_var_std_broadcast_where(case):
    # A where= mask that broadcasts (fewer dims, size-1 dims) worked for mean but not var/std.
    assert_same(_WHERE_VAR[case])


# ---------------------------------------------------------------- integer indices

class _Index:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


@pytest.mark.parametrize("key", [_Index(2**63), _Index(2**64 - 1), _Index(-2**63 - 1), np.uint64(2**63),
                                 np.array(2**63, np.uint64), np.array([2**63], np.uint64), 2**63, _Index(5)],
                         ids=["index-2**63", "index-2**64-1", "index--2**63-1", "np.uint64", "0-d uint64",
                              "1-d uint64", "int-2**63", "index-5"])
def test_huge_index_objects(key):
    # __index__ objects beyond int64: IndexError (only Python ints and NumPy integers give
    # OverflowError in [2**63, 2**64)); a 0-d uint64 array reads as a Python int.
    assert_same(lambda lib: lib.arange(10)[key])


def test_huge_index_npc_uint64_scalar_array():
    r = _outcome(npc, lambda lib: lib.arange(10)[npc.asarray(np.array(2**63, np.uint64))])
    assert r == _outcome(np, lambda lib: lib.arange(10)[np.array(2**63, np.uint64)])


_RNG = np.random.default_rng(7)
_C8 = (_RNG.standard_normal((3, 20)) + 1j * _RNG.standard_normal((3, 20))).astype(np.complex64)
_OUT_LOOPS = {
    "sum int64 out=f2": lambda l: l.add.reduce(l.asarray(np.array([2049, 1])), out=l.zeros((), np.float16)),
    "sum int64 out=f4": lambda l: l.add.reduce(l.asarray(np.array([2**24 + 1, 1])), out=l.zeros((), np.float32)),
    "prod int64 out=f2": lambda l: l.multiply.reduce(l.asarray(np.array([2049, 3])), out=l.zeros((), np.float16)),
    "sum int64 initial=2.5 out=f2": lambda l: l.sum(l.asarray(np.array([[5, 7, 9]])), axis=0, initial=2.5,
                                                    out=l.zeros(3, np.float16)),
    "nansum int64 initial=2.5 out=f2": lambda l: l.nansum(l.asarray(np.array([[5, 7, 9]])), axis=0, initial=2.5,
                                                          out=l.zeros(3, np.float16)),
    "sum c8 out=f8": lambda l: l.sum(l.asarray(_C8), axis=1, out=l.zeros(3)),
    "mean c8 out=f8": lambda l: l.mean(l.asarray(_C8), axis=1, out=l.zeros(3)),
    "nansum c8 initial=1 out=f8": lambda l: l.nansum(l.asarray(_C8), axis=1, initial=1, out=l.zeros(3)),
    "sum c8 out=f4": lambda l: l.sum(l.asarray(_C8), axis=1, out=l.zeros(3, np.float32)),
    "sum f4 out=f8": lambda l: l.sum(l.asarray(_C8.real.copy()), axis=1, out=l.zeros(3)),
}


@pytest.mark.parametrize("case", list(_OUT_LOOPS))
def test_reduce_loop_is_promotion_of_input_and_out(case):
    # With out= and no dtype=, add/multiply run in the promotion of input and out even when
    # it is wider than both (int64 + float16 -> float64, complex64 + float64 -> complex128).
    assert_same(_OUT_LOOPS[case])


_F = np.ones((3, 4), np.float32)
_NAN_OUT = {
    "nanmean out=i8": lambda l: l.nanmean(l.asarray(_F), axis=1, out=l.zeros(3, np.int64)),
    "nanmean out=bool": lambda l: l.nanmean(l.asarray(_F), axis=1, out=l.zeros(3, bool)),
    "nanmean dtype=int": lambda l: l.nanmean(l.asarray(_F), dtype=int),
    "nanvar out=i8": lambda l: l.nanvar(l.asarray(_F), axis=1, out=l.zeros(3, np.int64)),
    "nanstd dtype=int": lambda l: l.nanstd(l.asarray(_F), dtype=np.int32),
    "nanmean out=f2": lambda l: l.nanmean(l.asarray(_F), axis=1, out=l.zeros(3, np.float16)),
    "nanmean int input out=i8": lambda l: l.nanmean(l.asarray(_F.astype(int)), axis=1, out=l.zeros(3, np.int64)),
}


@pytest.mark.parametrize("case", list(_NAN_OUT))
def test_nan_stats_inexact_out(case):
    # Without NaNs in the input too: NumPy checks dtype=/out= before looking for NaNs.
    assert_same(_NAN_OUT[case])


@pytest.mark.parametrize("case", ["f8 initial=2.5 out=i8", "c16 initial=2.5 out=i8"])
def test_reduce_initial_cast_through_out(case):
    x = np.array([[0.4, 0.4], [1.3, 2.9]])
    if case.startswith("c16"):
        x = x + 1j
    assert_same(lambda lib: lib.sum(lib.asarray(x), axis=1, initial=2.5, out=lib.zeros(2, np.int64)))


# ---------------------------------------------------------------- buffer exports

class _PyBuffer(__import__("ctypes").Structure):
    import ctypes as _ct
    _fields_ = [("buf", _ct.c_void_p), ("obj", _ct.py_object), ("len", _ct.c_ssize_t),
                ("itemsize", _ct.c_ssize_t), ("readonly", _ct.c_int), ("ndim", _ct.c_int),
                ("format", _ct.c_char_p), ("shape", _ct.c_void_p), ("strides", _ct.c_void_p),
                ("suboffsets", _ct.c_void_p), ("internal", _ct.c_void_p)]


def _get_buffer(x, flags):
    """PyObject_GetBuffer(x, flags) from Python: ('ok', ndim, readonly) or the exception."""
    import ctypes
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    release = ctypes.pythonapi.PyBuffer_Release
    release.argtypes = [ctypes.POINTER(_PyBuffer)]
    b = _PyBuffer()
    try:
        get(x, ctypes.byref(b), flags)
    except Exception as e:  # noqa: BLE001 - compared with NumPy's
        return (type(e).__name__, str(e))
    r = ("ok", b.ndim, b.readonly)
    release(ctypes.byref(b))
    return r


_ND, _STRIDES = 0x8, 0x18
_FLAGS = {"SIMPLE": 0, "WRITABLE": 1, "ND": _ND, "STRIDES|WRITABLE": _STRIDES | 1, "C": 0x20 | _STRIDES,
          "F": 0x40 | _STRIDES, "ANY": 0x80 | _STRIDES, "C|WRITABLE": 0x20 | _STRIDES | 1}


def _readonly(lib):
    x = lib.arange(3.0)
    x.flags.writeable = False
    return x


_EXPORTED = {
    "reversed": lambda l: l.arange(10.0)[::-1],
    "transposed": lambda l: l.arange(6.0).reshape(2, 3).T,
    "read-only": _readonly,
    "read-only reversed": lambda l: _readonly(l)[::-1],
    "broadcast_to": lambda l: l.broadcast_to(l.arange(3.0), (2, 3)),
    "contiguous": lambda l: l.arange(6.0).reshape(2, 3),
}


@pytest.mark.parametrize("flags", list(_FLAGS))
@pytest.mark.parametrize("layout", list(_EXPORTED))
def test_buffer_request_errors(layout, flags):
    # NumPy's array_getbuffer: ValueError "ndarray is not C-contiguous" / "... Fortran
    # contiguous" / "... contiguous", then "buffer source array is read-only"; no shape (ndim
    # 0) when PyBUF_ND is not asked for.
    assert _get_buffer(_EXPORTED[layout](npc), _FLAGS[flags]) == _get_buffer(_EXPORTED[layout](np), _FLAGS[flags])


def test_buffer_writable_request_of_broadcast_arrays_view():
    # A writable export of a broadcast_arrays view succeeds with NumPy's DeprecationWarning.
    out = []
    for lib in (np, npc):
        x = lib.broadcast_arrays(lib.arange(3.0), lib.zeros((2, 1)))[0]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = _get_buffer(x, _FLAGS["STRIDES|WRITABLE"])
        out.append((r, [x.category for x in w]))
    assert out[0] == out[1]


@pytest.mark.xfail(strict=True, reason="NumPy's buffer export gives C strides to contiguous arrays with empty or "
                   "size-1 dims (memoryview(np.zeros((2, 0, 3))).strides == (0, 24, 8)) while the arrays keep their "
                   "own; numpy.asarray(npc_array) reads npc's export, so npc exports the array's own strides to keep "
                   "numpy.asarray's strides equal to NumPy's")
@pytest.mark.parametrize("make", [lambda lib: lib.zeros((2, 0, 3)), lambda lib: lib.arange(6.0)[::5][:1]],
                         ids=["empty", "one element"])
def test_memoryview_strides_of_degenerate_contiguous_arrays(make):
    a, b = memoryview(make(npc)), memoryview(make(np))
    assert (a.shape, a.strides, a.nbytes) == (b.shape, b.strides, b.nbytes)


@pytest.mark.parametrize("make", [lambda lib: lib.zeros((2, 0, 3)), lambda lib: lib.arange(6.0)[::5][:1],
                                  lambda lib: lib.zeros((4, 3))[:0]], ids=["empty", "one element", "empty view"])
def test_asarray_strides_of_degenerate_arrays(make):
    assert np.asarray(make(npc)).strides == make(np).strides


def test_crc32_of_non_contiguous_view():
    import zlib
    assert _outcome(npc, lambda lib: zlib.crc32(lib.arange(10.0)[::-1])) == \
        _outcome(np, lambda lib: zlib.crc32(lib.arange(10.0)[::-1]))


@pytest.mark.xfail(strict=True, reason="numpy.frombuffer wraps objects that have bf_releasebuffer (npc arrays) in "
                   "a memoryview, whose contiguous request raises BufferError; NumPy arrays are asked directly")
def test_frombuffer_of_non_contiguous_view():
    assert_same(lambda lib: np.frombuffer(lib.arange(10.0)[::-1]))


class _RaisingIndex:
    def __init__(self, exc):
        self.exc = exc

    def __index__(self):
        if isinstance(self.exc, BaseException):
            raise self.exc
        return self.exc  # a non-int result


@pytest.mark.parametrize("bad", [KeyError("k"), TypeError("t"), OverflowError("o"), 1.5], ids=repr)
@pytest.mark.parametrize("where", ["alone", "in tuple", "slice bound"])
def test_index_whose_index_method_fails(bad, where):
    # An integer index whose __index__ fails is NumPy's invalid-index IndexError; a slice
    # bound's error propagates as raised.
    obj = _RaisingIndex(bad)
    key = {"alone": obj, "in tuple": (0, obj), "slice bound": slice(obj, None)}[where]
    assert_same(lambda lib: lib.arange(6).reshape(2, 3)[key])

    def assign(lib):
        a = lib.arange(6).reshape(2, 3)
        a[key] = 1
        return a
    assert_same(assign)


_OUT_CAST_ERRORS = {
    "nan into int32 out": lambda l: l.add(l.asarray([np.nan]), 1.0, out=l.zeros(1, np.int32), casting="unsafe"),
    "nan into int32 out, 300": lambda l: l.add(l.asarray([np.nan] * 300), 1.0, out=l.zeros(300, np.int32),
                                               casting="unsafe"),
    "1e300 into float32 out": lambda l: l.add(l.asarray([1e300]), 1.0, out=l.zeros(1, np.float32), casting="unsafe"),
    "0/0 into int8 out": lambda l: l.divide(l.asarray([0.0, 1.0]), 0, out=l.zeros(2, np.int8), casting="unsafe"),
    "dtype=f4 cast then int8 out": lambda l: l.add(l.asarray([1e300]), 1.0, dtype=np.float32,
                                                   out=l.zeros(1, np.int8), casting="unsafe"),
    "masked nan into int out": lambda l: l.add(l.asarray([np.nan, 1]), 1.0, out=l.zeros(2, np.int32),
                                               where=l.asarray([True, False]), casting="unsafe"),
    "dtype=f4 input cast only": lambda l: l.add(l.asarray([1e300]), 1.0, dtype=np.float32),
    "mean of empty into int8 out": lambda l: l.mean(l.asarray(np.array([3], np.uint8)), axis=(0,), keepdims=True,
                                                    where=l.asarray([False]), dtype=np.int64,
                                                    out=l.zeros(1, np.int8)),
}


@pytest.mark.parametrize("case", list(_OUT_CAST_ERRORS))
def test_out_cast_errors_named_after_the_ufunc(case):
    # NumPy casts into out= inside the ufunc's loop: "invalid value encountered in add", not
    # "... in cast" (input casts before the loop keep "cast").
    assert_same(_OUT_CAST_ERRORS[case])


_MORE_COMPLEX = {
    "all complex out=f8": lambda l: l.all(l.asarray([1j, 2]), axis=0, keepdims=True, out=l.zeros(1)),
    "any complex out=f2": lambda l: l.any(l.asarray([[1j, 0]]), axis=(0,), out=l.zeros(2, np.float16)),
    "mean int8 dtype=c8 out=i8": lambda l: l.mean(l.asarray(np.arange(6, dtype=np.int8)), dtype=np.complex64,
                                                  out=l.zeros((), np.int64)),
    "sum int8 dtype=c8": lambda l: l.sum(l.asarray(np.arange(6, dtype=np.int8)), dtype=np.complex64),
}


@pytest.mark.parametrize("case", list(_MORE_COMPLEX))
def test_reduction_complex_cast_warnings_more(case):
    assert_same(_MORE_COMPLEX[case])


@pytest.mark.parametrize("name", ["max", "min", "nanmax"])
def test_no_identity_reduce_first_element_through_out(name):
    x = np.array([200, 3, 100], np.uint8)
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(x), axis=(0,), keepdims=True, out=lib.zeros(1, np.int8)))


# Note [reduce through a narrower out] (src/ops/reduce.cpp): the start value (initial=, the
# identity, or the first elements) goes through out= and back into NumPy's loop dtype, which
# is resolved from (out, input). Inputs of every dtype class into out= of every narrower
# class, over shape kinds; no NaN here (NumPy's max/min loops clear the flags that earlier
# write-backs raised, see test_reduce_through_out_nan_flags_cleared_by_max_loop).
_RNG = np.random.default_rng(7)
_THROUGH_IN = {
    "f8": _RNG.standard_normal((4, 6)) * 300,
    "f4": (_RNG.standard_normal((4, 6)) * 300).astype(np.float32),
    "f2": (_RNG.standard_normal((4, 6)) * 30).astype(np.float16),
    "i8": _RNG.integers(-300, 300, (4, 6)),
    "i2": _RNG.integers(-3000, 3000, (4, 6)).astype(np.int16),
    "u1": _RNG.integers(0, 255, (4, 6)).astype(np.uint8),
    "u8": _RNG.integers(0, 2**62, (4, 6), dtype=np.uint64) * 2 + 1,
    "b": _RNG.integers(0, 2, (4, 6)).astype(bool),
    "c16": _RNG.standard_normal((4, 6)) * 100 + 1j,
}
_THROUGH_SHAPES = {
    "2d": lambda x: x, "transposed": lambda x: x.T, "negative strides": lambda x: x[::-1, ::-2],
    "3d": lambda x: x.reshape(2, 2, 6), "0-d": lambda x: x[1, 2], "empty": lambda x: x[:0],
    "broadcast": lambda x: np.broadcast_to(x[:1], (3, 6)),
}


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "nanmax", "nansum"])
@pytest.mark.parametrize("out_dt", ["i1", "u1", "f2", "f4", "b"])
@pytest.mark.parametrize("in_dt", list(_THROUGH_IN))
@pytest.mark.parametrize("shape", list(_THROUGH_SHAPES))
def test_reduce_through_narrower_out(name, out_dt, in_dt, shape):
    x = _THROUGH_SHAPES[shape](_THROUGH_IN[in_dt])
    axes = [None, 0, -1, (0, 1)][: x.ndim + 2] if x.ndim else [None]
    inits = [None, 2.5, 7, -1.5] if name in ("sum", "prod", "max", "min") else [None]
    for axis in axes:
        for init in inits:
            kw = {} if init is None else {"initial": init}
            try:
                oshape = np.sum(x, axis=axis).shape
            except Exception:  # noqa: BLE001 - an axis the shape lacks
                continue

            def fn(lib):
                return getattr(lib, name)(lib.asarray(x), axis=axis, out=lib.zeros(oshape, np.dtype(out_dt)), **kw)
            assert_same(fn)


@pytest.mark.parametrize("name", ["max", "min", "sum"])
@pytest.mark.parametrize("nan_at", [0, 1, 2])
def test_reduce_through_out_nan_start(name, nan_at):
    # A NaN start value cast into an int out= warns "... in cast"; a NaN result "... in reduce".
    x = np.array([1.0, 2.0, 3.0])
    x[nan_at] = np.nan
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(x), out=lib.zeros((), np.int8)))
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(x[::-1]), out=lib.zeros((), np.uint8)))
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(x), initial=np.nan, out=lib.zeros((), np.int16)))


@pytest.mark.parametrize("name", ["max", "sum", "prod", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reduce_int_initial_out_of_range_for_out(name, axis):
    # NumPy packs initial= into its loop dtype, resolved from out=: -7 into a uint8 loop raises.
    x = np.array([[True, False], [True, True]])
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(x), axis=axis, initial=-7,
                                               out=lib.zeros(np.sum(x, axis=axis).shape, np.uint8)))


@pytest.mark.xfail(strict=True, reason="NumPy's max/min loops clear the floating-point flags, so an 'invalid' that "
                   "the write-back of an earlier output block raised (NaN into an int out=) is lost when a later "
                   "block runs the loop; npc reports it")
def test_reduce_through_out_nan_flags_cleared_by_max_loop():
    x = np.ones((2, 2, 6))
    x[0, 1, 0] = np.nan
    assert_same(lambda lib: lib.max(lib.asarray(x), axis=1, out=lib.zeros((2, 6), np.int8)))


@pytest.mark.xfail(strict=True, reason="NumPy reads a narrower out= back at each refill of its 8192-element buffer "
                   "(np.sum(np.full(20000, 0.4), out=int64) truncates after each buffer: 7998); npc casts the "
                   "start value and the result only (8000)")
@pytest.mark.parametrize("shape,axis", [((20000,), 0), ((3, 10000), 0), ((2, 20000), 1)])
def test_reduce_through_out_longer_than_the_buffer(shape, axis):
    x = np.full(shape, 0.4)
    oshape = np.sum(x, axis=axis).shape
    assert_same(lambda lib: lib.sum(lib.asarray(x), axis=axis, out=lib.zeros(oshape, np.int64)))


# ---------------------------------------------------------------- ufunc.at, quantile out=

def _at(name, a, idx, b, dt=None):
    def run(lib):
        x = lib.asarray(np.asarray(a, dtype=dt))
        getattr(lib, name).at(x, idx, b)
        return x
    return run


@pytest.mark.parametrize("case", ["uint8 += 2**70", "float += 'a'", "int64 += 2**64", "float += object"])
def test_ufunc_at_values_without_a_loop(case):
    # Was RuntimeError "Caught an unknown exception!".
    fn = {"uint8 += 2**70": _at("add", [1, 2, 3], [0], 2**70, np.uint8),
          "float += 'a'": _at("add", [1.0, 2, 3], [0], "a"),
          "int64 += 2**64": _at("add", [1, 2, 3], [0], 2**64),
          "float += object": _at("add", [1.0, 2, 3], [0, 1], np.array([1, 2], dtype=object))}[case]
    assert_same(fn)


@pytest.mark.parametrize("case", ["floor_divide int by 0", "maximum float64 nan", "add float64 overflow"])
def test_ufunc_at_error_names(case):
    fn = {"floor_divide int by 0": _at("floor_divide", [1, 2, 3], [0], 0),
          "maximum float64 nan": _at("maximum", [1.0, 2, 3], [0], np.nan),
          "add float64 overflow": _at("add", [1e308, 2, 3], [0], 1e308)}[case]
    assert_same(fn)


def _at_on(name, a, idx, b):
    def run(lib):
        x = lib.asarray(a.copy())
        getattr(lib, name).at(x, idx, b)
        return x
    return run


# Note [ufunc.at error names] (python/npc/_ufunc.py): named after the ufunc on its indexed
# loops (1-d `a`, no cast, an integer/array index or one element), 'at' elsewhere; the
# values, the casts' flags and the flags NumPy's max/min loops clear, against NumPy.
_AT_INDICES = [[0, 1], 0, slice(0, 1), slice(0, 2), Ellipsis, [3, 3], np.array([True, False, False, True]),
               (Ellipsis, 1), slice(None, None, -1)]


@pytest.mark.parametrize("dt", ["i1", "u1", "i8", "u8", "f2", "f4", "f8", "c8", "c16", "?"])
# The ufuncs with indexed loops (the `at` column) and one binary ufunc of each other class.
@pytest.mark.parametrize("name", ufuncs(lambda r: r.at) + representatives(binary, lambda r: not r.at))
def test_ufunc_at_error_names_across_dtypes(name, dt):
    if dt[0] == "c" and "c" not in kinds(next(r for r in UFUNC_ROWS if r.name == name)):
        pytest.skip("no complex loop (the TypeError's text differs: see the report)")
    a = np.array([1, 2, 3, 0]).astype(dt)
    if dt[0] == "f":
        a[3] = np.nan
    for bval in [0, 0.0, np.nan, 1e308, -1]:
        for bkind in ["python", "same dtype", "1-d", "2-d"]:
            if bkind == "python":
                b = bval
            else:
                with np.errstate(all="ignore"):
                    b = np.array(bval).astype(dt)
                if bkind != "same dtype":
                    b = np.array([b, b]) if bkind == "1-d" else np.array([[b, b]])
            for idx in _AT_INDICES:
                n = np.arange(4)[idx].size
                if bkind in ("1-d", "2-d") and n != 2 or (name == "subtract" and dt == "?"):
                    continue
                assert_same(_at_on(name, a, idx, b))
    # Not indexed: a 2-d `a`, a strided view (indexed), a unary ufunc.
    assert_same(_at_on(name, np.array([[1, 2], [3, 0]]).astype(dt), 0, 0))
    assert_same(_at_on(name, np.array([[1, 2], [3, 0]]).astype(dt), ([0, 1], [1, 1]), 0))
    assert_same(_at_on(name, np.array([1, 2, 3, 0]).astype(dt)[::2], [1], np.array(0).astype(dt)))


_X24 = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("name,extra,oshape", [("quantile", (0.5,), (4, 2)), ("percentile", (50,), (2, 1, 4)),
                                               ("nanmedian", (), (4, 2)), ("nanquantile", (0.5,), (2, 1, 4))])
def test_quantile_out_wrong_shape_messages(name, extra, oshape):
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(_X24), *extra, axis=1, out=lib.zeros(oshape)))


def test_nanquantile_integer_out():
    assert_same(lambda lib: getattr(lib, "nanquantile")(lib.asarray(_X24), 0.5, axis=1, out=lib.zeros((2, 4), np.int64)))


# The quantile family's out=: quantile/percentile write through numpy.add (same_kind, the
# ufunc's broadcasting and messages, subtracting in out's dtype), median through numpy.mean,
# the nan functions with out[...] = result (unsafe casts, setitem's messages); with keepdims
# all index out with 0 at the reduced axes first. Every dtype of out, right and wrong shapes.
_Q_RNG = np.random.default_rng(1)
_Q_IN = {"f8": _Q_RNG.standard_normal((2, 3, 4)), "f4": _Q_RNG.standard_normal((2, 3, 4)).astype(np.float32),
         "f2": _Q_RNG.standard_normal((2, 3, 4)).astype(np.float16), "i8": _Q_RNG.integers(-9, 9, (2, 3, 4)),
         "f8 nan": np.where(_Q_RNG.random((2, 3, 4)) < 0.2, np.nan, _Q_RNG.standard_normal((2, 3, 4))),
         "reversed": _Q_RNG.standard_normal((2, 3, 8))[:, ::-1, ::-2]}
_Q_FUNCS = {"quantile": (0.3,), "percentile": (30,), "nanquantile": (0.3,), "nanpercentile": (30,), "median": (),
            "nanmedian": (), "quantile q1d": ([0.3, 0.5],), "nanquantile q1d": ([0.3, 0.5],)}


@pytest.mark.parametrize("func", list(_Q_FUNCS))
@pytest.mark.parametrize("in_dt", list(_Q_IN))
def test_quantile_family_out(func, in_dt):
    x = _Q_IN[in_dt]
    name, extra = func.split()[0], _Q_FUNCS[func]
    methods = [None] if "median" in name else ["linear", "lower", "midpoint"]
    for axis, keepdims, out_dt, shape_kind, method in __import__("itertools").product(
            [None, 1, (0, 2), -1], [False, True], ["f8", "f4", "f2", "i8"],
            ["right", "transposed", "extra dim", "broadcast", "0-d", "1-d"], methods):
        kw = {} if method is None else {"method": method}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rs = np.shape(getattr(np, name)(x, *extra, axis=axis, keepdims=keepdims, **kw))
        oshape = {"right": rs, "transposed": rs[::-1], "extra dim": rs[:1] + (1,) + rs[1:], "broadcast": (3,) + rs,
                  "0-d": (), "1-d": (7,)}[shape_kind]

        def fn(lib):
            return getattr(lib, name)(lib.asarray(x), *extra, axis=axis, keepdims=keepdims,
                                      out=lib.zeros(oshape, np.dtype(out_dt)), **kw)
        assert_same(fn)


@pytest.mark.parametrize("name", ["mean", "var", "std", "nanmean"])
@pytest.mark.parametrize("axis", [1.0, 3, (0, 5)], ids=repr)
def test_float_or_bad_axis_in_mean_var_std(name, axis):
    assert_same(lambda lib: getattr(lib, name)(lib.ones((3, 2)), axis=axis))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [1, -2, 5])
def test_arg_reduce_0d_axis_message(name, axis):
    # NumPy checks the axis of a 0-d input against its 1-d reshape ("... of dimension 1").
    assert_same(lambda lib: getattr(lib, name)(lib.asarray(2.5), axis=axis))


_REDUCE_CAST_ERRORS = {
    "sum dtype=f4 overflow": lambda l: l.sum(l.asarray([1e300, 1.0]), dtype=np.float32),
    "sum axis dtype=f4 overflow": lambda l: l.sum(l.asarray([[1e300, 1.0]]), axis=1, dtype=np.float32),
    "sum nan into int64 out": lambda l: l.sum(l.asarray([[np.nan, 1.0]]), axis=1, out=l.zeros(1, np.int64)),
    "masked sum nan into int64 out": lambda l: l.sum(l.asarray([[np.nan, 1.0]]), axis=1, out=l.zeros(1, np.int64),
                                                     where=l.asarray([True, False])),
    "add.reduce 1e300 into f4 out": lambda l: l.add.reduce(l.asarray([[1e300, 1.0]]), axis=1,
                                                           out=l.zeros(1, np.float32)),
    "mean nan into int64 out": lambda l: l.mean(l.asarray([[np.nan, 1.0]]), axis=1, out=l.zeros(1, np.int64)),
    "cumsum nan into int64 out": lambda l: l.cumsum(l.asarray([np.nan, 1.0]), out=l.zeros(2, np.int64)),
    "cumsum dtype=f4 overflow": lambda l: l.cumsum(l.asarray([1e300, 1.0]), dtype=np.float32),
}


@pytest.mark.parametrize("case", list(_REDUCE_CAST_ERRORS))
def test_reduction_cast_errors(case):
    # A reduction's casts (dtype=, out=) warn "... in reduce" as NumPy's buffered iterator;
    # they were "... in cast", or left pending and reported by the next call.
    assert_same(_REDUCE_CAST_ERRORS[case])


def test_reduction_cast_errors_not_left_for_the_next_call():
    x = npc.asarray([[np.nan, 1.0]])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        npc.sum(x, axis=1, out=npc.zeros(1, np.int64))
        n = len(w)
        npc.add(npc.asarray([1.0]), 1)
    assert n == 1 and len(w) == 1


@pytest.mark.parametrize("conv", [float, int, complex, bool], ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", [1 + 2j, 1 + 0j], ids=repr)
def test_python_scalar_conversion_of_complex_0d(conv, value):
    # float()/int() of a 0-d complex array: Python's TypeError, as NumPy 2.5 arrays.
    assert_same(lambda lib: conv(lib.asarray(np.array(value))))


_F4 = np.random.default_rng(11).standard_normal((5, 5)).astype(np.float32)
_ACC_OUT = {
    "cumsum f4 out=f8": lambda l: l.cumsum(l.asarray(_F4)[:, ::-1], out=l.zeros(25)),
    "cumsum f2 out=c8": lambda l: l.cumsum(l.asarray(np.linspace(0.1, 3.3, 45).astype(np.float16).reshape(9, 5)),
                                           axis=1, out=l.zeros((9, 5), np.complex64)),
    "cumprod i8 out=f8": lambda l: l.cumprod(l.asarray(np.array([3037000499, 3037000499, 7])), out=l.zeros(3)),
    "add.accumulate f4 out=f8": lambda l: l.add.accumulate(l.asarray(np.linspace(0.1, 1, 9, dtype=np.float32)),
                                                           out=l.zeros(9)),
    "cumprod bool dtype=f2 out=c8": lambda l: l.cumprod(l.asarray([True, False]), dtype=np.float16,
                                                        out=l.zeros(2, np.complex64)),
    "cumprod f8 dtype=c16 out=f4": lambda l: l.cumprod(l.asarray([1.5, 2.5]), dtype=np.complex128,
                                                       out=l.zeros(2, np.float32)),
}


@pytest.mark.parametrize("case", list(_ACC_OUT))
def test_accumulate_loop_and_warnings_with_out(case):
    # Scans with out= run in the promotion of input and out (as reductions) and warn
    # ComplexWarning for each cast of out= that drops an imaginary part (read and write).
    assert_same(_ACC_OUT[case])


# ---------------------------------------------------------------- cast underflow

_UNDERFLOW_CASTS = [("f8", "f2", [5e-13, 1e-5, 1e-8, 0.0, 1.0, 6e-8, 2**-24, 2**-25, 3 * 2**-26]),
                    ("f8", "f4", [1e-46, 1e-40, 2.0**-149, 1e-30]), ("f4", "f2", [1e-8, 1e-5, 2**-24]),
                    ("c16", "c8", [1e-46 + 1j, 1 + 1e-46j]), ("f8", "i8", [1e-300]), ("f2", "f4", [6e-8])]


@pytest.mark.parametrize("src,dst,vals", _UNDERFLOW_CASTS, ids=[f"{s}->{d}" for s, d, _ in _UNDERFLOW_CASTS])
@pytest.mark.parametrize("how", ["astype", "setitem", "strided astype"])
def test_cast_underflow_warns_like_numpy(src, dst, vals, how):
    # NumPy reports underflow from casts (a tiny inexact result), "... encountered in cast".
    for v in vals:
        x = np.array([v, 1.0, v]).astype(src)

        def fn(lib):
            with np.errstate(under="warn"):
                a = lib.asarray(x)
                if how == "setitem":
                    o = lib.zeros(3, dst)
                    o[...] = a
                    return o
                return (a[::-2] if how == "strided astype" else a).astype(dst)
        assert_same(fn)
