"""ndarray ** e and **= e for the exponents NumPy replaces by a unary ufunc (Note [fast scalar
power] in python/npc/_ufunc.py): results, dtypes and warning names, eager npc and compiled
(both backends), against NumPy. Fuzz seed 400724: float32 `a0 ** -1` warned "divide by zero
encountered in power" where NumPy warns "... in reciprocal", and complex 1 / (inf + 1j) was
nan + nanj where NumPy's reciprocal gives 0 - 0j.
"""
import warnings

import numpy as np
import pytest

import npc
from _compile_diff import BACKENDS, check

nan, inf = float("nan"), float("inf")
EXPONENTS = [-1, 2, 0.5, -1.0, 2.0, 0, 1, 0.0, 1.0, True, np.int64(-1), np.int64(2), np.float64(0.5)]
DTYPES = ["bool", "int16", "uint8", "float16", "float32", "float64", "complex64", "complex128"]


def values(dtype):
    if dtype == "bool":
        return np.array([True, False])
    if dtype[0] in "iu":
        return np.array([0, 1, 2, 3], dtype=dtype)
    if dtype.startswith("complex"):
        return np.array([0j, complex(0, -0.0), complex(-0.0, 0), 1 + 2j, complex(inf, 1), complex(nan, 0),
                         complex(3e38, 3e38), complex(-inf, -0.0)], dtype=dtype)
    with np.errstate(over="ignore"):
        return np.array([0.0, -0.0, 1.0, 2.0, inf, -inf, nan, 3e38, -4.0, 1e-45], dtype=dtype)


def outcome(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001  (compared with NumPy's)
            r = type(e)
    return r, [(m.category, str(m.message)) for m in w]


def same(got, want):
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want), (got, want)
        return
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind in "fc":  # the signs of zeros and infinities too (not of NaNs)
        for g, w in [(got.real, want.real), (got.imag, want.imag)]:
            np.testing.assert_array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(w) & ~np.isnan(w))


def power(a, e):
    return a ** e


def inplace_power(a, e):
    a **= e
    return a


@pytest.mark.parametrize("op", [power, inplace_power])
@pytest.mark.parametrize("e", EXPONENTS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eager(dtype, e, op):
    x = values(dtype)
    want, ww = outcome(op, x.copy(), e)
    got, gw = outcome(op, npc.array(x), e)
    same(got, want)
    assert gw == ww


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", [power, inplace_power])
@pytest.mark.parametrize("e", [-1, 2, 0.5, -1.0, 2.0], ids=repr)
@pytest.mark.parametrize("dtype", ["bool", "int16", "float16", "float32", "float64", "complex64"])
def test_compiled(dtype, e, op, backend):
    def f(a):
        return op(a, e)
    x = values(dtype)
    check(f, (x,), (x[::-1].copy(),), backend=backend)


def test_reciprocal_warning_of_the_fuzzer_program():
    # Seed 400724, shrunk.
    x = np.array([1.0, 2.0, 2.0, 0.0], dtype=np.float32)
    for backend in BACKENDS:
        check(lambda a0: a0 ** -1, (x,), backend=backend)
    got, gw = outcome(lambda a: a ** -1, npc.array(x))
    assert gw == [(RuntimeWarning, "divide by zero encountered in reciprocal")]
