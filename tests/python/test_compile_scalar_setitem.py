"""A traced value that stands for a NumPy scalar, written into a signed integer array:
NumPy stores it through int() (Note [float into integer setitem] in
python/npc/csrc/bind_indexing.cpp), so an out-of-range or NaN value raises there, in
compiled code as in NumPy (differential fuzzer finding, tests/fuzz)."""
import warnings

import numpy as np
import pytest

import npc

BACKENDS = ["fused", "eager"]


def outcome(fn, args):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            r, e = fn(*args), None
        except Exception as exc:  # compared by type
            r, e = None, type(exc)
    return r, e, sorted(str(w.message) for w in rec), args


def assert_same(f, make, backend):
    want = outcome(f, make())
    cf = npc.compile(f, backend=backend)
    for _ in range(3):  # trace, replay, replay
        got = outcome(cf, make())
        assert got[1] is want[1] and got[2] == want[2]
        if want[1] is None:
            np.testing.assert_array_equal(got[0], want[0], strict=True)
        for g, w in zip(got[3], want[3]):
            np.testing.assert_array_equal(g, w, strict=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mean_of_a_0d_array_written_into_it(backend):
    # a0.mean(keepdims=True) of a 0-d array is a NumPy float64 scalar: 2**63 does not fit.
    def f(a0):
        v1 = a0.mean(axis=None, keepdims=True)
        a0[...] = v1
        return a0

    assert_same(f, lambda: [np.array(9223372036854775806)], backend)
    assert_same(f, lambda: [np.array(-5)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("value", [3.75, 1.5e19, float("nan"), float("inf")])
def test_float_scalar_into_int_array(backend, value):
    def f(a, s):
        a[0] = (a * s).sum()
        return a

    assert_same(f, lambda: [np.array([1, 1]), np.float64(value)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("values", [[1, 2], [100, 100]])
def test_int64_scalar_into_int8_array(backend, values):
    def f(a, b):
        b[0] = a.sum()
        return b

    assert_same(f, lambda: [np.array(values), np.zeros(2, np.int8)], backend)


@pytest.mark.parametrize("mode", ["npc", "fused", "eager"])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "int8"])
@pytest.mark.parametrize("key", [(0, None), 0, (Ellipsis, 0)])
def test_invalid_index_is_checked_before_the_value(mode, dtype, key):
    # NumPy parses the index first: "too many indices" (IndexError), not the OverflowError of
    # 2**64-1 for an integer array.
    def f(a0):
        a0[key] = 2**64 - 1
        return a0

    with pytest.raises(IndexError):
        f(np.array(5, dtype))
    g = f if mode == "npc" else npc.compile(f, backend=mode)
    a = npc.asarray(np.array(5, dtype)) if mode == "npc" else np.array(5, dtype)
    with pytest.raises(IndexError):
        g(a)


@pytest.mark.parametrize("mode", ["npc", "fused", "eager"])
@pytest.mark.parametrize("value", [complex(float("nan"), 1), 3.7 + 2j, 1e30 + 0j])
def test_complex_numpy_scalar_into_int_array(mode, value):
    # NumPy stores a complex NumPy scalar into a signed integer array through int() of its
    # real part, after the ComplexWarning: NaN is its ValueError, 1e30 its OverflowError.
    def f(a, z):
        a[...] = z * 1
        return a

    def run(g, a):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            try:
                r, e = g(a, np.complex128(value)), None
            except Exception as exc:
                r, e = None, type(exc)
        return r, e, sorted(str(w.message) for w in rec)

    want = run(f, np.array(5))
    g = f if mode == "npc" else npc.compile(f, backend=mode)
    got = run(g, npc.asarray(np.array(5)) if mode == "npc" else np.array(5))
    assert got[1] is want[1] and got[2] == want[2]
    if want[1] is None:
        np.testing.assert_array_equal(np.asarray(got[0]), want[0])
