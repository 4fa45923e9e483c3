"""NumPy functions that take another path for NumPy scalars than for arrays, and warnings
that depend on it (differential fuzzer findings, tests/fuzz): eager npc and npc.compile
(both backends) against NumPy on values, result types and warnings."""
import warnings

import numpy as np
import pytest

import npc

nan, inf = float("nan"), float("inf")
MODES = ["npc", "fused", "eager"]


def outcome(fn, args):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = fn(*args)
    return r, sorted((w.category.__name__, str(w.message)) for w in rec)


def run(mode, src, args):
    env = {"np": npc if mode == "npc" else np}
    exec(src, env)
    f = env["f"]
    if mode == "npc":
        return outcome(f, [npc.asarray(a) for a in args])
    return outcome(npc.compile(f, backend=mode), [a.copy() for a in args])


def assert_same(src, args, mode):
    env = {"np": np}
    exec(src, env)
    want, wwarn = outcome(env["f"], [a.copy() for a in args])
    got, gwarn = run(mode, src, args)
    assert gwarn == wwarn
    assert type(got).__name__ == type(want).__name__ or (isinstance(want, np.ndarray) and isinstance(got, (np.ndarray, npc.ndarray)))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want), strict=True)


@pytest.mark.parametrize("mode", MODES)
def test_nanmax_of_a_numpy_scalar_takes_the_masked_path(mode):
    # numpy.nanmax of anything but an ndarray replaces NaNs, takes amax and puts NaN back:
    # a complex NaN comes back as nan+0j with "All-NaN axis encountered" (an ndarray gives
    # fmax.reduce's nan+nanj and "All-NaN slice encountered").
    src = """
def f(a0):
    v1 = np.dot(a0, a0)
    v2 = np.full_like(v1, 256)
    np.multiply(v2, v1, out=v2)
    v4 = np.tan(v2)
    return np.nanmax(v4)
"""
    a = np.array([4 - 3.5j, 3 + 1j, 2.2250738585072014e-308, -1 + 2j, complex(inf, nan), complex(-1.5, inf)])
    assert_same(src, [a], mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nanmax_nanmin_of_scalars(mode, name):
    src = f"""
def f(a0):
    return np.{name}(a0[0] * 1), np.{name}(a0[1] * 1), np.{name}(a0[2] + 0)
"""
    assert_same(src, [np.array([nan, 2.0, -0.0])], mode)
    assert_same(src, [np.array([complex(nan, 1), 2j, nan], np.complex64)], mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_of_every_axis_divides_numpy_scalars(mode, keepdims):
    # numpy.median takes numpy.mean of the middle values of a 1-D part when every axis is
    # reduced, keepdims or not: "invalid value encountered in scalar divide".
    src = f"""
def f(a0):
    return np.median(a0, axis=-1, keepdims={keepdims})
"""
    a = np.array([complex(-inf, inf), -1 - 1j, -2 + 2j, complex(-5e-324, inf), complex(0, inf), 1.7976931348623157e308])
    assert_same(src, [a], mode)


@pytest.mark.parametrize("mode", MODES)
def test_full_like_bool_with_a_complex_fill_does_not_warn(mode):
    # The cast of a complex value to bool tests for nonzero: no ComplexWarning.
    src = """
def f(a0):
    return np.full_like(a0, (2-1j))
"""
    assert_same(src, [np.array([True, False])], mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_of_a_0d_array_divides_a_numpy_scalar(mode, name):
    # The mean inside numpy.var of a 0-d array is a NumPy scalar: "... in scalar divide".
    src = f"""
def f(a0):
    return a0.{name}()
"""
    assert_same(src, [np.array(complex(nan, inf))], mode)
    assert_same(src, [np.array(2.5)], mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["absolute", "negative", "positive", "square", "invert", "sign", "sqrt"])
def test_unary_ufunc_of_a_python_int_beyond_int64(mode, name):
    # A lone Python int in [2**63, 2**64) is a 0-d array of numpy.ulonglong's dtype ('Q') to
    # NumPy: a uint64 result is a numpy.ulonglong, a type other than numpy.uint64 ('L') on
    # LP64 (fuzz seed 140131). A float result is a float64 as ever.
    for k in (0, 1, 2):
        src = f"""
def f(a0):
    return np.{name}(a0.ravel()[{k}].item())
"""
        assert_same(src, [np.array([5, 2**63, 18446744073709551614], np.uint64)], mode)
