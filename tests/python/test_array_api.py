"""npc as a Python array API standard namespace (the newest version NumPy supports): every
required constant, dtype, function and array attribute exists, and behaves as NumPy's."""
import math

import numpy
import pytest

import npc
from _ulps import assert_close

# The names below are the standard's own lists (its "elementwise functions", "creation functions",
# ...), which this file checks npc against: a specification's text, not npc's op set.
CONSTANTS = ["e", "inf", "nan", "newaxis", "pi"]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]
CREATION = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
            "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like"]
DTYPE_FUNCS = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]
UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj",
         "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log", "log1p",
         "log2", "log10", "logical_not", "negative", "positive", "real", "reciprocal", "round", "sign",
         "signbit", "sin", "sinh", "square", "sqrt", "tan", "tanh", "trunc"]
BINARY = ["add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
          "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
          "hypot", "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor",
          "maximum", "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract"]
OTHER = ["clip", "take", "take_along_axis", "matmul", "matrix_transpose", "tensordot", "vecdot",
         "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims",
         "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack", "argmax", "argmin",
         "count_nonzero", "nonzero", "searchsorted", "where", "unique_all", "unique_counts",
         "unique_inverse", "unique_values", "argsort", "sort", "cumulative_prod", "cumulative_sum", "max",
         "mean", "min", "prod", "std", "sum", "var", "all", "any", "diff", "isin", "broadcast_shapes",
         "__array_namespace_info__"]
LINALG = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
          "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
          "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]
FFT = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
       "rfftfreq", "fftshift", "ifftshift"]
ARRAY_ATTRS = ["dtype", "device", "mT", "ndim", "shape", "size", "T"]
ARRAY_METHODS = ["__abs__", "__add__", "__and__", "__array_namespace__", "__bool__", "__complex__",
                 "__dlpack__", "__dlpack_device__", "__eq__", "__float__", "__floordiv__", "__ge__",
                 "__getitem__", "__gt__", "__index__", "__int__", "__invert__", "__le__", "__lshift__",
                 "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__",
                 "__pow__", "__rshift__", "__setitem__", "__sub__", "__truediv__", "__xor__", "to_device",
                 "__iadd__", "__radd__", "__isub__", "__rsub__", "__imul__", "__rmul__", "__itruediv__",
                 "__rtruediv__", "__ifloordiv__", "__rfloordiv__", "__ipow__", "__rpow__", "__imod__",
                 "__rmod__", "__imatmul__", "__rmatmul__", "__iand__", "__rand__", "__ior__", "__ror__",
                 "__ixor__", "__rxor__", "__ilshift__", "__rlshift__", "__irshift__", "__rrshift__"]


def same(np_value, npc_value):
    a, b = numpy.asarray(np_value), numpy.asarray(npc_value)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    assert numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), (a, b)


def test_version_and_namespace():
    assert npc.__array_api_version__ == numpy.__array_api_version__
    a = npc.arange(3)
    assert a.__array_namespace__() is npc
    for v in ("2022.12", "2023.12", npc.__array_api_version__):
        assert a.__array_namespace__(api_version=v) is npc
    with pytest.raises(ValueError):
        a.__array_namespace__(api_version="2099.01")


@pytest.mark.parametrize("name", CONSTANTS + DTYPES + CREATION + DTYPE_FUNCS + UNARY + BINARY + OTHER)
def test_required_name_exists(name):
    assert hasattr(npc, name), name


@pytest.mark.parametrize("name", LINALG)
def test_linalg_extension(name):
    assert callable(getattr(npc.linalg, name))


@pytest.mark.parametrize("name", FFT)
def test_fft_extension(name):
    assert callable(getattr(npc.fft, name))


def test_array_object_surface():
    a = npc.ones((2, 3), dtype=npc.float32)
    for name in ARRAY_ATTRS:
        getattr(a, name)
    for name in ARRAY_METHODS:
        assert callable(getattr(a, name)), name
    assert a.device == "cpu" and a.to_device("cpu") is a
    assert a.mT.shape == (3, 2) and a.T.shape == (3, 2)
    with pytest.raises(ValueError):
        a.to_device("cuda:7")


def test_constants_and_dtypes():
    assert npc.e == math.e and npc.pi == math.pi and math.isinf(npc.inf) and math.isnan(npc.nan)
    assert npc.newaxis is None
    for name in DTYPES:
        assert getattr(npc, name) is getattr(numpy, name)
    assert npc.isdtype(npc.float32, "real floating") and npc.isdtype(npc.int8, ("integral", "bool")) is True


def test_inspection_namespace():
    info = npc.__array_namespace_info__()
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    d = info.default_dtypes()
    assert d["real floating"] == npc.float64 and d["indexing"] == npc.int64
    assert set(info.dtypes(kind="integral")) >= {"int8", "uint64"}


PROMOTION_DTYPES = [numpy.dtype(n) for n in DTYPES]


@pytest.mark.parametrize("d1", PROMOTION_DTYPES, ids=DTYPES)
def test_type_promotion_table(d1):
    for d2 in PROMOTION_DTYPES:
        expected = numpy.result_type(d1, d2)
        assert npc.result_type(d1, d2) == expected
        a, b = npc.ones(2, dtype=d1), npc.ones(2, dtype=d2)
        assert npc.result_type(a, b) == expected
        if d1.kind != "b" or d2.kind != "b":
            assert npc.add(a, b).dtype == expected
    # Python scalars are weak.
    a = npc.ones(2, dtype=d1)
    if d1.kind in "iu":
        assert (a + 1).dtype == d1
    if d1.kind in "fc":
        assert (a * 2.5).dtype == d1


def _args(name, x, y):
    if name in ("acosh",):
        return (x + 1.5,)
    if name in ("acos", "asin", "atanh"):
        return (x / 10,)
    if name in ("log", "log2", "log10", "sqrt", "reciprocal"):
        return (x + 0.5,)
    return (x,)


@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy(name):
    x_np = numpy.linspace(-0.9, 3.1, 9) if name not in ("bitwise_invert",) else numpy.arange(-4, 5)
    if name in ("logical_not",):
        x_np = x_np > 0
    args_np = _args(name, x_np, None)
    args_npc = tuple(npc.asarray(a) for a in args_np)
    np_fn, npc_fn = getattr(numpy, name), getattr(npc, name)
    got = npc_fn(*args_npc)
    assert type(got) is npc.ndarray
    assert_close(name, np_fn(*args_np), got)


@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(name):
    if name.startswith("bitwise") or name in ("logical_and", "logical_or", "logical_xor"):
        x_np, y_np = numpy.arange(-4, 5), numpy.arange(9) % 4
        if name.startswith("logical"):
            x_np, y_np = x_np > 0, y_np > 1
    else:
        x_np, y_np = numpy.linspace(0.5, 4.5, 9), numpy.linspace(3.0, 1.0, 9)
    got = getattr(npc, name)(npc.asarray(x_np), npc.asarray(y_np))
    assert type(got) is npc.ndarray
    assert_close(name, getattr(numpy, name)(x_np, y_np), got)


def test_structural_functions_match_numpy():
    x_np = numpy.arange(24.0).reshape(2, 3, 4)
    i_np = numpy.array([[0, 2], [1, 0], [3, 3]])
    cases = [
        ("concat", ([x_np, x_np],), {"axis": 1}), ("stack", ([x_np, x_np],), {"axis": -1}),
        ("permute_dims", (x_np, (2, 0, 1)), {}), ("matrix_transpose", (x_np,), {}),
        ("expand_dims", (x_np,), {"axis": 1}), ("flip", (x_np,), {"axis": 2}),
        ("moveaxis", (x_np, 0, -1), {}), ("roll", (x_np, 2), {"axis": 2}), ("squeeze", (x_np[:1],), {"axis": 0}),
        ("tile", (x_np, (1, 2, 1)), {}), ("repeat", (x_np, 2), {"axis": 0}),
        ("take", (x_np, numpy.array([0, 3])), {"axis": 2}), ("take_along_axis", (x_np[0], i_np), {"axis": 1}),
        ("cumulative_sum", (x_np,), {"axis": 1, "include_initial": True}), ("cumulative_prod", (x_np[0],), {"axis": 0}),
        ("vecdot", (x_np, x_np), {}), ("tensordot", (x_np, x_np), {"axes": ([1, 2], [1, 2])}),
        ("matmul", (x_np, x_np.swapaxes(1, 2)), {}), ("argmax", (x_np,), {"axis": 1, "keepdims": True}),
        ("count_nonzero", (x_np > 5,), {"axis": 0}), ("searchsorted", (x_np.ravel(), numpy.array([2.5, 30.0])), {}),
        ("where", (x_np > 3, x_np, -x_np), {}), ("sort", (x_np[:, ::-1],), {"axis": 1}),
        ("argsort", (x_np[:, ::-1],), {"axis": 1, "stable": True}), ("std", (x_np,), {"correction": 1}),
        ("var", (x_np,), {"axis": (0, 2)}), ("diff", (x_np,), {"n": 2}), ("clip", (x_np,), {"min": 3, "max": 7}),
        ("isin", (x_np, numpy.array([1.0, 5.0])), {}), ("tril", (x_np[0],), {"k": 1}), ("triu", (x_np[0],), {}),
        ("unique_values", (x_np % 5,), {}), ("linalg.vector_norm", (x_np,), {"axis": -1}),
        ("linalg.matrix_norm", (x_np,), {}), ("linalg.outer", (x_np[0, 0], x_np[0, 1]), {}),
        ("linalg.diagonal", (x_np,), {"offset": 1}), ("linalg.trace", (x_np[:, :, :3],), {}),
        ("fft.rfftn", (x_np,), {}), ("fft.fftshift", (x_np,), {"axes": (1,)}),
    ]
    for name, args, kwargs in cases:
        np_fn, npc_fn = numpy, npc
        for part in name.split("."):
            np_fn, npc_fn = getattr(np_fn, part), getattr(npc_fn, part)
        npc_args = tuple(npc.asarray(a) if isinstance(a, numpy.ndarray) else
                         [npc.asarray(e) for e in a] if isinstance(a, list) else a for a in args)
        expected = np_fn(*args, **kwargs)
        got = npc_fn(*npc_args, **kwargs)
        # Full reductions give NumPy scalars, as NumPy's do; arrays are npc arrays.
        assert type(got) is (npc.ndarray if type(expected) is numpy.ndarray else type(expected)), name
        same(expected, got)


def test_sort_descending():
    x_np = numpy.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    same(numpy.sort(x_np, axis=1, descending=True), npc.sort(npc.asarray(x_np), axis=1, descending=True))
    same(numpy.argsort(x_np, axis=1, descending=True), npc.argsort(npc.asarray(x_np), axis=1, descending=True))


def test_tuple_results():
    x_np = numpy.array([3, 1, 3, 2, 1, 3])
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        expected = getattr(numpy, name)(x_np)
        got = getattr(npc, name)(npc.asarray(x_np))
        # A named tuple with the standard's fields (npc may use its own class).
        assert isinstance(got, tuple) and got._fields == expected._fields
        for e, g in zip(expected, got):
            assert type(g) is npc.ndarray
            same(e, g)
    parts = npc.unstack(npc.arange(6).reshape(2, 3), axis=1)
    assert type(parts) is tuple and len(parts) == 3 and type(parts[0]) is npc.ndarray
    b1, b2 = npc.broadcast_arrays(npc.ones((2, 1)), npc.ones(3))
    assert b1.shape == b2.shape == (2, 3)
    assert npc.broadcast_shapes((2, 1), (3,)) == (2, 3)
    nz = npc.nonzero(npc.asarray([[0, 1], [2, 0]]))
    assert type(nz) is tuple and all(type(i) is npc.ndarray for i in nz)


def test_creation_functions():
    same(numpy.arange(2, 11, 3, dtype=numpy.int16), npc.arange(2, 11, 3, dtype=npc.int16))
    same(numpy.linspace(0, 1, 5, endpoint=False), npc.linspace(0, 1, 5, endpoint=False))
    same(numpy.eye(3, 4, k=1, dtype=numpy.int8), npc.eye(3, 4, k=1, dtype=npc.int8))
    same(numpy.full((2, 2), 7, dtype=numpy.uint8), npc.full((2, 2), 7, dtype=npc.uint8))
    gx, gy = npc.meshgrid(npc.arange(3), npc.arange(2), indexing="xy")
    ex, ey = numpy.meshgrid(numpy.arange(3), numpy.arange(2), indexing="xy")
    same(ex, gx)
    same(ey, gy)
    a = npc.asarray([1, 2, 3], dtype=npc.float32)
    assert a.dtype == numpy.float32
    assert npc.astype(a, npc.int8).dtype == numpy.int8
    assert npc.astype(a, npc.float32, copy=False) is a
    assert npc.can_cast(npc.int8, npc.int16) and not npc.can_cast(npc.float64, npc.int8)
    assert npc.finfo(npc.float32).eps == numpy.finfo(numpy.float32).eps
    assert npc.iinfo(npc.int16).max == 32767
