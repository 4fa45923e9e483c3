"""The 14 native dtypes and helpers shared by the conformance tests."""
import warnings

import numpy as np

NATIVE = [np.dtype(n) for n in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                "uint64", "float16", "float32", "float64", "complex64", "complex128")]
NATIVE_NAMES = [d.name for d in NATIVE]


def assert_same(actual, expected):
    """Values, dtype and shape identical to NumPy's (NaNs compare equal, signed zeros checked)."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert type(actual).__module__.split(".")[0] in ("npc", "numpy"), type(actual)
    assert a.dtype == e.dtype, (a.dtype, e.dtype)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_array_equal(a, e, strict=True)
    if e.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(a), np.signbit(e))


def cast_specified(values, dst):
    """Mask of the elements of `values` whose cast to `dst` NumPy defines: the same result
    alone (its loop's scalar path) and inside a long array (its SIMD body). NaN, infinities
    and negative out-of-range floats cast to uint32 differ between the two on x86-64; npc
    gives the scalar path's values (Note [float to int casts] in src/core/dispatch.hpp)."""
    flat = np.asarray(values).reshape(-1)
    ok = np.ones(flat.shape, bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, v in enumerate(flat):
            alone = flat[i:i + 1].astype(dst)
            body = np.full(67, v).astype(dst)
            ok[i] = bool(np.all(body.view(np.uint8).reshape(67, -1) == alone.view(np.uint8)))
    return ok.reshape(np.shape(values))


def assert_ulp(actual, expected, maxulp):
    """Same dtype/shape as NumPy and within `maxulp` units in the last place (complex: per
    component; NaN where NumPy has NaN; infinities identical)."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, e.dtype, a.shape, e.shape)
    parts = [(a.real, e.real), (a.imag, e.imag)] if e.dtype.kind == "c" else [(a, e)]
    for x, y in parts:
        finite = np.isfinite(y)
        np.testing.assert_array_equal(x[~finite], y[~finite])
        if finite.any():
            np.testing.assert_array_max_ulp(x[finite], y[finite], maxulp=maxulp)
